"""``python -m amp prompt``: build zero-shot (docs/paper-notes.md §10) and mixed (§11) prompts.

    python -m amp prompt zero-shot --type pp --seed 0 --sentence "Galileo saw Mary with the camera"
    python -m amp prompt mixed --type scope --ratio 0.3 --seed 1 [--k 10] [--format lisp] [--json]
        [--independent-draws]

The prompt text goes to stdout and the gold LF0/LF1 to stderr; ``--json`` prints everything
as one JSON object on stdout instead.  Without ``--sentence`` the test sentence is a seeded
sample of the type.  ``mixed`` follows the original's paired design (§11): with the same seed
and sentence, every ratio lists the same example sentences in the same positions and only
their LF0/LF1 labels differ; ``--independent-draws`` draws other sentences per ratio.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

from amp.cli import common as argtypes
from amp.cli.common import fail
from amp.data.generate import GENDERS, find_pair, sample_pairs
from amp.errors import AmpError, RatioError
from amp.parser.core.limits import MAX_PROMPT_EXAMPLES
from amp.prompts import EXAMPLES_PER_PROMPT, check_ratio, mixed_prompt, zero_shot_prompt


def register(subparsers: argparse._SubParsersAction) -> None:

    parser = subparsers.add_parser("prompt", help="build a zero-shot or mixed prompt",
                                   description="Build a zero-shot (§10) or mixed (§11) prompt.")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--type", type=argtypes.ambiguity_type,
                       help=argtypes.types_help("ambiguity type, needed unless --sentence is given"))
        p.add_argument("--seed", type=argtypes.seed, required=True, help="seed of all random choices")
        p.add_argument("--sentence", help="the test sentence (default: a seeded sample)")
        p.add_argument("--gender", choices=GENDERS, help="bound only: gender of the sample")
        p.add_argument("--json", action="store_true", help="print the prompt as JSON")
        p.add_argument("--trailing-space", action="store_true",
                       help="end the prompt with 'Computer: ' instead of 'Computer:'")

    zero = kinds.add_parser("zero-shot", help="unambiguous ingredient prompt (§10)",
                            description="Zero-shot prompt with unambiguous ingredients (§10).")
    common(zero)
    zero.set_defaults(func=lambda args: run(args, zero))

    mixed = kinds.add_parser("mixed", help="mixed prompt with a ratio of LF0 examples (§11)",
                             description="Mixed prompt: k same-type examples, int(k*ratio) with LF0.")
    common(mixed)
    mixed.add_argument("--ratio", type=float, required=True, help="fraction of LF0 examples, 0..1")
    mixed.add_argument("--k", type=argtypes.count(0, MAX_PROMPT_EXAMPLES), default=EXAMPLES_PER_PROMPT, help=f"number of examples (default {EXAMPLES_PER_PROMPT})")
    argtypes.add_format_argument(mixed)
    mixed.add_argument("--independent-draws", action="store_true",
                       help="draw other example sentences at every ratio (default: the paired design "
                            "of the original, §11 — the same seed shows the same sentences in the same "
                            "positions at every ratio, only their LF0/LF1 labels change)")
    mixed.set_defaults(func=lambda args: run(args, mixed))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:

    ratio = getattr(args, "ratio", None)
    try:
        if ratio is not None:
            check_ratio(ratio)
    except RatioError:
        return fail(f"--ratio must be in the range [0, 1], got {ratio}", parser)
    if getattr(args, "k", 0) < 0:
        return fail("--k must be a non-negative integer", parser)
    if args.sentence is None and args.type is None:
        return fail("give --type or --sentence", parser)
    try:
        if args.sentence is not None:
            pair = find_pair(args.sentence)
            if pair is None:
                return fail(f"{args.sentence!r} is not an ambiguous sentence of any pool", parser)
            if args.type is not None and pair.type != args.type:
                return fail(f"{args.sentence!r} is a {pair.type} sentence, not {args.type}", parser)
        else:
            pair = sample_pairs(args.type, 1, args.seed, gender=args.gender)[0]
        if args.kind == "mixed":
            seed = args.seed
            if args.independent_draws:  # a seed of its own per ratio: other sentences, other order
                seed = int.from_bytes(hashlib.sha256(f"{args.seed}\x1f{args.ratio:.6f}".encode()).digest()[:4],
                                      "big") & 0x7FFFFFFF
            prompt = mixed_prompt(pair, args.ratio, seed=seed, k=args.k, fmt=args.fmt)
        else:
            prompt = zero_shot_prompt(pair, seed=args.seed)
        text = prompt.render(trailing_space=args.trailing_space)
    except AmpError as exc:
        return fail(str(exc), parser)
    if args.json:
        print(json.dumps({**prompt.to_dict(), "text": text}, indent=2))
    else:
        sys.stdout.write(text + "\n")
        print(f"gold LF0: {prompt.gold_lf0}", file=sys.stderr)
        print(f"gold LF1: {prompt.gold_lf1}", file=sys.stderr)
    return 0
