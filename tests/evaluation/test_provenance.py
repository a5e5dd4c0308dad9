"""Issue #46 point 3: every report and run manifest says when it ran (UTC), its wall time and the versions
of Python, torch, transformers, llama-cpp-python and numpy, and where it ran — in process, or a model
behind an API named by its endpoint (never its key), model and mode.  Manifests written before still
load.  (The service path — a sweep job saved as a run — is asserted in
``tests/serve/test_service.py::test_a_sweep_job_that_finished_with_no_tab_open_is_in_the_research_list``.)"""

from __future__ import annotations

import datetime
import importlib.util
import json
import platform
import sys
import time
from http.server import BaseHTTPRequestHandler
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from amp import code_digest
from amp.evaluation import provenance, runs
from amp.evaluation.errors import ReportError
from amp.evaluation.provenance import PROVENANCE_KEYS, Provenance, library_versions, provenance_of
from amp.evaluation.run_context import AT_ENDPOINT, BEHIND_API, IN_PROCESS
from amp.parser import Parser
from amp.reporting import png_export
from amp.reporting.report import write_report

KEY = "sk-provenance-KEY-never-written"


def _endpoint_helper() -> Any:
    """``tests/parser/hostile_endpoint.py``: a real OpenAI-compatible HTTP server on loopback."""
    if "hostile_endpoint" in sys.modules:  # imported by the API tests of this run
        return sys.modules["hostile_endpoint"]
    path = Path(__file__).parents[1] / "parser" / "hostile_endpoint.py"
    spec = importlib.util.spec_from_file_location("hostile_endpoint", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hostile_endpoint"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _section(report: str, title: str) -> dict[str, str]:
    """A ``## title`` section of report.md as {key: value}."""
    body = report.split(f"## {title}\n\n", 1)[1].split("\n\n", 1)[0]
    return dict(line.removeprefix("* **").split("**: ", 1) for line in body.splitlines())


def _assert_recent(date: str, slack_s: float = 600.0) -> None:
    when = datetime.datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    assert abs((datetime.datetime.now(datetime.UTC) - when).total_seconds()) < slack_s, date


def _assert_provenance(settings: dict[str, Any], report: str, elapsed: float) -> None:
    """Date (UTC ISO), the wall time (to 0.1 s, at most the ``elapsed`` seconds measured around the
    command), this process's versions — in the manifest and the report."""
    versions = library_versions()
    assert {k: settings[k] for k in versions} == versions
    assert versions["python"] == platform.python_version() and versions["torch"] == metadata.version("torch")
    _assert_recent(settings["date"])
    wall = settings["wall_time_s"]
    assert isinstance(wall, float) and wall == round(wall, 1) and 0 <= wall <= elapsed + 0.05  # a quick run may be 0.0
    assert _section(report, "When and with what") == {k: str(settings[k]) for k in PROVENANCE_KEYS}
    assert settings["code"] == f"{code_digest.CODE_VERSION}+{code_digest.code_digest()[:16]}"


def _reproduce(argv: list[str], tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], str, float]:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(png_export, "find_browser", lambda: None)
    from amp.cli import main

    began = time.monotonic()
    assert main(["reproduce", *argv, "--n-zero", "1", "--n-few", "0", "--types", "pp", "--name", "prov",
                 "--out", str(tmp_path / "r")]) == 0
    elapsed = time.monotonic() - began
    manifest = (tmp_path / "cache" / "runs" / "prov.json").read_text(encoding="utf-8")
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    return runs.load_manifest(tmp_path / "cache" / "runs" / "prov.json")["settings"], manifest + "\n" + report, elapsed


def test_an_in_process_run_records_where_when_and_with_what(saved_tiny_model: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    settings, written, elapsed = _reproduce(["--model", str(saved_tiny_model), "--device", "cpu", "--max-new-tokens", "8"],
                                   tmp_path, monkeypatch)
    report = written.split("\n# AmP reproduction report", 1)[1]
    runtime = Parser(str(saved_tiny_model), device="cpu", cache=False).runtime()
    assert (settings["server"], settings["engine"], settings["device"], settings["dtype"]) == (
        IN_PROCESS, "transformers", "cpu", "float32")
    assert settings["engine_versions"] == " · ".join(f"{k} {v}" for k, v in runtime.versions.items())
    assert "endpoint" not in settings and "api_mode" not in settings
    _assert_provenance(settings, report, elapsed)


def test_an_api_run_names_its_endpoint_model_and_mode_never_its_key(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A real HTTP endpoint (OpenAI-like): engine ``api``, the endpoint, the model and the mode — not
    ``transformers`` nor ``server: none (the model ran in this process)`` — and the key nowhere."""
    helper = _endpoint_helper()
    monkeypatch.setenv("AMP_API_KEY", KEY)

    def answer(handler: BaseHTTPRequestHandler, number: int) -> None:
        helper.send_json(handler, 200, helper.completion(" exists x . man(x)"))

    with helper.serve(answer) as endpoint:
        settings, written, elapsed = _reproduce(["--model", f"openai:{helper.MODEL}", "--api-base", endpoint.base,
                                        "--api-mode", "completions", "--api-logprobs", "off", "--beams", "1"],
                                       tmp_path, monkeypatch)
        assert endpoint.posts and all(p == "/v1/completions" for p in endpoint.posts)
    report = written.split("\n# AmP reproduction report", 1)[1]
    where = _section(report, "Where it ran")
    expected = {"model": f"openai:{helper.MODEL}", "server": AT_ENDPOINT, "endpoint": endpoint.base,
                "api_mode": "completions", "engine": BEHIND_API, "device": "api", "dtype": "api"}
    assert BEHIND_API == "api"
    assert {k: settings[k] for k in expected} == expected == {k: where[k] for k in expected}
    assert "api_mode completions" in settings["engine_versions"]
    assert "transformers" not in settings["engine"] and settings["server"] != IN_PROCESS
    _assert_provenance(settings, report, elapsed)
    assert KEY not in written


def test_provenance_is_this_process_now() -> None:
    before = provenance.utc_now()
    made = Provenance.now(wall_time_s=12.34)
    assert before <= made.date <= provenance.utc_now()  # ISO 8601 in UTC sorts as time does
    assert made.wall_time_s == 12.3 and made.versions == library_versions()
    settings = made.as_settings()
    assert list(settings) == list(PROVENANCE_KEYS)
    assert provenance_of(settings) == made
    assert Provenance.from_dict(json.loads(json.dumps(made.to_dict()))) == made
    assert "wall_time_s" not in Provenance.now().as_settings()  # unknown: not written as 0


def test_a_library_that_is_not_installed_is_recorded_as_none(monkeypatch: pytest.MonkeyPatch) -> None:
    real = metadata.version

    def version(dist: str) -> str:
        if dist == "llama-cpp-python":
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(provenance.metadata, "version", version)
    assert library_versions()["llama_cpp_python"] == provenance.NOT_INSTALLED == "none"
    assert library_versions()["numpy"] == real("numpy")


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "soon"])
def test_a_wall_time_that_is_no_duration_is_refused(bad: Any) -> None:
    with pytest.raises(ReportError, match="wall time"):
        Provenance.now(wall_time_s=bad)
    with pytest.raises(ReportError, match="wall time"):
        runs.save_manifest("x", {}, [], [], Path("/nonexistent-never-written"), wall_time_s=bad)


def test_every_manifest_is_stamped_and_what_a_run_says_is_kept(tmp_path: Path) -> None:
    path = runs.save_manifest("stamped", {"model": "m"}, [], [], tmp_path, wall_time_s=3.0)
    settings = runs.load_manifest(path)["settings"]
    assert settings["model"] == "m" and settings["wall_time_s"] == 3.0
    _assert_recent(settings["date"])
    assert {k: settings[k] for k in library_versions()} == library_versions()
    assert settings["code"] == f"{code_digest.CODE_VERSION}+{code_digest.code_digest()[:16]}"
    own = {"model": "m", "date": "2020-01-02T03:04:05Z", "wall_time_s": 9.5, "code": "amp-parser-0+server"}
    kept = runs.load_manifest(runs.save_manifest("own", own, [], [], tmp_path))["settings"]
    assert {k: kept[k] for k in own} == own


def test_an_old_manifest_without_provenance_still_loads_and_reports(tmp_path: Path) -> None:
    """A manifest written before issue #46 (no date, wall time, versions, engine versions) reads as before."""
    old = {"name": "old", "settings": {"model": "m", "identity": "m@1", "server": IN_PROCESS, "engine": "transformers",
                                       "device": "cpu", "dtype": "float32", "code": "amp-parser-1+abc", "beams": 5},
           "zero_shot": [], "few_shot": []}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = runs.load_manifest(path)
    assert loaded["settings"] == old["settings"] and loaded["zero_shot"] == []
    assert provenance_of(loaded["settings"]) is None
    report = write_report([], [], tmp_path / "r", loaded["settings"])["report.md"].read_text(encoding="utf-8")
    assert "## When and with what" not in report
    assert _section(report, "Where it ran")["engine"] == "transformers"
