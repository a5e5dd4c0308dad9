"""``python -m amp demo-pack``: build a demo pack of the classic sentences for a model.

    python -m amp demo-pack --out classic.zip [--model default] [--sentence "…" …] [--no-mixed]
        [--device …] [--dtype …]

Prepares a lesson at home: the model inspects each classic sentence (or the ``--sentence`` s
given) under its zero-shot prompt and the default mixed prompt, and the results go into a zip
that the app's Class poll page imports (no model needed in class).  See
:mod:`amp.teaching.classics`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from amp.cli import common
from amp.errors import AmpError
from amp.parser.model_loading import DTYPES


def run(args: argparse.Namespace) -> int:
    from amp.parser.parser import Parser
    from amp.teaching.classics import CLASSIC_SENTENCES, PackRecipe, build_classic_pack, classic_pairs

    out = Path(args.out)
    if not out.parent.is_dir():
        return common.fail(f"--out: the folder {str(out.parent)!r} does not exist")
    recipe = PackRecipe(tuple(args.sentence) if args.sentence else CLASSIC_SENTENCES, mixed=not args.no_mixed)

    def say(done: int, total: int, sentence: str) -> None:
        print(f"[{done}/{total}] {sentence}" if sentence else f"[{done}/{total}] writing the pack",
              file=sys.stderr, flush=True)

    try:
        classic_pairs(recipe.sentences)  # refuse an unknown sentence before loading a model
        parser = Parser(args.model, device=args.device, dtype=args.dtype, trust_remote_code=False, cache=True)
        info = build_classic_pack(parser, out, recipe, progress=say)
    except AmpError as exc:
        return common.fail(exc)
    print(f"wrote {out}: {info.entry_count} cached results of {len(recipe.sentences)} sentence(s) for "
          f"{parser.spec} ({parser.identity}); import it on the Class poll page")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("demo-pack", help="a demo pack of the classic sentences for a model (prepare a lesson)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="the zip file to write")
    p.add_argument("--model", default="default",
                   help="'default' (embedded Gemma 3 270M), a Hugging Face id, a model folder or a .gguf file")
    p.add_argument("--sentence", action="append", help="a pool sentence instead of the classic ones (repeat)")
    p.add_argument("--no-mixed", action="store_true", help="only the zero-shot prompt (faster)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: best available)")
    p.add_argument("--dtype", default=None, choices=DTYPES, help="weights dtype")
    p.set_defaults(func=run)
