"""Every error the parser service raises on purpose (before it answers over HTTP)."""

from __future__ import annotations

from amp.errors import AmpError


class ServeError(AmpError, ValueError):
    """A service that cannot start as asked (bad option, no token beyond loopback, no GPU)."""


class JobStoreFull(AmpError, ValueError):
    """A job the job store has no room for (:mod:`amp.serve.jobs`): the message names the cap of
    :mod:`amp.parser.core.limits`; ``status`` is the HTTP status that refuses it (429 while other
    jobs fill the store, 413 for a job larger than the whole store)."""

    def __init__(self, message: str, *, status: int = 429) -> None:
        super().__init__(message)
        self.status = status


class DeadlinePassed(AmpError):
    """A request stopped on a replica because it ran past the service's deadline
    (:attr:`amp.serve.work.ServeConfig.deadline_s`); answered with a 503 naming it."""
