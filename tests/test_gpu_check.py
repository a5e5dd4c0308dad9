"""bench/gpu_check.py: a quick CPU run on the tiny model fills every phase; cuda without CUDA fails cleanly."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "gpu_check.py"


@pytest.fixture(scope="module")
def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny_4096(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tiny_models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("gpu-check") / "tiny", n_positions=4096)


def test_quick_cpu_run_reports_every_phase(gpu_check, tiny_4096: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "check.json"
    rc = gpu_check.main([
        "--device", "cpu", "--dtype", "float32", "--quick", "--skip-default",
        "--model", str(tiny_4096), "--max-new-tokens", "12", "--json-out", str(out),
    ])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "beam5_b1" in printed and "bw%" in printed and "bandwidth bound" in printed
    data = json.loads(out.read_text())
    assert data["meta"]["device"] == "cpu" and data["meta"]["bandwidth_gbs"] > 0
    assert data["meta"]["torch"] and data["meta"]["transformers"]
    (model,) = data["models"]
    assert "error" not in model and model["weight_bytes"] > 0
    phases = {p["phase"]: p for p in model["phases"]}
    assert set(phases) == {"beam5_b1", "beam5_b2", "score", "joint_b2"}
    for name, p in phases.items():
        assert "error" not in p, (name, p)
        assert p["items"] == 2 and p["seconds"] > 0 and p["items_per_s"] > 0, (name, p)
    for name in ("beam5_b1", "beam5_b2", "joint_b2"):
        p = phases[name]
        assert p["gen_tokens"] > 0 and p["tokens_per_s"] > 0, (name, p)
        assert p["decode_steps"] > 0 and p["steps_per_s"] > 0, (name, p)
        assert p["bw_fraction"] > 0 and p["bw_fraction_forward"] > 0, (name, p)
        assert p["few_shot"] + p["zero_shot"] == 2


def test_cuda_without_cuda_is_one_error_line(gpu_check, monkeypatch, capsys) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rc = gpu_check.main(["--device", "cuda", "--skip-default", "--model", "whatever"])
    assert rc == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "CUDA" in lines[0]
    assert "Traceback" not in captured.err + captured.out


def test_bandwidth_lookup(gpu_check) -> None:
    assert gpu_check.bandwidth_for("NVIDIA H200", None) == (4800.0, "table (H200)")
    assert gpu_check.bandwidth_for("NVIDIA H100 80GB HBM3", None)[0] == 3350.0
    assert gpu_check.bandwidth_for("NVIDIA A100-SXM4-80GB", None)[0] == 2039.0
    assert gpu_check.bandwidth_for("NVIDIA L4", None)[0] == 300.0
    assert gpu_check.bandwidth_for("NVIDIA L4", 123.0) == (123.0, "--bandwidth-gbs")
    gbs, source = gpu_check.bandwidth_for("Mystery GPU", None)
    assert gbs == 4800.0 and "not in the table" in source


def test_a_failing_phase_is_reported_and_the_rest_run(gpu_check, tiny_4096: Path, tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    from amp.parser.search import decode

    real = decode.beam_search_batch

    def flaky(model, tokenizer, prompts, **kw):
        if len(prompts) == 2:
            raise RuntimeError("CUDA out of memory (simulated)\nsecond line")
        return real(model, tokenizer, prompts, **kw)

    monkeypatch.setattr(decode, "beam_search_batch", flaky)
    out = tmp_path / "check.json"
    rc = gpu_check.main([
        "--device", "cpu", "--dtype", "float32", "--quick", "--skip-default", "--batch-sizes", "2",
        "--model", str(tiny_4096), "--max-new-tokens", "8", "--json-out", str(out),
    ])
    assert rc == 0
    phases = {p["phase"]: p for p in json.loads(out.read_text())["models"][0]["phases"]}
    assert phases["beam5_b2"]["error"] == "RuntimeError: CUDA out of memory (simulated) second line"
    assert phases["score"]["items_per_s"] > 0 and phases["joint_b2"]["items_per_s"] > 0
    printed = capsys.readouterr().out
    assert "FAILED" in printed and "Traceback" not in printed
