"""Every error the logic package raises on purpose, in one place.

An LF that does not parse (with where and what was expected), the original canonicaliser's
refusals, and a teacher's own words that cannot extend the grammar.
"""

from __future__ import annotations

from amp.errors import AmpError


class LFParseError(AmpError, ValueError):
    """A logical form that does not parse.

    Attributes: ``text`` (the whole input), ``position`` (0-based character offset),
    ``line``/``column`` (1-based), ``found`` (the offending text) and ``expected`` (what the
    grammar would have accepted there, as a sorted list of literal strings).
    """

    def __init__(
        self,
        message: str,
        *,
        text: str,
        position: int,
        line: int = 1,
        column: int = 1,
        found: str = "",
        expected: tuple[str, ...] = (),
        fmt: str = "fol",  # the vocabulary (below errors) declares the formats: Format.FOL
    ) -> None:
        super().__init__(message)
        self.text = text
        self.position = position
        self.line = line
        self.column = column
        self.found = found
        self.expected = tuple(expected)
        self.fmt = fmt


class OriginalError(AmpError, ValueError):
    """The original canonicaliser could not read this LF (its metric kept the raw string)."""

    def __init__(self, message: str, reason: str = "syntax", found: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.found = found


class OwnWordsError(AmpError, ValueError):
    """Own words that cannot extend the grammar (bad shape, a keyword, a clash, too many)."""
