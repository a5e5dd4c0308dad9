"""``python -m amp generate``: write pool records as JSONL (docs/paper-notes.md §3, §4, §6).

    python -m amp generate --type pp --all
    python -m amp generate --type scope --n 100 --seed 0 --format lisp --out scope.jsonl
"""

from __future__ import annotations

import argparse
import sys

from amp.cli import common
from amp.cli.common import fail
from amp.data.generate import GENDERS, generate, pool_names, write_jsonl
from amp.errors import AmpError


def register(subparsers: argparse._SubParsersAction) -> None:

    parser = subparsers.add_parser(
        "generate",
        help="write a pool (or a seeded sample of it) as JSONL",
        description="Write the records of a pool in the original AmP JSONL layout. Pools: "
        + ", ".join(pool_names()) + ".",
    )
    parser.add_argument("--type", required=True, choices=pool_names(), metavar="TYPE",
                        help="pool name: an ambiguity type or an unambiguous set")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every record of the pool")
    which.add_argument("--n", type=int, metavar="N", help="records of N sampled surfaces")
    parser.add_argument("--seed", type=common.seed, help="seed of the sample (required with --n)")
    parser.add_argument("--template", metavar="ID", help="keep one template id (or id prefix)")
    parser.add_argument("--word", metavar="W", help="keep surfaces containing W or binding it")
    parser.add_argument("--gender", choices=GENDERS, help="one gender of the bound sets")
    common.add_format_argument(parser)
    parser.add_argument("--out", metavar="FILE", help="output file (default: stdout)")
    parser.add_argument("--with-template", action="store_true",
                        help="add our template id to each record")
    parser.set_defaults(func=lambda args: run(args, parser))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:

    if args.n is not None and args.seed is None:
        return fail("--n needs --seed", parser)
    if args.n is not None and args.n < 0:
        return fail("--n must be a non-negative integer", parser)
    try:
        examples = generate(args.type, template=args.template, word=args.word, n=args.n,
                            seed=args.seed, fmt=args.fmt, gender=args.gender)
        if args.out:
            write_jsonl(examples, args.out, include_template=args.with_template)
        else:
            write_jsonl(examples, sys.stdout, include_template=args.with_template)
            sys.stdout.flush()
    except (AmpError, OSError) as exc:
        return fail(str(exc), parser)
    return 0
