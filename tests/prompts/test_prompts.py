"""Zero-shot (docs/paper-notes.md §10) and mixed (§11) prompts, and the Prompt value object."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amp.data.generate import AMBIGUOUS_TYPES, find_pair, pairs, pool, sample_pairs
from amp.errors import PromptError
from amp.prompts import (
    HEADER,
    Prompt,
    PromptExample,
    lf0_count,
    mixed_prompt,
    zero_shot_prompt,
)

H = "Let's translate what a human user says into what a computer might say.\n\n\n"

# --- zero-shot: the paper's Appendix A.2 examples, pinned with seed 5 ---------------------------

ZERO_SHOT_TEXTS = {
    "Galileo saw Mary with the camera": H + (
        "Human: Galileo saw with the camera\n"
        "Computer: exists x . exists a . camera(x) AND saw(a) AND agent(a, Galileo) AND instrument(a, x)\n"
        "\n"
        "Human: Mary with the camera\n"
        "Computer: exists x . exists a . camera(x) AND have(a) AND agent(a, Mary) AND patient(a, x)\n"
        "\n"
        "Human: Galileo saw Mary\n"
        "Computer: exists a . saw(a) AND agent(a, Galileo) AND patient(a, Mary)\n"
        "\n"
        "Human: Galileo saw Mary with the camera\n"
        "Computer:"
    ),
    "each bird held a sweater": H + (
        "Human: a bird held a sweater\n"
        "Computer: exists x . exists y . exists a . bird(x) AND sweater(y) AND held(a) AND agent(a, x) "
        "AND patient(a, y)\n"
        "\n"
        "Human: each bird\n"
        "Computer: forall x . bird(x)\n"
        "\n"
        "Human: each bird held a sweater\n"
        "Computer:"
    ),
    "a dog spotted each hat": H + (
        "Human: a dog spotted a hat\n"
        "Computer: exists x . exists y . exists a . dog(x) AND hat(y) AND spotted(a) AND agent(a, x) "
        "AND patient(a, y)\n"
        "\n"
        "Human: each hat\n"
        "Computer: forall x . hat(x)\n"
        "\n"
        "Human: a dog spotted each hat\n"
        "Computer:"
    ),
    "the woman saw Marie and she smiled": H + (
        "Human: the woman saw Marie\n"
        "Computer: exists x . exists a . woman(x) AND saw(a) AND agent(a, x) AND patient(a, Marie)\n"
        "\n"
        "Human: the woman frowned and smiled\n"
        "Computer: exists x . exists a . exists e . woman(x) AND frowned(a) AND agent(a, x) AND "
        "smiled(e) AND agent(e, x)\n"
        "\n"
        "Human: the woman smiled\n"
        "Computer: exists x . exists a . woman(x) AND smiled(a) AND agent(a, x)\n"
        "\n"
        "Human: Marie smiled\n"
        "Computer: exists a . smiled(a) AND agent(a, Marie)\n"
        "\n"
        "Human: the woman saw Marie and she smiled\n"
        "Computer:"
    ),
    # the paper's example shows idx 1 for both double conjunctions, as the original's lookup
    # always does (last record of the unshuffled training file)
    "the bird left or walked and ate": H + (
        "Human: the bird left and walked and ate\n"
        "Computer: exists x . exists a . exists e . exists i . bird(x) AND ( left(a) AND agent(a, x) AND "
        "walked(e) AND agent(e, x) ) AND ate(i) AND agent(i, x)\n"
        "\n"
        "Human: the bird left or walked or ate\n"
        "Computer: exists x . exists a . exists e . exists i . bird(x) AND ( left(a) AND agent(a, x) ) "
        "OR ( ( walked(e) AND agent(e, x) ) OR ( ate(i) AND agent(i, x) ) )\n"
        "\n"
        "Human: the bird left or walked and ate\n"
        "Computer:"
    ),
}

ZERO_SHOT_INGREDIENTS = {
    "Galileo saw Mary with the camera": {
        "Galileo saw Mary", "Galileo saw with the camera", "Mary with the camera"},
    "each bird held a sweater": {"each bird", "a bird held a sweater"},
    "a dog spotted each hat": {"each hat", "a dog spotted a hat"},
    "the woman saw Marie and she smiled": {
        "the woman saw Marie", "the woman smiled", "Marie smiled", "the woman frowned and smiled"},
    "the bird left or walked and ate": {
        "the bird left or walked or ate", "the bird left and walked and ate"},
}


@pytest.mark.parametrize("sentence", list(ZERO_SHOT_TEXTS))
def test_zero_shot_exact_text(sentence: str) -> None:
    prompt = zero_shot_prompt(sentence, seed=5)
    assert prompt.render() == ZERO_SHOT_TEXTS[sentence]
    assert {ex.utterance for ex in prompt.examples} == ZERO_SHOT_INGREDIENTS[sentence]
    pair = find_pair(sentence)
    assert prompt.type == pair.type
    assert (prompt.gold_lf0, prompt.gold_lf1) == (pair.lf0.lf, pair.lf1.lf)
    assert all(ex.label is None and ex.alt_lf is None for ex in prompt.examples)


def test_zero_shot_ingredients_are_unambiguous_pool_records() -> None:
    index = {}
    for r in pool("zeroshot_train"):
        index.setdefault(r.surface, set()).add(r.lf)
    for type_ in AMBIGUOUS_TYPES:
        for pair in sample_pairs(type_, 40, seed=11):
            prompt = zero_shot_prompt(pair, seed=3)
            assert len(prompt.examples) == {"pp": 3, "scope": 2, "revscope": 2, "bound": 4, "conj": 2}[type_]
            for ex in prompt.examples:
                assert ex.lf in index[ex.utterance]
                assert find_pair(ex.utterance) is None  # never an ambiguous sentence
            assert prompt.test_utterance == pair.surface


def test_zero_shot_conj_ingredients_are_template_idx_1() -> None:
    """Reference §10: the original's surface → record dict over the unshuffled training file
    keeps the last record, ``template_idx`` 1, for every double conjunction — at every seed."""
    last = {}
    for r in pool("zeroshot_train"):
        last[r.surface] = r
    for seed in (0, 1, 5, 12345):
        for pair in sample_pairs("conj", 25, seed=seed):
            for ex in zero_shot_prompt(pair, seed=seed).examples:
                record = last[ex.utterance]
                assert record.type == "unambig_conj" and record.template_idx == 1 and ex.lf == record.lf


def test_zero_shot_examples_of_each_shape() -> None:
    def utterances(sentence: str) -> set[str]:
        return {ex.utterance for ex in zero_shot_prompt(sentence).examples}

    assert utterances("the man picked up the boy with the gloves") == {
        "the man picked up the boy", "the man picked up with the gloves", "the boy with the gloves"}
    assert utterances("every elephant saw a pair of gloves") == {
        "every elephant", "an elephant saw a pair of gloves"}
    assert utterances("an elephant saw every pair of binoculars") == {
        "every pair of binoculars", "an elephant saw a pair of binoculars"}
    assert utterances("a cat spied each elephant") == {"each elephant", "a cat spied an elephant"}
    male = utterances("Galileo saw the boy and he waved")
    assert {"Galileo saw the boy", "Galileo waved", "the boy waved"} < male
    extra = (male - {"Galileo saw the boy", "Galileo waved", "the boy waved"}).pop()
    assert extra.startswith("Galileo ") and extra.endswith(" and waved") and "waved and" not in extra


def test_zero_shot_is_seeded_and_local() -> None:
    np_state = np.random.get_state()[1].copy()
    py_state = random.getstate()
    a = [zero_shot_prompt("the woman saw Marie and she smiled", seed=s) for s in range(8)]
    b = [zero_shot_prompt("the woman saw Marie and she smiled", seed=s) for s in range(8)]
    assert a == b and len({p.render() for p in a}) > 1
    assert np.array_equal(np.random.get_state()[1], np_state) and random.getstate() == py_state


def test_zero_shot_rejects_non_ambiguous_sentences() -> None:
    with pytest.raises(PromptError, match="not an ambiguous sentence"):
        zero_shot_prompt("the bird saw the boy")


# --- Prompt value object --------------------------------------------------------------------------


def _prompt() -> Prompt:
    return Prompt(
        (PromptExample("u0", "A0", "B0", 0), PromptExample("u1", "B1", "A1", 1),
         PromptExample("u2", "C2")),
        "test",
    )


def test_render_layout() -> None:
    text = _prompt().render()
    assert text == (f"{HEADER}\n\n\nHuman: u0\nComputer: A0\n\nHuman: u1\nComputer: B1\n\n"
                    "Human: u2\nComputer: C2\n\nHuman: test\nComputer:")
    assert text.startswith(HEADER + "\n\n\nHuman:")
    assert _prompt().render(trailing_space=True).endswith("Computer: ")
    empty = Prompt((), "t")
    assert empty.render() == f"{HEADER}\n\n\nHuman: t\nComputer:"
    assert Prompt((), "t", header="").render() == "Human: t\nComputer:"


def test_lf_format_follows_the_prompts_lfs() -> None:
    pair = find_pair("the boy saw the man with the telescope")
    assert pair is not None
    assert mixed_prompt(pair, 0.5, seed=1, fmt="fol").lf_format == "fol"
    assert mixed_prompt(pair, 0.5, seed=1, fmt="lisp").lf_format == "lisp"
    assert Prompt((), "t").lf_format == "fol"  # nothing to tell from: the default format


def test_flip_remove_move_add() -> None:
    p = _prompt()
    f = p.flip(0)
    assert f.examples[0] == PromptExample("u0", "B0", "A0", 1) and p.examples[0].label == 0
    assert f.flip(0) == p
    assert p.flip(-2).examples[1] == PromptExample("u1", "A1", "B1", 0)
    with pytest.raises(PromptError, match="not ambiguous"):
        p.flip(2)
    assert [e.utterance for e in p.remove(1).examples] == ["u0", "u2"]
    assert [e.utterance for e in p.move(0, 2).examples] == ["u1", "u2", "u0"]
    assert [e.utterance for e in p.move(2, 0).examples] == ["u2", "u0", "u1"]
    new = PromptExample("n", "N")
    assert [e.utterance for e in p.add(new).examples] == ["u0", "u1", "u2", "n"]
    assert [e.utterance for e in p.add(new, at=0).examples] == ["n", "u0", "u1", "u2"]
    assert p.with_test("other", "g0", "g1").test_utterance == "other"
    assert p.with_test("other", "g0", "g1").gold_lf1 == "g1" and p.test_utterance == "test"


@pytest.mark.parametrize(
    "call",
    [lambda p: p.flip(3), lambda p: p.remove(-4), lambda p: p.move(0, 3), lambda p: p.move(5, 0),
     lambda p: p.add(PromptExample("n", "N"), at=4), lambda p: p.add(PromptExample("n", "N"), at=-1),
     lambda p: p.remove(True), lambda p: p.add("not an example")],
)
def test_bad_indices_raise_prompt_error(call) -> None:
    with pytest.raises(PromptError):
        call(_prompt())


def test_lf0_fraction() -> None:
    assert _prompt().lf0_fraction == 0.5
    assert _prompt().flip(1).lf0_fraction == 1.0
    assert Prompt((PromptExample("u", "l"),), "t").lf0_fraction is None


def test_dict_round_trip() -> None:
    p = zero_shot_prompt("Galileo saw Mary with the camera")
    m = mixed_prompt("each bird held a sweater", 0.4, seed=2)
    for prompt in (p, m, _prompt()):
        data = json.loads(json.dumps(prompt.to_dict()))
        assert Prompt.from_dict(data) == prompt
        assert Prompt.from_dict({**data, "text": prompt.render()}) == prompt
    with pytest.raises(PromptError):
        Prompt.from_dict({"examples": []})


# --- mixed prompts (§11) -------------------------------------------------------------------------

RATIOS = [i / 10 for i in range(11)]


@pytest.mark.parametrize("ratio", RATIOS)
def test_mixed_exact_lf0_counts(ratio: float) -> None:
    for type_ in AMBIGUOUS_TYPES:
        test = sample_pairs(type_, 1, seed=21)[0]
        prompt = mixed_prompt(test, ratio, seed=4)
        labels = [ex.label for ex in prompt.examples]
        assert len(labels) == 10
        assert labels.count(0) == round(10 * ratio) == lf0_count(10, ratio)
        assert prompt.lf0_fraction == pytest.approx(ratio)


def test_lf0_count_at_the_paper_ratios() -> None:
    assert [lf0_count(10, r) for r in RATIOS] == list(range(11))
    assert lf0_count(10, 0.3) == 3 and int(10 * 0.3) == 3 and lf0_count(10, 0.7) == 7


def test_mixed_examples_are_distinct_same_type_and_exclude_the_test() -> None:
    for type_ in AMBIGUOUS_TYPES:
        for seed in range(5):
            test = sample_pairs(type_, 1, seed=seed)[0]
            prompt = mixed_prompt(test, 0.5, seed=seed)
            surfaces = [ex.utterance for ex in prompt.examples]
            assert test.surface not in surfaces and len(set(surfaces)) == 10
            for ex in prompt.examples:
                pair = find_pair(ex.utterance)
                assert pair.type == type_
                assert (ex.lf, ex.alt_lf) == ((pair.lf0.lf, pair.lf1.lf) if ex.label == 0
                                              else (pair.lf1.lf, pair.lf0.lf))
            assert (prompt.gold_lf0, prompt.gold_lf1) == (test.lf0.lf, test.lf1.lf)
            assert prompt.test_utterance == test.surface and prompt.type == type_


def test_mixed_never_contains_the_test_even_in_a_tiny_pool() -> None:
    small = pairs("pp", template="pp/tactile/a", word="man")
    test = small[0]
    prompt = mixed_prompt(test, 0.5, seed=1, k=len(small) - 1, pool_pairs=small)
    assert sorted(ex.utterance for ex in prompt.examples) == sorted(p.surface for p in small[1:])
    with pytest.raises(PromptError, match="larger than"):
        mixed_prompt(test, 0.5, seed=1, k=len(small), pool_pairs=small)


def test_mixed_is_seeded() -> None:
    a = mixed_prompt("a dog spotted each hat", 0.3, seed=9)
    assert a == mixed_prompt("a dog spotted each hat", 0.3, seed=9)
    assert a != mixed_prompt("a dog spotted each hat", 0.3, seed=10)
    # the LF0 examples are spread by the shuffle, not all first
    positions = {tuple(ex.label for ex in mixed_prompt("a dog spotted each hat", 0.5, seed=s).examples)
                 for s in range(5)}
    assert len(positions) > 1


@pytest.mark.parametrize("ratio", [-0.1, 1.5, float("nan"), True])
def test_mixed_ratio_out_of_range(ratio: float) -> None:
    with pytest.raises(PromptError, match=r"\[0, 1\]"):
        mixed_prompt("a dog spotted each hat", ratio, seed=0)


def test_mixed_k_edge_cases() -> None:
    assert mixed_prompt("a dog spotted each hat", 0.5, seed=0, k=0).examples == ()
    assert len(mixed_prompt("a dog spotted each hat", 0.5, seed=0, k=37).examples) == 37
    with pytest.raises(PromptError, match="larger than the 839"):
        mixed_prompt("the woman saw Marie and she smiled", 0.5, seed=0, k=1680,
                      pool_pairs=pairs("bound", gender="female"))
    with pytest.raises(PromptError, match="non-negative"):
        mixed_prompt("a dog spotted each hat", 0.5, seed=0, k=-1)


def test_mixed_lisp_is_the_released_form() -> None:
    """Lisp prompts and golds as the release's Lisp folders hold them (§6.1): sorted, flattened,
    ordered variables — the §6.1 test line of "Watson spotted Alan with the binoculars"."""
    from amp.data.splits_render import render_ordered
    from amp.logic.canonical import canonical

    prompt = mixed_prompt("Watson spotted Alan with the binoculars", 0.5, seed=3, fmt="lisp", k=4)
    assert prompt.gold_lf1 == (
        "( exists x ( exists a ( AND ( agent a Watson ) ( binoculars x ) ( instrument a x ) "
        "( patient a Alan ) ( spotted a ) ) ) )")
    for ex in prompt.examples:
        pair = find_pair(ex.utterance)
        assert ex.lf == render_ordered(pair.lf(ex.label).lf, "lisp")
        assert ex.alt_lf == render_ordered(pair.lf(1 - ex.label).lf, "lisp")
    # conj: a prediction in the released style is the gold in paper mode (the raw-order
    # conversion made 139 of 200 such items wrong)
    conj = mixed_prompt("the bird left or walked and ate", 0.0, seed=3, fmt="lisp", k=2)
    assert conj.gold_lf0 == (
        "( exists x ( exists a ( exists e ( exists i ( AND ( OR ( AND ( agent a x ) ( left a ) ) "
        "( AND ( agent e x ) ( walked e ) ) ) ( agent i x ) ( ate i ) ( bird x ) ) ) ) ) )")
    for pair in sample_pairs("conj", 50, seed=1):
        gold = mixed_prompt(pair, 0.5, seed=1, fmt="lisp", k=1).gold_lf1
        assert canonical(render_ordered(pair.lf1.lf, "lisp"), "paper", "lisp") == canonical(gold, "paper", "lisp")
        assert gold == render_ordered(pair.lf1.lf, "lisp")


@settings(max_examples=60, deadline=None)
@given(ratio=st.floats(min_value=0.0, max_value=1.0), k=st.integers(min_value=0, max_value=40),
       seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_mixed_any_ratio_and_k(ratio: float, k: int, seed: int) -> None:
    prompt = mixed_prompt("every cat saw an elephant", ratio, seed=seed, k=k)
    labels = [ex.label for ex in prompt.examples]
    n0 = lf0_count(k, ratio)
    assert len(labels) == k and labels.count(0) == n0
    assert 0 <= n0 <= k and abs(n0 - k * ratio) < 1 and n0 >= int(k * ratio)
