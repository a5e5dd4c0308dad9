"""Hostile and careless input (issue #12): every front end refuses it with a clear message.

CLI: every subcommand with a table of bad arguments gives exactly one ``error:`` line on
stderr, no traceback, and exit status 2 (usage) or 1 (data); a model folder with its own
Python code is never run without ``--trust-remote-code``, whatever stdin says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from amp.settings import REPO_ROOT

PROMPT = "Human: every boy saw a cat\nComputer:\n"
LF0 = "exists x . forall y . boy(y) AND cat(x)"


def amp_cli(args: list[str], tmp_path: Path, *, stdin: bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m amp ARGS`` in a real process (its own cache, offline)."""
    full_env = {**os.environ, "AMP_CACHE_DIR": str(tmp_path / "amp-cache"), "HF_HUB_OFFLINE": "1",
                "PYTHONPATH": str(REPO_ROOT), **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "amp", *args], cwd=tmp_path, env=full_env,
                          input=stdin if stdin is not None else b"", capture_output=True,
                          timeout=timeout, check=False)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def assert_one_error_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """Exactly one ``error:`` line on stderr, no traceback, exit ``code``; returns that line."""
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    return errors[0]


# --------------------------------------------------------------------------------------------
# 3. no code execution on stdin


@pytest.fixture
def custom_code_model(saved_tiny_model: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The tiny model with a config whose ``auto_map`` names Python in the folder, and the file
    that Python writes when it is ever imported."""
    folder = tmp_path / "custom-code-model"
    shutil.copytree(saved_tiny_model, folder)
    marker = tmp_path / "custom-code-ran"
    (folder / "custom_model.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "from transformers import GPT2Config, GPT2LMHeadModel\n"
        "class CustomConfig(GPT2Config):\n    model_type = 'amp_custom_test'\n"
        "class CustomModel(GPT2LMHeadModel):\n    config_class = CustomConfig\n",
        encoding="utf-8")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["model_type"] = "amp_custom_test"  # unknown to transformers: only the folder's code reads it
    config["auto_map"] = {"AutoConfig": "custom_model.CustomConfig",
                          "AutoModelForCausalLM": "custom_model.CustomModel"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder, marker


def test_custom_code_never_runs_on_a_y_from_stdin(custom_code_model: tuple[Path, Path], tmp_path: Path) -> None:
    folder, marker = custom_code_model
    (tmp_path / "prompt.txt").write_text(PROMPT, encoding="utf-8")
    proc = amp_cli(["parse", "--model", str(folder), "--prompt-file", "prompt.txt", "--device", "cpu",
                    "--max-new-tokens", "4", "--no-cache"], tmp_path, stdin=b"y\ny\ny\n")
    line = assert_one_error_line(proc, 2)
    assert "--trust-remote-code" in line
    assert not marker.exists(), "the folder's own Python ran"


def test_custom_code_refused_in_the_library(custom_code_model: tuple[Path, Path]) -> None:
    from amp.errors import ModelLoadError
    from amp.parser.models import load_model

    folder, marker = custom_code_model
    with pytest.raises(ModelLoadError, match="trust.remote.code"):
        load_model(str(folder), device="cpu")
    assert not marker.exists()


def test_unknown_hub_id_without_network_fails_fast(tmp_path: Path) -> None:
    """No HF_HUB_OFFLINE, a Hub that cannot be reached (a host that does not resolve): one error line
    that says so, long before huggingface_hub's retries would give up."""
    (tmp_path / "prompt.txt").write_text(PROMPT, encoding="utf-8")
    env = {"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": "", "HF_ENDPOINT": "http://amp-no-such-host.invalid",
           "HF_HOME": str(tmp_path / "hf")}
    proc = amp_cli(["parse", "--model", "amp-tests/no-such-model", "--prompt-file", "prompt.txt",
                    "--device", "cpu"], tmp_path, env=env, timeout=60)
    line = assert_one_error_line(proc, 2)
    assert "cannot be reached" in line and "HF_HUB_OFFLINE=1" in line
    assert "Retrying" not in proc.stderr  # huggingface_hub's backoff loop (about a minute) never started
