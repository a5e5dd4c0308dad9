"""Templates & examples: the template view, generation, format toggle, filter, downloads."""

from __future__ import annotations

import json

from app_helpers import assert_ok, texts

from amp.data import generate as gen


def test_template_details(at) -> None:
    at.selectbox(key="tpl_type").select("scope").run()
    at.selectbox(key="tpl_template_scope").select("scope/every").run()
    assert_ok(at)
    tpl = gen.templates("scope")[0]
    codes = [c.value for c in at.code]
    assert tpl.spec in codes and tpl.lfs[0] in codes and tpl.lfs[1] in codes
    slots = at.dataframe[0].value
    assert list(slots["slot"]) == ["np1", "vp1", "np2"]
    assert "bird" in slots.loc[slots["slot"] == "np1", "words"].iloc[0]


def test_seeded_sample_matches_the_library(at) -> None:
    at.number_input(key="tpl_n").set_value(5).run()
    at.number_input(key="tpl_seed").set_value(7).run()
    table = at.dataframe[-1].value
    pairs = gen.sample_pairs("pp", 5, 7)
    assert list(table["sentence"]) == [p.surface for p in pairs]
    assert list(table["LF0"]) == [p.lf0.lf for p in pairs]
    assert list(table["LF1"]) == [p.lf1.lf for p in pairs]
    # the detail box shows the first row's two LFs in full
    assert pairs[0].lf0.lf in [c.value for c in at.code]


def test_all_lisp_and_filter(at) -> None:
    at.selectbox(key="tpl_type").select("bound").run()
    at.radio(key="tpl_how").set_value("all").run()
    table = at.dataframe[-1].value
    assert len(table) == 1680  # both genders (docs/paper-notes.md §4.4)
    at.radio(key="tpl_fmt").set_value("lisp").run()
    table = at.dataframe[-1].value
    assert table["LF0"].str.startswith("( exists").all()
    at.text_input(key="tpl_filter").input("Marie saw Ada").run()
    table = at.dataframe[-1].value
    assert len(table) > 0 and table["sentence"].str.contains("Marie saw Ada").all()
    at.text_input(key="tpl_filter").input("no such words").run()
    assert_ok(at)
    assert any("No sentence matches" in w for w in texts(at, "warning"))


def test_downloads(at) -> None:
    at.number_input(key="tpl_n").set_value(3).run()
    buttons = {b.label: b for b in at.get("download_button")}
    assert {"Download CSV", "Download JSONL"} <= set(buttons)
    jsonl = at.get("download_button")[1]
    assert jsonl.proto.label == "Download JSONL"
    # the JSONL content is what generate() writes: 2 records per sampled sentence
    records = gen.generate("pp", n=3, seed=0)
    assert len(records) == 6
    assert json.loads(gen.dumps_jsonl(records).splitlines()[0])["surface"] == records[0].surface


def _first_sentence(at) -> str:
    table = next(d.value for d in at.dataframe if "sentence" in d.value.columns)
    return str(table.iloc[0]["sentence"])


def test_parse_this_sentence_opens_the_parse_page_with_its_prompt(at) -> None:
    """Issue #11 point 5: a route from a sentence to a parse, under a visible default prompt."""
    surface = _first_sentence(at)
    assert at.segmented_control(key="tpl_prompt_how").value == "mixed"  # the visible default
    at.button(key="tpl_parse").click().run()
    assert_ok(at)
    assert at.title[0].value == "Parse & inspect"
    prompt = at.session_state["prompt"]
    assert prompt.test_utterance == surface and len(prompt.examples) == 10
    assert prompt.lf0_fraction == 0.3
    # the Prompt builder shows that same prompt and keeps it
    at.switch_page("views/prompt_builder.py").run()
    assert_ok(at)
    assert at.session_state["prompt"] == prompt


def test_zero_shot_choice_and_present_this_sentence(at) -> None:
    surface = _first_sentence(at)
    at.segmented_control(key="tpl_prompt_how").set_value("zero-shot").run()
    at.button(key="tpl_parse").click().run()
    assert_ok(at)
    prompt = at.session_state["prompt"]
    assert prompt.test_utterance == surface and prompt.gold_lf0 is not None
    assert prompt.examples and all(ex.alt_lf is None for ex in prompt.examples)  # unambiguous ingredients
    at.switch_page("views/templates.py").run()
    at.button(key="tpl_present").click().run()
    assert_ok(at)
    assert any(surface in m for m in texts(at, "markdown") if "present-s" in m)
    assert any("1 / 1" in c for c in texts(at, "caption"))
