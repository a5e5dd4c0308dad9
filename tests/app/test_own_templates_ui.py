"""The own-template form (ui.own.templates.template_section) on a tiny page of its own.

The page script is written to ``tmp_path``: it draws the section and records what ``on_add``
receives in ``st.session_state["received"]`` (or refuses, when ``"refuse"`` is set, as a full
library would).  No model is needed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import assert_ok, texts
from streamlit.testing.v1 import AppTest

LF0 = "exists a . exists e . saw(a) AND agent(a, Me) AND {animal}(e) AND agent(e, Her) AND patient(a, e)"
LF1 = "exists x . exists a . {animal}(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"

PAGE = '''
import streamlit as st

from amp.teaching.own_templates import OwnTemplateError
from ui.own.templates import template_section

st.session_state.setdefault("received", [])


def on_add(sentences):
    if st.session_state.get("refuse"):
        raise OwnTemplateError("the library is full")
    st.session_state["received"].append([s.to_dict() for s in sentences])


template_section(on_add)
'''


@pytest.fixture
def page(tmp_path: Path) -> AppTest:
    script = tmp_path / "own_templates_page.py"
    script.write_text(PAGE, encoding="utf-8")
    app = AppTest.from_file(str(script), default_timeout=60)
    app.run()
    assert_ok(app)
    return app


def fill(app: AppTest, *, lists: str = "animal: duck, goose", lf1: str = LF1) -> AppTest:
    app.text_input(key="ot_name").input("her duck")
    app.text_input(key="ot_sentence").input("I saw her {animal}")
    app.text_area(key="ot_lists").input(lists)
    app.text_area(key="ot_lf0").input(LF0)
    app.text_area(key="ot_lf1").input(lf1)
    app.text_input(key="ot_para0").input("I saw her {animal} down")
    app.text_input(key="ot_para1").input("I saw the {animal} she has")
    app.button(key="ot_preview").click().run()
    assert_ok(app)
    return app


def test_the_form_is_bounded_and_shows_no_preview_before_one_is_asked(page: AppTest) -> None:
    assert page.text_input(key="ot_name").max_chars == 80
    assert page.text_area(key="ot_lf0").max_chars == 400
    assert not page.dataframe and not page.error
    assert not [b for b in page.button if b.key == "ot_add"]


def test_preview_shows_the_sentences_and_the_new_words(page: AppTest) -> None:
    fill(page)
    assert not page.error
    table = page.dataframe[0].value
    assert table["sentence"].tolist() == ["I saw her duck", "I saw her goose"]
    assert table["LF1"].tolist()[1] == LF1.replace("{animal}", "goose")
    assert table["paraphrase 0"].tolist() == ["I saw her duck down", "I saw her goose down"]
    assert any("2 sentences" in c for c in texts(page, "caption"))
    new_words = next(m for m in texts(page, "markdown") if m.startswith("New words"))
    assert new_words == r"New words: duck \(one place\), goose \(one place\), Her \(name\), Me \(name\)"


def test_an_invalid_template_shows_the_error_and_keeps_the_inputs(page: AppTest) -> None:
    fill(page, lf1=LF1.replace("{animal}", "{bird}"))
    errors = texts(page, "error")
    assert len(errors) == 1 and "LF1 uses slot" in errors[0] and "bird" in errors[0] and "no word list" in errors[0]
    assert not page.dataframe
    assert page.text_area(key="ot_lf1").value == LF1.replace("{animal}", "{bird}")
    assert page.text_area(key="ot_lists").value == "animal: duck, goose"
    assert page.text_input(key="ot_name").value == "her duck"


def test_an_error_replaces_an_earlier_preview(page: AppTest) -> None:
    fill(page)
    assert page.dataframe
    fill(page, lists="animal: duck, x")
    assert not page.dataframe
    assert "1 of 2 words fail" in texts(page, "error")[0]


def test_add_hands_the_sentences_to_on_add(page: AppTest) -> None:
    fill(page)
    page.button(key="ot_add").click().run()
    assert_ok(page)
    received = page.session_state["received"]
    assert len(received) == 1
    assert [s["surface"] for s in received[0]] == ["I saw her duck", "I saw her goose"]
    assert received[0][0]["lf0"] == LF0.replace("{animal}", "duck")
    assert received[0][1]["paraphrase1"] == "I saw the goose she has"
    assert any("Added 2 sentences" in s for s in texts(page, "success"))
    assert not page.dataframe  # the preview is done with


def test_a_refusal_of_on_add_is_an_error_box_and_the_preview_stays(page: AppTest) -> None:
    fill(page)
    page.session_state["refuse"] = True
    page.button(key="ot_add").click().run()
    assert_ok(page)
    assert any("the library is full" in e for e in texts(page, "error"))
    assert page.dataframe and page.session_state["received"] == []
