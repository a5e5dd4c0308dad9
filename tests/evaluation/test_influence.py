"""Example influence (issue #15 point 1): leave-one-out and flip scores of a mixed prompt."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.evaluation.errors import InfluenceError
from amp.evaluation.influence import _spearman, example_influence, influence_from_scores, influence_variants
from amp.parser.core.errors import SearchCancelled
from amp.parser.core.results import ForcedScore, PairScore
from amp.parser.parser import Parser
from amp.parser.search.cancel import cancel_scope
from amp.prompts import Prompt, PromptExample, mixed_prompt

LF0 = "exists x . boy(x)"
LF1 = "exists x . girl(x)"


def _prompt() -> Prompt:
    examples = (
        PromptExample("a", "A0", "A1", 0),
        PromptExample("b", "B", None, None),  # an unambiguous ingredient: never flipped
        PromptExample("c", "C1", "C0", 1),
    )
    return Prompt(examples, "t", gold_lf0=LF0, gold_lf1=LF1)


def _pair(p: float, total: float | None = None) -> PairScore:
    forced = ForcedScore(lf="x", token_ids=(), tokens=(), steps=(), sum_logprob=-1.0, mean_logprob=-1.0,
                         sum_logprob_grammar=-1.0, min_prob=0.5, min_prob_grammar=0.5)
    return PairScore(lf0=forced, lf1=forced, p_lf0=p, p_lf0_total=p if total is None else total)


def test_variants_are_base_then_each_removed_then_each_ambiguous_flipped() -> None:
    prompt = _prompt()
    variants = influence_variants(prompt)
    assert [(kind, i) for kind, i, _ in variants] == [("base", None), ("removed", 0), ("removed", 1),
                                                       ("removed", 2), ("flipped", 0), ("flipped", 2)]
    assert [e.utterance for e in variants[2][2].examples] == ["a", "c"]
    flipped = variants[5][2].examples[2]
    assert (flipped.lf, flipped.alt_lf, flipped.label) == ("C0", "C1", 0)
    assert all(p.test_utterance == "t" for _, _, p in variants)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_variant_differs_from_the_base_in_exactly_its_one_example(seed: int) -> None:
    """Each variant is the base prompt with one example removed or flipped, nothing else: no
    change builds on an earlier one (a second flipped example would mix two examples' influence)."""
    base = mixed_prompt("the man saw the boy with the telescope", 0.5, seed=seed)
    variants = influence_variants(base)
    assert variants[0] == ("base", None, base)
    flipped_seen = 0
    for kind, i, prompt in variants[1:]:
        assert i is not None
        assert (prompt.test_utterance, prompt.header, prompt.type, prompt.gold_lf0, prompt.gold_lf1) == (
            base.test_utterance, base.header, base.type, base.gold_lf0, base.gold_lf1)
        if kind == "removed":
            assert prompt.examples == base.examples[:i] + base.examples[i + 1:]
        else:
            assert kind == "flipped"
            flipped_seen += 1
            assert len(prompt.examples) == len(base.examples)
            differs = [j for j, (a, b) in enumerate(zip(prompt.examples, base.examples, strict=True)) if a != b]
            assert differs == [i]
            was, now = base.examples[i], prompt.examples[i]
            assert (now.utterance, now.lf, now.alt_lf, now.label) == (was.utterance, was.alt_lf, was.lf,
                                                                       1 - was.label)  # type: ignore[operator]
    assert flipped_seen == sum(ex.is_ambiguous for ex in base.examples) >= 2


def test_deltas_are_variant_minus_base_and_ranked_by_size() -> None:
    scores = [_pair(0.5, 0.6), _pair(0.2, 0.6), _pair(0.55, 0.1), _pair(0.9, 0.65), _pair(0.1, 0.2),
              _pair(math.nan, 0.7)]
    inf = influence_from_scores(_prompt(), LF0, LF1, "fol", scores)
    assert (inf.base_p_lf0, inf.base_p_lf0_total) == (0.5, 0.6)
    a, b, c = inf.examples
    assert a.delta_removed == pytest.approx(-0.3) and a.delta_removed_total == pytest.approx(0.0)
    assert b.delta_removed == pytest.approx(0.05) and b.delta_flipped is None and b.flipped_p_lf0 is None
    assert c.delta_removed == pytest.approx(0.4) and c.delta_removed_total == pytest.approx(0.05)
    assert a.delta_flipped == pytest.approx(-0.4) and a.delta_flipped_total == pytest.approx(-0.4)
    assert c.flipped_p_lf0 is None and c.delta_flipped is None  # NaN (both minima 0): undefined
    assert c.delta_flipped_total == pytest.approx(0.1)
    assert [e.index for e in inf.ranked("removed")] == [2, 0, 1]
    assert [e.index for e in inf.ranked()] == [0, 2, 1]  # both changes: a's flip (0.4) ties c's removal, by position
    assert [e.index for e in inf.ranked("removed", "total")] == [1, 2, 0]  # |-0.5| > |0.05| > |0.0|
    assert [e.index for e in inf.ranked("flipped")] == [0, 1, 2]  # undefined ones last, by position
    # total: base 0.6 prefers LF0; b removed (0.1) and a flipped (0.2) turn it to LF1, c's changes do not
    assert [inf.turns(e, "removed", "total") for e in inf.examples] == [False, True, False]
    assert [inf.turns(e, "flipped", "total") for e in inf.examples] == [True, False, False]
    assert not any(inf.turns(e, c) for e in inf.examples for c in ("removed", "flipped"))  # min: base 0.5 undecided
    assert [e.index for e in inf.ranked(None, "total")] == [1, 0, 2]  # the two turns first (0.5, 0.4), then 0.1
    assert inf.ranked("flipped")[0].delta("flipped") == pytest.approx(-0.4)
    with pytest.raises(InfluenceError, match="expected 6 pair scores, got 5"):
        influence_from_scores(_prompt(), LF0, LF1, "fol", scores[:5])


def test_flips_are_not_buried_under_removals_and_turns_come_first() -> None:
    """Issue #46 point 6: ranked by the removal change alone, the second-largest flip came 7th.  The
    list of both changes ranks each example by its larger change, after the examples whose change
    turns the model's preferred reading (LF0 ↔ LF1, outside the undecided band)."""
    examples = tuple(PromptExample(f"s{i}", f"L{i}", f"M{i}", 0) for i in range(8))
    prompt = Prompt(examples, "t", gold_lf0=LF0, gold_lf1=LF1)
    base = 0.6  # prefers LF0
    removed = [0.60 + 0.04 * (8 - i) for i in range(8)]  # Δ 0.32, 0.28, …, 0.04: the removal order is 0…7
    flipped = [base] * 8
    flipped[7] = base - 0.3  # the second-largest flip, on the smallest removal; it turns P(LF0) to LF1 (0.3)
    flipped[3] = base + 0.35  # the largest flip: still LF0
    flipped[5] = base - 0.12  # a small flip that turns the reading (0.48 is undecided: no turn)
    flipped[6] = base - 0.16  # 0.44: LF1, a turn
    scores = [_pair(base)] + [_pair(p) for p in removed] + [_pair(p) for p in flipped]
    inf = influence_from_scores(prompt, LF0, LF1, "fol", scores)
    assert [e.index for e in inf.ranked("removed")] == list(range(8))
    assert [e.index for e in inf.ranked()] == [7, 6, 3, 0, 1, 2, 4, 5]
    assert [e.index for e in inf.ranked("flipped")] == [7, 6, 3, 5, 0, 1, 2, 4]
    assert not inf.turns(inf.examples[5], "flipped") and inf.turns(inf.examples[6], "flipped")


def test_position_summary_reads_a_last_example_effect() -> None:
    examples = tuple(PromptExample(f"s{i}", f"L{i}", f"M{i}", 0) for i in range(6))
    prompt = Prompt(examples, "t", gold_lf0=LF0, gold_lf1=LF1)
    removed = [0.5 + 0.01 * i for i in range(6)]  # later examples move P(LF0) more
    scores = [_pair(0.5)] + [_pair(p) for p in removed] + [_pair(0.5)] * 6
    summary = influence_from_scores(prompt, LF0, LF1, "fol", scores).position_summary()
    assert summary.spearman == pytest.approx(1.0) and summary.n == 6
    assert summary.first_mean == pytest.approx(0.005) and summary.last_mean == pytest.approx(0.045)


@pytest.mark.parametrize(("x", "y", "rho"), [
    ([1, 2, 3, 4], [10, 20, 30, 40], 1.0),
    ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
    ([1, 2, 3], [1, 1, 1], None),  # no spread
    ([1, 2], [1, 2], None),  # too few
    ([1, 2, 3, 4, 5], [1, 3, 2, 5, 4], 0.8),  # 1 - 6·Σd²/(n(n²-1)) = 1 - 6·4/120
])
def test_spearman(x: list[float], y: list[float], rho: float | None) -> None:
    got = _spearman(x, y)
    assert (got is None) if rho is None else got == pytest.approx(rho)


def test_a_prompt_without_examples_or_golds_is_refused() -> None:
    with pytest.raises(InfluenceError, match="no examples"):
        example_influence(None, Prompt((), "t", gold_lf0=LF0, gold_lf1=LF1))  # type: ignore[arg-type]
    with pytest.raises(InfluenceError, match="no gold LF0 and LF1"):
        example_influence(None, Prompt(_prompt().examples, "t"))  # type: ignore[arg-type]


def test_on_a_real_model_every_score_is_the_parsers_pair_score(saved_tiny_model: Path, tmp_path: Path) -> None:
    """The influence scores are exactly the cached pair scores of the variant prompts, in
    chunks with progress; a cancel between chunks stops it."""
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    prompt = mixed_prompt("the man saw the boy with the telescope", 0.5, seed=0, k=3)
    seen: list[tuple[int, int]] = []
    inf = example_influence(parser, prompt, chunk=3, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(0, 7), (3, 7), (6, 7), (7, 7)]  # 2k + 1 = 7 scores, 3 at a time
    base = parser.score_pair(prompt.render(), prompt.gold_lf0, prompt.gold_lf1)
    assert inf.base_p_lf0 == pytest.approx(base.p_lf0)
    for e in inf.examples:
        removed = parser.score_pair(prompt.remove(e.index).render(), prompt.gold_lf0, prompt.gold_lf1)
        flipped = parser.score_pair(prompt.flip(e.index).render(), prompt.gold_lf0, prompt.gold_lf1)
        assert e.delta_removed == pytest.approx(removed.p_lf0 - base.p_lf0)
        assert e.delta_flipped_total == pytest.approx(flipped.p_lf0_total - base.p_lf0_total)
    again = example_influence(parser, prompt)  # all cached now: the same record
    assert again == inf
    calls = iter([False, True])
    with cancel_scope(lambda: next(calls, True)), pytest.raises(SearchCancelled):
        example_influence(parser, mixed_prompt("the man saw the boy with the telescope", 0.5, seed=1, k=3), chunk=2)
