"""Issue #40 point 1: the page says when it reordered the teacher's LF (one declared sentence,
amp.logic.prompt_convention.REORDERED_NOTE) — on an own sentence's card, in the Parse page's
note on the scored spelling, and under "Score your own LF" — and says nothing of it when only
the letters changed."""

from __future__ import annotations

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, texts

from amp.logic.prompt_convention import REORDERED_NOTE
from amp.teaching.own_library import OWN_SENTENCES_ENV_VAR, OwnLibrary
from amp.teaching.own_sentences import OwnSentence

CHICKEN = "the chicken is ready to eat"
CHICKEN0 = "exists v . exists w . eat(v) AND agent(v, w) AND chicken(w) AND ready(w)"
CHICKEN1 = "exists v . exists w . chicken(w) AND ready(w) AND eat(v) AND patient(v, w)"  # letters only


def _chicken(lf0: str = CHICKEN0) -> OwnSentence:
    return OwnSentence(CHICKEN, lf0, CHICKEN1, "the chicken will eat", "someone will eat the chicken")


@pytest.fixture
def own_lib(app_env, tmp_path, monkeypatch) -> OwnLibrary:
    monkeypatch.setenv(OWN_SENTENCES_ENV_VAR, str(tmp_path / "own_sentences.json"))
    return OwnLibrary()


def _own_page():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert_ok(at)
    return goto(at, "own_sentences")


def test_the_own_sentence_card_says_when_the_conjuncts_were_reordered(own_lib) -> None:
    own_lib.add(_chicken())
    page = _own_page()
    captions = texts(page, "caption")
    scored = [c for c in captions if c.startswith("Scored as the prompts spell it")]
    assert len(scored) == 2  # both readings were respelled: LF0 reordered, LF1 only renamed
    assert sum(REORDERED_NOTE in c for c in scored) == 1
    codes = [c.value for c in page.code]
    assert "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND agent(a, x)" in codes


def test_the_parse_pages_notes_say_when_the_conjuncts_were_reordered(own_lib) -> None:
    from ui.inspection.inspect_view import scored_spelling_note

    reordered = scored_spelling_note(_chicken())
    renamed = scored_spelling_note(_chicken("exists v . exists w . chicken(w) AND ready(w) AND eat(v) AND agent(v, w)"))
    assert reordered is not None and reordered.endswith(REORDERED_NOTE)
    assert renamed is not None and REORDERED_NOTE not in renamed


def test_score_your_own_lf_says_when_the_conjuncts_were_reordered(parsed) -> None:
    parsed.text_area(key="pi_custom").input("exists x . exists a . saw(a) AND agent(a, x) AND man(x)")
    parsed.get("form_submit_button")[0].click().run()
    assert_ok(parsed)
    assert parsed.session_state["custom_score"]["lf"] == "exists x . exists a . man(x) AND saw(a) AND agent(a, x)"
    assert any(c.startswith("Scored as the prompts spell it") and REORDERED_NOTE in c for c in texts(parsed, "caption"))
    parsed.text_area(key="pi_custom").input("exists q . exists b . man(q) AND saw(b) AND agent(b, q)")
    parsed.get("form_submit_button")[0].click().run()
    assert_ok(parsed)
    caption = [c for c in texts(parsed, "caption") if c.startswith("Scored as the prompts spell it")]
    assert caption and REORDERED_NOTE not in caption[0]
