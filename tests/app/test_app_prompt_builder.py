"""Prompt builder: mixed and zero-shot prompts, live LF0 fraction, edits, typed test sentences."""

from __future__ import annotations

import pytest
from app_helpers import assert_ok, goto, texts

from amp import prompts
from amp.prompts import Prompt


@pytest.fixture
def pb(at):
    return goto(at, "prompt_builder")


def _prompt(app) -> Prompt:
    return app.session_state["prompt"]


def _labels(app) -> list[int | None]:
    return [ex.label for ex in _prompt(app).examples]


def test_default_is_a_30_70_mixed_pp_prompt(pb) -> None:
    expected = prompts.mixed_prompt("the man saw the boy with the telescope", 0.3, seed=0, k=10)
    assert _prompt(pb) == expected
    assert pb.code[0].value == expected.render()  # the rendered text is shown (and copyable)
    assert [m.value for m in pb.metric] == ["10", "30%", "30%"]
    assert _labels(pb).count(0) == 3


def test_ratio_slider_rebuilds(pb) -> None:
    pb.slider(key="pb_ratio").set_value(0.8).run()
    assert_ok(pb)
    assert _labels(pb).count(0) == 8
    assert pb.metric[1].value == "80%"


def test_flip_remove_move_add(pb) -> None:
    before = _prompt(pb)
    pb.button(key="pb_flip_0").click().run()
    flipped = _prompt(pb)
    assert flipped.examples[0].label == 1 - before.examples[0].label
    assert flipped.examples[0].lf == before.examples[0].alt_lf
    assert pb.metric[1].value == f"{flipped.lf0_fraction:.0%}"
    pb.button(key="pb_del_9").click().run()
    assert len(_prompt(pb).examples) == 9 and pb.metric[0].value == "9"
    first = _prompt(pb).examples[0]
    pb.button(key="pb_down_0").click().run()
    assert _prompt(pb).examples[1] == first
    pb.button(key="pb_up_1").click().run()
    assert _prompt(pb).examples[0] == first
    extra = pb.selectbox(key="pb_add_surface").value
    pb.radio(key="pb_add_label").set_value(0).run()
    pb.button(key="pb_add").click().run()
    assert_ok(pb)
    added = _prompt(pb).examples[-1]
    assert added.utterance == extra and added.label == 0
    assert f"Human: {extra}\nComputer: {added.lf}" in pb.code[0].value


def test_zero_shot_prompt(pb) -> None:
    pb.segmented_control(key="pb_mode").set_value("zero-shot").run()
    assert_ok(pb)
    expected = prompts.zero_shot_prompt("the man saw the boy with the telescope", seed=0)
    assert _prompt(pb) == expected
    assert all(ex.label is None for ex in _prompt(pb).examples)
    assert pb.metric[1].value == "–"


def test_pool_test_sentence_and_lisp(pb) -> None:
    pb.selectbox(key="pb_type").select("scope").run()
    surface = pb.selectbox(key="pb_test_scope").options[3]
    pb.selectbox(key="pb_test_scope").select(surface).run()
    pb.radio(key="pb_fmt").set_value("lisp").run()
    assert_ok(pb)
    p = _prompt(pb)
    assert p.test_utterance == surface and p.type == "scope"
    assert p.gold_lf0.startswith("( exists") and all(ex.lf.startswith("(") for ex in p.examples)


def test_typed_sentence_in_and_out_of_the_pool(pb) -> None:
    pb.radio(key="pb_test_source").set_value("typed").run()
    assert any("Type a test sentence" in i for i in texts(pb, "info"))
    pb.text_input(key="pb_test_typed").input("Galileo saw Mary with the camera").run()
    assert_ok(pb)
    assert any("Found in the pool" in c for c in texts(pb, "caption"))
    assert _prompt(pb).gold_lf1.endswith("instrument(a, x)")
    pb.text_input(key="pb_test_typed").input("the teacher saw the class with the projector").run()
    assert_ok(pb)
    p = _prompt(pb)
    assert p.test_utterance == "the teacher saw the class with the projector" and p.gold_lf0 is None
    assert any("not in the pool" in w for w in texts(pb, "warning"))


def test_typed_gold_lf_that_does_not_parse_shows_column_and_expected(pb) -> None:
    pb.radio(key="pb_test_source").set_value("typed").run()
    pb.text_input(key="pb_test_typed").input("the girl saw a ghost").run()
    pb.text_input(key="pb_gold0").input("exists x . girl(x) AND").run()
    assert_ok(pb)
    errors = texts(pb, "error")
    assert any("does not parse" in e and "column 23" in e and "expected one of" in e for e in errors), errors
    assert _prompt(pb).gold_lf0 is None
    pb.text_input(key="pb_gold0").input("exists x . girl(x)").run()
    assert not texts(pb, "error")
    assert _prompt(pb).gold_lf0 == "exists x . girl(x)"


def test_typed_gold_lf_with_a_word_outside_the_lexicon_says_add_it_as_your_own_word(pb) -> None:
    """Issue #11 point 6: not "expected a predicate", but which word is missing and what to do."""
    pb.radio(key="pb_test_source").set_value("typed").run()
    pb.text_input(key="pb_test_typed").input("I saw her duck").run()
    pb.text_input(key="pb_gold0").input("exists x . duck(x) AND have(x, Her)").run()
    assert_ok(pb)
    errors = texts(pb, "error")
    assert any("'duck', 'Her' are not in the lexicon — add them as your own words" in e for e in errors), errors
    assert not any("expected" in e for e in errors)
    assert _prompt(pb).gold_lf0 is None


def test_typed_gold_lfs_are_scored_in_the_prompt_convention_and_free_words_get_a_hint(pb) -> None:
    """Issue #26 points 2 and 7: other letters are respelled (and the page says so); a lowercase
    name is a free variable, and the hint says names are capitalised."""
    pb.radio(key="pb_test_source").set_value("typed").run()
    pb.text_input(key="pb_test_typed").input("the girl saw a ghost").run()
    pb.text_input(key="pb_gold0").input("exists b . exists q . girl(q) AND saw(b) AND agent(b, q)").run()
    assert_ok(pb)
    assert _prompt(pb).gold_lf0 == "exists x . exists a . girl(x) AND saw(a) AND agent(a, x)"
    assert any("scored as the prompts spell it" in c for c in texts(pb, "caption"))
    pb.text_input(key="pb_gold0").input("exists e . saw(e) AND agent(e, mary)").run()
    assert_ok(pb)
    errors = " ".join(texts(pb, "error")).replace("\\", "")
    assert "free variable 'mary'" in errors and "a name is capitalised (Mary)" in errors
    assert _prompt(pb).gold_lf0 is None


def test_zero_shot_needs_a_pool_sentence(pb) -> None:
    pb.segmented_control(key="pb_mode").set_value("zero-shot").run()
    pb.radio(key="pb_test_source").set_value("typed").run()
    pb.text_input(key="pb_test_typed").input("the teacher saw the class with the projector").run()
    assert_ok(pb)
    assert any("Zero-shot ingredients" in e for e in texts(pb, "error"))
