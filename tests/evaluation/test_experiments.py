"""amp.evaluation.experiments: planning, the streaming runner (with a fake parser) and the summaries.

The parser is a hand-made fake with the ``parse``/``score_pair`` methods of
``amp.parser.parser.Parser``: it answers from a table keyed by (test sentence, LF0 ratio of the
prompt), so every match label, rank, P(LF0), FDM, FIM and ZM_k below is computed by hand.
``run_batch`` is faked too (``fake_batch``), and one test runs the real ``run_batch`` when it exists.
"""

from __future__ import annotations

import itertools
import math
import threading
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from amp.data.generate import AMBIGUOUS_TYPES, find_pair, sample_pairs
from amp.errors import SettingError
from amp.evaluation.experiments import (
    DEFAULT_RATIOS,
    FEWSHOT_PER_RATIO_COLUMNS,
    FEWSHOT_PER_TYPE_COLUMNS,
    RECORD_COLUMNS,
    ExperimentError,
    FewShotConfig,
    SweepItem,
    SweepRecord,
    ZeroShotConfig,
    fewshot_summary,
    plan,
    plan_fewshot,
    plan_zeroshot,
    records_frame,
    rematch,
    run_items,
    run_sweep,
    zeroshot_columns,
    zeroshot_summary,
)
from amp.evaluation.inspection import inspect
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.errors import RequestTooLarge
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.prompts import Prompt, lf0_count

# --------------------------------------------------------------------------- planning


def test_default_config_is_the_papers_sweep():
    cfg = FewShotConfig()
    assert cfg.types == AMBIGUOUS_TYPES
    assert cfg.ratios == DEFAULT_RATIOS and len(cfg.ratios) == 11 and cfg.ratios[3] == 0.3
    assert (cfg.k, cfg.search.beams, cfg.fmt, cfg.mode) == (10, 5, "fol", "logical")
    assert cfg.search == DEFAULT_SEARCH
    assert cfg.n_items == 5 * 11 * 5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ratios": (0.0, 1.2)}, "outside"),
        ({"ratios": (-0.1,)}, "outside"),
        ({"ratios": (float("nan"),)}, "outside"),
        ({"ratios": ()}, "empty"),
        ({"ratios": (0.5, 0.5)}, "twice"),
        ({"ratios": ("half",)}, "not a number"),
        ({"n_per_ratio": 0}, "n_per_ratio"),
        ({"k": 0}, "k"),
        ({"types": ("pp", "metaphor")}, "metaphor"),
        ({"types": ()}, "empty"),
        ({"types": ("pp", "pp")}, "twice"),
        ({"search": {"beams": 3}}, "search must be a SearchSettings"),
        ({"fmt": "sql"}, "fmt"),
        ({"mode": "fuzzy"}, "mode"),
    ],
)
def test_fewshot_config_validation(kwargs, message):
    with pytest.raises(ExperimentError, match=message) as info:
        FewShotConfig(**kwargs)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n": 0}, "n "), ({"types": ("bogus",)}, "bogus"), ({"fmt": "lisp"}, "FOL"), ({"search": 5}, "search")],
)
def test_zeroshot_config_validation(kwargs, message):
    with pytest.raises(ExperimentError, match=message):
        ZeroShotConfig(**kwargs)


@pytest.mark.parametrize("config", [FewShotConfig, ZeroShotConfig])
@pytest.mark.parametrize(("search", "error", "message"), [
    ({"beams": 0}, SettingError, "beams"), ({"beams": -1}, SettingError, "beams"),
    ({"beams": 65}, RequestTooLarge, "beams"), ({"beams": 64, "max_new_tokens": 1024}, RequestTooLarge, "MAX_SEARCH_COST"),
])
def test_a_sweeps_search_is_bounded_by_its_record(config, search, error, message):
    """A sweep's beams are its search record's: bounded once, when the record is made (no second check)."""
    with pytest.raises(error, match=message) as info:
        config(search=SearchSettings(**search))
    assert isinstance(info.value, ValueError)
    assert config(search=SearchSettings(beams=2)).search.beams == 2


def test_config_normalises_aliases_and_sequences():
    cfg = FewShotConfig(types=["scope_reverse"], ratios=[0, 1])
    assert cfg.types == ("revscope",) and cfg.ratios == (0.0, 1.0)
    assert FewShotConfig(types="pp").types == ("pp",)
    hash(cfg)  # frozen and hashable (usable as a cache key)
    import numpy as np

    cfg = FewShotConfig(ratios=(0.1 * 3,), n_per_ratio=np.int64(2), seed=np.int32(4))
    assert cfg.ratios == (0.3,) and type(cfg.n_per_ratio) is int and cfg.seed == 4
    with pytest.raises(ExperimentError, match="whole number"):
        FewShotConfig(n_per_ratio=2.5)
    with pytest.raises(ExperimentError, match="whole number"):
        ZeroShotConfig(seed=True)


@pytest.fixture(scope="module")
def fewshot_plan() -> tuple[FewShotConfig, list[SweepItem]]:
    cfg = FewShotConfig(types=("scope", "conj"), ratios=(0.0, 0.3, 0.7, 1.0), n_per_ratio=3, seed=7, k=10)
    return cfg, plan_fewshot(cfg)


def test_plan_fewshot_counts_and_shared_test_set(fewshot_plan):
    cfg, items = fewshot_plan
    assert len(items) == cfg.n_items == 2 * 4 * 3
    assert len({it.id for it in items}) == len(items)
    for type_ in cfg.types:
        expected = [p.surface for p in sample_pairs(type_, 3, 7)]
        for ratio in cfg.ratios:
            group = [it for it in items if it.type == type_ and it.ratio == ratio]
            assert [it.surface for it in group] == expected  # same test sentences for every ratio
            assert [it.index for it in group] == [0, 1, 2]


def test_plan_fewshot_prompts(fewshot_plan):
    cfg, items = fewshot_plan
    pairs = {p.surface: p for t in cfg.types for p in sample_pairs(t, 3, 7)}
    for it in items:
        prompt = it.prompt
        assert isinstance(prompt, Prompt) and len(prompt.examples) == cfg.k
        labels = [ex.label for ex in prompt.examples]
        assert labels.count(0) == lf0_count(cfg.k, it.ratio) == round(cfg.k * it.ratio)
        assert labels.count(1) == cfg.k - labels.count(0)
        assert it.surface not in {ex.utterance for ex in prompt.examples}  # test not in its prompt
        assert prompt.test_utterance == it.surface and prompt.type == it.type
        assert it.prompt_text == prompt.render() and it.prompt_text.endswith(f"Human: {it.surface}\nComputer:")
        # LF0 and LF1 are scored under this same prompt, and are the pair's readings.
        assert (it.lf0, it.lf1) == (pairs[it.surface].lf0.lf, pairs[it.surface].lf1.lf)
        assert (prompt.gold_lf0, prompt.gold_lf1) == (it.lf0, it.lf1)


def test_plan_fewshot_is_deterministic_and_seeded(fewshot_plan):
    cfg, items = fewshot_plan
    again = plan_fewshot(cfg)
    assert [(i.id, i.prompt_text, i.seed) for i in again] == [(i.id, i.prompt_text, i.seed) for i in items]
    # One prompt seed per (type, index), shared by every ratio (paired design); another plan
    # for another seed.
    assert len({i.seed for i in items}) == len(cfg.types) * cfg.n_per_ratio
    other = plan_fewshot(FewShotConfig(types=cfg.types, ratios=cfg.ratios, n_per_ratio=3, seed=8))
    assert [i.prompt_text for i in other] != [i.prompt_text for i in items]


def _lf0_positions(item: SweepItem) -> frozenset[int]:
    return frozenset(j for j, ex in enumerate(item.prompt.examples) if ex.label == 0)


def test_plan_fewshot_is_paired_across_ratios(fewshot_plan):
    """The original's design (docs/paper-notes.md §11): ``train_eval`` is identical in all 11 ratio
    folders and the draws (10 surfaces, then one shuffle) do not depend on r, so item i sees the
    same sentences in the same positions at every ratio; the LF0 examples are the first
    int(10·r) drawn, hence nested as r grows."""
    cfg, items = fewshot_plan
    for type_ in cfg.types:
        for index in range(cfg.n_per_ratio):
            group = sorted((it for it in items if it.type == type_ and it.index == index), key=lambda it: it.ratio)
            sentences = {tuple(ex.utterance for ex in it.prompt.examples) for it in group}
            assert len(sentences) == 1  # the same k sentences, same positions, at every ratio
            assert len({it.seed for it in group}) == 1
            lf0 = [_lf0_positions(it) for it in group]
            assert [len(s) for s in lf0] == [0, 3, 7, 10]
            assert all(a < b for a, b in itertools.pairwise(lf0))  # nested: first n0 drawn carry LF0
            for it in group:  # each example shows its own sentence's reading for its label
                for ex in it.prompt.examples:
                    pair = find_pair(ex.utterance)
                    assert (ex.lf, ex.alt_lf) == (pair.lf(ex.label).lf, pair.lf(1 - ex.label).lf)


def test_plan_fewshot_independent_draws_is_explicit():
    cfg = FewShotConfig(types=("pp",), ratios=(0.0, 1.0), n_per_ratio=2, seed=7, independent_draws=True)
    items = plan_fewshot(cfg)
    for index in range(2):
        a, b = [it for it in items if it.index == index]
        assert {ex.utterance for ex in a.prompt.examples} != {ex.utterance for ex in b.prompt.examples}
        assert a.seed != b.seed
    assert FewShotConfig().independent_draws is False
    with pytest.raises(ExperimentError, match="independent_draws"):
        FewShotConfig(independent_draws="yes")


def test_plan_fewshot_lisp():
    (item,) = plan_fewshot(FewShotConfig(types=("scope",), ratios=(0.5,), n_per_ratio=1, fmt="lisp"))
    assert item.fmt == "lisp" and item.lf0.startswith("(") and "Computer: (" in item.prompt_text


def test_plan_zeroshot():
    cfg = ZeroShotConfig(types=("pp", "bound"), n=3, seed=1)
    items = plan_zeroshot(cfg)
    assert len(items) == cfg.n_items == 6
    assert [i.surface for i in items[:3]] == [p.surface for p in sample_pairs("pp", 3, 1)]
    assert all(i.ratio is None for i in items)
    assert all(i.surface not in {ex.utterance for ex in i.prompt.examples} for i in items)
    assert all(ex.label is None for i in items for ex in i.prompt.examples)  # unambiguous ingredients
    assert [i.prompt_text for i in plan_zeroshot(cfg)] == [i.prompt_text for i in items]


# --------------------------------------------------------------------------- fakes


@dataclass(frozen=True)
class FBeam:
    rank: int
    text: str
    score: float = 0.0
    logprob: float = 0.0
    finished: bool = True


@dataclass(frozen=True)
class FParse:
    beams: tuple[FBeam, ...]


@dataclass(frozen=True)
class FForced:
    lf: str
    min_prob: float


@dataclass(frozen=True)
class FPair:
    lf0: FForced
    lf1: FForced
    p_lf0: float | None
    p_lf0_total: float | None
    p_lf0_parted: float | None = None


@dataclass
class FakeParser:
    """Answers from ``table[prompt text] = (beam texts, (m0, m1))``, like ``Parser`` takes prompt text."""

    table: dict[str, tuple[list[str], tuple[float, float]]]
    calls: list[str] = field(default_factory=list)
    device: str = "cpu"
    scores: bool = True  # it can score LFs (Parser.scores: its backend's capability)
    backend: Any = field(default_factory=lambda: SimpleNamespace(jobs=None, capabilities=Capabilities))  # in this process
    cache: Any = None  # no result cache: every item is computed

    def cached(self, kind: str, **parts: Any) -> bool:
        return False

    def load(self) -> None:
        """Nothing to load (``run_batch`` loads the model once before uncached items)."""

    def parse(self, prompt: str, *, fmt: str = "fol", beams: int = 5, **settings: Any) -> FParse:
        self.calls.append("parse")
        texts, _ = self.table[prompt]
        return FParse(tuple(FBeam(i, t) for i, t in enumerate(texts[:beams])))

    def score_pair(self, prompt: str, lf0: str, lf1: str, *, fmt: str = "fol") -> FPair:
        self.calls.append("score")
        _, (m0, m1) = self.table[prompt]
        p = m0 / (m0 + m1) if m0 + m1 else None
        return FPair(FForced(lf0, m0), FForced(lf1, m1), p, None if p is None else round(p * 0.9, 6),
                     None if p is None else round(p * 0.8, 6))

    def parse_and_score_many(self, asks: list[tuple[str, str | None, str | None]], *, fmt: str = "fol",
                             beams: int = 5, **settings: Any) -> list[tuple[FParse, FPair | None]]:
        """What ``run_batch`` asks of a parser: each prompt's parse and, with both LFs, its pair."""
        return [(self.parse(prompt, fmt=fmt, beams=beams),
                 None if lf0 is None or lf1 is None else self.score_pair(prompt, lf0, lf1, fmt=fmt))
                for prompt, lf0, lf1 in asks]

    def score_pairs(self, triples: list[tuple[str, str, str]], *, fmt: str = "fol") -> list[FPair]:
        return [self.score_pair(prompt, lf0, lf1, fmt=fmt) for prompt, lf0, lf1 in triples]


def by_prompt(items: list[SweepItem], answers: dict[tuple[str, float | None], Any]) -> dict[str, Any]:
    """Key hand-written answers ``{(surface, ratio): answer}`` by the items' prompt texts."""
    return {it.prompt_text: answers[(it.surface, it.ratio)] for it in items}


@dataclass(frozen=True)
class FBatchItem:
    id: str
    prompt: Any
    lf0: str
    lf1: str
    fmt: str = "fol"
    parse: bool = True
    score: bool = True


@dataclass(frozen=True)
class FResult:
    id: str
    parse: Any
    pair: Any
    cached: bool = False
    error: str | None = None


def fake_run_batch(parser, items, search, *, on_progress=None, cancel=None, batch_size=None, label="", meta=None):
    """Sequential stand-in for amp.parser.batch.run_batch; items with an empty prompt fail."""
    for item in items:
        if cancel is not None and (cancel.is_set() if isinstance(cancel, threading.Event) else cancel()):
            return
        if not item.prompt:
            yield FResult(item.id, None, None, error="DecodingError: no prompt")
            continue
        parse = parser.parse(item.prompt, fmt=item.fmt, beams=search.beams) if item.parse else None
        pair = parser.score_pair(item.prompt, item.lf0, item.lf1, fmt=item.fmt) if item.score else None
        yield FResult(item.id, parse, pair, cached=item.id.endswith("000"))


def _use_batch(monkeypatch, run_batch) -> SimpleNamespace:
    """The sweep runner with a stand-in ``run_batch`` and ``BatchItem`` (it imports them at load time)."""
    from amp.evaluation import sweep_run

    monkeypatch.setattr(sweep_run, "run_batch", run_batch)
    monkeypatch.setattr(sweep_run, "BatchItem", FBatchItem)
    return SimpleNamespace(BatchItem=FBatchItem, run_batch=run_batch)


@pytest.fixture
def fake_batch(monkeypatch):
    return _use_batch(monkeypatch, fake_run_batch)


NEITHER = "exists x . boy(x)"
BROKEN = "exists x . ( boy("


@pytest.fixture(scope="module")
def scope_sweep():
    """A 3-ratio, 2-sentence scope sweep and a fake parser with hand-chosen answers.

    Top-1 per (ratio, sentence)  and  (m0, m1) → P(LF0):
      r=0  : s0 LF1 (LF0 2nd)  0.2      s1 LF1 (no LF0)     0.1
      r=0.5: s0 LF0 (LF1 3rd)  0.5      s1 neither, LF1 2nd 0.7
      r=1  : s0 LF0            1.0      s1 unparseable      0.6
    """
    cfg = FewShotConfig(types=("scope",), ratios=(0.0, 0.5, 1.0), n_per_ratio=2, seed=3, search=SearchSettings(beams=3))
    items = plan_fewshot(cfg)
    s0, s1 = sample_pairs("scope", 2, 3)
    table = by_prompt(items, {
        (s0.surface, 0.0): ([s0.lf1.lf, s0.lf0.lf, NEITHER], (0.2, 0.8)),
        (s1.surface, 0.0): ([s1.lf1.lf, NEITHER], (0.1, 0.9)),
        (s0.surface, 0.5): ([s0.lf0.lf, NEITHER, s0.lf1.lf], (0.25, 0.25)),
        (s1.surface, 0.5): ([NEITHER, s1.lf1.lf], (0.7, 0.3)),
        (s0.surface, 1.0): ([_reordered(s0.lf0.lf)], (0.9, 0.0)),
        (s1.surface, 1.0): ([BROKEN, s1.lf0.lf], (0.3, 0.2)),
    })
    return cfg, items, table


def _reordered(lf: str) -> str:
    """The same formula with its conjuncts reversed: equal after canonicalisation."""
    prefix, _, body = lf.rpartition(" . ")
    return f"{prefix} . " + " AND ".join(reversed(body.split(" AND ")))


# --------------------------------------------------------------------------- runner


def test_run_items_records(fake_batch, scope_sweep):
    cfg, items, table = scope_sweep
    seen: list[tuple[int, int, str]] = []
    records = list(
        run_items(FakeParser(table), items, cfg.search, mode=cfg.mode,
                  on_progress=lambda done, total, rec: seen.append((done, total, rec.id)))
    )
    assert [r.id for r in records] == [i.id for i in items]
    assert seen == [(n + 1, 6, r.id) for n, r in enumerate(records)]
    by = {(r.ratio, r.surface == items[0].surface): r for r in records}
    r00, r01 = by[(0.0, True)], by[(0.0, False)]
    assert (r00.match, r00.lf0_rank, r00.lf1_rank) == ("lf1", 2, 1)
    assert (r01.match, r01.lf0_rank, r01.lf1_rank) == ("lf1", None, 1)
    assert (by[(0.5, True)].match, by[(0.5, True)].lf1_rank) == ("lf0", 3)
    assert (by[(0.5, False)].match, by[(0.5, False)].lf1_rank) == ("neither", 2)
    assert (by[(1.0, True)].match, by[(1.0, True)].lf0_rank) == ("lf0", 1)  # canonical, not string, match
    assert (by[(1.0, False)].match, by[(1.0, False)].lf0_rank) == ("unparseable", 2)
    assert r00.p_lf0 == pytest.approx(0.2) and r00.min_prob_lf0 == 0.2 and r00.min_prob_lf1 == 0.8
    assert r00.p_lf0_total == pytest.approx(0.18) and r00.p_lf0_parted == pytest.approx(0.16)
    assert by[(1.0, True)].p_lf0 == 1.0
    assert r00.beams == tuple(table[items[0].prompt_text][0]) and r00.top1 == r00.beams[0]
    assert r00.cached and not r01.cached and all(r.error is None for r in records)
    assert all(r.mode == "logical" and r.fmt == "fol" for r in records)


def test_run_items_parse_only_and_score_only(fake_batch, scope_sweep):
    _, items, table = scope_sweep
    parser = FakeParser(table)
    (rec,) = run_items(parser, items[:1], beams=3, score=False)
    assert parser.calls == ["parse"] and rec.p_lf0 is None and rec.match == "lf1"
    (rec,) = run_items(parser, items[:1], beams=3, parse=False)
    assert rec.match == "missing" and rec.beams == () and rec.top1 is None and rec.p_lf0 == pytest.approx(0.2)


def test_run_items_error_is_recorded_and_excluded(fake_batch, scope_sweep):
    _, items, table = scope_sweep
    broken = SweepItem(**{**items[0].__dict__, "id": "broken", "prompt_text": ""})
    records = list(run_items(FakeParser(table), [broken, items[1]], beams=3))
    assert records[0].error == "DecodingError: no prompt" and records[0].match == "missing"
    per_ratio, _ = fewshot_summary(records)
    assert per_ratio.loc[0, "n"] == 1 and per_ratio.loc[0, "n_errors"] == 1


def test_run_items_cancel_stops_the_stream(fake_batch, scope_sweep):
    _, items, table = scope_sweep
    stop = threading.Event()
    got = []
    for record in run_items(FakeParser(table), items, beams=3, cancel=stop):
        got.append(record)
        if len(got) == 2:
            stop.set()
    assert len(got) == 2
    # A callable works too, and a cancelled-before-start run yields nothing.
    assert list(run_items(FakeParser(table), items, beams=3, cancel=lambda: True)) == []


def test_run_items_stops_even_if_run_batch_ignores_cancel(monkeypatch, scope_sweep):
    _, items, table = scope_sweep
    _use_batch(monkeypatch, lambda parser, items, search, *, on_progress=None, cancel=None, batch_size=None, **_:
               fake_run_batch(parser, items, search))
    flag = {"stop": False}
    got = []
    for record in run_items(FakeParser(table), items, beams=3, cancel=lambda: flag["stop"]):
        got.append(record)
        flag["stop"] = True
    assert len(got) == 1


def test_run_items_rejects_duplicate_ids_and_bad_mode(fake_batch, scope_sweep):
    _, items, table = scope_sweep
    with pytest.raises(ExperimentError, match="share the id"):
        list(run_items(FakeParser(table), [items[0], items[0]], beams=3))
    with pytest.raises(ExperimentError, match="mode"):
        list(run_items(FakeParser(table), items, beams=3, mode="fuzzy"))
    assert list(run_items(FakeParser(table), [], beams=3)) == []


def test_run_sweep_uses_config(fake_batch):
    cfg = ZeroShotConfig(types=("scope",), n=2, seed=5, search=SearchSettings(beams=1))
    pairs = sample_pairs("scope", 2, 5)
    table = by_prompt(plan(cfg), {(p.surface, None): ([p.lf1.lf, p.lf0.lf], (0.4, 0.6)) for p in pairs})
    records = list(run_sweep(FakeParser(table), cfg))
    assert [r.beams for r in records] == [(p.lf1.lf,) for p in pairs]  # beams=1 from the config
    assert all(r.ratio is None and r.lf1_rank == 1 for r in records)


# --------------------------------------------------------------------------- summaries


@pytest.fixture
def scope_records(fake_batch, scope_sweep):
    cfg, items, table = scope_sweep
    return list(run_items(FakeParser(table), items, cfg.search))


def test_fewshot_summary_hand_computed(scope_records):
    per_ratio, per_type = fewshot_summary(scope_records)
    assert list(per_ratio.columns) == list(FEWSHOT_PER_RATIO_COLUMNS)
    assert per_ratio["ratio"].tolist() == [0.0, 0.5, 1.0]
    assert per_ratio["n"].tolist() == [2, 2, 2]
    assert per_ratio["acc_lf0"].tolist() == [0.0, 0.5, 0.5]
    assert per_ratio["acc_lf1"].tolist() == [1.0, 0.0, 0.0]
    assert per_ratio["neither"].tolist() == [0.0, 0.5, 0.5]
    assert per_ratio["mean_p_lf0"].tolist() == pytest.approx([0.15, 0.6, 0.8])
    assert per_ratio["std_p_lf0"].tolist() == pytest.approx([0.0707107, 0.1414214, 0.2828427])
    assert per_ratio["sem_p_lf0"].tolist() == pytest.approx([0.05, 0.1, 0.2])
    # FDM = mean(|0-0|+|1-1|, |.5-.5|+|0-.5|, |.5-1|+|0-0|) = 1/3
    # FIM = mean((.2²+.1²)/2, (0²+.2²)/2, (0²+.4²)/2) = mean(.025, .02, .08)
    assert list(per_type.columns) == list(FEWSHOT_PER_TYPE_COLUMNS)
    (row,) = per_type.to_dict("records")
    # n counts test sentences (issue #46: "n 11" counted records), n_records one per sentence and ratio
    assert row["type"] == "scope" and row["n"] == 2 and row["n_records"] == 6 and row["n_ratios"] == 3
    assert row["FDM"] == pytest.approx(1 / 3)
    assert row["FIM"] == pytest.approx(0.125 / 3)


def test_real_run_batch_with_fake_parser(scope_sweep):
    """The runner against the colleagues' real run_batch (streaming, cached-first order)."""
    pytest.importorskip("amp.parser.batch")
    cfg, items, table = scope_sweep
    stop = threading.Event()
    got = []
    for record in run_items(FakeParser(table), items, cfg.search, cancel=stop):
        got.append(record)
        if len(got) == 4:
            stop.set()
    assert len(got) == 4
    records = list(run_items(FakeParser(table), items, cfg.search))
    assert sorted(r.id for r in records) == sorted(i.id for i in items)
    _, per_type = fewshot_summary(records)
    assert per_type.loc[0, "FDM"] == pytest.approx(1 / 3)
    assert per_type.loc[0, "FIM"] == pytest.approx(0.125 / 3)


def test_fewshot_summary_partial_and_streaming(scope_records):
    # Records arrive one by one: every prefix summarises without error.
    for n in range(len(scope_records) + 1):
        per_ratio, per_type = fewshot_summary(scope_records[:n])
        assert per_ratio["n"].sum() == n
        assert len(per_type) == (1 if n else 0)
    # Only r = 0 so far: FDM/FIM over that ratio alone.
    per_ratio, per_type = fewshot_summary(scope_records[:2])
    assert per_type.loc[0, "FDM"] == 0.0 and per_type.loc[0, "FIM"] == pytest.approx(0.025)
    assert per_type.loc[0, "n_ratios"] == 1
    # One record: std/sem undefined (NaN), mean defined.
    per_ratio, _ = fewshot_summary(scope_records[:1])
    assert per_ratio.loc[0, "mean_p_lf0"] == pytest.approx(0.2) and math.isnan(per_ratio.loc[0, "sem_p_lf0"])


def test_fewshot_summary_empty():
    for empty in ([], records_frame([])):
        per_ratio, per_type = fewshot_summary(empty)
        assert per_ratio.empty and list(per_ratio.columns) == list(FEWSHOT_PER_RATIO_COLUMNS)
        assert per_type.empty and list(per_type.columns) == list(FEWSHOT_PER_TYPE_COLUMNS)


def test_summaries_accept_frames(scope_records):
    df = records_frame(scope_records)
    assert list(df.columns) == list(RECORD_COLUMNS) and len(df) == 6
    assert df["ratio"].dtype == "float64" and df["lf0_rank"].dtype == "float64"
    a = fewshot_summary(scope_records)
    b = fewshot_summary(df)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])
    empty = records_frame([])
    assert empty.empty and list(empty.columns) == list(RECORD_COLUMNS)


def test_zeroshot_summary_hand_computed(fake_batch):
    cfg = ZeroShotConfig(types=("pp", "scope"), n=2, seed=2, search=SearchSettings(beams=5))
    pp0, pp1 = sample_pairs("pp", 2, 2)
    sc0, sc1 = sample_pairs("scope", 2, 2)
    items = plan_zeroshot(cfg)
    table = by_prompt(items, {
        (pp0.surface, None): ([pp0.lf0.lf, pp0.lf1.lf], (0.6, 0.4)),  # both in top 2, top-1 LF0
        (pp1.surface, None): ([pp1.lf1.lf, NEITHER, pp1.lf0.lf], (0.2, 0.8)),  # both in top 3, top-1 LF1
        (sc0.surface, None): ([NEITHER, sc0.lf0.lf], (0.5, 0.5)),  # only LF0 (rank 2)
        (sc1.surface, None): ([BROKEN], (0.0, 1.0)),  # unparseable, nothing
    })
    records = list(run_items(FakeParser(table), items, cfg.search))
    for k, zm_pp in ((1, 0.0), (2, 50.0), (3, 100.0), (5, 100.0)):
        df = zeroshot_summary(records, k)
        assert list(df.columns) == list(zeroshot_columns(k))
        assert df["type"].tolist() == ["pp", "scope"]
        assert df[f"ZM_{k}"].tolist() == [zm_pp, 0.0]
    df = zeroshot_summary(records, 5).set_index("type")
    assert df.loc["pp", "n"] == 2
    assert (df.loc["pp", "acc_lf0"], df.loc["pp", "acc_lf1"], df.loc["pp", "neither"]) == (0.5, 0.5, 0.0)
    assert (df.loc["scope", "acc_lf0"], df.loc["scope", "acc_lf1"], df.loc["scope", "neither"]) == (0.0, 0.0, 1.0)
    assert df.loc["pp", "mean_p_lf0"] == pytest.approx(0.4)
    assert df.loc["scope", "mean_p_lf0"] == pytest.approx(0.25)
    assert df.loc["scope", "mean_p_lf0_total"] == pytest.approx(0.225)


def test_zeroshot_summary_empty_partial_and_bad_k():
    df = zeroshot_summary([], 5)
    assert df.empty and list(df.columns) == list(zeroshot_columns(5))
    rec = SweepRecord(id="a", type="bound", ratio=None, surface="s", lf0="x", lf1="y", match="missing")
    df = zeroshot_summary([rec], 5)
    assert df.loc[0, "n"] == 0 and math.isnan(df.loc[0, "ZM_5"])
    with pytest.raises(ExperimentError):
        zeroshot_summary([], 0)


def test_rematch_switches_canonicaliser(scope_records):
    again = rematch(scope_records, "paper")
    assert all(r.mode == "paper" for r in again)
    # The faithful canonicaliser also sorts conjuncts, so the labels agree here.
    assert [r.match for r in again] == [r.match for r in scope_records]
    assert rematch(scope_records, "logical") == scope_records
    per_ratio, _ = fewshot_summary(records_frame(scope_records), mode="paper")
    assert per_ratio["acc_lf0"].tolist() == [0.0, 0.5, 0.5]
    with pytest.raises(ExperimentError):
        rematch(scope_records, "fuzzy")


# --------------------------------------------------------------------------- end to end (tiny model)


def test_end_to_end_with_tiny_model(saved_tiny_model, tmp_path):
    """Plan → real Parser (tiny random GPT-2, result cache in tmp) → records → summaries → figures."""
    pytest.importorskip("torch")
    from amp.cache import ResultCache
    from amp.parser.parser import Parser
    from amp.reporting import plots

    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    cfg = FewShotConfig(types=("scope",), ratios=(0.0, 1.0), n_per_ratio=1, search=SearchSettings(beams=2))
    items = plan_fewshot(cfg)
    records = list(run_sweep(parser, cfg))
    assert sorted(r.id for r in records) == sorted(i.id for i in items)
    for r in records:
        assert r.error is None and not r.cached
        assert 1 <= len(r.beams) <= 2 and r.top1 == r.beams[0] and r.match in ("lf0", "lf1", "neither", "unparseable")
        assert 0.0 <= r.p_lf0 <= 1.0 and 0.0 <= r.p_lf0_total <= 1.0
        assert r.p_lf0 == pytest.approx(r.min_prob_lf0 / (r.min_prob_lf0 + r.min_prob_lf1))
    again = list(run_sweep(parser, cfg))  # same config → same prompts → all from the cache
    assert all(r.cached for r in again)
    assert {r.id: r.beams for r in again} == {r.id: r.beams for r in records}

    per_ratio, per_type = fewshot_summary(records)
    assert per_ratio["n"].tolist() == [1, 1] and 0.0 <= per_type.loc[0, "FDM"] <= 2.0
    assert len(plots.p_lf0_vs_ratio(per_ratio).data) == 2
    assert len(plots.accuracy_vs_ratio(per_ratio).data) == 4
    assert len(plots.p_lf0_distribution(records_frame(records)).data) == 1

    item = items[0]
    inspection = inspect(parser, item.prompt_text, item.lf0, item.lf1, beams=2)
    fig = plots.inspection_heatmap(inspection, wrap=200)  # one block: row 0 is the predicted parse
    z = fig.to_dict()["data"][0]["z"]
    assert z[0][: len(inspection.predicted_steps)] == [s.prob for s in inspection.predicted_steps]
    table = plots.beam_table(inspection.parse, item.lf0, item.lf1, "logical")
    assert len(table) == len(inspection.parse.beams)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "8"])
def test_run_items_refuses_a_bad_batch_size(bad) -> None:
    with pytest.raises(ExperimentError, match="batch_size"):
        run_items(FakeParser({}), [], batch_size=bad)


def test_run_items_passes_the_batch_size_on(monkeypatch, scope_sweep) -> None:
    _, items, table = scope_sweep
    seen = []

    def spy(parser, items, search, *, on_progress=None, cancel=None, batch_size=None, label="", meta=None):
        seen.append((batch_size, search))
        return fake_run_batch(parser, items, search, cancel=cancel)

    _use_batch(monkeypatch, spy)
    search = SearchSettings(beams=3, max_new_tokens=40)
    assert len(list(run_items(FakeParser(table), items, search, batch_size=4))) == len(items)
    assert seen == [(4, search)]  # the record itself, whole: no setting of it dropped on the way
    assert len(list(run_items(FakeParser(table), items, search, beams=2))) == len(items)
    assert seen[-1] == (None, SearchSettings(beams=2, max_new_tokens=40))  # keywords change the record's fields


def test_summaries_when_every_item_of_a_group_failed():
    """A type whose items all failed (e.g. the model would not load) is summarised, not a crash."""
    failed = [SweepRecord(id=f"f/{i}", type="pp", ratio=0.5, surface="s", lf0="x", lf1="y", error="ModelLoadError: no")
              for i in range(2)]
    per_ratio, per_type = fewshot_summary(failed)
    assert per_ratio.loc[0, "n"] == 0 and per_ratio.loc[0, "n_errors"] == 2 and math.isnan(per_ratio.loc[0, "acc_lf0"])
    assert per_type.loc[0, "n"] == 0 and per_type.loc[0, "n_errors"] == 2 and math.isnan(per_type.loc[0, "FDM"])
    zero = zeroshot_summary([replace(r, ratio=None) for r in failed])
    assert zero.loc[0, "n"] == 0 and zero.loc[0, "n_errors"] == 2 and math.isnan(zero.loc[0, "ZM_5"])
