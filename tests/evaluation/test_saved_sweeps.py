"""App sweeps saved as runs (issue #15 point 6): reproduce's place and format; records tables' column order."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.evaluation import experiments as ex
from amp.evaluation import runs
from amp.evaluation.sweep_summary import RECORD_VIEW_FIRST, records_view

LF0 = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
LF1 = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"


def _rec(id_: str, ratio: float | None, beams: list[str], cached: bool = False) -> ex.SweepRecord:
    return ex.SweepRecord(id=id_, type="pp", ratio=ratio, surface="s", lf0=LF0, lf1=LF1, beams=tuple(beams),
                          p_lf0=0.25, cached=cached, **ex.match_fields(beams, LF0, LF1, "logical", "fol"))


def test_a_zero_shot_sweep_is_saved_where_reproduce_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path))
    config = ex.ZeroShotConfig(types=("pp",), n=2, beams=3)
    records = [_rec("z/0", None, [LF0, LF1], cached=True), _rec("z/1", None, [LF1])]
    path = runs.save_sweep(config, records, model="/models/tiny-gpt2", identity="tiny@abc", page="Zero-shot page")
    assert path.parent == runs.runs_dir() == tmp_path / "runs" and runs.list_runs() == [path]
    assert path.stem.startswith("app-zero-shot-pp-tiny-gpt2-") and len(path.stem) == len("app-zero-shot-pp-tiny-gpt2-") + 10
    run = runs.load_manifest(path)
    assert run["zero_shot"] == records and run["few_shot"] == []
    assert run["settings"] == {"model": "/models/tiny-gpt2", "identity": "tiny@abc", "method": "beam",
                               "mode": "logical", "types": "pp", "n_zero": 2, "n_few": 0, "beams": 3, "seed": 0,
                               "cached": "1/2", "source": "app (Zero-shot page)"}
    again = runs.save_sweep(config, records[:1], model="/models/tiny-gpt2", identity="tiny@abc")
    assert again == path and runs.list_runs() == [path]  # the same sweep replaces its run
    other = runs.save_sweep(config, records, model="/models/tiny-gpt2", identity="tiny@def")
    assert other != path and len(runs.list_runs()) == 2  # another model is another run
    assert not list((tmp_path / "runs").glob(".*"))  # no temporary file left behind


def test_a_few_shot_sweep_has_reproduces_settings(tmp_path: Path) -> None:
    config = ex.FewShotConfig(types=("pp",), ratios=(0.0, 1.0), n_per_ratio=1, k=2, beams=2)
    records = [_rec("f/0", 0.0, [LF1]), _rec("f/1", 1.0, [LF0])]
    path = runs.save_sweep(config, records, model="org/name", identity="org/name@1", directory=tmp_path)
    assert path.stem.startswith("app-few-shot-pp-name-")
    run = runs.load_manifest(path)
    assert run["few_shot"] == records and run["zero_shot"] == []
    assert run["settings"] == {"model": "org/name", "identity": "org/name@1", "method": "beam", "mode": "logical",
                               "types": "pp", "n_zero": 0, "n_few": 1, "examples_per_prompt": 2, "ratios": 2,
                               "fmt": "fol", "beams": 2, "seed": 0, "cached": "0/2", "source": "app"}
    with pytest.raises(runs.ReportError, match="expected a sweep configuration"):
        runs.save_sweep({"kind": "zeroshot"}, records, model="m", identity="i")  # type: ignore[arg-type]


def test_records_view_puts_match_and_p_lf0_first() -> None:
    df = records_view([_rec("z/0", None, [LF1, LF0])])
    assert list(df.columns[:2]) == list(RECORD_VIEW_FIRST) == ["match", "p_lf0"]
    assert sorted(df.columns) == sorted(ex.RECORD_COLUMNS)
    assert df["match"].iloc[0] == "lf1" and df["p_lf0"].iloc[0] == 0.25
    assert list(records_view([]).columns[:2]) == ["match", "p_lf0"]


def test_an_int8_sweep_is_its_own_run(tmp_path: Path) -> None:
    """Issue #16 point 3: a sweep on the int8 path never replaces the exact sweep's run, and says its dtype."""
    config = ex.ZeroShotConfig(types=("pp",), n=1, beams=2)
    records = [_rec("z/0", None, [LF0])]
    exact = runs.save_sweep(config, records, model="m", identity="m@1", dtype="float32", directory=tmp_path)
    quick = runs.save_sweep(config, records, model="m", identity="m@1", dtype="int8", directory=tmp_path)
    assert quick != exact and quick.stem.startswith("app-zero-shot-pp-m-int8-")
    assert not exact.stem.startswith("app-zero-shot-pp-m-int8")
    # float32 (or no dtype) keeps the name sweeps had before int8 existed
    assert exact == runs.save_sweep(config, records, model="m", identity="m@1", directory=tmp_path)
    assert runs.load_manifest(quick)["settings"]["dtype"] == "int8"
    assert "dtype" not in runs.load_manifest(exact)["settings"]  # the last save had no dtype
