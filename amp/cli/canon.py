"""``python -m amp canon``: canonical forms of logical forms read from stdin (docs/paper-notes.md §8).

    echo "exists x . exists y . man(y) AND boy(x)" | python -m amp canon
    python -m amp canon --mode paper --format lisp < lfs.txt
    echo "exists b . exists q . man(q) AND walked(b) AND agent(b, q)" | python -m amp canon --mode prompt
    echo "exists v . exists w . eat(v) AND patient(v, w) AND chicken(w) AND ready(w)" \
        | python -m amp canon --mode prompt --sentence "the chicken is ready to eat"

One LF per input line, one canonical form (FOL) per output line; ``--mode prompt`` prints the LF
in the paper's prompt convention instead, in the input's format (docs/paper-notes.md §16), its
conjuncts in the pools' order (``--sentence``, the LFs' utterance, decides the ties structure
leaves; without it they keep their written order).  ``--sentence`` with another mode is a usage
error.  A line that does not parse prints ``ERROR: <message>`` in its place and makes the exit
code 1; blank lines stay blank.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TextIO

from amp.cli import common
from amp.cli.common import fail, printable
from amp.errors import AmpError
from amp.logic.canonical import canonical
from amp.logic.prompt_convention import prompt_text
from amp.logic.vocabulary import CANON_MODES, Mode

_DESCRIPTION = """\
Read one logical form per line on stdin and print its canonical form (FOL) per line
(--mode prompt: the LF in the prompt convention, in the input format).
A line that does not parse prints "ERROR: <message>" instead; the exit code is then 1.
Blank lines are echoed blank.

modes:
  logical  (default) equal iff equal up to reordering AND/OR children, re-bracketing within
           one connective, renaming bound variables, reordering adjacent quantifiers of the
           same kind and dropping unused quantifiers
  paper    the original AmP metric's judgement: quantifier prefix kept in written order and
           numbered v0, v1, ...; children sorted by the original's keys (docs/canonical-forms.md)
  prompt   not a matcher: the LF as the paper's prompts spell it (entities x, y, z, events
           a, e, i, same-kind quantifiers ordered as the templates do; conjuncts in the pools'
           order: nouns first, then each event's verb and roles, events in the order of
           --sentence, ties without it kept as written; docs/paper-notes.md section 16),
           printed in the input format
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "canon",
        help="canonical forms of LFs read from stdin",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common.add_mode_argument(parser, help="canonical mode, or prompt (default: logical)", choices=CANON_MODES)
    common.add_format_argument(parser, help="format of the input LFs (output is FOL, but in prompt mode "
                                            "the input's format; default: fol)")
    parser.add_argument("--sentence", metavar="TEXT",
                        help="--mode prompt only: the LFs' sentence, whose word order decides the order of "
                             "conjuncts that structure leaves open (events, several words of one thing)")
    parser.set_defaults(func=lambda args: run(args, parser))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.sentence is not None and args.mode != Mode.PROMPT:
        return fail("--sentence applies to --mode prompt only", parser)

    failed = False
    out = sys.stdout
    for number, line in enumerate(_lines(sys.stdin), start=1):
        if line is None:
            out.write(f"ERROR: line {number} is not UTF-8 text\n")
            failed = True
            continue
        text = line.rstrip("\r\n")
        if not text.strip():
            out.write("\n")
            continue
        try:
            out.write(_form(text, args.mode, args.fmt, args.sentence) + "\n")
        except AmpError as exc:  # LFParseError, a too-deep LF, …: this line only
            out.write(f"ERROR: {printable(str(exc))}\n")
            failed = True
    out.flush()
    return 1 if failed else 0


def _form(text: str, mode: str, fmt: str, sentence: str | None) -> str:
    if mode == Mode.PROMPT:
        return prompt_text(text, fmt, sentence)
    return canonical(text, mode, fmt)


def _lines(stream: TextIO) -> Iterator[str | None]:
    """The lines of ``stream``, each decoded on its own (None for a line that is not UTF-8), so one
    bad line does not end the run; a text stream without a byte buffer is read as it is."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        yield from stream
        return
    for raw in buffer:
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            yield None
