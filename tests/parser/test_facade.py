"""The Parser facade (amp/parser/parser.py): lazy loading, caching, inspection."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.errors import CacheWarning
from amp.evaluation.inspection import Inspection, inspect
from amp.evaluation.matching import MATCHES, match_lf
from amp.parser.core.errors import ModelLoadError
from amp.parser.core.results import ForcedScore, PairScore, ParseResult
from amp.parser.models import registry as model_registry
from amp.parser.models import spec as model_spec
from amp.parser.parser import Parser

PROMPT = "Human: the boy saw a girl\nComputer:"
LF0 = "exists x . forall y . boy(x) AND girl(y)"
LF1 = "forall y . exists x . boy(x) AND girl(y)"
FAST = {"beams": 2, "max_new_tokens": 16}


@pytest.fixture
def cache(tmp_path: Path) -> ResultCache:
    return ResultCache(tmp_path / "results")


@pytest.fixture(autouse=True)
def _tmp_cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """File-hash index and default cache folder go to a temporary root."""
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))


@pytest.fixture
def parser(saved_tiny_model: Path, cache: ResultCache) -> Parser:
    return Parser(str(saved_tiny_model), device="cpu", cache=cache)


@pytest.fixture
def no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to load a model fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise ModelLoadError("the model was loaded although every answer was cached")

    monkeypatch.setattr(model_registry, "load_model", refuse)


def test_identity_device_dtype_known_without_loading(saved_tiny_model: Path, cache: ResultCache) -> None:
    p = Parser(str(saved_tiny_model), device="cpu", cache=cache)
    assert p.identity == model_spec.identities(str(saved_tiny_model))[0]
    assert (p.device, p.dtype, p.loaded) == ("cpu", "float32", False)
    assert "not loaded" in repr(p)


def test_cold_then_warm_equal_and_warm_needs_no_model(
    parser: Parser, saved_tiny_model: Path, cache: ResultCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold_parse = parser.parse(PROMPT, **FAST)
    cold_scores = parser.score(PROMPT, [LF0, LF1])
    cold_pair = parser.score_pair(PROMPT, LF0, LF1)
    cold_inspect = inspect(parser, PROMPT, LF0, LF1, **FAST)
    assert parser.loaded
    assert isinstance(cold_parse, ParseResult) and len(cold_parse.beams) == 2
    assert all(isinstance(s, ForcedScore) for s in cold_scores) and isinstance(cold_pair, PairScore)
    assert 0.0 <= cold_pair.p_lf0 <= 1.0

    def refuse(*args: object, **kwargs: object) -> None:
        raise ModelLoadError("loaded on a warm call")

    monkeypatch.setattr(model_registry, "load_model", refuse)
    warm = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(cache.directory))
    assert warm.parse(PROMPT, **FAST) == cold_parse
    assert warm.score(PROMPT, [LF0, LF1]) == cold_scores
    assert warm.score(PROMPT, [LF1]) == cold_scores[1:]  # each LF is cached on its own
    assert warm.score_pair(PROMPT, LF0, LF1) == cold_pair
    assert inspect(warm, PROMPT, LF0, LF1, **FAST) == cold_inspect
    assert not warm.loaded
    # a setting that differs is a miss: now the model is needed
    with pytest.raises(ModelLoadError, match="loaded on a warm call"):
        warm.parse(PROMPT, beams=3, max_new_tokens=16)


def test_keys_cover_settings(parser: Parser) -> None:
    parts = {"prompt": PROMPT, "fmt": "fol", "beams": 2, "alpha": 0.7, "constrained": True, "max_new_tokens": 16}
    keys = {parser.cache_key("parse", **parts)}
    for change in ({"beams": 3}, {"alpha": 0.5}, {"constrained": False}, {"max_new_tokens": 8},
                   {"prompt": PROMPT + " "}, {"fmt": "lisp"}):
        keys.add(parser.cache_key("parse", **{**parts, **change}))
    assert len(keys) == 7
    other = Parser(parser.spec, device="cpu", dtype="bfloat16", cache=parser.cache)
    assert other.cache_key("parse", **parts) not in keys


def test_uncached_parser_computes_each_time(saved_tiny_model: Path) -> None:
    p = Parser(str(saved_tiny_model), device="cpu", cache=False)
    assert p.cache is None
    assert p.score(PROMPT, [LF0]) == p.score(PROMPT, [LF0])


def test_corrupt_cached_result_is_recomputed(parser: Parser, cache: ResultCache) -> None:
    first = parser.score_pair(PROMPT, LF0, LF1)
    key = parser.cache_key("pair", prompt=PROMPT, fmt="fol", lf0=LF0, lf1=LF1)
    con = sqlite3.connect(cache.directory / "cache.db")
    con.execute("UPDATE Cache SET value = ? WHERE key = ?", (b"\x00\xffgarbage", key))
    con.commit()
    con.close()
    with pytest.warns(CacheWarning):
        assert parser.score_pair(PROMPT, LF0, LF1) == first
    assert cache.get(key) is not None  # stored again


def test_cached_dict_that_does_not_rebuild_is_dropped(parser: Parser, cache: ResultCache) -> None:
    key = parser.cache_key("forced", prompt=PROMPT, fmt="fol", lf=LF0)
    cache.set(key, {"lf": LF0, "unexpected": True}, model=parser.identity)
    with pytest.warns(CacheWarning, match="does not rebuild"):
        (score,) = parser.score(PROMPT, [LF0])
    assert score.lf == LF0 and ForcedScore.from_dict(cache.get(key)) == score


def test_entries_are_tagged_by_model(parser: Parser, cache: ResultCache) -> None:
    parser.score(PROMPT, [LF0])
    assert cache.stats()["models"] == {parser.identity: 1}
    assert cache.clear(model="some-other-model") == 0
    assert cache.clear(model=parser.identity) == 1


def test_inspection(parser: Parser) -> None:
    ins = inspect(parser, PROMPT, LF0, LF1, **FAST)
    assert isinstance(ins, Inspection)
    assert len(ins.matches) == len(ins.parse.beams) and set(ins.matches) <= set(MATCHES)
    assert ins.matches == tuple(match_lf(b.text, LF0, LF1) for b in ins.parse.beams)
    assert ins.predicted_match == ins.matches[0]
    assert ins.predicted == ins.parse.beams[0] and ins.predicted_steps
    assert ins.alternative in ("lf0", "lf1")
    assert ins.alternative_lf == (LF0 if ins.alternative == "lf0" else LF1)
    assert ins.alternative_steps == (ins.pair.lf0 if ins.alternative == "lf0" else ins.pair.lf1).steps
    assert ins.divergence is not None
    assert Inspection.from_dict(ins.to_dict()) == ins



def test_threads_share_one_load(parser: Parser) -> None:
    results: list[ParseResult] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(parser.parse(PROMPT, beams=2, max_new_tokens=8))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 3 and results[0] == results[1] == results[2]


def test_bad_spec_fails_on_first_call(cache: ResultCache, tmp_path: Path) -> None:
    p = Parser(str(tmp_path / "nothing-here"), cache=cache)
    with pytest.raises(ModelLoadError, match="does not exist"):
        p.parse(PROMPT)


def test_unusable_default_cache_warns_and_runs_uncached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved_tiny_model: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "results").write_text("a file where the cache folder should be")
    monkeypatch.setenv("AMP_CACHE_DIR", str(root))
    with pytest.warns(CacheWarning, match="without the result cache"):
        p = Parser(str(saved_tiny_model), device="cpu")
    assert p.cache is None


def test_beam_steps_passes_constrained_and_keys_it(parser: Parser, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    beam = replace(parser.parse(PROMPT, **FAST).beams[0], steps=())
    seen: list[bool] = []
    real = parser.backend.beam_steps

    def spy(*args: object, constrained: bool = True, **kw: object) -> object:
        seen.append(constrained)
        return real(*args, constrained=constrained, **kw)

    monkeypatch.setattr(parser.backend, "beam_steps", spy)
    parser.beam_steps(PROMPT, beam, constrained=False)
    parser.beam_steps(PROMPT, beam, constrained=True)
    assert seen == [False, True]  # two cache keys: neither call is a hit for the other
    parser.beam_steps(PROMPT, beam, constrained=False)
    assert seen == [False, True]  # now cached


def test_result_keys_lists_exactly_the_cached_results_behind_a_prompt(
    parser: Parser, cache: ResultCache
) -> None:
    assert parser.result_keys(PROMPT, LF0, LF1, **FAST) == []
    result = parser.parse(PROMPT, **FAST)
    beam = result.beams[-1]  # only the top beam carries its steps; the others are cached apart
    assert not beam.steps
    parser.beam_steps(PROMPT, beam, constrained=result.constrained)
    keys = parser.result_keys(PROMPT, LF0, LF1, **FAST)
    assert keys == [parser.cache_key("parse", prompt=PROMPT, fmt="fol", beams=2, alpha=0.7, constrained=True,
                                      max_new_tokens=16),
                    parser.cache_key("steps", prompt=PROMPT, fmt="fol", token_ids=list(beam.token_ids),
                                     constrained=True)]
    parser.score_pair(PROMPT, LF0, LF1)
    with_pair = parser.result_keys(PROMPT, LF0, LF1, **FAST)
    assert with_pair[:2] == keys and len(with_pair) == 3 and all(k in cache for k in with_pair)
    assert parser.result_keys("Human: another prompt\nComputer:", LF0, LF1, **FAST) == []
