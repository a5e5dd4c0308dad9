"""A scriptable OpenAI-compatible endpoint on loopback, for the API client's hostile-server tests.

:func:`serve` starts a real ``http.server`` on a free loopback port in a thread; ``GET …/models``
lists the model ``m``, every ``POST`` is answered by the test's ``script(handler, number)``
(``number``: 1 for the first POST, …), and :attr:`Endpoint.posts` counts what arrived.  The
helpers write the replies a hostile or broken server sends: JSON with any status and headers,
raw bytes, a body trickled one byte a second, an endless chunked stream, a chat reply, an echo
with prompt log-probs.  Handler threads are
daemons that end when the client goes away, so a test never waits for a stuck reply.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: The model the endpoint lists.
MODEL = "m"

Script = Callable[[BaseHTTPRequestHandler, int], None]


def completion(*texts: str, finish: str = "stop", logprobs: Any = None) -> dict[str, Any]:
    """A ``/completions`` reply with one choice per text."""
    return {"id": "c", "object": "text_completion", "created": 0, "model": MODEL,
            "choices": [{"index": i, "text": t, "finish_reason": finish, "logprobs": logprobs}
                        for i, t in enumerate(texts)]}


def chat(*texts: str, finish: str = "stop") -> dict[str, Any]:
    """A ``/chat/completions`` reply with one choice per text."""
    return {"id": "c", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": finish}
                        for i, t in enumerate(texts)]}


def echoed(prompt: str) -> dict[str, Any]:
    """A ``/completions`` reply echoing ``prompt`` with a log-prob for every character (one
    token each) and one generated line break: what a server that echoes prompt log-probs sends."""
    text = prompt + "\n"
    tokens = list(text)
    return {"id": "c", "object": "text_completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "text": text, "finish_reason": "length",
                         "logprobs": {"tokens": tokens, "text_offset": list(range(len(tokens))),
                                      "token_logprobs": [None] + [-0.1] * (len(tokens) - 1),
                                      "top_logprobs": [None] + [{t: -0.1} for t in tokens[1:]]}}]}


def send_json(handler: BaseHTTPRequestHandler, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
    send_bytes(handler, code, json.dumps(body).encode(), headers)


def send_bytes(handler: BaseHTTPRequestHandler, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def trickle(handler: BaseHTTPRequestHandler, data: bytes, *, every_s: float = 1.0, headers_too: bool = False) -> None:
    """``data`` as a 200 reply, one byte every ``every_s`` (the status line and headers too when
    ``headers_too``), until the client goes away."""
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n").encode()
    handler.close_connection = True
    try:
        if not headers_too:
            handler.wfile.write(head)
            handler.wfile.flush()
            head = b""
        for byte in head + data:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(every_s)
    except OSError:
        pass


def endless_chunks(handler: BaseHTTPRequestHandler, chunk: bytes = b"x" * 65536, *, limit: int = 2**31) -> None:
    """A chunked 200 reply that never ends (until the client goes away, or ``limit`` bytes)."""
    handler.close_connection = True
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        sent = 0
        while sent < limit:
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sent += len(chunk)
    except OSError:
        pass


@dataclass
class Endpoint:
    """A running endpoint: ``base`` is its ``/v1`` URL; ``posts`` the POST paths in arrival order."""

    base: str
    posts: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def serve(script: Script, *, models: bytes | None = None) -> Iterator[Endpoint]:
    """An endpoint answering every POST with ``script`` (and ``GET …/models`` with ``models``, by
    default a list of :data:`MODEL`), stopped (bounded) when the block ends."""
    lock = threading.Lock()
    endpoint = Endpoint(base="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.endswith("/models") and models is not None:
                send_bytes(self, 200, models)
            elif self.path.endswith("/models"):
                send_json(self, 200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "me"}]})
            else:
                send_json(self, 404, {"error": {"message": "no such page"}})

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                endpoint.posts.append(self.path)
                endpoint.bodies.append(json.loads(raw or b"{}"))
                number = len(endpoint.posts)
            script(self, number)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        block_on_close = False

    server = Server(("127.0.0.1", 0), Handler)
    endpoint.base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
