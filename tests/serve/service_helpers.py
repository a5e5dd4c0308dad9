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


def per_replica(url: str, replicas: int, *, within_s: float = 60.0) -> dict[int, dict]:
    """Each replica's ``/v1/info`` ``stats``, by its ``replica`` id (its process id), once every one of the
    ``replicas`` has answered.  ``/v1/info`` answers from one replica at a time, and Serve's router sends
    it to the less busy one, so a fixed number of calls may see only one: ask until each has answered
    (bounded in time; the assertion names the replicas seen)."""
    import json
    import time
    import urllib.request

    seen: dict[int, dict] = {}
    end = time.monotonic() + within_s
    while len(seen) < replicas:
        assert time.monotonic() < end, f"only replicas {sorted(seen)} answered /v1/info within {within_s:g} s"
        with urllib.request.urlopen(url + "/v1/info", timeout=10) as r:
            info = json.loads(r.read())
        seen[info["replica"]] = info["stats"]
        if len(seen) < replicas:
            time.sleep(0.02)
    return seen
