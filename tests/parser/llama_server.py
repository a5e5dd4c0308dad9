"""llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``) on loopback, for the API tests.

The real server of ``llama-cpp-python[server]`` with the embedded model's GGUF (found through
:func:`amp.parser.models.embedded.default_package` and :func:`amp.settings.models_dir`, assembled
there once if missing), a free port, a bounded wait on ``/v1/models``, and a stop that kills only
the process it started.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

#: The model name clients send (``--model_alias``).
ALIAS = "gemma"
#: Seconds to wait for the server to list its model (the 2 shared cores may be very busy).
START_TIMEOUT_S = 240.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def embedded_gguf() -> Path:
    """The embedded model's GGUF in the models folder, assembled from its package if missing."""
    from amp.parser.models.embedded import default_package
    from amp.settings import models_dir

    pkg = default_package()
    path = models_dir() / pkg.MODEL_NAME
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        pkg.assemble(path)
    return path


@dataclass
class LlamaServer:
    """A running server: ``base`` is its ``/v1`` URL, ``alias`` its model name."""

    process: subprocess.Popen
    port: int
    log: Path
    alias: str = ALIAS

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Stop the server this helper started (its own process group), bounded."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def start(log_dir: Path, *, api_key: str | None = None, n_ctx: int = 1024) -> LlamaServer:
    """Start the server and wait (at most :data:`START_TIMEOUT_S`) until ``/v1/models`` lists the model."""
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_gguf()), "--model_alias", ALIAS,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2"]
    if api_key:
        cmd += ["--api_key", api_key]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = LlamaServer(proc, port, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"llama.cpp's server exited: {log.read_text(errors='replace')[-2000:]}")
        request = urllib.request.Request(f"{server.base}/models",
                                         headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                if any(m["id"] == ALIAS for m in json.load(reply)["data"]):
                    return server
        except OSError:
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"llama.cpp's server did not list {ALIAS} within {START_TIMEOUT_S:g} s")
