"""Every error the parser package raises on purpose, in one place.

All derive from :class:`amp.errors.AmpError`; each message says what to fix.  Loading a model
(:class:`ModelLoadError`), decoding (:class:`DecodingError`, and :class:`SearchCancelled` when a
search was stopped from outside), a request over a bound (:class:`RequestTooLarge`,
:mod:`amp.parser.core.limits`) and a backend that could not answer (:class:`BackendError`).
"""

from __future__ import annotations

from amp.errors import AmpError


class ModelLoadError(AmpError, RuntimeError):
    """A language model or tokenizer that cannot be loaded; the message says what to do."""


class ModelNameError(ModelLoadError, ValueError):
    """A model name that names no usable model here (checked before loading,
    :func:`amp.parser.models.names.check_model_name`); ``suggestions`` are close known names."""

    def __init__(self, message: str, *, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.suggestions = tuple(suggestions)


class UnknownEngine(ModelLoadError, ValueError):
    """An engine name that no engine is registered under (:func:`amp.parser.engines.check_engine`);
    ``choices`` are the registered names, which the message lists."""

    def __init__(self, name: str, choices: tuple[str, ...]) -> None:
        super().__init__(f"unknown engine {name!r}; use one of {', '.join(choices)}")
        self.name = name
        self.choices = tuple(choices)


class DecodingError(AmpError, RuntimeError):
    """Constrained decoding or forced scoring that cannot proceed (e.g. an LF outside the grammar)."""


class SearchCancelled(DecodingError):
    """The search was cancelled between two decode steps."""


class RequestTooLarge(AmpError, ValueError):
    """A request over one of the bounds of :mod:`amp.parser.core.limits`."""


class BackendError(AmpError):
    """A backend could not answer: unreachable, refused, wrong token, version mismatch, bad reply.

    ``status`` is the HTTP status of a remote refusal (None for other failures); ``kind`` a short
    machine-readable word (``"unreachable"``, ``"unauthorized"``, ``"version"``, ``"refused"``,
    ``"server"``, ``"protocol"``; the API backend adds ``"timeout"``, ``"unknown-model"``,
    ``"needs-logprobs"`` and ``"refusal"``).
    """

    def __init__(self, message: str, *, kind: str = "refused", status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class EndpointUnreachable(BackendError):
    """A model endpoint (:mod:`amp.parser.backends.api`) that cannot be reached, after its retries.

    A sweep stops at it with this one message (:func:`amp.parser.batch.run_batch` raises it
    instead of failing every further item the same way); what finished before is cached.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unreachable")


class LogprobsUnavailable(BackendError):
    """A result that needs log-probs (P(LF0), token confidences) from a model that gives none."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="needs-logprobs")


class ModelRefused(BackendError):
    """A model behind an API refused to answer (a refusal or its content filter)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="refusal")
