"""Uncertainty signals: their direction, the shared prompts, the AUROC table, and the run end to end
on a tiny model (cached, cancellable, with progress)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.detection.auroc import auroc
from amp.detection.dataset import DetectionPart, DetectionSet, build_detection_set
from amp.detection.errors import DetectionError
from amp.detection.signals import (
    ALL_TYPES,
    PromptKind,
    SentenceSignals,
    Signal,
    SignalsReport,
    detection_prompt,
    run_signals,
    signal_aurocs,
)
from amp.parser.core.errors import SearchCancelled
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings

#: A short search: the tiny model's outputs are noise, this keeps each one to a few seconds.
SEARCH = SearchSettings(beams=2, max_new_tokens=40)
#: More room for the LF: a mixed prompt of over 1024 − 63 = 961 tokens no longer fits the 1024-position model.
ROOMY_SEARCH = SearchSettings(beams=2, max_new_tokens=63)


@pytest.fixture(scope="module")
def dataset() -> DetectionSet:
    return build_detection_set(seed=0, per_type=2, types=["pp", "conj"])


def _row(value: float, ambiguous: bool, type_id: str = "pp", part: DetectionPart = DetectionPart.TEST,
         signal: Signal = Signal.SEMANTIC_ENTROPY) -> SentenceSignals:
    values = {s: math.nan for s in Signal} | {signal: value}
    return SentenceSignals(f"s{value}{ambiguous}", type_id, ambiguous, part, PromptKind.MIXED, values)


def test_every_signal_is_oriented_higher_is_more_ambiguous() -> None:
    assert Signal.SEMANTIC_ENTROPY.score(1.2) == 1.2
    for signal in (Signal.MARGIN_MIN_TOKEN, Signal.MARGIN_TOTAL, Signal.TOP2_GAP):
        assert signal.score(0.1) > signal.score(0.4)  # a closer race between meanings: more ambiguous
    assert len({s.label for s in Signal}) == len(Signal)


def test_prompts_share_their_examples_within_a_type(dataset: DetectionSet) -> None:
    a, b = (item for item in dataset.items if item.type == "pp" and item.part == DetectionPart.TRAIN)
    for kind in PromptKind:
        pa, pb = (detection_prompt(x.sentence, x.type, kind, dataset) for x in (a, b))
        assert pa.endswith(f"Human: {a.sentence}\nComputer:")
        assert pa.rsplit("Human:", 1)[0] == pb.rsplit("Human:", 1)[0]
    mixed = detection_prompt(a.sentence, a.type, PromptKind.MIXED, dataset)
    shown = mixed.rsplit("Human:", 1)[0]
    assert shown.count("Human:") == 10
    assert not [item.sentence for item in dataset.items if f"Human: {item.sentence}\n" in shown]


def test_auroc_table_per_type_overall_and_test_part() -> None:
    rows = [_row(0.9, True), _row(0.1, False), _row(0.8, True, "conj", DetectionPart.TRAIN),
            _row(0.85, False, "conj", DetectionPart.TRAIN)]
    table = signal_aurocs(rows, (PromptKind.MIXED,), resamples=50)
    report = SignalsReport("m", (PromptKind.MIXED,), tuple(rows), table, 2, 0, 50)
    se = Signal.SEMANTIC_ENTROPY
    assert report.auroc(se, PromptKind.MIXED, "pp").estimate == 1.0
    assert report.auroc(se, PromptKind.MIXED, "conj").estimate == 0.0
    overall = report.auroc(se, PromptKind.MIXED, ALL_TYPES)
    assert overall.estimate == auroc([0.9, 0.1, 0.8, 0.85], [1, 0, 1, 0]) and overall.n == 4
    assert report.auroc(se, PromptKind.MIXED, ALL_TYPES, "test").n == 2
    # a signal without values: a NaN AUROC over no sentence, not an error
    assert report.auroc(Signal.TOP2_GAP, PromptKind.MIXED, ALL_TYPES).n == 0
    assert report.auroc(se, PromptKind.ZERO_SHOT) is None
    scores, labels = report.scores(se, PromptKind.MIXED)
    assert scores == (0.9, 0.1, 0.8, 0.85) and labels == (True, False, True, False)


def test_end_to_end_on_a_tiny_model(long_tiny_model: Path, dataset: DetectionSet, tmp_path: Path) -> None:
    parser = Parser(str(long_tiny_model), device="cpu", cache=ResultCache(tmp_path / "cache"))
    seen: list[tuple[int, int]] = []
    report = run_signals(parser, dataset, prompts=["mixed"], search=SEARCH, resamples=50,
                         progress=lambda d, n: seen.append((d, n)))
    assert len(report.sentences) == len(dataset.items) == 8
    assert seen[0] == (0, 16) and seen[1][0] == 1 and seen[-1][0] == seen[-1][1]  # 8 searches, ≤ 8 decodes
    for row, item in zip(report.sentences, dataset.items, strict=True):
        assert (row.sentence, row.ambiguous, row.type, row.part) == (item.sentence, item.ambiguous, item.type, item.part)
        assert row.error is None and row.meanings >= 1
        se, gap = row.values[Signal.SEMANTIC_ENTROPY], row.values[Signal.TOP2_GAP]
        assert 0.0 <= se <= math.log(SEARCH.beams) + 1e-9 and 0.0 <= gap <= 1.0
        margin = row.values[Signal.MARGIN_MIN_TOKEN]
        assert math.isnan(margin) or 0.0 <= margin <= 0.5
        if len(row.top) == 2:  # two meanings forced-decoded against each other
            assert not math.isnan(margin) and row.meanings >= 2
    # per type (2) + overall + overall on the test part, for each of the 4 signals
    assert len(report.aurocs) == 4 * 4
    for row in report.aurocs:
        assert math.isnan(row.auroc.estimate) or 0.0 <= row.auroc.estimate <= 1.0
    assert SignalsReport.from_json(report.to_json()).to_dict() == report.to_dict()  # NaN-safe comparison
    # the same run again: from the cache, without a model call (a cancel would otherwise stop it)
    assert run_signals(parser, dataset, prompts=["mixed"], search=SEARCH, resamples=50,
                       cancelled=lambda: True).to_dict() == report.to_dict()
    with pytest.raises(SearchCancelled):
        run_signals(parser, dataset, prompts=["mixed"], search=SEARCH, resamples=51, cancelled=lambda: True)


def test_bad_prompt_kind_is_a_typed_error(dataset: DetectionSet) -> None:
    with pytest.raises(DetectionError, match="prompt kind"):
        run_signals(None, dataset, prompts=["few"])  # type: ignore[arg-type]
    with pytest.raises(DetectionError, match="at least one"):
        run_signals(None, dataset, prompts=[])  # type: ignore[arg-type]


def test_a_failed_search_is_reported_and_not_cached(saved_tiny_model: Path, dataset: DetectionSet,
                                                    tmp_path: Path) -> None:
    """The 1024-position tiny model cannot hold the longer mixed prompts: their searches fail, each such
    row says why, its values are unknown, and the report is not cached (a rerun retries them).

    The room left for the LF (:data:`ROOMY_SEARCH`) makes six of the eight prompts (959 to 987 tokens)
    too long and leaves two that fit: a failure and a success in one run, with two searches to pay."""
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "cache"))
    report = run_signals(parser, dataset, prompts=["mixed"], search=ROOMY_SEARCH, resamples=20)
    failed = [row for row in report.sentences if row.error]
    assert failed and all("context" in str(row.error) for row in failed)
    assert len(failed) < len(report.sentences)  # and some searches ran: the AUROCs below are over them
    assert all(math.isnan(v) for row in failed for v in row.values.values())
    n = report.auroc(Signal.SEMANTIC_ENTROPY, PromptKind.MIXED)
    assert n is not None and n.n == len(report.sentences) - len(failed)  # left out of the AUROCs
    with pytest.raises(SearchCancelled):
        run_signals(parser, dataset, prompts=["mixed"], search=ROOMY_SEARCH, resamples=20, cancelled=lambda: True)
