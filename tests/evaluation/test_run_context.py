"""Issue #28 point 5: every run's report and manifest records where it ran — the server (no
token), engine, device, dtype, model identity and code digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from info_server import InfoServer

from amp import code_digest
from amp.evaluation import experiments as ex
from amp.evaluation import runs
from amp.evaluation.run_context import IN_PROCESS, RunContext, public_url, run_context
from amp.parser import Parser
from amp.reporting import png_export
from amp.reporting.report import write_report

LF0 = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
LF1 = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"
TOKEN = "sekrit-token-never-written"


def _where(report: str) -> dict[str, str]:
    """The report's "Where it ran" section as {key: value}."""
    section = report.split("## Where it ran\n\n", 1)[1].split("\n\n", 1)[0]
    return dict(line.removeprefix("* **").split("**: ", 1) for line in section.splitlines())


def test_reproduce_records_where_it_ran(saved_tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(png_export, "find_browser", lambda: None)
    from amp.cli import main

    assert main(["reproduce", "--model", str(saved_tiny_model), "--n-zero", "1", "--n-few", "0", "--types", "pp",
                 "--device", "cpu", "--max-new-tokens", "8", "--name", "ctx", "--out", str(tmp_path / "r")]) == 0
    parser = Parser(str(saved_tiny_model), device="cpu")
    expected = {"model": str(saved_tiny_model), "identity": parser.identity, "server": IN_PROCESS,
                "engine": "transformers", "device": "cpu", "dtype": "float32",
                "engine_versions": " · ".join(f"{k} {v}" for k, v in parser.runtime().versions.items()),
                "code": f"{code_digest.CODE_VERSION}+{code_digest.code_digest()[:16]}"}
    assert _where((tmp_path / "r" / "report.md").read_text(encoding="utf-8")) == expected
    settings = json.loads((tmp_path / "cache" / "runs" / "ctx.json").read_text(encoding="utf-8"))["settings"]
    assert {k: settings[k] for k in expected} == expected
    assert expected["identity"].startswith("local:") and "sha256=" in expected["identity"]


def test_a_run_on_a_server_records_its_url_and_runtime_never_the_token(tmp_path: Path) -> None:
    server = InfoServer()
    try:
        parser = Parser.remote(server.url, token=TOKEN, cache=False)
        context = run_context(parser)
    finally:
        server.stop()
    assert context.server == server.url and context.model == "amp-tests/remote-only"
    assert context.identity.startswith("amp-tests/remote-only@")
    assert (context.device, context.dtype, context.engine) == ("cpu", "float32", "transformers")
    assert RunContext.from_dict(context.to_dict()) == context
    record = ex.SweepRecord(id="z/pp/0", type="pp", ratio=None, surface="s", lf0=LF0, lf1=LF1, beams=(LF0,),
                            p_lf0=0.6, p_lf0_total=0.6, **ex.match_fields([LF0], LF0, LF1, "logical", "fol"))
    config = ex.ZeroShotConfig(types=("pp",), n=1, seed=0)
    path = runs.save_sweep(config, [record], model=context.model, identity=context.identity, dtype=context.dtype,
                           directory=tmp_path / "runs", context=context)
    written = write_report([record], [], tmp_path / "report", runs.load_manifest(path)["settings"])
    report = written["report.md"].read_text(encoding="utf-8")
    assert _where(report)["server"] == server.url and _where(report)["engine"] == "transformers"
    assert TOKEN not in report and TOKEN not in path.read_text(encoding="utf-8")


def test_public_url_drops_credentials() -> None:
    assert public_url("http://amp:pw@gpu-box:8600/?token=x#y") == "http://gpu-box:8600"
    assert public_url("https://[::1]:8600/api/") == "https://[::1]:8600/api"


def test_a_llama_cpp_parser_records_its_engine() -> None:
    """A run computed by the llama.cpp engine says so (its runtime names the engine; no model loads)."""
    pytest.importorskip("llama_cpp")
    context = run_context(Parser("default", engine="llama.cpp", cache=False))
    assert context.engine == "llama.cpp"
    assert context.dtype.startswith("llama.cpp-") and context.device == "cpu"


def test_a_model_behind_an_api_records_no_local_engine() -> None:
    """A run whose model answered from an API endpoint does not say an engine of this process ran it."""
    from amp.evaluation.run_context import BEHIND_API
    from amp.parser.backends.api import ApiBackend
    from amp.parser.backends.api_protocol import ApiSettings

    backend = ApiBackend(ApiSettings(base_url="http://127.0.0.1:9/v1", model="m", mode="completions"))
    context = run_context(Parser(backend=backend, cache=False))
    assert context.engine == BEHIND_API
    assert "transformers" not in context.engine and "llama" not in context.engine
