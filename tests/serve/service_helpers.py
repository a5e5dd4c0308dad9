"""Helpers of the service tests (a module name of its own: ``conftest`` is ambiguous across folders)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
