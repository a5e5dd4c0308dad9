"""``python -m amp serve`` as a user starts it, with a token, and the CLI as its client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from service_helpers import free_port

REPO = Path(__file__).resolve().parents[2]
TOKEN = "a-test-token-of-enough-length"


def amp(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amp", *args], cwd=REPO, env=env, input=stdin, text=True,
                          capture_output=True, timeout=300, check=False)


def _wait_until_healthy(url: str, seconds: float) -> None:
    """Poll ``/health`` until it answers 200 (the test fails after ``seconds``)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail("the service did not come up")


def _stop(server: subprocess.Popen) -> None:
    """Stop ``amp serve`` as Ctrl-C does (killed if it does not end within a minute)."""
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()


def test_beyond_loopback_without_a_token_is_refused():
    env = {k: v for k, v in os.environ.items() if k != "AMP_TOKEN"}
    out = amp("serve", "--host", "0.0.0.0", env=env)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "AMP_TOKEN" in out.stderr
    assert "Traceback" not in out.stderr


def test_serve_with_a_token_and_the_cli_as_client(saved_tiny_model, tmp_path):
    pytest.importorskip("ray")
    port = free_port()
    env = {**os.environ, "AMP_CACHE_DIR": str(tmp_path / "server"), "AMP_TOKEN": TOKEN, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "amp", "serve", "--model", str(saved_tiny_model),
                               "--device", "cpu", "--dtype", "float32", "--port", str(port)],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(url, 180)
        prompt = tmp_path / "p.txt"
        prompt.write_text("Human: the man saw a girl\nComputer:")
        client = {**os.environ, "AMP_CACHE_DIR": str(tmp_path / "client"), "AMP_TOKEN": TOKEN}
        ok = amp("parse", "--server", url, "--prompt-file", str(prompt), "--beams", "2", "--max-new-tokens", "12",
                 "--json", env=client)
        assert ok.returncode == 0, ok.stderr
        assert '"beams"' in ok.stdout
        wrong = amp("parse", "--server", url, "--prompt-file", str(prompt), "--beams", "2",
                    env={**client, "AMP_TOKEN": "not-the-token-at-all"})
        assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "refused access (401)" in wrong.stderr
        mixed = amp("parse", "--server", url, "--model", "other-model", "--prompt-file", str(prompt), env=client)
        assert mixed.returncode == 2 and "cannot be combined with --server" in mixed.stderr
    finally:
        _stop(server)
    assert server.returncode == 0


@pytest.mark.slow
def test_serve_runs_the_default_model_on_llama_cpp_by_the_default_rule(tmp_path):
    """Issue #29: ``amp serve`` with no engine chosen serves the embedded GGUF with llama.cpp on a
    CPU machine; the CLI parses and scores through it."""
    import json

    pytest.importorskip("ray")
    pytest.importorskip("llama_cpp")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "AMP_ENGINE"}
    env.update({"AMP_CACHE_DIR": str(tmp_path / "server"), "AMP_TOKEN": TOKEN, "HF_HUB_OFFLINE": "1"})
    server = subprocess.Popen([sys.executable, "-m", "amp", "serve", "--port", str(port)], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(url, 240)
        ask = urllib.request.Request(url + "/v1/info", headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(ask, timeout=30) as r:
            info = json.load(r)
        assert info["runtime"]["dtype"].startswith("llama.cpp-"), info["runtime"]
        assert info["runtime"]["versions"]["engine"] == "llama.cpp"
        prompt = tmp_path / "p.txt"
        prompt.write_text("Human: the boy saw the girl\nComputer: exists x . exists y . boy(x) AND girl(y) AND "
                          "saw(x, y)\nHuman: the cat chased the dog\nComputer:")
        client = {**env, "AMP_CACHE_DIR": str(tmp_path / "client")}
        ok = amp("parse", "--server", url, "--prompt-file", str(prompt), "--beams", "3", "--max-new-tokens", "40",
                 "--lf", "exists x . exists y . cat(x) AND dog(y) AND chased(x, y)",
                 "--lf", "exists x . exists y . dog(x) AND cat(y) AND chased(x, y)", "--json", env=client)
        assert ok.returncode == 0, ok.stderr
        payload = json.loads(ok.stdout)
        assert len(payload["result"]["beams"]) == 3
        assert 0.0 <= payload["verdict"]["p_lf0"] <= 1.0
    finally:
        _stop(server)
    assert server.returncode == 0
