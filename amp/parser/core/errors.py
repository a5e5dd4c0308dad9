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


class ThreadsError(ModelLoadError, ValueError):
    """A thread count for llama.cpp that is not a whole number >= 1 (``threads=`` or
    ``$AMP_LLAMA_THREADS``, :mod:`amp.parser.backends.llama_threads`)."""


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
    ``"needs-logprobs"``, ``"refusal"``, ``"invalid-reply"``, ``"too-large"`` and ``"budget"``).
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


class BudgetSpent(EndpointUnreachable):
    """The time budget of a command's requests to a model endpoint (``--api-budget``) ran out: like
    an endpoint that cannot be reached, a sweep stops at it with this one message (what finished
    is cached)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.kind = "budget"


class LogprobsUnavailable(BackendError):
    """A result that needs log-probs (P(LF0), token confidences) from a model that gives none."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="needs-logprobs")


class ModelRefused(BackendError):
    """A model behind an API refused to answer (a refusal or its content filter)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="refusal")


class InvalidReply(BackendError):
    """A model endpoint's reply that is not what the API promises: not JSON, or JSON of the wrong
    shape (``choices`` not a list, a choice without text, log-probs of the wrong kind); the message
    names the endpoint and what was wrong (:mod:`amp.parser.backends.api_protocol`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="invalid-reply")


class ReplyTooLarge(BackendError):
    """A model endpoint's reply over the API backend's byte cap: reading stopped at the cap
    (:data:`amp.parser.backends.api_protocol.MAX_REPLY_BYTES`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="too-large")


class DeadlinePassed(BackendError):
    """A request to a model endpoint past its deadline: its own (connecting and every read,
    ``--api-timeout``) or, when ``budget``, the command's time budget (``--api-budget``)."""

    def __init__(self, message: str, *, budget: bool = False) -> None:
        super().__init__(message, kind="timeout")
        self.budget = budget


class ApiWarning(UserWarning):
    """A model endpoint answered other than asked and the API backend says what it does about it
    (an endpoint that ignores ``n``; chat-template markers in its choices); issued with
    :func:`warnings.warn`, never raised."""
