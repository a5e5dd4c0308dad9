"""``amp detect`` on a tiny model: JSON report, CSV rows, the probes, and bad input as one error line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from amp.cli import main
from amp.detection.report import CSV_COLUMNS, RowKind
from amp.detection.signals import Signal

#: A small, fast run: two types, two sentences each per label, the mixed prompt, a short search.
SMALL = ["--per-type", "2", "--types", "pp", "conj", "--prompts", "mixed", "--beams", "2",
         "--max-new-tokens", "40", "--resamples", "50", "--device", "cpu"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["detect", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_signals_as_json_then_as_csv(long_tiny_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--model", str(long_tiny_model), *SMALL)
    assert code == 0, err
    assert "signals" in err and "[" in err  # progress on stderr, nothing of it on stdout
    data = json.loads(out)
    report = data["report"]
    assert data["model"] == str(long_tiny_model) and report["probes"] is None
    assert (report["per_type"], report["types"], report["n_train"] + report["n_test"]) == (2, ["pp", "conj"], 8)
    assert len(report["signals"]["sentences"]) == 8
    assert {a["signal"] for a in report["signals"]["aurocs"]} == {str(s) for s in Signal}

    code, out, _ = _run(capsys, "--model", str(long_tiny_model), "--csv", *SMALL)  # cached: instant
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert {r["kind"] for r in rows} == {str(RowKind.SIGNAL)}
    assert {r["type"] for r in rows} == {"pp", "conj", "all"} and {r["part"] for r in rows} == {"all", "test"}
    assert len(rows) == len(Signal) * 4
    for r in rows:
        assert r["auroc"] == "" or 0.0 <= float(r["auroc"]) <= 1.0


def test_probe_rows(saved_tiny_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--model", str(saved_tiny_model), "--device", "cpu", "--probe", "--csv",
                          "--per-type", "10", "--types", "pp", "conj", "--layers", "0", "2", "--resamples", "50")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    kinds = [r["kind"] for r in rows]
    assert str(RowKind.SIGNAL) not in kinds  # --probe alone: no signals
    assert kinds.count(str(RowKind.WORDS)) == 1
    probes = [r for r in rows if r["kind"] == str(RowKind.PROBE)]
    assert {r["layer"] for r in probes} == {"0", "2"} and all(r["part"] == "test" for r in probes)
    assert kinds.count(str(RowKind.SHUFFLED)) == len(probes)


@pytest.mark.parametrize(("argv", "says"), [
    (["--per-type", "900", "--types", "bound"], "per_type"),  # more than the pools hold: a library error
    (["--layers", "99", "--probe", "--per-type", "4", "--types", "pp"], "layer"),
])
def test_bad_input_is_one_error_line(saved_tiny_model: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                     says: str) -> None:
    code, out, err = _run(capsys, "--model", str(saved_tiny_model), "--device", "cpu", *argv)
    assert code != 0 and out == ""
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: ") and says in lines[-1]
    assert "Traceback" not in err


def test_reproduce_writes_the_detection_csv(long_tiny_model: Path, tmp_path: Path) -> None:
    """What ``amp reproduce --detect N`` adds to its folder: the signals' AUROC rows as CSV."""
    from amp.cli.detect import DETECTION_CSV, write_detection_csv
    from amp.parser.parser import Parser
    from amp.parser.search.settings import SearchSettings

    parser = Parser(str(long_tiny_model), device="cpu")
    path = write_detection_csv(parser, tmp_path, per_type=2, seed=1, types=["conj"],
                               search=SearchSettings(beams=2, max_new_tokens=40))
    assert path == tmp_path / DETECTION_CSV
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert {r["prompt"] for r in rows} == {"zero-shot", "mixed"} and {r["type"] for r in rows} == {"conj", "all"}
    for kind in ("zero-shot", "mixed"):  # its figure: the signals' ROC curves under each prompt
        html = (tmp_path / f"ambiguity_detection_{kind}.html").read_text(encoding="utf-8")
        assert f"{kind} prompt" in html and "semantic entropy" in html.lower()
