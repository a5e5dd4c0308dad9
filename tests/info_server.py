"""A real HTTP server on loopback that answers the parser service's ``/health`` and ``/v1/info``
(and nothing else): for tests of what a client does with a server that is up, then stopped."""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from amp.parser.backends.remote import API_VERSION, code_version


class InfoServer:
    """A real HTTP server on loopback answering ``/health`` and ``/v1/info`` as the parser service
    does (a model no one else has, so nothing is answered from the result cache); ``stop()`` closes it."""

    def __init__(self) -> None:
        info = {"api": API_VERSION, "code": code_version(), "spec": "amp-tests/remote-only", "top_n": 5,
                "replicas": 1, "limits": {},
                "runtime": {"model": f"amp-tests/remote-only@{uuid.uuid4().hex}", "tokenizer": "t",
                            "device": "cpu", "dtype": "float32", "versions": {}}}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = {"/health": {"status": "ok"}, "/v1/info": info}.get(self.path)
                data = json.dumps(body or {"error": {"message": "not found"}}).encode()
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
