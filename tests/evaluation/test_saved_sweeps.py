"""App sweeps saved as runs (issue #15 point 6): reproduce's place and format; records tables' column order."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from amp.evaluation import experiments as ex
from amp.evaluation import runs
from amp.evaluation.provenance import STAMPED_KEYS, provenance_of
from amp.evaluation.sweep_summary import RECORD_VIEW_FIRST, records_view
from amp.parser.search.settings import SearchSettings

LF0 = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
LF1 = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"


def _rec(id_: str, ratio: float | None, beams: list[str], cached: bool = False) -> ex.SweepRecord:
    return ex.SweepRecord(id=id_, type="pp", ratio=ratio, surface="s", lf0=LF0, lf1=LF1, beams=tuple(beams),
                          p_lf0=0.25, cached=cached, **ex.match_fields(beams, LF0, LF1, "logical", "fol"))


def _unstamped(settings: dict) -> dict:
    """A manifest's settings without what every manifest gets: provenance and code (tests/evaluation/test_provenance.py)."""
    return {k: v for k, v in settings.items() if k not in STAMPED_KEYS}


def test_a_zero_shot_sweep_is_saved_where_reproduce_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path))
    config = ex.ZeroShotConfig(types=("pp",), n=2, search=SearchSettings(beams=3))
    records = [_rec("z/0", None, [LF0, LF1], cached=True), _rec("z/1", None, [LF1])]
    path = runs.save_sweep(config, records, model="/models/tiny-gpt2", identity="tiny@abc", page="Zero-shot page")
    assert path.parent == runs.runs_dir() == tmp_path / "runs" and runs.list_runs() == [path]
    assert path.stem.startswith("app-zero-shot-pp-tiny-gpt2-") and len(path.stem) == len("app-zero-shot-pp-tiny-gpt2-") + 10
    run = runs.load_manifest(path)
    assert run["zero_shot"] == records and run["few_shot"] == []
    assert provenance_of(run["settings"]) is not None  # stamped: date and versions (issue #46)
    assert _unstamped(run["settings"]) == {"model": "/models/tiny-gpt2", "identity": "tiny@abc", "method": "beam",
                               "mode": "logical", "types": "pp", "n_zero": 2, "n_few": 0, "beams": 3, "seed": 0,
                               "cached": "1/2", "source": "app (Zero-shot page)"}
    again = runs.save_sweep(config, records[:1], model="/models/tiny-gpt2", identity="tiny@abc")
    assert again == path and runs.list_runs() == [path]  # the same sweep replaces its run
    other = runs.save_sweep(config, records, model="/models/tiny-gpt2", identity="tiny@def")
    assert other != path and len(runs.list_runs()) == 2  # another model is another run
    assert not list((tmp_path / "runs").glob(".*"))  # no temporary file left behind


def test_a_few_shot_sweep_has_reproduces_settings(tmp_path: Path) -> None:
    config = ex.FewShotConfig(types=("pp",), ratios=(0.0, 1.0), n_per_ratio=1, k=2, search=SearchSettings(beams=2))
    records = [_rec("f/0", 0.0, [LF1]), _rec("f/1", 1.0, [LF0])]
    path = runs.save_sweep(config, records, model="org/name", identity="org/name@1", directory=tmp_path)
    assert path.stem.startswith("app-few-shot-pp-name-")
    run = runs.load_manifest(path)
    assert run["few_shot"] == records and run["zero_shot"] == []
    assert provenance_of(run["settings"]) is not None
    assert _unstamped(run["settings"]) == {"model": "org/name", "identity": "org/name@1", "method": "beam", "mode": "logical",
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
    config = ex.ZeroShotConfig(types=("pp",), n=1, search=SearchSettings(beams=2))
    records = [_rec("z/0", None, [LF0])]
    exact = runs.save_sweep(config, records, model="m", identity="m@1", dtype="float32", directory=tmp_path)
    quick = runs.save_sweep(config, records, model="m", identity="m@1", dtype="int8", directory=tmp_path)
    assert quick != exact and quick.stem.startswith("app-zero-shot-pp-m-int8-")
    assert not exact.stem.startswith("app-zero-shot-pp-m-int8")
    # float32 (or no dtype) keeps the name sweeps had before int8 existed
    assert exact == runs.save_sweep(config, records, model="m", identity="m@1", directory=tmp_path)
    assert runs.load_manifest(quick)["settings"]["dtype"] == "int8"
    assert "dtype" not in runs.load_manifest(exact)["settings"]  # the last save had no dtype


# -- configs saved by older code: a flat "beams" (run manifests' names, a service job's meta) ---------------

#: A Ratio sweep's config as the code before the search record saved it in a job's meta.
OLD_FEWSHOT = {"kind": "fewshot", "types": ["pp"], "ratios": [0.0, 1.0], "n_per_ratio": 1, "seed": 7, "k": 2,
               "fmt": "fol", "beams": 2, "mode": "logical", "independent_draws": False}


def test_a_config_saved_by_older_code_still_reads() -> None:
    config = ex.config_from_dict(OLD_FEWSHOT)
    assert config == ex.FewShotConfig(types=("pp",), ratios=(0.0, 1.0), n_per_ratio=1, seed=7, k=2,
                                      search=SearchSettings(beams=2))
    old_zero = {"kind": "zeroshot", "types": ["pp"], "n": 2, "seed": 0, "beams": 3, "fmt": "fol", "mode": "paper"}
    assert ex.config_from_dict(old_zero) == ex.ZeroShotConfig(types=("pp",), n=2, search=SearchSettings(beams=3),
                                                              mode="paper")


def test_a_config_round_trips_with_its_whole_search() -> None:
    search = SearchSettings(beams=3, alpha=0.5, max_new_tokens=40)
    for config in (ex.FewShotConfig(types=("pp", "scope"), ratios=(0.5,), n_per_ratio=2, search=search),
                   ex.ZeroShotConfig(types=("pp",), n=1, search=search, mode="paper")):
        data = ex.config_to_dict(config)
        assert data["search"] == search.as_dict() and "beams" not in data
        assert ex.config_from_dict(json.loads(json.dumps(data))) == config


@pytest.mark.parametrize("bad", [{"kind": "fewshot", "search": {"beams": 2}, "beams": 2},  # both ways at once
                                 {"kind": "fewshot", "search": {"width": 2}}, {"kind": "fewshot", "search": [2]},
                                 {"kind": "sweep"}, ["fewshot"]])
def test_what_is_not_a_sweep_config_is_refused(bad) -> None:
    with pytest.raises(ex.ExperimentError, match="not a sweep configuration"):
        ex.config_from_dict(bad)  # type: ignore[arg-type]


def test_a_sweep_saved_by_older_code_keeps_its_run_name(tmp_path: Path) -> None:
    """The run name's digest is of the config as older code wrote it, so a rerun replaces that run."""
    old_parts = {"config": OLD_FEWSHOT, "identity": "m@1"}
    digest = hashlib.sha256(json.dumps(old_parts, sort_keys=True).encode()).hexdigest()[:10]
    config = ex.config_from_dict(OLD_FEWSHOT)
    assert runs.sweep_run_name(config, model="m", identity="m@1") == f"app-few-shot-pp-m-{digest}"
    other = ex.FewShotConfig(**{**config.__dict__, "search": SearchSettings(beams=2, max_new_tokens=40)})
    assert runs.sweep_run_name(other, model="m", identity="m@1") != f"app-few-shot-pp-m-{digest}"  # another search
