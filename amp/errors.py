"""Typed errors of the amp library.  Each carries what a user needs to fix the input.

One tree: every error raised on purpose derives from :class:`AmpError` (the app shows it in an
error box, the CLI as one ``error:`` line, the service as a 4xx JSON body).  This module holds the
base and the errors several packages share; each package declares its own in its ``errors``
module (``amp/logic/errors.py``, ``amp/data/errors.py``, ``amp/parser/core/errors.py``,
``amp/evaluation/errors.py``, ``amp/teaching/errors.py``, ``amp/serve/errors.py``,
``amp/cli/errors.py``).  The one class here that is no :class:`AmpError` is :class:`CacheWarning`:
a warning category, issued with :func:`warnings.warn` and never raised for a handler to catch
(``tests/foundation/test_error_tree.py`` holds the rule).
"""

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


class UnsafeEntryError(AmpError, ValueError):
    """A stored row that the result cache refuses to decode (pickle mode, non-text, bad path).

    Raised inside :class:`amp.cache_disk.JSONTextDisk` and caught by :meth:`amp.cache.ResultCache.get`,
    which treats the row as corrupt: a :class:`CacheWarning`, the entry dropped and recomputed.
    """
