"""Typed errors of the amp library.  Each carries what a user needs to fix the input."""

from __future__ import annotations


class AmpError(Exception):
    """Base class of every error the amp library raises on purpose."""


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
        fmt: str = "fol",
    ) -> None:
        super().__init__(message)
        self.text = text
        self.position = position
        self.line = line
        self.column = column
        self.found = found
        self.expected = tuple(expected)
        self.fmt = fmt


class TemplateError(AmpError, ValueError):
    """A template that cannot be filled (unknown slot, unknown word list, bad constraint)."""


class PromptError(AmpError, ValueError):
    """A prompt that cannot be built (ratio out of range, empty pool, bad index)."""


class MetricError(AmpError, ValueError):
    """Metric input that is malformed (e.g. mismatched lengths, k out of range)."""


class RatioError(PromptError, MetricError):
    """A ratio of LF0 examples (reference §11) that is not a number in [0, 1].

    One class for prompts, metrics and sweeps (:func:`amp.prompts.check_ratio`), so it is both a
    :class:`PromptError` and a :class:`MetricError`.
    """


class ModelLoadError(AmpError, RuntimeError):
    """A language model or tokenizer that cannot be loaded; the message says what to do."""


class DecodingError(AmpError, RuntimeError):
    """Constrained decoding or forced scoring that cannot proceed (e.g. an LF outside the grammar)."""


class SettingError(AmpError, ValueError):
    """A setting outside its valid range (zero or negative counts, NaN, a temperature of 0, …)."""


class CacheError(AmpError, RuntimeError):
    """The on-disk result cache cannot be opened or written."""
