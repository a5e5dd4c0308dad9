"""Every error the parser service raises on purpose (before it answers over HTTP)."""

from __future__ import annotations

from amp.errors import AmpError


class ServeError(AmpError, ValueError):
    """A service that cannot start as asked (bad option, no token beyond loopback, no GPU)."""
