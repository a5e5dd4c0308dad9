"""Every error the classroom package raises on purpose, in one place (each derives from
:class:`amp.errors.AmpError`)."""

from __future__ import annotations

from amp.errors import AmpError


class VoteRefused(AmpError, ValueError):
    """A request to the light vote page refused with an HTTP ``status`` (4xx) and a message the
    phone shows as it stands (:mod:`amp.classroom.vote_routes`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message
