"""Helpers shared by the command modules: argparse-style errors, checked argument types, and text
made safe for the terminal (:func:`printable`, :func:`terminal_text`, :func:`terminal_json`: a model's
or an endpoint's text never moves the cursor, clears the screen or sets a window title).

The argument types turn a bad value into argparse's usage error (one ``error:`` line, exit 2)
using the bounds of :mod:`amp.parser.core.limits`, so the CLI refuses what the library would.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from amp.data.types import find_type, type_ids
from amp.errors import AmpError
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, FORMATS, MODES
from amp.parser.backends.api_replies import strip_controls
from amp.parser.core import limits

#: Exit status of a command that refuses its input or cannot load its model (argparse's usage status).
EXIT_ERROR = 2


def fail(problem: str | BaseException, parser: argparse.ArgumentParser | None = None) -> int:
    """One ``error:`` line on stderr (no traceback) and :data:`EXIT_ERROR`.

    With ``parser`` the line is argparse's (usage first, then ``prog: error: …``): for a bad
    combination of options.  Without, it is ``error: …``: for input or a model that cannot be used.
    """
    message = printable(str(problem)) or type(problem).__name__
    if parser is None:
        print(f"error: {message}", file=sys.stderr)
    else:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def printable(text: str) -> str:
    """``text`` on one line, without terminal controls, with undecodable bytes (surrogates) shown
    as escapes, never raising."""
    one_line = " ".join(strip_controls(str(text), keep="").split())
    return one_line.encode("utf-8", "backslashreplace").decode("utf-8")


def terminal_text(text: str) -> str:
    """Lines for the terminal: ``text`` without terminal controls (line breaks and tabs kept),
    undecodable bytes shown as escapes."""
    return strip_controls(str(text)).encode("utf-8", "backslashreplace").decode("utf-8")


#: What JSON text may hold raw that a terminal acts on: DEL and the C1 controls (JSON escapes C0).
_RAW_CONTROLS = re.compile(r"[\x7f-\x9f]")


def terminal_json(text: str) -> str:
    """JSON text with DEL and the C1 controls escaped (``\\u009b``): the same data, nothing a
    terminal acts on."""
    return _RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def count(minimum: int, maximum: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``minimum … maximum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be from {minimum} to {maximum}, not {value}")
        return value

    return parse


def ambiguity_type(text: str) -> str:
    """An argparse type: a registered ambiguity type (id or alias), read from the registry when the
    command line is parsed, so a type registered at run time is a valid choice."""
    kind = find_type(text.strip())
    if kind is None:
        raise argparse.ArgumentTypeError(f"unknown ambiguity type {text!r}; known: {', '.join(type_ids())}")
    return kind.id


def types_help(what: str) -> str:
    """Help text naming the registered types now (for ``--type``/``--types``)."""
    return f"{what} ({', '.join(type_ids())})"


def bounded(check: Callable[[Any], float]) -> Callable[[str], float]:
    """An argparse type from a library bound (:mod:`amp.parser.core.limits`): the command line
    refuses exactly what the library, the app and the service refuse, with the same sentence."""

    def parse(text: str) -> float:
        try:
            return check(text)
        except AmpError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


#: ``--seed``: 0 … limits.MAX_SEED.
seed = count(0, limits.MAX_SEED)
#: ``--beams``: 1 … limits.MAX_BEAMS.
beams = count(1, limits.MAX_BEAMS)
#: ``--max-new-tokens``: 1 … limits.MAX_NEW_TOKENS.
max_new_tokens = count(1, limits.MAX_NEW_TOKENS)


def add_format_argument(parser: argparse.ArgumentParser, help: str = "LF format (default: fol)") -> None:
    """``--format fol|lisp`` (into ``args.fmt``), the choices of :data:`amp.logic.vocabulary.FORMATS`."""
    parser.add_argument("--format", dest="fmt", choices=FORMATS, default=DEFAULT_FORMAT, help=help)


def add_mode_argument(parser: argparse.ArgumentParser,
                      help: str = "canonical mode used for matching (default: logical)",
                      choices: tuple[str, ...] = MODES) -> None:
    """``--mode logical|paper``, the choices of :data:`amp.logic.vocabulary.MODES` (or ``choices``,
    e.g. ``amp canon``'s :data:`~amp.logic.vocabulary.CANON_MODES`)."""
    parser.add_argument("--mode", choices=choices, default=DEFAULT_MODE, help=help)
