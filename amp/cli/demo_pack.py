"""``python -m amp demo-pack``: build a demo pack of the classic sentences for a model.

    python -m amp demo-pack --out classic.zip [--model default] [--sentence "…" …] [--own]
        [--no-mixed] [--k 10] [--device …] [--dtype …]

Prepares a lesson at home: the model inspects each classic sentence (or the ``--sentence`` s
given) under its zero-shot prompt and the default mixed prompt, and the results go into a zip
that the app's Class poll page imports (no model needed in class).  A ``--sentence`` may be one
of your own sentences (the "Your own sentences" library); ``--own`` adds all of them.  Own
sentences are inspected under their default mixed prompt and travel in the pack, so the
classroom computer's library gets them.  See :mod:`amp.teaching.classics`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from amp.cli import common
from amp.cli.model_options import add_model_options, make_parser
from amp.errors import AmpError
from amp.parser.core.limits import MAX_PROMPT_EXAMPLES
from amp.prompts import EXAMPLES_PER_PROMPT
from amp.teaching.classics import CLASSIC_SENTENCES, PackRecipe, build_classic_pack, classic_pairs
from amp.teaching.lesson import pool_pair
from amp.teaching.own_library import OwnLibrary


def run(args: argparse.Namespace) -> int:

    out = Path(args.out)
    if not out.parent.is_dir():
        return common.fail(f"--out: the folder {str(out.parent)!r} does not exist")
    try:
        library = OwnLibrary()
        named = [library.get(s) if pool_pair(s) is None else None for s in args.sentence or ()]
        own = tuple(o for o in named if o is not None) + (library.list() if args.own else ())
    except AmpError as exc:
        return common.fail(exc)
    own = tuple({o.surface: o for o in own}.values())
    pool = tuple(s for s, o in zip(args.sentence or (), named) if o is None)
    recipe = PackRecipe(pool if args.sentence else CLASSIC_SENTENCES, mixed=not args.no_mixed, k=args.k, own=own)

    def say(done: int, total: int, sentence: str) -> None:
        print(f"[{done}/{total}] {sentence}" if sentence else f"[{done}/{total}] writing the pack",
              file=sys.stderr, flush=True)

    try:
        classic_pairs(recipe.sentences)  # refuse an unknown sentence before loading a model
        parser = make_parser(args, cache=True)
        info = build_classic_pack(parser, out, recipe, progress=say)
    except AmpError as exc:
        return common.fail(exc)
    mine = f" and {len(recipe.own)} own sentence(s)" if recipe.own else ""
    print(f"wrote {out}: {info.entry_count} cached results of {len(recipe.sentences)} sentence(s){mine} for "
          f"{parser.spec} ({parser.identity}); import it on the Class poll page")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("demo-pack", help="a demo pack of the classic sentences for a model (prepare a lesson)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="the zip file to write")
    p.add_argument("--sentence", action="append", help="a pool sentence instead of the classic ones (repeat)")
    p.add_argument("--own", action="store_true",
                   help="also every sentence of your own-sentence library ($AMP_OWN_SENTENCES or the cache folder)")
    p.add_argument("--no-mixed", action="store_true", help="only the zero-shot prompt of the pool sentences (faster)")
    p.add_argument("--k", type=common.count(1, MAX_PROMPT_EXAMPLES), default=EXAMPLES_PER_PROMPT,
                   help=f"examples of the mixed prompts (default {EXAMPLES_PER_PROMPT}, as 'Parse this sentence')")
    add_model_options(p, server=False)
    p.set_defaults(func=run)
