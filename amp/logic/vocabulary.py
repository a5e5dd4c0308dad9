"""The closed word lists of the library, declared once: LF formats and canonical modes.

Every check, type hint, CLI ``choices=`` and UI option list reads these names, so adding a
format or a mode is one edit here.  ``fol``/``lisp`` are the two LF notations of the AmP data
(docs/paper-notes.md §7); ``logical``/``paper`` the two canonicalisers used to match a parse to a gold LF
(:mod:`amp.logic.canonical`).
"""

from __future__ import annotations

from enum import StrEnum

from amp.errors import AmpError, SettingError


class Format(StrEnum):
    """An LF notation: first-order logic text or the Lisp s-expressions of the AmP release.

    A ``StrEnum``: a member equals, hashes and serialises as its value (``Format.FOL == "fol"``),
    so records, cache keys and JSON hold the same text as ever.
    """

    FOL = "fol"
    LISP = "lisp"


FORMATS: tuple[Format, ...] = tuple(Format)
#: The format every function, command and page uses unless told otherwise.
DEFAULT_FORMAT = Format.FOL


class Mode(StrEnum):
    """A canonicaliser: ``logical`` (equivalence up to renaming and ordering) or ``paper`` (the
    original's string normalisation); or ``prompt``, the paper's prompt convention
    (:mod:`amp.logic.prompt_convention`, docs/paper-notes.md §16), a *rendering* that ``amp canon``
    prints but no match uses."""

    LOGICAL = "logical"
    PAPER = "paper"
    PROMPT = "prompt"


#: The canonicalisers that judge whether a parse matches a gold LF (``--mode``, the app's option).
MODES: tuple[Mode, ...] = (Mode.LOGICAL, Mode.PAPER)
#: What ``amp canon --mode`` prints: a canonical form, or the LF in the prompt convention.
CANON_MODES: tuple[Mode, ...] = tuple(Mode)
#: The canonicaliser every function, command and page uses unless told otherwise.
DEFAULT_MODE = Mode.LOGICAL


def format_of(lf: str) -> Format:
    """The notation an LF is written in: Lisp if it opens with a parenthesis, else FOL."""
    return Format.LISP if lf.lstrip().startswith("(") else Format.FOL


def is_format(value: object) -> bool:
    return isinstance(value, str) and value in FORMATS


def is_mode(value: object) -> bool:
    return isinstance(value, str) and value in MODES


def check_format(fmt: object, error: type[AmpError] = SettingError) -> Format:
    """``fmt`` as a :class:`Format` if it is one of :data:`FORMATS`, else ``error`` (a caller's own
    typed error)."""
    if not is_format(fmt):
        raise error(f"fmt must be an LF format, one of {', '.join(FORMATS)}, not {fmt!r}")
    return Format(str(fmt))


def check_mode(mode: object, error: type[AmpError] = SettingError) -> Mode:
    """``mode`` as a :class:`Mode` if it is one of :data:`MODES`, else ``error`` (a caller's own typed
    error)."""
    if not is_mode(mode):
        raise error(f"mode must be a canonical mode, one of {', '.join(MODES)}, not {mode!r}")
    return Mode(str(mode))
