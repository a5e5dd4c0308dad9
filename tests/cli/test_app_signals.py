"""``amp app`` passes SIGTERM on to its ``streamlit run`` child and waits for it (issue #27 item 6).

A real ``python -m amp app`` on a free loopback port: once the app answers its health check,
SIGTERM goes to ``amp app`` alone (not its process group), and the test checks that ``amp app``
exits and its child is gone (bounded loops throughout).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.read().strip() == b"ok"
    except OSError:
        return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_amp_app_stops_its_streamlit_child(tmp_path: Path, signum: int) -> None:
    port = _free_port()
    env = {**os.environ, "AMP_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("AMP_TEACHER_PASSWORD", None)
    cmd = [sys.executable, "-m", "amp", "app", "--address", "127.0.0.1", "--port", str(port), "--",
           "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    log = (tmp_path / "app.log").open("wb")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)  # its own group: the test can clean up everything
    child: int | None = None
    try:
        deadline = time.monotonic() + 120
        while not _healthy(f"http://127.0.0.1:{port}"):
            assert proc.poll() is None, (tmp_path / "app.log").read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the app did not start in 120 s"
            time.sleep(0.3)
        (child,) = _children(proc.pid)
        assert _alive(child)
        os.kill(proc.pid, signum)  # to amp app only, as a service manager or `kill PID` does
        proc.wait(timeout=60)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "amp app exited but its streamlit child still runs"
        assert not _healthy(f"http://127.0.0.1:{port}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)
        log.close()
