"""AmP v1 split folders (``amp.data.splits``, ``amp.data.splits_render``, ``python -m amp v1-splits``).

The figures asserted here are the published ones of the reference (§6.1, §6.2, §6.3), read
from the released data.  Matching the realised LF0 counts of every ratio folder is the
evidence that the random stream is replayed in the original call order (§5.1, §5.5).
Generated data only ever lives in memory or under ``tmp_path`` (licence, §6).
"""

from __future__ import annotations

import argparse
import functools
import io
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amp.cli.v1_splits import committable_target, parse_formats, parse_ratios, register
from amp.data.generate import group_by_surface, pool, write_jsonl
from amp.data.split_sampling import coin_flips, keep_paired_split
from amp.data.splits import (
    FEWSHOT_RATIOS,
    SEED,
    SplitError,
    build_fewshot,
    build_zeroshot,
    fewshot_10perc_config,
    fewshot_config,
    write_folder,
)
from amp.data.splits_render import render_ordered
from amp.data.templates.records import RECORD_FIELDS

AMBIGUOUS_RECORD_TYPES = ("pp", "scope", "scope_reverse", "bound", "conj")

#: §6.1: realised LF0 counts per 1,000 in train.jsonl (pp, scope, scope_reverse, bound, conj).
LF0_COUNTS: dict[int, tuple[int, int, int, int, int]] = {
    0: (0, 0, 0, 0, 0),
    10: (89, 110, 112, 90, 94),
    20: (188, 213, 218, 182, 206),
    30: (291, 316, 321, 275, 295),
    40: (399, 396, 430, 368, 407),
    50: (518, 485, 518, 479, 514),
    60: (615, 578, 610, 609, 595),
    70: (707, 695, 703, 703, 700),
    80: (812, 791, 802, 799, 813),
    90: (903, 891, 900, 907, 898),
    100: (1000, 1000, 1000, 1000, 1000),
}
LF0_TOTALS = {0: 0, 10: 495, 20: 1007, 30: 1498, 40: 2000, 50: 2514, 60: 3007, 70: 3508,
              80: 4017, 90: 4499, 100: 5000}

FEWSHOT_LINES = {"train.jsonl": 5000, "train_eval.jsonl": 10000, "dev.jsonl": 500,
                 "dev_eval.jsonl": 1000, "test.jsonl": 500, "test_eval.jsonl": 1000}

# §4.1 shapes by template id: PP-a the N–the N, PP-b the N–Name, PP-c Name–the N, PP-d Name–Name.
PP_SHAPES = {"a": "the N-the N", "b": "the N-Name", "c": "Name-the N", "d": "Name-Name"}


# --- fixtures (built once per module: about 15 s on one core) --------------------------------


@pytest.fixture(scope="module")
def fol():
    return {x: build_fewshot(fewshot_config(x, "fol")) for x in FEWSHOT_RATIOS}


@pytest.fixture(scope="module")
def lisp():
    return {x: build_fewshot(fewshot_config(x, "lisp")) for x in FEWSHOT_RATIOS}


@pytest.fixture(scope="module")
def zeroshot():
    return {t: build_zeroshot(t) for t in ("pp", "scope", "revscope", "bound", "conj")}


def lf1(records):
    return [r for r in records if r.template_idx == 1]


def by_type(records, type_):
    return [r for r in records if r.type == type_]


def pp_shapes(records) -> Counter:
    return Counter(PP_SHAPES[r.template.rsplit("/", 1)[1]] for r in records)


# --- ordered re-rendering (§8.3–8.4, §6.1) ---------------------------------------------------


def _pool_lf(type_: str, surface: str, idx: int) -> str:
    return next(r.lf for r in pool(type_) if r.surface == surface and r.template_idx == idx)


def test_render_ordered_pp_lf1_example() -> None:
    raw = _pool_lf("pp", "the man saw the boy with the telescope", 1)
    assert render_ordered(raw) == (
        "exists x . exists y . exists z . exists a . agent(a, x) AND boy(y) AND "
        "instrument(a, z) AND man(x) AND patient(a, y) AND saw(a) AND telescope(z)"
    )


def test_render_ordered_conj_examples() -> None:
    surface = "the man drank and ate or slept"
    assert render_ordered(_pool_lf("conj", surface, 0)) == (
        "exists x . exists a . exists e . exists i . ( ( agent(e, x) AND ate(e) ) OR "
        "( agent(i, x) AND slept(i) ) ) AND agent(a, x) AND drank(a) AND man(x)"
    )
    assert render_ordered(_pool_lf("conj", surface, 1)) == (
        "exists x . exists a . exists e . exists i . ( ( agent(a, x) AND agent(e, x) AND ate(e) "
        "AND drank(a) ) OR ( agent(i, x) AND slept(i) ) ) AND man(x)"
    )


def test_render_ordered_watson_fol_and_lisp() -> None:
    raw = _pool_lf("pp", "Watson spotted Alan with the binoculars", 1)
    assert render_ordered(raw, "fol") == (
        "exists x . exists a . agent(a, Watson) AND binoculars(x) AND instrument(a, x) AND "
        "patient(a, Alan) AND spotted(a)"
    )
    assert render_ordered(raw, "lisp") == (
        "( exists x ( exists a ( AND ( agent a Watson ) ( binoculars x ) ( instrument a x ) "
        "( patient a Alan ) ( spotted a ) ) ) )"
    )


def test_render_ordered_rejects_unknown_format() -> None:
    with pytest.raises(ValueError):
        render_ordered("exists x . man(x) AND boy(x)", "json")


# --- sampling primitives (§5.1, §5.5) --------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(0, 60),
       r=st.sampled_from([x / 100 for x in FEWSHOT_RATIOS] + [41 / 83]))
def test_coin_flips_equal_legacy_choice_calls(seed: int, n: int, r: float) -> None:
    """The vectorised coins are the original's ``choice([0, 1], p=[r, 1 - r])`` calls."""
    literal, fast = np.random.RandomState(seed), np.random.RandomState(seed)
    expected = [int(literal.choice([0, 1], p=[r, 1 - r])) for _ in range(n)]
    assert coin_flips(fast, n, r) == expected
    assert literal.randint(2**30) == fast.randint(2**30)  # same stream position afterwards


def test_keep_paired_zero_draw_still_consumes_the_stream() -> None:
    groups = [(r,) for r in pool("possession")]
    rng, fresh = np.random.RandomState(SEED), np.random.RandomState(SEED)
    assert keep_paired_split(rng, groups, [0, 0, 0]) == [[], [], []]
    assert rng.randint(2**30) != fresh.randint(2**30)


def test_keep_paired_split_keeps_both_readings_together() -> None:
    groups = group_by_surface(pool("scope"))
    train, dev, test = keep_paired_split(np.random.RandomState(0), groups, [5, 3, 2])
    assert [len(p) for p in (train, dev, test)] == [10, 6, 4]
    for part in (train, dev, test):
        assert [r.template_idx for r in part] == [0, 1] * (len(part) // 2)
        assert all(a.surface == b.surface for a, b in zip(part[::2], part[1::2], strict=True))
    with pytest.raises(SplitError):
        keep_paired_split(np.random.RandomState(0), groups[:3], [4])


def test_config_validation() -> None:
    with pytest.raises(SplitError):
        fewshot_config(15)
    with pytest.raises(SplitError):
        fewshot_config(50, "json")
    with pytest.raises(SplitError):
        build_zeroshot("quant")


# --- few-shot 100-perc folders (§5.1, §5.2, §6.1) -------------------------------------------


@pytest.mark.parametrize("ratio", FEWSHOT_RATIOS)
def test_realised_lf0_counts_match_released_table(fol, lisp, ratio: int) -> None:
    for folder in (fol[ratio], lisp[ratio]):
        train = folder.files["train.jsonl"]
        lf0 = Counter(r.type for r in train if r.template_idx == 0)
        assert tuple(lf0[t] for t in AMBIGUOUS_RECORD_TYPES) == LF0_COUNTS[ratio]
        assert sum(lf0.values()) == LF0_TOTALS[ratio]


def test_line_counts_of_all_22_folders(fol, lisp) -> None:
    for ratio in FEWSHOT_RATIOS:
        for fmt, folder in (("fol", fol[ratio]), ("lisp", lisp[ratio])):
            assert folder.path == f"fewshot/{ratio}-{100 - ratio}-5k-train-100-perc-ambig_{fmt}"
            assert folder.line_counts() == FEWSHOT_LINES


def test_all_ratio_folders_share_dev_test_eval_and_train_surfaces(fol, lisp) -> None:
    for folders in (fol, lisp):
        first = folders[0]
        train_surfaces = sorted(r.surface for r in first.files["train.jsonl"])
        for folder in folders.values():
            for name in ("train_eval.jsonl", "dev.jsonl", "dev_eval.jsonl", "test.jsonl",
                         "test_eval.jsonl"):
                assert folder.files[name] == first.files[name], (folder.path, name)
            assert sorted(r.surface for r in folder.files["train.jsonl"]) == train_surfaces


def test_fol_and_lisp_have_the_same_records_in_the_same_order(fol, lisp) -> None:
    for ratio in (10, 50):
        for name in FEWSHOT_LINES:
            ours = [(r.surface, r.template_idx, r.type) for r in fol[ratio].files[name]]
            assert ours == [(r.surface, r.template_idx, r.type) for r in lisp[ratio].files[name]]


def test_train_is_grouped_pp_conj_bound_scope_revscope_lf0_first(fol) -> None:
    train = fol[50].files["train.jsonl"]
    runs = [(r.type, r.template_idx) for r in train]
    collapsed = [k for i, k in enumerate(runs) if i == 0 or runs[i - 1] != k]
    assert collapsed == [(t, i) for t in ("pp", "conj", "bound", "scope", "scope_reverse")
                         for i in (0, 1)]


def test_dev_and_test_hold_100_lf1_records_per_type(fol) -> None:
    for name in ("dev.jsonl", "test.jsonl"):
        records = fol[50].files[name]
        assert all(r.template_idx == 1 for r in records)
        assert Counter(r.type for r in records) == {t: 100 for t in AMBIGUOUS_RECORD_TYPES}


def test_eval_files_hold_both_readings_adjacent_in_step2_key_order(fol) -> None:
    folder = fol[30]
    for split in ("train", "dev", "test"):
        evals = folder.files[f"{split}_eval.jsonl"]
        assert [r.template_idx for r in evals] == [0, 1] * (len(evals) // 2)
        assert all(a.surface == b.surface for a, b in zip(evals[::2], evals[1::2], strict=True))
        types = [r.type for r in evals[::2]]
        assert list(dict.fromkeys(types)) == ["pp", "scope", "scope_reverse", "conj", "bound"]
        assert {r.surface for r in evals} == {r.surface for r in folder.files[f"{split}.jsonl"]}


def test_train_dev_test_surfaces_are_disjoint(fol) -> None:
    files = fol[50].files
    train, dev, test = ({r.surface for r in files[f"{s}.jsonl"]} for s in ("train", "dev", "test"))
    assert len(train) == 5000 and len(dev) == 500 and len(test) == 500
    assert not train & dev and not train & test and not dev & test


def test_test_set_composition(fol) -> None:
    test = fol[0].files["test.jsonl"]
    pp = by_type(test, "pp")
    assert pp_shapes(pp) == {"Name-Name": 40, "the N-Name": 15, "Name-the N": 36,
                             "the N-the N": 9}
    assert Counter(r.template.split("/")[1] for r in pp) == {"visual": 78, "tactile": 22}
    bound = by_type(test, "bound")
    assert Counter(r.template[-1] for r in bound) == {"a": 55, "b": 18, "c": 22, "d": 5}
    assert Counter(" he " in r.surface for r in bound) == {True: 47, False: 53}
    assert Counter(r.template for r in by_type(test, "conj")) == {
        "conj/or_first": 52, "conj/and_first": 48}
    assert Counter(r.template for r in by_type(test, "scope")) == {
        "scope/every": 52, "scope/each": 48}
    assert Counter(r.template for r in by_type(test, "scope_reverse")) == {
        "revscope/every": 51, "revscope/each": 49}


def test_fol_rendering_per_file(fol) -> None:
    """FOL: train and *_eval raw template order; dev/test ordered and sorted (§6.1)."""
    files = fol[50].files
    raw = _raw_lfs()
    for name in ("train.jsonl", "train_eval.jsonl", "dev_eval.jsonl", "test_eval.jsonl"):
        assert all(r.lf == raw[(r.surface, r.template_idx)] for r in files[name]), name
    for name in ("dev.jsonl", "test.jsonl"):
        assert all(r.lf == render_ordered(raw[(r.surface, r.template_idx)]) for r in files[name])


def test_lisp_rendering_everywhere_with_fol_templates(lisp) -> None:
    for name, records in lisp[50].files.items():
        assert all(r.lf.startswith("( ") and r.lf.endswith(" )") for r in records), name
        assert all(not r.unfilled_template.startswith("(") for r in records), name
        assert all(r.lf == render_ordered(_raw_lf(r), "lisp") for r in records[:200]), name


@functools.cache
def _raw_lfs() -> dict[tuple[str, int], str]:
    return {(r.surface, r.template_idx): r.lf
            for t in ("pp", "scope", "revscope", "bound", "conj") for r in pool(t)}


def _raw_lf(record) -> str:
    return _raw_lfs()[(record.surface, record.template_idx)]


WATSON_LINE = (
    '{"surface": "Watson spotted Alan with the binoculars", "lf": "exists x . exists a . '
    'agent(a, Watson) AND binoculars(x) AND instrument(a, x) AND patient(a, Alan) AND '
    'spotted(a)", "unfilled_template": "exists x . exists a . {np3}(x) AND {vp1}(a) AND '
    'agent(a, {np1}) AND patient(a, {np2}) AND instrument(a, x)", "template_tags": ["np1", '
    '"vp1", "np2", null, "np3"], "var_bindings": {"np1": "Watson", "vp1": "spotted", "np2": '
    '"Alan", "np3": "binoculars"}, "template_idx": 1, "type": "pp"}'
)


def _lines(records) -> list[str]:
    buf = io.StringIO()
    write_jsonl(records, buf)
    return buf.getvalue().splitlines()


def test_example_lines_of_section_6_1(fol, lisp) -> None:
    assert WATSON_LINE in _lines(fol[50].files["test.jsonl"])
    lisp_watson = json.loads(WATSON_LINE)
    lisp_watson["lf"] = ("( exists x ( exists a ( AND ( agent a Watson ) ( binoculars x ) "
                         "( instrument a x ) ( patient a Alan ) ( spotted a ) ) ) )")
    assert json.dumps(lisp_watson) in _lines(lisp[50].files["test.jsonl"])

    evals = fol[50].files["test_eval.jsonl"]
    k = next(i for i, r in enumerate(evals) if r.surface == "Alan spied Mary with the spyglass")
    assert evals[k].template_idx == 0 and evals[k + 1].template_idx == 1
    assert evals[k].lf == (
        "exists x . exists a . exists e . spyglass(x) AND spied(a) AND agent(a, Alan) AND "
        "patient(a, Mary) AND have(e) AND agent(e, Mary) AND patient(e, x)"
    )


# --- the 10-perc pair (§6.2) ---------------------------------------------------------------


def test_ten_perc_pair_layout_and_sizes() -> None:
    folder = build_fewshot(fewshot_10perc_config("fol"))
    assert folder.path == "fewshot/50-50-5k-train-10-perc-ambig_fol"
    assert folder.line_counts() == {"train.jsonl": 4165, "dev.jsonl": 830, "test.jsonl": 830}
    train = folder.files["train.jsonl"]
    assert len({r.surface for r in train}) == 4021  # released: 4,021 unique surfaces
    types = Counter(r.type for r in train)
    assert types == {"pp_unambig": 750, "bound_unambig": 750, "scope_unambig": 1500,
                     "unambig": 750, **{t: 83 for t in AMBIGUOUS_RECORD_TYPES}}
    for name in ("dev.jsonl", "test.jsonl"):
        records = folder.files[name]
        assert all(r.template_idx == 1 for r in records)
        assert Counter(r.type for r in records) == {t: 166 for t in AMBIGUOUS_RECORD_TYPES}
    cow = next(r for r in train if r.surface == "each cow spied the pair of pants")
    assert cow.lf == ("exists x . forall y . exists a . agent(a, y) AND cow(y) AND pants(x) AND "
                      "patient(a, x) AND spied(a)")
    assert cow.template_idx == 0 and cow.type == "scope_unambig"


# --- zero-shot folders (§5.3, §6.3) --------------------------------------------------------


def test_zeroshot_line_counts_and_train_pool(zeroshot) -> None:
    for type_, folder in zeroshot.items():
        assert folder.path == f"zeroshot/{type_}_fol"
        assert folder.line_counts() == {"train.jsonl": 38882, "train_eval.jsonl": 0,
                                        "dev.jsonl": 200, "dev_eval.jsonl": 400,
                                        "test.jsonl": 200, "test_eval.jsonl": 400}
        assert len({r.surface for r in folder.files["train.jsonl"]}) == 28802
        for split in ("dev", "test"):
            single, both = folder.files[f"{split}.jsonl"], folder.files[f"{split}_eval.jsonl"]
            assert all(r.template_idx == 1 for r in single)
            assert sorted(r.surface for r in single) == sorted(r.surface for r in lf1(both))
            assert [r.template_idx for r in both] == [0, 1] * 200
        dev = {r.surface for r in folder.files["dev.jsonl"]}
        assert not dev & {r.surface for r in folder.files["test.jsonl"]}


def test_zeroshot_lfs_are_raw_template_order(zeroshot) -> None:
    raw = {(r.surface, r.template_idx): r.lf for r in pool("scope")}
    folder = zeroshot["scope"]
    for name in ("dev.jsonl", "dev_eval.jsonl", "test.jsonl", "test_eval.jsonl"):
        assert all(r.lf == raw[(r.surface, r.template_idx)] for r in folder.files[name])
    line = next(x for x in _lines(folder.files["test.jsonl"]) if '"each bird held a sweater"' in x)
    assert json.loads(line)["lf"] == ("forall x . exists y . exists a . bird(x) AND sweater(y) "
                                      "AND held(a) AND agent(a, x) AND patient(a, y)")


def test_zeroshot_test_composition(zeroshot) -> None:
    pp = zeroshot["pp"].files["test.jsonl"]
    assert pp_shapes(pp) == {"Name-Name": 70, "the N-Name": 43, "Name-the N": 62,
                             "the N-the N": 25}
    assert Counter(r.template.split("/")[1] for r in pp) == {"visual": 160, "tactile": 40}
    assert Counter(r.template for r in zeroshot["scope"].files["test.jsonl"]) == {
        "scope/every": 103, "scope/each": 97}
    assert Counter(r.template for r in zeroshot["revscope"].files["test.jsonl"]) == {
        "revscope/every": 103, "revscope/each": 97}
    bound = zeroshot["bound"].files["test.jsonl"]
    assert Counter(r.template for r in bound) == {
        "bound/female/a": 100, "bound/female/b": 52, "bound/female/c": 41, "bound/female/d": 7}
    assert Counter(r.template for r in zeroshot["conj"].files["test.jsonl"]) == {
        "conj/and_first": 95, "conj/or_first": 105}


# --- writing and the CLI ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="amp")
    register(parser.add_subparsers(dest="command"))
    return parser


def _run_cli(*argv: str) -> int:
    args = _parser().parse_args(["v1-splits", *argv])
    return args.func(args)


def test_write_folder_matches_write_jsonl(tmp_path, zeroshot) -> None:
    folder = zeroshot["conj"]
    root = write_folder(folder, tmp_path)
    assert root == tmp_path / "zeroshot" / "conj_fol"
    for name, records in folder.files.items():
        buf = io.StringIO()
        write_jsonl(records, buf)
        assert (root / name).read_text(encoding="utf-8") == buf.getvalue()


def test_cli_writes_requested_folders(tmp_path, capsys) -> None:
    assert _run_cli("--out", str(tmp_path), "--only", "fewshot", "--ratios", "50",
                    "--formats", "fol") == 0
    printed = capsys.readouterr().out.splitlines()
    expected = ("fewshot/50-50-5k-train-100-perc-ambig_fol  train 5000  train_eval 10000"
                "  dev 500  dev_eval 1000  test 500  test_eval 1000")
    assert printed == [expected]
    folder = tmp_path / "fewshot" / "50-50-5k-train-100-perc-ambig_fol"
    assert sorted(p.name for p in tmp_path.rglob("*.jsonl")) == sorted(FEWSHOT_LINES)
    for name, count in FEWSHOT_LINES.items():
        assert len((folder / name).read_text(encoding="utf-8").splitlines()) == count
    first = (folder / "train.jsonl").read_text(encoding="utf-8").splitlines()[0]
    record = json.loads(first)
    assert tuple(record) == RECORD_FIELDS
    assert first == json.dumps(record)  # default separators ", " and ": "
    assert WATSON_LINE in (folder / "test.jsonl").read_text(encoding="utf-8").splitlines()


def test_cli_rejects_bad_arguments(tmp_path, capsys) -> None:
    assert _run_cli("--out", str(tmp_path), "--ratios", "5") == 2
    assert _run_cli("--out", str(tmp_path), "--formats", "json") == 2
    assert "error" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    with pytest.raises(SystemExit):
        _parser().parse_args(["v1-splits", "--out", str(tmp_path), "--only", "all"])


def test_cli_refuses_committable_targets(capsys) -> None:
    from amp.cli.v1_splits import REPO_ROOT

    assert committable_target(REPO_ROOT / "docs" / "data")
    assert committable_target(REPO_ROOT)
    assert not committable_target(REPO_ROOT / "out" / "v1")
    assert _run_cli("--out", str(REPO_ROOT / "docs" / "v1-data"), "--only", "zeroshot") == 2
    assert "licence" in capsys.readouterr().err
    assert not (REPO_ROOT / "docs" / "v1-data").exists()


def test_parse_ratios_and_formats() -> None:
    assert parse_ratios("0, 50,50,100") == [0, 50, 100]
    assert parse_formats("lisp,fol") == ["lisp", "fol"]
    for bad in ("", "x", "110"):
        with pytest.raises(ValueError):
            parse_ratios(bad)
