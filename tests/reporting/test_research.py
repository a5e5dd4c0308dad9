"""Report writer (pure, hand-made records), run manifests, token spans, and the reproduce CLI."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
from tiny_models import build_tiny_model

from amp.evaluation import experiments as ex
from amp.evaluation import runs
from amp.reporting import png_export, token_plots
from amp.reporting.report import tables, write_report

LF0 = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
LF1 = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"


def _rec(id_, type_, ratio, beams, p):
    fields = ex.match_fields(beams, LF0, LF1, "logical", "fol")
    surface = f"sentence {id_.rsplit('/', 1)[-1]}"  # a few-shot sentence: the same at every ratio
    return ex.SweepRecord(id=id_, type=type_, ratio=ratio, surface=surface, lf0=LF0, lf1=LF1, beams=tuple(beams),
                          p_lf0=p, p_lf0_total=p, **fields)


def records():
    zero = [_rec(f"z/{t}/{i}", t, None, [LF0, LF1] if i else [LF1], 0.3 + 0.1 * i)
            for t in ("pp", "revscope") for i in range(2)]
    few = [_rec(f"f/pp/{r}/{i}", "pp", r, [LF0 if r > 0.5 else LF1], r) for r in (0.0, 0.5, 1.0) for i in range(2)]
    return zero, few


EXPECTED = ["table2_zm.csv", "table3_fdm_fim.csv", "fig2_zeroshot_accuracy.csv", "fig3_p_lf0.csv",
            "fig6_fewshot_per_ratio.csv", "fig2_zeroshot_accuracy.html", "fig3_p_lf0.html",
            "fig6_fewshot_accuracy.html", "fig6_fewshot_p_lf0.html", "table2_zm.html", "table3_fdm_fim.html",
            "report.md", "records_zero_shot.csv", "records_few_shot.csv"]


FIGURES = ["table2_zm", "table3_fdm_fim", "fig2_zeroshot_accuracy", "fig3_p_lf0", "fig6_fewshot_accuracy",
           "fig6_fewshot_p_lf0"]
SETTINGS = {"model": "hand-made", "method": "beam", "mode": "logical"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """One report with PNGs (one browser start) shared by the tests that read it."""
    out = tmp_path_factory.mktemp("report")
    zero, few = records()
    return out, write_report(zero, few, out, SETTINGS)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_write_report_produces_every_file(report):
    out, written = report
    for name in EXPECTED:
        assert (out / name).is_file() and name in written, name
    import pandas as pd

    table2 = pd.read_csv(out / "table2_zm.csv")
    assert dict(zip(table2["type"], table2["ZM_5"], strict=True)) == {"pp": 50.0, "revscope": 50.0}
    assert set(pd.read_csv(out / "table3_fdm_fim.csv").columns) >= {"type", "FDM", "FIM"}
    # the records hold every P(LF0): issue #40 added p_lf0_parted (after p_lf0_total) and nothing else
    for name in ("records_zero_shot.csv", "records_few_shot.csv"):
        assert list(pd.read_csv(out / name).columns) == [
            "id", "type", "ratio", "surface", "lf0", "lf1", "beams", "top1", "match", "lf0_rank", "lf1_rank",
            "p_lf0", "p_lf0_total", "p_lf0_parted", "min_prob_lf0", "min_prob_lf1", "cached", "error", "fmt",
            "mode", "beam_shares"], name
    # the reproduction's Fig. 3 keeps the paper's measure (and the total one it plotted)
    assert list(pd.read_csv(out / "fig3_p_lf0.csv").columns) == ["id", "type", "p_lf0", "p_lf0_total"]
    text = (out / "report.md").read_text()
    assert "hand-made" in text and "revscope" in text and "0–2" in text and "Table 1" in text


def test_write_report_writes_every_figure_as_png(report):
    out, written = report
    assert png_export.find_browser() is not None, "no Chromium/Chrome here: install chromium (bash run.sh test does)"
    assert sorted(n[:-5] for n in written if n.endswith(".html")) == sorted(FIGURES)
    text = (out / "report.md").read_text()
    assert "PNG not written" not in text
    for stem in FIGURES:
        png = out / f"{stem}.png"
        assert written.get(png.name) == png, png.name
        width, height = _png_size(png)
        assert width >= 400 and 200 <= height <= width, (png.name, width, height)
        assert png.stat().st_size > 5_000, png.name  # drawn, not a blank page
        assert f"]({png.name})" in text and f"]({stem}.html)" in text


def test_write_report_without_a_browser_keeps_csv_and_html(tmp_path, monkeypatch):
    monkeypatch.setattr(png_export, "find_browser", lambda: None)
    zero, few = records()
    written = write_report(zero, few, tmp_path, SETTINGS)
    for name in EXPECTED:
        assert (tmp_path / name).is_file() and name in written, name
    assert not list(tmp_path.glob("*.png")) and not any(n.endswith(".png") for n in written)
    text = (tmp_path / "report.md").read_text()
    missing = [line for line in text.splitlines() if line.startswith("PNG not written")]
    assert len(missing) == 1 and "no Chromium/Chrome found" in missing[0]
    assert all(f"{stem}.png" in missing[0] for stem in FIGURES)
    assert "](fig2_zeroshot_accuracy.html)" in text and "](fig2_zeroshot_accuracy.png)" not in text


def test_manifest_round_trip(tmp_path):
    zero, few = records()
    path = runs.save_manifest("a run", {"model": "m"}, zero, few, directory=tmp_path)
    loaded = runs.load_manifest(path)
    assert loaded["zero_shot"] == zero and loaded["few_shot"] == few
    # the settings as given, and the date and versions every manifest gets (issue #46)
    from amp.evaluation.provenance import STAMPED_KEYS, provenance_of

    assert {k: v for k, v in loaded["settings"].items() if k not in STAMPED_KEYS} == {"model": "m"}
    assert provenance_of(loaded["settings"]) is not None
    assert runs.list_runs(tmp_path) == [path]


def test_token_char_spans_share_a_character_axis():
    a, b = ["exi", "sts", " x"], ["ex", "ists", " ", "x"]
    sa, sb = token_plots.token_char_spans(a), token_plots.token_char_spans(b)
    assert sa[-1][1] == sb[-1][1] == len("exists x")
    assert sa == [(0, 3), (3, 6), (6, 8)]
    frame = token_plots.char_axis_frame(b, [0.1, 0.2, 0.3, 0.4])
    assert list(frame["token_index"]) == [0, 0, 1, 1, 1, 1, 2, 3]


def test_reproduce_cli_end_to_end_then_from_cache(tmp_path, monkeypatch, capsys):
    model = build_tiny_model(tmp_path / "tiny-4k", n_positions=4096)
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(png_export, "find_browser", lambda: None)  # PNGs: tested above; saves two browser starts
    from amp.cli import main

    args = ["reproduce", "--model", str(model), "--n-zero", "1", "--n-few", "1", "--types", "pp",
            "--device", "cpu", "--dtype", "float32", "--name", "tiny", "--max-new-tokens", "12", "--k", "2"]
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    for name in EXPECTED:
        assert (tmp_path / "one" / name).is_file(), name
    manifest = json.loads((tmp_path / "cache" / "runs" / "tiny.json").read_text())
    assert len(manifest["zero_shot"]) == 1 and len(manifest["few_shot"]) == 11
    # Paired design with k = 2: floor(2r) LF0 examples gives the same prompt at r = 0…0.4 and at
    # r = 0.5…0.9, so 3 distinct few-shot prompts (+ 1 zero-shot) are computed and 8 are cache hits.
    assert manifest["settings"]["cached"] == "8/12"
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "two")]) == 0
    err = capsys.readouterr().err
    assert "few-shot: 11/11 (11 from cache" in err
    manifest = json.loads((tmp_path / "cache" / "runs" / "tiny.json").read_text())
    assert manifest["settings"]["cached"] == "12/12"
    assert (tmp_path / "two" / "report.md").is_file()
    # --n-few 0 skips the few-shot part (from the cache here), both 0 is refused with a message
    skip = [a if a != "tiny" else "tiny-zero" for a in args]
    skip[skip.index("--n-few") + 1] = "0"
    assert main([*skip, "--out", str(tmp_path / "three")]) == 0
    manifest = json.loads((tmp_path / "cache" / "runs" / "tiny-zero.json").read_text())
    assert len(manifest["zero_shot"]) == 1 and manifest["few_shot"] == []
    skip[skip.index("--n-zero") + 1] = "0"
    capsys.readouterr()
    assert main([*skip, "--out", str(tmp_path / "four")]) != 0
    assert "not both 0" in capsys.readouterr().err


def test_reproduce_on_the_int8_path_is_its_own_run(saved_tiny_model, tmp_path, monkeypatch, capsys):
    """Issue #16 point 3: ``--dtype int8`` names its run apart from float32's and records its dtype."""
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(png_export, "find_browser", lambda: None)
    from amp.cli import main

    base = ["reproduce", "--model", str(saved_tiny_model), "--n-zero", "1", "--n-few", "0", "--types", "pp",
            "--device", "cpu", "--max-new-tokens", "8"]
    assert main([*base, "--dtype", "int8", "--out", str(tmp_path / "q")]) == 0
    assert main([*base, "--out", str(tmp_path / "f")]) == 0
    names = sorted(p.stem for p in (tmp_path / "cache" / "runs").glob("*.json"))
    assert len(names) == 2 and names[1] == names[0] + "-int8", names
    quick = json.loads((tmp_path / "cache" / "runs" / f"{names[1]}.json").read_text())
    assert quick["settings"]["dtype"] == "int8" and quick["settings"]["cached"] == "0/1"  # not float32's entry
    exact = json.loads((tmp_path / "cache" / "runs" / f"{names[0]}.json").read_text())["settings"]
    assert exact["dtype"] == "float32"  # every run records its dtype (issue #28), the exact one too


@pytest.mark.parametrize("method", ["distinct", "sampling"])
def test_run_method_alternatives_give_records(saved_tiny_model, tmp_path, method):
    from amp.cache import ResultCache
    from amp.parser.parser import Parser

    parser = Parser(str(saved_tiny_model), device="cpu", dtype="float32", cache=ResultCache(tmp_path / "c"))
    items = ex.plan_zeroshot(ex.ZeroShotConfig(types=("pp",), n=1))
    recs = list(runs.run_method(parser, items, method=method, width=6, n_samples=4, max_new_tokens=24))
    assert len(recs) == 1 and recs[0].error is None and recs[0].p_lf0 is not None
    assert len(recs[0].beams) <= 5
    ex.zeroshot_summary(recs, k=5)


def test_run_method_takes_the_sweeps_search_record_and_bounds_distincts_wider_search_up_front():
    """The method runs with the sweep's own search (``config.search``); the wider beam of ``distinct``
    (its ``width``) is a search too, bounded before any item, not refused item by item."""
    from amp.parser.core.errors import RequestTooLarge
    from amp.parser.search.settings import SearchSettings

    class NoModel:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the model was used ({name})")

    search = SearchSettings(beams=4, max_new_tokens=1024)  # 4 kept × 1,024 tokens: within the bound
    with pytest.raises(RequestTooLarge, match="1 prompt\\(s\\) × 40 beams × 1024 tokens"):
        list(runs.run_method(NoModel(), [object()], search, method="distinct", width=40))
    assert list(runs.run_method(NoModel(), [], search, method="distinct", width=32)) == []  # 32 × 1,024 fits


def test_char_heatmap_aligns_two_tokenizations():
    fig = token_plots.char_heatmap({"A": (["exi", "sts"], [0.5, 0.9]), "B": (["e", "xists"], [0.1, 0.2])})
    z = fig.data[0].z
    assert len(z[0]) == len(z[1]) == 6
    assert list(z[0]) == [0.5] * 3 + [0.9] * 3 and list(z[1]) == [0.1] + [0.2] * 5


def test_research_tables_read_beams_with_any_words():
    """Issue 13 point 5: a run from an unconstrained model (other variable names, a word outside
    the lexicon, as the paper's Table 1 ``swam``) is re-matched and summarised in both modes: the
    renamed LF1 matches LF1, the ``swam`` beam is read (``neither``, not ``unparseable``)."""
    lf0 = ("exists x . exists y . exists a . exists e . man(x) AND boy(y) AND saw(a) AND agent(a, x) AND "
           "patient(a, y) AND have(e) AND agent(e, y) AND patient(e, x)")
    lf1 = ("exists x . exists y . exists a . man(x) AND boy(y) AND saw(a) AND agent(a, x) AND "
           "patient(a, y) AND instrument(a, x)")
    renamed = ("exists w . exists q . exists ev . man(w) AND boy(q) AND saw(ev) AND agent(ev, w) AND "
               "patient(ev, q) AND instrument(ev, w)")
    swam = renamed.replace("saw(ev)", "swam(ev)")

    def rec(id_: str, ratio: float | None, beams: tuple[str, ...], p: float) -> ex.SweepRecord:
        return ex.SweepRecord(id=id_, type="pp", ratio=ratio, surface="s", lf0=lf0, lf1=lf1, beams=beams,
                              p_lf0=p, **ex.match_fields(beams, lf0, lf1, "logical", "fol"))

    few = [rec(f"f/pp/{r}/{i}", r, (beam,), r) for r in (0.0, 1.0) for i, beam in enumerate((renamed, swam))]
    renamed0 = ("exists w . exists q . exists ev . exists h . man(w) AND boy(q) AND saw(ev) AND agent(ev, w) AND "
                "patient(ev, q) AND have(h) AND agent(h, q) AND patient(h, w)")
    zero = [rec("z/pp/0", None, (swam, renamed), 0.5), rec("z/pp/1", None, (renamed, renamed0), 0.5)]
    for mode in ("logical", "paper"):
        matched = ex.rematch(few, mode)
        assert [r.match for r in matched] == ["lf1", "neither", "lf1", "neither"]
        zmatched = ex.rematch(zero, mode)
        assert [(r.match, r.lf0_rank, r.lf1_rank) for r in zmatched] == [("neither", None, 2), ("lf1", 2, 1)]
        tabs = tables(zmatched, matched, k=2, mode=mode)
        row = tabs["table3_fdm_fim"].iloc[0]
        # acc LF0 = 0, acc LF1 = 0.5 at both ratios: d(0) = 0 + 0.5, d(1) = 1 + 0.5; FDM = 1.0
        assert row["FDM"] == pytest.approx(1.0) and row["FIM"] == pytest.approx(0.0)
        assert tabs["table2_zm"].iloc[0]["ZM_2"] == pytest.approx(50.0)  # both readings in the top 2: 1 of 2


def test_write_report_has_the_meaning_uncertainty_table(report):
    import pandas as pd

    out, written = report
    assert "meaning_uncertainty.csv" in written
    table = pd.read_csv(out / "meaning_uncertainty.csv")
    assert set(table["setting"]) == {"zero-shot", "few-shot"}
    # zero-shot pp: one sentence with beams [LF1] (entropy 0), one with [LF0, LF1] at equal weight (ln 2)
    row = table[(table["setting"] == "zero-shot") & (table["type"] == "pp")].iloc[0]
    assert row["semantic_entropy"] == pytest.approx(math.log(2) / 2)
    assert row["mass_lf0"] == pytest.approx(0.25) and row["mass_lf1"] == pytest.approx(0.75)
    assert "Meaning-level uncertainty" in (out / "report.md").read_text()


# --------------------------------------------------------------------------- statistics a paper can use (issue #46)


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_report_csvs_carry_intervals_and_count_sentences(report):
    out, _ = report
    table2 = _csv_rows(out / "table2_zm.csv")
    assert list(table2[0]) == ["type", "n", "ZM_5", "ZM_5_low", "ZM_5_high"]
    for name, stats in (("table3_fdm_fim.csv", ("FDM", "FIM")),
                        ("fig2_zeroshot_accuracy.csv", ("ZM_5", "acc_lf0", "acc_lf1", "neither", "mean_p_lf0")),
                        ("fig6_fewshot_per_ratio.csv", ("acc_lf0", "acc_lf1", "neither", "mean_p_lf0"))):
        for row in _csv_rows(out / name):
            assert "n" in row, name
            for stat in stats:
                low, value, high = (float(row[c]) for c in (f"{stat}_low", stat, f"{stat}_high"))
                assert low <= value + 1e-9 <= high + 2e-9, (name, stat, row)
    (pp,) = _csv_rows(out / "table3_fdm_fim.csv")
    assert (pp["n"], pp["n_records"], pp["n_ratios"]) == ("2", "6", "3")  # 2 sentences × 3 ratios, not "n 6"
    text = (out / "report.md").read_text()
    # FDM = (0 + 1 + 0)/3 and FIM = 0 on every resample: both sentences answer alike at each ratio
    assert "| pp | 0.333 [0.333, 0.333] | 0.000 [0.000, 0.000] | 2 | 6 | 3 | 0 |" in text
    assert "few-shot: 2 test sentences, one record per ratio (6 records)" in text
    assert "percentile-bootstrap interval over test sentences" in text and "§21" in text


def test_every_csv_column_holding_beams_parses_as_json(report):
    """Issue #46: beams were written as Python tuple strings ("('a', 'b')"); now JSON lists."""
    import json as json_

    out, _ = report
    zero, few = records()
    checked = 0
    for path in sorted(out.glob("*.csv")):
        for row in _csv_rows(path):
            for col, cell in row.items():
                if col in ("beams", "beam_shares") or cell.startswith(("(", "[")):
                    if col in ("beams", "beam_shares") or not cell.startswith("["):
                        value = json_.loads(cell)
                        assert isinstance(value, list), (path.name, col, cell)
                        checked += 1
    assert checked >= 2 * (len(zero) + len(few))
    beams = [json_.loads(r["beams"]) for r in _csv_rows(out / "records_few_shot.csv")]
    assert beams == [list(r.beams) for r in few]


def test_a_report_over_several_seeds_gives_each_statistics_spread(tmp_path, monkeypatch):
    monkeypatch.setattr(png_export, "find_browser", lambda: None)
    zero, few = records()
    other_zero = [ex.SweepRecord(**{**r.__dict__, **ex.match_fields([LF1], LF0, LF1, "logical", "fol"),
                                   "beams": (LF1,)}) for r in zero]
    written = write_report(zero, few, tmp_path, SETTINGS, seeds={0: (zero, few), 5: (other_zero, few)})
    rows = _csv_rows(written["seed_spread.csv"])
    pp = next(r for r in rows if r["table"] == "fig2_zeroshot_accuracy" and r["type"] == "pp" and r["stat"] == "acc_lf0")
    # seed 0: pp's top-1 is LF1 then LF0 → 0.5; seed 5: always LF1 → 0
    assert (float(pp["seed_0"]), float(pp["seed_5"]), float(pp["mean"]), float(pp["min"]), float(pp["max"])) == (
        0.5, 0.0, 0.25, 0.0, 0.5)
    assert float(pp["sd"]) == pytest.approx(math.sqrt(0.125)) and pp["n_seeds"] == "2"
    assert {r["table"] for r in rows} == {"table2_zm", "table3_fdm_fim", "fig2_zeroshot_accuracy",
                                          "fig6_fewshot_per_ratio"}
    text = (tmp_path / "report.md").read_text()
    assert "## Spread across split seeds 0, 5" in text and "0.250 ± 0.354 [0.000, 0.500]" in text
    assert "seed_spread.csv" not in write_report(zero, few, tmp_path / "one", SETTINGS)


def test_reproduce_seeds_runs_each_seed_and_reports_the_spread(saved_tiny_model, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(png_export, "find_browser", lambda: None)
    from amp.cli import main

    base = ["reproduce", "--model", str(saved_tiny_model), "--n-zero", "1", "--n-few", "0", "--types", "pp",
            "--device", "cpu", "--max-new-tokens", "8", "--name", "tiny"]
    assert main([*base, "--seeds", "0,1", "--out", str(tmp_path / "s")]) == 0
    assert "zero-shot (seed 1): 1/1" in capsys.readouterr().err
    spread = _csv_rows(tmp_path / "s" / "seed_spread.csv")
    assert {r["n_seeds"] for r in spread if r["stat"] == "acc_lf0"} == {"2"}
    first = json.loads((tmp_path / "cache" / "runs" / "tiny.json").read_text())
    second = json.loads((tmp_path / "cache" / "runs" / "tiny-seed1.json").read_text())
    assert first["settings"]["seeds"] == "0,1" and first["settings"]["seed"] == 0 and second["settings"]["seed"] == 1
    assert first["zero_shot"][0]["surface"] != second["zero_shot"][0]["surface"]  # another sentence drawn
    for bad, why in (("0,0", "twice"), ("0,-1", "--seeds"), ("x", "--seeds")):
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            main([*base, "--seeds", bad])
        assert stop.value.code == 2 and why in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--seed", "1", "--seeds", "0,1"])  # one or the other
    # A run under --seed 1 alone is saved as the seed-1 run: it never overwrites the seed-0 run of the same name.
    (tmp_path / "cache" / "runs" / "tiny-seed1.json").unlink()
    assert main([*base, "--seed", "1", "--out", str(tmp_path / "one")]) == 0
    assert json.loads((tmp_path / "cache" / "runs" / "tiny.json").read_text())["settings"]["seed"] == 0
    assert json.loads((tmp_path / "cache" / "runs" / "tiny-seed1.json").read_text())["settings"]["seed"] == 1
