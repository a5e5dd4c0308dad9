"""The closed word lists of the library, declared once: LF formats and canonical modes.

Every check, type hint, CLI ``choices=`` and UI option list reads these names, so adding a
format or a mode is one edit here.  ``fol``/``lisp`` are the two LF notations of the AmP data
(docs/paper-notes.md §7); ``logical``/``paper`` the two canonicalisers used to match a parse to a gold LF
(:mod:`amp.logic.canonical`).
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

from amp.errors import AmpError, SettingError

#: An LF notation: first-order logic text or the Lisp s-expressions of the AmP release.
Format = Literal["fol", "lisp"]
FORMATS: tuple[Format, ...] = get_args(Format)
#: The format every function, command and page uses unless told otherwise.
DEFAULT_FORMAT: Format = "fol"

#: A canonicaliser: ``logical`` (equivalence up to renaming and ordering) or ``paper`` (the
#: original's string normalisation).
Mode = Literal["logical", "paper"]
MODES: tuple[Mode, ...] = get_args(Mode)
#: The canonicaliser every function, command and page uses unless told otherwise.
DEFAULT_MODE: Mode = "logical"


def is_format(value: object) -> TypeGuard[Format]:
    return value in FORMATS


def is_mode(value: object) -> TypeGuard[Mode]:
    return value in MODES


def check_format(fmt: object, error: type[AmpError] = SettingError) -> Format:
    """``fmt`` if it is one of :data:`FORMATS`, else ``error`` (a caller's own typed error)."""
    if not is_format(fmt):
        raise error(f"fmt must be an LF format, one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


def check_mode(mode: object, error: type[AmpError] = SettingError) -> Mode:
    """``mode`` if it is one of :data:`MODES`, else ``error`` (a caller's own typed error)."""
    if not is_mode(mode):
        raise error(f"mode must be a canonical mode, one of {', '.join(MODES)}, not {mode!r}")
    return mode
