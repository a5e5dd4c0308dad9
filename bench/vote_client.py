"""A phone on the light vote page (``/vote?poll=CODE``, :mod:`amp.classroom.vote_routes`), as cheap as a
phone can be simulated: one keep-alive HTTP/1.1 connection (asyncio streams), its own voter cookie,
and exactly the requests a browser on that page sends — the page and its two files on opening, the
poll's state, then one JSON POST per answer (moving to the next sentence sends nothing).
"""

from __future__ import annotations

import asyncio
import json
import time
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlparse

from errors import StreamlitClientError

#: What a browser fetches when it opens the student link.
PAGE_FILES = ("/vote/vote.js", "/vote/vote.css")
#: Seconds a connection may sit idle before the phone opens a new one (uvicorn closes an idle
#: keep-alive connection after 5 s, and a browser then opens another: so does this phone).
IDLE_S = 4.0


class VotePhone:
    """One phone: :meth:`open` the link, then :meth:`answer` each sentence (the reply and its time)."""

    def __init__(self, url: str, code: str) -> None:
        parts = urlparse(url)
        self.host, self.port, self.code = parts.hostname or "127.0.0.1", parts.port or 80, code
        self.cookie = ""
        self._io: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._used = 0.0

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
        if self._io is not None and time.monotonic() - self._used > IDLE_S:
            await self.close()
        if self._io is None:
            self._io = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._io
        data = json.dumps(body).encode() if body is not None else b""
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Connection: keep-alive",
                f"Content-Length: {len(data)}"]
        if body is not None:
            head.append("Content-Type: application/json")
        if self.cookie:
            head.append(f"Cookie: {self.cookie}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise StreamlitClientError(f"the app closed the connection on {method} {path}")
        status = int(status_line.split()[1])
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "set-cookie":
                jar = SimpleCookie(value.strip())
                for key, morsel in jar.items():
                    self.cookie = f"{key}={morsel.value}"
        data = await reader.readexactly(length)
        self._used = time.monotonic()
        return status, data

    async def open(self) -> dict[str, Any]:
        """Open the student link: the page, its files and the poll's state (the voter cookie comes with it)."""
        for path in (f"/vote?poll={self.code}", *PAGE_FILES):
            status, _ = await self._call("GET", path)
            if status != 200:
                raise StreamlitClientError(f"GET {path}: HTTP {status}")
        status, data = await self._call("GET", f"/vote/api/state?poll={self.code}")
        if status != 200:
            raise StreamlitClientError(f"the poll's state: HTTP {status}: {data[:200]!r}")
        return json.loads(data)

    async def answer(self, item: int, choice: int, confidence: int) -> tuple[float, float, int, dict[str, Any]]:
        """Press Submit: (sent at, answered at, HTTP status, reply)."""
        sent = time.monotonic()
        status, data = await self._call("POST", "/vote/api/answer", {"poll": self.code, "item": item,
                                                                      "choice": choice, "confidence": confidence})
        return sent, time.monotonic(), status, json.loads(data)

    async def close(self) -> None:
        if self._io is not None:
            self._io[1].close()
            self._io = None
