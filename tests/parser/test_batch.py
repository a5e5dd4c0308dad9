"""Batch runs (amp/parser/batch.py): streaming order, progress, cancellation, errors, batching."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.errors import CacheWarning
from amp.parser.batch import BatchRun, run_batch
from amp.parser.core.errors import ModelLoadError
from amp.parser.core.results import BatchItem, BatchItemResult
from amp.parser.models import registry as model_registry
from amp.parser.parser import Parser

SUBJECTS = ("boy", "girl", "man", "woman", "dog")
LF0 = "exists x . forall y . {s}(x) AND cat(y)"
LF1 = "forall y . exists x . {s}(x) AND cat(y)"
FAST = {"beams": 2, "max_new_tokens": 8}


def _items(n: int = 4) -> list[BatchItem]:
    return [
        BatchItem(f"item{i}", f"Human: every {s} saw a cat\nComputer:", LF0.format(s=s), LF1.format(s=s))
        for i, s in enumerate(SUBJECTS[:n])
    ]


@pytest.fixture(autouse=True)
def _tmp_cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """File-hash index and default cache folder go to a temporary root."""
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))


@pytest.fixture
def parser(saved_tiny_model: Path, tmp_path: Path) -> Parser:
    return Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))


def test_streams_in_order_with_progress(parser: Parser) -> None:
    seen: list[tuple[int, int, str]] = []
    run = run_batch(parser, _items(), on_progress=lambda d, t, r: seen.append((d, t, r.id)), **FAST)
    assert isinstance(run, BatchRun) and run.total == 4 and run.done == 0
    results = list(run)
    assert [r.id for r in results] == ["item0", "item1", "item2", "item3"]
    assert seen == [(1, 4, "item0"), (2, 4, "item1"), (3, 4, "item2"), (4, 4, "item3")]
    assert all(r.ok and r.parse is not None and r.pair is not None and not r.cached for r in results)
    assert (run.done, run.errors, run.cached, run.cancelled) == (4, 0, 0, False)
    assert all(isinstance(r.to_dict(), dict) for r in results)


def test_cached_items_come_first_and_need_no_model(
    parser: Parser, saved_tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items()
    list(run_batch(parser, [items[1], items[3]], **FAST))
    results = list(run_batch(parser, items, **FAST))
    assert [(r.id, r.cached) for r in results] == [
        ("item1", True), ("item3", True), ("item0", False), ("item2", False)
    ]
    ordered = list(run_batch(parser, items, ordered=True, **FAST))
    assert [r.id for r in ordered] == ["item0", "item1", "item2", "item3"] and all(r.cached for r in ordered)

    def refuse(*args: object, **kwargs: object) -> None:
        raise ModelLoadError("model loaded for a cached batch")

    monkeypatch.setattr(model_registry, "load_model", refuse)
    fresh = Parser(str(saved_tiny_model), device="cpu", cache=parser.cache)
    again = list(run_batch(fresh, items, **FAST))
    assert all(r.cached and r.ok for r in again) and not fresh.loaded
    assert [r.pair for r in again] == [r.pair for r in ordered]


def test_cancel_event_stops_early(parser: Parser) -> None:
    stop = threading.Event()

    def progress(done: int, total: int, result: BatchItemResult) -> None:
        if done == 2:
            stop.set()

    run = run_batch(parser, _items(5), on_progress=progress, cancel=stop, **FAST)
    results = list(run)
    assert [r.id for r in results] == ["item0", "item1"]
    assert run.cancelled and run.done == 2 and run.total == 5
    assert "cancelled" in repr(run)


def test_cancel_callable_before_start(parser: Parser) -> None:
    run = run_batch(parser, _items(), cancel=lambda: True, **FAST)
    assert list(run) == [] and run.cancelled and not parser.loaded


def test_failing_item_does_not_stop_the_batch(parser: Parser) -> None:
    items = _items(3)
    bad = BatchItem("bad", items[0].prompt, "exists x . notaword(x)", LF1.format(s="boy"))
    missing = BatchItem("missing-lf", items[0].prompt, None, None)
    results = list(run_batch(parser, [items[0], bad, missing, items[1]], **FAST))
    assert [r.id for r in results] == ["item0", "bad", "missing-lf", "item1"]
    by_id = {r.id: r for r in results}
    assert by_id["bad"].error and "DecodingError" in by_id["bad"].error
    assert by_id["missing-lf"].error and "lacks lf0/lf1" in by_id["missing-lf"].error
    assert by_id["item0"].ok and by_id["item1"].ok


def test_parse_only_and_score_only_items(parser: Parser) -> None:
    base = _items(1)[0]
    parse_only = BatchItem("p", base.prompt, parse=True, score=False)
    score_only = BatchItem("s", base.prompt, base.lf0, base.lf1, parse=False, score=True)
    p, s = list(run_batch(parser, [parse_only, score_only], **FAST))
    assert p.parse is not None and p.pair is None and p.ok
    assert s.parse is None and s.pair is not None and s.ok


def test_batched_calls_and_fallback(parser: Parser, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []
    real_joint, real_score_pairs = Parser.parse_and_score_many, Parser.score_pairs

    def joint(self: Parser, items: list, **kw: object) -> object:
        calls.append(("parse_and_score_many", len(items)))
        return real_joint(self, items, **kw)

    def score_pairs(self: Parser, items: list, **kw: object) -> object:
        calls.append(("score_pairs", len(items)))
        return real_score_pairs(self, items, **kw)

    monkeypatch.setattr(Parser, "parse_and_score_many", joint)
    monkeypatch.setattr(Parser, "score_pairs", score_pairs)
    items = _items(3)
    results = list(run_batch(parser, items, batch_size=2, **FAST))
    assert [r.id for r in results] == ["item0", "item1", "item2"] and all(r.ok for r in results)
    # parse and pair of an item come from one call (one prompt pass); nothing is scored twice
    assert ("parse_and_score_many", 2) in calls and ("parse_and_score_many", 1) in calls
    assert not any(name == "score_pairs" and n > 0 for name, n in calls)
    for item, result in zip(items, results, strict=True):
        assert parser.cached_parse(item.prompt, beams=FAST["beams"], max_new_tokens=FAST.get("max_new_tokens")) == result.parse
        assert parser.cached_pair(item.prompt, item.lf0, item.lf1) == result.pair
    # a bad LF inside a batch: the batch is retried item by item, only that item fails
    bad = BatchItem("bad", items[0].prompt, "exists x . notaword(x)", items[0].lf1)
    fresh = Parser(parser.spec, device="cpu", cache=False)
    results = list(run_batch(fresh, [_items(4)[3], bad], batch_size=2, **FAST))
    assert [(r.id, r.ok) for r in results] == [("item3", True), ("bad", False)]


def test_unreadable_cached_entry_is_recomputed_not_reported_cached(parser: Parser) -> None:
    item = _items(1)[0]
    (first,) = list(run_batch(parser, [item], **FAST))
    assert parser.cached_pair(item.prompt, item.lf0, item.lf1) == first.pair
    key = parser.cache_key("pair", prompt=item.prompt, fmt="fol", lf0=item.lf0, lf1=item.lf1)
    assert parser.cache is not None
    parser.cache.set(key, {"not": "a pair score"}, model=parser.identity)
    with pytest.warns(CacheWarning, match="does not rebuild"):
        (again,) = list(run_batch(parser, [item], **FAST))
    assert not again.cached and again.ok and again.pair == first.pair


def test_model_that_cannot_load_fails_each_uncached_item_once(parser: Parser, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items(3)
    list(run_batch(parser, [items[1]], **FAST))  # item1 is cached
    attempts: list[int] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(1)
        raise ModelLoadError("out of memory loading the model: use a smaller model")

    monkeypatch.setattr(model_registry, "load_model", refuse)
    fresh = Parser(parser.spec, device="cpu", cache=parser.cache)
    run = run_batch(fresh, items, batch_size=2, **FAST)
    results = list(run)
    assert [(r.id, r.ok) for r in results] == [("item1", True), ("item0", False), ("item2", False)]
    assert all("out of memory" in (r.error or "") for r in results[1:])
    assert len(attempts) == 1 and run.model_error and run.errors == 2


def test_cancel_stops_the_model_inside_a_batch(parser: Parser) -> None:
    """The decoder polls the run's cancel check every step: a cancel during a batched call stops
    the model there (no results, no error records), not after the whole batch."""
    parser.load()
    polls: list[int] = []

    def cancel() -> bool:
        polls.append(1)
        return len(polls) > 8  # the run's own checks, then a few decode steps

    run = run_batch(parser, _items(4), cancel=cancel, batch_size=4, max_new_tokens=40)
    results = list(run)
    assert run.cancelled and results == []
    assert 8 < len(polls) < 12  # stopped within a step of the request, not at the budget's end
    assert not parser.cached("parse", prompt=_items(1)[0].prompt, fmt="fol", beams=5, alpha=0.7,
                             constrained=True, max_new_tokens=40)
