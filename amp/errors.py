"""Typed errors of the amp library.  Each carries what a user needs to fix the input."""

from __future__ import annotations


class AmpError(Exception):
    """Base class of every error the amp library raises on purpose."""


class PromptError(AmpError, ValueError):
    """A prompt that cannot be built (ratio out of range, empty pool, bad index)."""


class MetricError(AmpError, ValueError):
    """Metric input that is malformed (e.g. mismatched lengths, k out of range)."""


class RatioError(PromptError, MetricError):
    """A ratio of LF0 examples (docs/paper-notes.md §11) that is not a number in [0, 1].

    One class for prompts, metrics and sweeps (:func:`amp.prompts.check_ratio`), so it is both a
    :class:`PromptError` and a :class:`MetricError`.
    """


class SettingError(AmpError, ValueError):
    """A setting outside its valid range (zero or negative counts, NaN, a temperature of 0, …)."""


class CacheError(AmpError, RuntimeError):
    """The on-disk result cache cannot be opened or written."""


class CacheWarning(UserWarning):
    """A cache entry could not be used (corrupt, unsafe or unreadable) and was dropped."""


class UnsafeEntryError(ValueError):
    """A stored row that this cache refuses to decode (pickle mode, non-text, bad path)."""
