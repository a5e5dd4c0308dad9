"""Helpers of the service tests (a module name of its own: ``conftest`` is ambiguous across folders)."""

from __future__ import annotations

import socket

#: The test service's deadline (seconds a request may take on a replica): short, so that a test sees it
#: fire, and long enough for every other request of the tests on a busy machine.
SERVICE_DEADLINE_S = 20.0


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nested(depth: int) -> dict:
    """``{"a": {"a": … {}}}``: ``depth`` objects inside one another (built without recursion)."""
    top: dict = {}
    inner = top
    for _ in range(depth - 1):
        inner["a"] = {}
        inner = inner["a"]
    return top
