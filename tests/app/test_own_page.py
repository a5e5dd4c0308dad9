"""The "Your own sentences" page (issue #11 point 1): add, check, parse, present, poll, export/import."""

from __future__ import annotations

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, texts

from amp.data.generate import pairs
from amp.teaching.own_library import OWN_SENTENCES_ENV_VAR, OwnLibrary
from amp.teaching.own_sentences import OwnSentence
from amp.teaching.poll_store import PollStore
from ui.own.sentences import sentence_id

DUCK = "I saw her duck"
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"


def duck() -> OwnSentence:
    return OwnSentence(DUCK, DUCK0, DUCK1, "she lowered her head", "the duck that she owns")


@pytest.fixture
def own_lib(app_env, tmp_path, monkeypatch) -> OwnLibrary:
    """An empty library in a temporary file (never the real user cache)."""
    monkeypatch.setenv(OWN_SENTENCES_ENV_VAR, str(tmp_path / "own_sentences.json"))
    return OwnLibrary()


@pytest.fixture
def page(own_lib):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert_ok(at)
    return goto(at, "own_sentences")


def shown(at, kind: str) -> str:
    """The text of every element of a kind, joined, without the escapes of ui.shared.common.plain."""
    return " ".join(texts(at, kind)).replace("\\", "")


def fill(at, **values: str) -> None:
    keys = {"surface": "own_surface", "para0": "own_para0", "para1": "own_para1"}
    for field, value in values.items():
        if field in ("lf0", "lf1"):
            at.text_area(key=f"own_{field}").set_value(value)
        else:
            at.text_input(key=keys[field]).set_value(value)


def test_add_the_duck_sentence_and_see_its_words(page, own_lib) -> None:
    assert page.title[0].value == "Your own sentences"
    assert any("No sentences yet" in i for i in texts(page, "info"))
    fill(page, surface=DUCK, para0="she ducked", para1="her bird", lf0=DUCK0.replace(" . ", "."), lf1=DUCK1)
    page.button(key="own_save").click().run()
    assert_ok(page)
    message = shown(page, "success")
    assert "duck (one place), Her (name), Me (name)" in message and "closest type" in message
    saved = own_lib.get(DUCK)
    assert saved is not None and saved.lf0 == DUCK0 and saved.type == "pp"
    assert page.header[0].value == "Your library (1)"
    assert any(DUCK0 == c.value for c in page.code)  # the stored, normalised LF


def test_own_examples_are_saved_and_give_the_prompt(page, own_lib) -> None:
    swim = "exists a . exists e . saw(a) AND agent(a, Me) AND swim(e) AND agent(e, Her) AND patient(a, e)"
    fill(page, surface=DUCK, para0="she ducked", para1="her bird", lf0=DUCK0, lf1=DUCK1)
    page.text_area(key="own_examples").set_value(f"I saw her swim | {swim}\nno separator here")
    page.button(key="own_save").click().run()
    assert "example line 2 has no '|'" in shown(page, "error") and own_lib.list() == ()
    page.text_area(key="own_examples").set_value(f"I saw her swim | {swim}")
    page.button(key="own_save").click().run()
    assert own_lib.get(DUCK).examples == (("I saw her swim", swim),)
    sid = sentence_id(DUCK)
    page.segmented_control(key=f"own_src_{sid}").set_value("own examples").run()
    page.button(key=f"own_parse_{sid}").click().run()
    assert_ok(page)
    prompt = page.session_state["prompt"]
    assert [(e.utterance, e.lf) for e in prompt.examples] == [("I saw her swim", swim)]
    assert "swim" in prompt.words.unary and prompt.gold_lf0 == DUCK0


def test_a_bad_lf_gives_an_error_box_and_keeps_the_inputs(page, own_lib) -> None:
    fill(page, surface=DUCK, para0="she ducked", para1="her bird", lf0=DUCK0, lf1="duck(x")
    page.button(key="own_save").click().run()
    assert_ok(page)
    errors = shown(page, "error")
    assert "Not saved" in errors and "LF1" in errors and "does not parse" in errors
    assert page.text_area(key="own_lf1").value == "duck(x" and page.text_input(key="own_surface").value == DUCK
    assert own_lib.list() == ()
    page.text_area(key="own_lf1").set_value("exists e . duck(e) AND agent(e, her)")  # issue #26 point 7
    page.button(key="own_save").click().run()
    assert "a name is capitalised (Her)" in shown(page, "error")
    assert "exists her" not in shown(page, "error")
    page.text_area(key="own_lf1").set_value(DUCK1)
    page.button(key="own_save").click().run()
    assert_ok(page)
    assert own_lib.get(DUCK) is not None and not page.error


def test_start_from_a_template_pattern(page) -> None:
    page.selectbox(key="own_pattern_type").set_value("scope").run()
    pair = pairs("scope")[0]
    page.selectbox(key="own_pattern_scope").set_value(pair.surface).run()
    page.button(key="own_prefill").click().run()
    assert_ok(page)
    assert page.text_area(key="own_lf0").value == pair.lf0.lf
    assert page.text_area(key="own_lf1").value == pair.lf1.lf
    assert page.selectbox(key="own_type").value == "scope"
    assert page.text_input(key="own_para0").value


def test_parse_this_sentence_sets_the_prompt_with_its_words(own_lib) -> None:
    own_lib.add(duck())
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "own_sentences")
    at.button(key=f"own_parse_{sentence_id(DUCK)}").click().run()
    assert_ok(at)
    assert at.title[0].value == "Parse & inspect"
    prompt = at.session_state["prompt"]
    assert prompt.test_utterance == DUCK and prompt.words == duck().words
    assert (prompt.gold_lf0, prompt.gold_lf1) == (DUCK0, DUCK1) and len(prompt.examples) == 10
    at.switch_page("views/prompt_builder.py").run()  # the builder shows that prompt and keeps it
    assert_ok(at)
    assert at.session_state["prompt"] == prompt
    at.slider(key="pb_ratio").set_value(0.7).run()  # a changed setting rebuilds it, still with its words
    assert_ok(at)
    rebuilt = at.session_state["prompt"]
    assert rebuilt.test_utterance == DUCK and rebuilt.words == duck().words
    assert (rebuilt.gold_lf0, rebuilt.gold_lf1) == (DUCK0, DUCK1) and rebuilt.lf0_fraction == 0.7
    at.segmented_control(key="pb_mode").set_value("zero-shot").run()  # no ingredients: said in a box
    assert at.error and "mixed FOL prompt" in at.error[0].value


def test_present_delete_and_poll(own_lib) -> None:
    own_lib.add(duck())
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "own_sentences")
    sid = sentence_id(DUCK)
    at.button(key=f"own_present_{sid}").click().run()
    assert_ok(at)
    assert at.session_state["present_sentence"] == DUCK
    goto(at, "own_sentences")
    assert at.button(key="own_poll_create").disabled
    at.checkbox(key=f"own_pick_{sid}").check().run()
    at.checkbox(key="own_poll_with_model").uncheck().run()  # (nothing cached: a later test counts on it)
    at.text_input(key="own_poll_title").set_value("Ducks")
    at.button(key="own_poll_create").click().run()
    assert_ok(at)
    code = at.session_state["teach_poll_code"]
    poll = PollStore().get_poll(code)
    assert poll.title == "Ducks" and [i.surface for i in poll.items] == [DUCK]
    assert poll.items[0].paraphrase1 == "the duck that she owns"
    goto(at, "own_sentences")
    at.button(key=f"own_delete_{sid}").click().run()
    assert_ok(at)
    assert own_lib.list() == () and any("Deleted" in s for s in texts(at, "success"))


def test_a_poll_of_own_sentences_keeps_their_reading_names(own_lib) -> None:
    """The names the teacher gave the readings reach the poll, its charts and the Presentation
    (they were dropped: the duck's readings showed as the PP type's "possessive"/"instrument")."""
    own_lib.add(OwnSentence(DUCK, DUCK0, DUCK1, "she lowered her head", "the duck that she owns",
                            name0="she ducked", name1="her bird"))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "own_sentences")
    at.checkbox(key=f"own_pick_{sentence_id(DUCK)}").check().run()
    at.checkbox(key="own_poll_with_model").uncheck().run()
    at.button(key="own_poll_create").click().run()
    assert_ok(at)
    poll = PollStore().get_poll(at.session_state["teach_poll_code"])
    assert [(i.reading_name(0), i.reading_name(1)) for i in poll.items] == [("she ducked", "her bird")]
    goto(at, "teach_present")  # the open poll's sentence
    readings = shown(at, "markdown")
    assert "LF0 · she ducked</b>: she lowered her head" in readings
    assert "LF1 · her bird</b>: the duck that she owns" in readings
    assert "possessive" not in readings and "instrument" not in readings


def test_export_and_import(page, own_lib, tmp_path) -> None:
    assert any(b.label == "Download my sentences (JSON)" for b in page.get("download_button"))
    other = OwnLibrary(tmp_path / "other.json")
    other.add(duck())
    page.file_uploader(key="own_upload").set_value(("bad.json", b'{"format": "x"}', "application/json")).run()
    page.button(key="own_import").click().run()
    assert_ok(page)
    assert "Nothing was imported" in shown(page, "error") and own_lib.list() == ()
    page.file_uploader(key="own_upload").set_value(("mine.json", other.export_json(), "application/json")).run()
    page.button(key="own_import").click().run()
    assert_ok(page)
    assert "1 added, 0 replaced" in shown(page, "success")
    assert own_lib.list() == other.list() and page.header[0].value == "Your library (1)"


def test_demo_packs_carry_own_sentences(own_lib) -> None:
    """Class poll page: a pack of everything holds the own library (a box to leave it out), a pack of
    chosen sentences the own ones among them; importing it brings a deleted sentence back and keeps
    one the library still holds."""
    import io
    import json
    import zipfile

    from streamlit.testing.v1 import AppTest

    own_lib.add(duck())
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "teach_poll")
    assert at.checkbox(key="teach_pack_own").value is True
    at.button(key="teach_pack_build").click().run()
    assert_ok(at)
    data, _count, n_own = at.session_state["teach_pack_bytes"]
    assert n_own == 1 and any("1 own sentence(s)" in b.proto.label for b in at.get("download_button"))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert [s["surface"] for s in json.loads(zf.read("own_sentences.json"))["sentences"]] == [DUCK]
    at.checkbox(key="teach_pack_own").uncheck().run()
    at.button(key="teach_pack_build").click().run()
    assert "own_sentences.json" not in zipfile.ZipFile(io.BytesIO(at.session_state["teach_pack_bytes"][0])).namelist()

    at.selectbox(key="teach_pack_model").select("(the results behind chosen sentences)").run()
    at.text_area(key="teach_pack_sentences").input(f"{DUCK}\nnobody wrote this").run()
    at.button(key="teach_pack_build").click().run()  # nothing cached yet: the sentence alone
    assert_ok(at)
    assert any("nobody wrote this" in w for w in texts(at, "warning"))
    chosen, count, n_own = at.session_state["teach_pack_bytes"]
    assert (count, n_own) == (0, 1)

    own_lib.remove(DUCK)
    at.file_uploader(key="teach_pack_upload").set_value(("pack.zip", chosen, "application/zip")).run()
    at.button(key="teach_pack_import").click().run()
    assert_ok(at)
    assert any("1 added to your library" in s for s in texts(at, "success"))
    assert own_lib.get(DUCK) == duck()
    at.button(key="teach_pack_import").click().run()  # again: kept, not duplicated
    assert any("1 already there (kept)" in s for s in texts(at, "success"))
    assert len(own_lib.list()) == 1


CHICKEN = "the chicken is ready to eat"
CHICKEN0 = "exists x . exists e . chicken(x) AND ready(x) AND eat(e) AND agent(e, x)"
CHICKEN1 = "exists x . exists e . chicken(x) AND ready(x) AND eat(e) AND patient(e, x)"


def test_the_teacher_picks_the_examples_and_every_page_says_which(own_lib) -> None:
    """Issue #26 point 6: the duck is parsed with another own sentence (the chicken, shown as its
    LF1), not silently with PP-attachment examples; Parse & inspect says which examples, the
    slide says "your own sentence" rather than the borrowed type."""
    own_lib.add(duck())
    own_lib.add(OwnSentence(CHICKEN, CHICKEN0, CHICKEN1, "the chicken will eat", "someone will eat the chicken",
                            name1="eaten"))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "own_sentences")
    sid = sentence_id(DUCK)
    captions = shown(at, "caption")
    assert "10 template sentences of PP attachment (the template type closest to your readings" in captions
    at.segmented_control(key=f"own_src_{sid}").set_value("library").run()
    assert "none usable" in shown(at, "caption")  # nothing picked yet: said, not silently borrowed
    at.multiselect(key=f"own_picks_{sid}").set_value([CHICKEN]).run()
    at.radio(key=f"own_pick_r_{sid}_0").set_value(1).run()
    assert_ok(at)
    said = "Few-shot examples: 1 of your own sentences, each with the reading you chose: “the chicken is ready to eat” as LF1 (eaten)."
    assert said in shown(at, "caption")
    at.button(key=f"own_parse_{sid}").click().run()
    assert_ok(at)
    assert at.title[0].value == "Parse & inspect"
    prompt = at.session_state["prompt"]
    # CHICKEN1 in the prompt convention, written out (issue #45): its event variable e becomes the first event name, a
    scored1 = "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND patient(a, x)"
    assert [(e.utterance, e.lf, e.label) for e in prompt.examples] == [(CHICKEN, scored1, 1)]
    assert {"chicken", "ready", "eat", "duck"} <= set(prompt.words.unary)
    assert f"Your own sentence. {said}" in shown(at, "caption")
    assert "PP attachment" not in shown(at, "caption")
    at.switch_page("views/own_sentences.py").run()
    at.button(key=f"own_present_{sid}").click().run()
    assert_ok(at)
    nav = shown(at, "caption")
    assert "1 / 1 · your own sentence" in nav and "PP attachment" not in nav


def test_a_teachers_spelling_is_shown_as_typed_and_as_scored(page, own_lib) -> None:
    """Issue #26 point 2: the card shows the reading as typed and, below it, as it is scored."""
    typed1 = "exists e . exists bird . duck(bird) AND have(bird, Her) AND saw(e) AND agent(e, Me) AND patient(e, bird)"
    fill(page, surface=DUCK, para0="she ducked", para1="her bird", lf0=DUCK0, lf1=typed1)
    page.button(key="own_save").click().run()
    assert_ok(page)
    codes = [c.value for c in page.code]
    assert typed1 in codes and DUCK1 in codes
    assert "Scored as the prompts spell it" in shown(page, "caption")
    assert own_lib.get(DUCK).lf1 == typed1 and own_lib.get(DUCK).readings == (DUCK0, DUCK1)


def test_the_parse_page_note_says_which_spelling_was_scored() -> None:
    from ui.inspection.inspect_view import scored_spelling_note

    assert scored_spelling_note(None) is None and scored_spelling_note(duck()) is None
    typed1 = "exists e . exists bird . duck(bird) AND have(bird, Her) AND saw(e) AND agent(e, Me) AND patient(e, bird)"
    note = scored_spelling_note(OwnSentence(DUCK, DUCK0, typed1, "she lowered her head", "the duck that she owns"))
    assert note is not None and "scored as the prompts spell LFs" in note and "bird" in note


def test_an_own_sentence_poll_carries_the_models_parse_and_p_lf0_or_says_it_was_not_run(own_lib) -> None:
    """Issue #40 point 5: asked for, an own-sentence poll carries the model's parse and P(LF0)
    under the sentence's own prompt (the examples chosen for it), from the cache when it was
    already parsed; without the model, its reveal says one thing: the model was not run."""
    own_lib.add(duck())
    from streamlit.testing.v1 import AppTest

    from amp.parser import Parser
    from amp.teaching.lesson import reveal_under

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    goto(at, "own_sentences")
    sid = sentence_id(DUCK)
    at.button(key=f"own_parse_{sid}").click().run()  # parsed once before: its prompt is what the poll uses
    prompt = at.session_state["prompt"]
    import os

    parser = Parser(os.environ["AMP_MODEL"], device="cpu")  # the app's model and result cache
    before = reveal_under(parser, prompt)  # now in the result cache the app reads
    goto(at, "own_sentences")
    at.checkbox(key=f"own_pick_{sid}").check().run()
    at.button(key="own_poll_create").click().run()
    assert_ok(at)
    (item,) = PollStore().get_poll(at.session_state["teach_poll_code"]).items
    assert item.prompt == prompt
    assert (item.model_p_lf0, item.model_match) == (before.p_lf0, before.match)
    assert any("Model P(LF0)" == m.label and m.value == f"{before.p_lf0:.2f}" for m in at.metric)

    goto(at, "own_sentences")
    at.checkbox(key=f"own_pick_{sid}").check().run()
    at.checkbox(key="own_poll_with_model").uncheck().run()
    at.button(key="own_poll_create").click().run()
    assert_ok(at)
    (item,) = PollStore().get_poll(at.session_state["teach_poll_code"]).items
    assert item.model_p_lf0 is None and item.model_match == "" and item.prompt == prompt
    assert "The model was not run on this sentence." in shown(at, "caption")
    assert not any("Its score for the two readings" in c for c in texts(at, "caption"))
