"""Teaching mode (AppTest): paraphrases beside LFs, hide-the-logic, class poll (teacher and
student), presentation reveal, demo-pack export/import."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from app_helpers import (
    APP,
    BLUE,
    GREY,
    ORANGE,
    TIMEOUT,
    WROTE_NEITHER,
    assert_ok,
    goto,
    scores_said,
    texts,
    verdict_said,
)

from amp.data import generate as gen
from amp.teaching.poll import PollItem, PollStore


def _all_text(app) -> str:
    return "\n".join(texts(app, "markdown") + texts(app, "caption") + texts(app, "info") + texts(app, "success")
                     + texts(app, "warning") + texts(app, "error"))


def _student(code: str):
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params["poll"] = code
    app.run()
    assert_ok(app)
    return app


def _messages(app) -> list[str]:
    """Every message box of the page (success, info, warning, error), in order of kind."""
    return [m for kind in ("success", "info", "warning", "error") for m in texts(app, kind)]


def _poll(n: int = 1) -> tuple[PollStore, object]:
    store = PollStore()  # under $AMP_CACHE_DIR (the app_env fixture)
    pairs = gen.pairs("pp")[:n]
    return store, store.create_poll([PollItem.from_pair(p, 0.7) for p in pairs], "test poll")


def test_templates_paraphrases_and_hide_logic(at):
    first = next(d.value for d in at.dataframe if "sentence" in d.value.columns).iloc[0]
    assert first["sentence"] == "Ada grabbed the man with the ovenmitts"  # the Templates page's first sentence
    p0, p1 = "Ada grabbed the man, who had the ovenmitts", "Ada used the ovenmitts to grab the man"  # by hand
    text = _all_text(at)
    assert p0 in text and p1 in text
    codes = [c.value for c in at.code]
    assert first["LF0"] in codes and first["LF1"] in codes
    at.toggle(key="teach_hide_logic_toggle").set_value(True).run()
    assert_ok(at)
    codes = [c.value for c in at.code]
    assert first["LF0"] not in codes and first["LF1"] not in codes
    text = _all_text(at)
    assert p0 in text and p1 in text  # paraphrases stay
    goto(at, "prompt_builder")  # the toggle state is shared by pages
    assert at.toggle(key="teach_hide_logic_toggle").value is True
    assert at.session_state["teach_hide_logic"] is True
    assert any("logical forms are hidden" in c for c in texts(at, "caption"))


def test_teacher_creates_poll_and_sees_library_votes(at):
    import json

    goto(at, "teach_poll")
    at.radio(key="tp_how").set_value("sampled sequence").run()
    at.number_input(key="tp_n").set_value(2).run()
    at.button(key="tp_create").click().run()
    assert_ok(at)
    code = at.session_state["teach_poll_code"]
    assert len(code) == 6 and code in _all_text(at)
    assert any(f"?poll={code}" in m for m in texts(at, "markdown"))
    store = PollStore()
    poll = store.get_poll(code)
    assert len(poll.items) == 2 and all(i.model_p_lf0 is not None for i in poll.items)  # tiny model scored
    store.submit_vote(code, 0, "s1", 0, 3)
    store.submit_vote(code, 0, "s2", 1, 1)
    store.submit_vote(code, 1, "s1", 1, 2)
    at.run()
    assert_ok(at)
    assert at.metric[0].value == "3"
    charts = [c for c in at.get("plotly_chart") if json.loads(c.proto.spec)["data"][0]["type"] == "bar"]
    assert len(charts) == 2  # one vote chart per item (the poll's model-vs-class scatter comes after)

    bars = json.loads(charts[0].proto.spec)["data"]
    assert [b["y"][0] for b in bars] == [1, 1]
    assert [b["marker"]["color"] for b in bars] == ["#0072B2", "#B34700"]
    labels = [m.label for m in at.metric]
    assert "Class P(LF0)" in labels and "Model P(LF0)" in labels
    csv = at.get("download_button")
    assert [b.proto.label for b in csv].count("Download votes (CSV)") == 1
    assert [b.proto.label for b in csv].count("HTML") == len(at.get("plotly_chart"))  # each figure as a page too
    at.button(key="tp_close").click().run()
    assert_ok(at)
    assert store.get_poll(code).closed
    assert any("closed" in c for c in texts(at, "caption"))
    assert at.metric[0].value == "3"  # data kept


def test_the_poll_page_offers_the_per_voter_export_beside_the_tally(at):
    """Issue #41 point 4: per-voter CSV and JSON beside the votes' CSV (their rows: tests/teaching/
    test_vote_change.py; the downloaded file against the votes cast: the browser test)."""
    store, poll = _poll(1)
    store.answer(poll.code, 0, "s1", 0, 3)
    at.session_state["teach_poll_code"] = poll.code
    goto(at, "teach_poll")
    assert_ok(at)
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert {"Download votes (CSV)", "Per voter (CSV)", "Per voter (JSON)"} <= set(buttons)


def test_open_and_create_take_what_was_just_typed(at):
    """Issue #11 point 6: typing a code (or a title) and pressing the button in the same run used
    the value of the run before (the callback's arguments were bound when the page was drawn),
    so "Open" needed two clicks."""
    store, poll = _poll(1)
    goto(at, "teach_poll")
    at.text_input(key="tp_open_code").set_value(poll.code.lower() + " ")
    at.button(key="tp_open").click().run()
    assert_ok(at)
    assert at.session_state["teach_poll_code"] == poll.code

    at.radio(key="tp_how").set_value("sampled sequence").run()
    at.checkbox(key="tp_with_model").set_value(False)
    at.text_input(key="tp_title").set_value("Tuesday, group B")
    at.button(key="tp_create").click().run()
    assert_ok(at)
    created = store.get_poll(at.session_state["teach_poll_code"])
    assert created.code != poll.code and created.title == "Tuesday, group B"
    assert all(item.model_p_lf0 is None for item in created.items)


def test_student_votes_once(app_env):
    store, poll = _poll(2)
    st_app = _student(poll.code)
    assert st_app.title[0].value == "Class poll"
    radio = st_app.radio[0]
    assert list(radio.options) == [poll.items[0].paraphrase0, poll.items[0].paraphrase1]
    radio.set_value(1)
    st_app.select_slider[0].set_value(3)
    st_app.button[0].click().run()
    assert_ok(st_app)
    votes = store.votes(poll.code)
    assert len(votes) == 1 and votes[0].choice == 1 and votes[0].confidence == 3 and votes[0].item_index == 0
    assert any("Thanks" in s for s in texts(st_app, "success"))
    # issue #41 point 3: the vote, not the form with Submit active; the same answer again (a replay)
    # is still one vote, with one message
    assert f"stu_submit_{poll.code}_0" not in [b.key for b in st_app.button] and not st_app.radio
    st_app.button(key=f"stu_change_{poll.code}_0").click().run()
    st_app.button(key=f"stu_submit_{poll.code}_0").click().run()
    assert_ok(st_app)
    assert len(store.votes(poll.code)) == 1
    assert _messages(st_app) == [f"Your answer stays “{poll.items[0].paraphrase1}”, very confident."]
    # next item
    st_app.button(key=f"stu_next_{poll.code}_0").click().run()
    assert any("*" + poll.items[1].surface + "*" in m for m in texts(st_app, "markdown"))
    # no sidebar model picker for students
    assert not st_app.sidebar.radio


def test_the_voter_id_is_a_cookie_not_part_of_the_url(app_env):
    """The voter id is this browser's cookie for the poll (``ui.classroom.class_poll.voter_id``; a reload and a
    new tab are covered by the browser test, AppTest sends no cookies): nothing goes into the URL,
    so a link forwarded to another phone carries no identity; a ``&voter=`` in a link is ignored;
    a session without the cookie is another browser with its own vote."""
    store, poll = _poll(1)
    first = _student(poll.code)
    assert "voter" not in first.query_params
    first.radio[0].set_value(0)
    first.button[0].click().run()
    assert len(store.votes(poll.code)) == 1
    voter = store.votes(poll.code)[0].voter_id
    assert re.fullmatch(r"[0-9a-f]{32}", voter)  # minted by amp.teaching.voter.new_voter_id

    from streamlit.testing.v1 import AppTest

    forwarded = AppTest.from_file(APP, default_timeout=TIMEOUT)  # another phone, an old-style link
    forwarded.query_params["poll"] = poll.code
    forwarded.query_params["voter"] = voter
    forwarded.run()
    assert_ok(forwarded)
    forwarded.radio[0].set_value(1)
    forwarded.button[0].click().run()
    assert_ok(forwarded)
    votes = store.votes(poll.code)
    assert len(votes) == 2 and len({v.voter_id for v in votes}) == 2
    assert not any("already answered" in s for s in texts(forwarded, "info"))


def _cookies(monkeypatch: pytest.MonkeyPatch, sent: dict[str, str]) -> dict[str, str]:
    """Stand in for the browser's cookie jar (AppTest sends none): the student page reads ``sent``
    and what it writes is returned."""
    from ui.shared import browser_store

    written: dict[str, str] = {}
    monkeypatch.setattr(browser_store, "read_cookie", lambda name: sent.get(name))
    real_write = browser_store.write_cookie

    def write(name: str, value: str, max_age_s: int, *, key: str | None = None) -> None:
        real_write(name, value, max_age_s, key=key)  # its checks still run
        written[name] = value

    monkeypatch.setattr(browser_store, "write_cookie", write)
    return written


def test_a_phone_that_voted_yesterday_keeps_its_voter_id(app_env, monkeypatch: pytest.MonkeyPatch):
    """A cookie minted before the one voter id (``uuid4().hex``) is still this phone's voter id: its
    earlier vote counts and it cannot vote on that item again."""
    import uuid

    store, poll = _poll(1)
    yesterday = uuid.uuid4().hex
    store.submit_vote(poll.code, 0, yesterday, 0, 3)
    written = _cookies(monkeypatch, {f"amp_voter_{poll.code}": yesterday})
    phone = _student(poll.code)
    assert not phone.radio  # its vote, read from the store, not the form
    assert f"your answer: “{poll.items[0].paraphrase0}”, very confident" in _all_text(phone)
    assert [(v.voter_id, v.choice) for v in store.votes(poll.code)] == [(yesterday, 0)]
    assert written == {f"amp_voter_{poll.code}": yesterday}


def test_a_phone_sees_its_vote_and_may_change_it_until_the_reveal(app_env, monkeypatch: pytest.MonkeyPatch):
    """Issue #41 point 3: a fresh session with the phone's cookie (a reload, a new tab) reads its
    vote from the store and starts at the first sentence it has not answered; the vote may change
    (counted once, "Changed to …") until the teacher reveals the sentence; then a change is refused
    with one message and the vote stays.  One message at a time throughout."""
    store, poll = _poll(2)
    phone_id = "f" * 32
    _cookies(monkeypatch, {f"amp_voter_{poll.code}": phone_id})
    p0, p1 = poll.items[0].paraphrase0, poll.items[0].paraphrase1
    first = _student(poll.code)
    first.radio[0].set_value(0)
    first.button(key=f"stu_submit_{poll.code}_0").click().run()
    assert_ok(first)
    assert _messages(first) == [f"Thanks! Your answer is in.  \nYour answer: “{p0}”, somewhat confident. "
                                "You can change it until your teacher reveals this sentence."]

    again = _student(poll.code)  # a reload: a new session, the same cookie
    assert any(poll.items[1].surface in m for m in texts(again, "markdown"))  # the first sentence not answered
    again.button(key=f"stu_prev_{poll.code}_1").click().run()
    assert_ok(again)
    assert not again.radio and f"stu_submit_{poll.code}_0" not in [b.key for b in again.button]
    assert _messages(again) == [f"Your answer: “{p0}”, somewhat confident. You can change it until your teacher "
                                "reveals this sentence."]
    again.button(key=f"stu_change_{poll.code}_0").click().run()
    assert again.radio[0].value == 0 and again.select_slider[0].value == 2  # the form holds the vote
    again.radio[0].set_value(1)
    again.select_slider[0].set_value(3)
    again.button(key=f"stu_submit_{poll.code}_0").click().run()
    assert_ok(again)
    assert _messages(again) == [f"Changed to “{p1}”, very confident."]
    (vote,) = store.votes(poll.code)
    assert (vote.voter_id, vote.choice, vote.confidence) == (phone_id, 1, 3) and vote.updated >= vote.created
    assert store.results(poll.code).items[0].counts == (0, 1)  # the latest answer, once

    again.button(key=f"stu_change_{poll.code}_0").click().run()  # the form is open ...
    store.reveal_item(poll.code, 0)  # ... when the teacher reveals the sentence
    again.radio[0].set_value(0)
    again.button(key=f"stu_submit_{poll.code}_0").click().run()
    assert_ok(again)
    assert _messages(again) == ["Not recorded: Your teacher has revealed this sentence's answer, so its answers "
                                f"are locked. Your answer stays “{p1}”, very confident."]
    assert [(v.choice, v.confidence) for v in store.votes(poll.code)] == [(1, 3)]
    assert f"stu_change_{poll.code}_0" not in [b.key for b in again.button]
    later = _student(poll.code)
    later.button(key=f"stu_prev_{poll.code}_1").click().run()
    assert _messages(later) == [f"Your answer: “{p1}”, very confident. Your teacher has revealed this sentence's "
                                "answer, so its answers are locked."]
    assert not later.radio and f"stu_change_{poll.code}_0" not in [b.key for b in later.button]


def test_the_student_page_imports_nothing_heavy():
    """Issue #41 point 2: what the student page and the frame before it import loads no model
    library (plotly and pandas come with Streamlit itself)."""
    import ast
    import subprocess
    import sys

    from app_helpers import APP

    from amp.teaching import poll  # noqa: F401 - the page's library

    repo = __import__("pathlib").Path(APP).parent
    modules = set()
    for script in (repo / "views" / "teach_student.py", repo / "app.py"):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
    assert {"ui.classroom", "amp.teaching.poll", "ui.frame"} <= modules
    probe = ("import sys\n" + "".join(f"import {m}\n" for m in sorted(modules))
             + "print(','.join(sorted(m for m in ('torch', 'transformers', 'accelerate', 'llama_cpp', "
               "'safetensors') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", out.stdout


@pytest.mark.parametrize("cookie", ["not a voter id", "-1", "x" * 300, ""])
def test_a_cookie_that_is_no_voter_id_gets_a_fresh_one(app_env, monkeypatch: pytest.MonkeyPatch, cookie: str):
    store, poll = _poll(1)
    written = _cookies(monkeypatch, {f"amp_voter_{poll.code}": cookie})
    phone = _student(poll.code)
    phone.radio[0].set_value(0)
    phone.button[0].click().run()
    assert_ok(phone)
    (vote,) = store.votes(poll.code)
    assert re.fullmatch(r"[0-9a-f]{32}", vote.voter_id)
    assert written == {f"amp_voter_{poll.code}": vote.voter_id}


def test_every_voter_id_can_be_written_as_a_cookie():
    """The one voter format is inside the cookie writer's own rule (ui.shared.browser_store): an id
    read back from a cookie is written again unchanged, never refused."""
    from amp.teaching.voter import MAX_VOTER_ID, is_voter_id
    from ui.shared import browser_store

    chars = [chr(c) for c in range(0x250)]
    ids = [c + "a" for c in chars] + ["a" + c for c in chars] + ["7" * MAX_VOTER_ID]
    voter_ids = [v for v in ids if is_voter_id(v)]
    assert len(voter_ids) > 60
    for voter in voter_ids:
        assert f"amp_voter_K7QX2M={voter};" in browser_store._script("amp_voter_K7QX2M", voter, 60)


@pytest.mark.parametrize("code", ["NOPE", "ZZZZZZ"])
def test_student_bad_code(app_env, code):
    app = _student(code)
    assert app.error and "no poll" in app.error[0].value.lower()


def test_student_closed_poll(app_env):
    store, poll = _poll()
    store.close_poll(poll.code)
    app = _student(poll.code)
    assert app.error and "closed" in app.error[0].value


#: The reading names of gen.sample_pairs("pp", 5, 0)[0], the sentence the tiny model reveals.
SAMPLED = ("possessive", "instrument")


def test_presentation_reveal(at):
    goto(at, "teach_present")
    assert not any("Model P(LF0)" == m.label for m in at.metric)
    sentence = [m.value for m in at.markdown if "present-s" in m.value]
    assert sentence
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    assert any(m.label == "Model P(LF0)" for m in at.metric)
    # issue #26 point 5: first what the model wrote (its real parse), then what it scores
    from amp.evaluation.matching import match_lf
    from amp.prompts import mixed_prompt

    pair = gen.sample_pairs("pp", 5, 0)[0]
    reveal = at.session_state["teach_model_reveal"]
    (did,) = reveal.values()
    assert did.match == match_lf(did.parse, pair.lf0.lf, pair.lf1.lf)
    assert did.parse is not None and did.parse.strip()
    p = next(float(m.value) for m in at.metric if m.label == "Model P(LF0)")
    assert p == pytest.approx(did.p_lf0, abs=0.005)
    # issue #40 point 3: under the lesson's one prompt (the default mixed one), named on the slide
    assert did.prompt == mixed_prompt(pair, 0.3, seed=0, k=10)
    assert any("under 10 examples, 3 of them LF0" in c for c in texts(at, "caption"))
    # issue #40 point 2: the verdict decides by P(LF0) where the readings part, and says so; the
    # expected sentences are written here (issue #45 point 3), the colour checked in every case
    assert did.match in WROTE_NEITHER  # the seed-fixed tiny model's parse is neither reading
    pinned = None if did.shared_token is None else (did.paper_p_lf0, did.shared_token)  # a token both share
    said = scores_said(p, SAMPLED, "where the readings part", pinned)
    assert verdict_said(at) == (GREY, WROTE_NEITHER[did.match], said)  # neither reading: in no reading's colour
    at.button(key="present_next").click().run()
    assert_ok(at)
    assert at.session_state["present_pos"] == 1


#: One case per thing the model can have written, stored with the poll item (no model run):
#: (match, P(LF0), stored under the lesson's prompt?, the colour, the two sentences by hand).
REVEALS = [
    ("lf0", 0.80, True, BLUE,
     "The model wrote LF0 (possessive): “the boy saw the girl, who had the telescope”.",
     "Forced to write each reading, it scores LF0 (possessive) higher where the readings part: P(LF0) = 0.80."),
    ("lf1", 0.20, False, ORANGE,
     "The model wrote LF1 (instrument): “the boy used the telescope to see the girl”.",
     "Forced to write each reading, it scores LF1 (instrument) higher by each reading's least likely token: "
     "P(LF0) = 0.20."),
    ("both", 0.53, True, BLUE,
     "The model wrote a parse that is both readings (the two LFs mean the same).",
     "Forced to write each reading, it is undecided where the readings part: P(LF0) = 0.53 is within 0.05 of 0.5."),
    ("neither", 0.35, False, GREY,
     "The model wrote neither reading: its parse is a different formula from both LFs.",
     "Forced to write each reading, it scores LF1 (instrument) higher by each reading's least likely token: "
     "P(LF0) = 0.35."),
]


@pytest.mark.parametrize(("match", "p", "with_prompt", "colour", "wrote", "scores"), REVEALS,
                         ids=[r[0] for r in REVEALS])
def test_presentation_reveal_says_each_verdict_in_its_words_and_colour(at, match, p, with_prompt, colour, wrote,
                                                                       scores):
    """Issue #45 point 3: LF0, LF1, both and neither, each revealed in hand-written words, a
    reading in its colour (both: LF0's) and neither in no reading's colour; an item stored under
    the lesson's prompt names P(LF0) where the readings part, one stored without it the paper's."""
    import dataclasses

    from amp.prompts import mixed_prompt

    pair = gen.pairs("pp")[0]
    assert pair.surface == "the boy saw the girl with the telescope"
    prompt = mixed_prompt(pair, 0.3, seed=0, k=10) if with_prompt else None
    item = dataclasses.replace(PollItem.from_pair(pair, p, prompt=prompt), model_match=match)
    poll = PollStore().create_poll([item], f"{match} poll")
    goto(at, "teach_present")
    at.text_input(key="present_code").set_value(poll.code).run()
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    assert verdict_said(at) == (colour, wrote, scores)
    assert [m.value for m in at.metric if m.label == "Model P(LF0)"] == [f"{p:.2f}"]
    assert "teach_model_reveal" not in at.session_state or not at.session_state["teach_model_reveal"]  # stored


def test_presentation_reveal_says_neither_and_undecided_in_words(at):
    """A poll item whose parse was neither reading, at P(LF0) = 0.5: the reveal says both in words
    and names no reading (issue #26 point 5)."""
    import dataclasses

    store = PollStore()
    item = dataclasses.replace(PollItem.from_pair(gen.pairs("pp")[0], 0.5), model_match="neither")
    poll = store.create_poll([item], "neither poll")
    goto(at, "teach_present")
    at.text_input(key="present_code").set_value(poll.code).run()
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    wrote = [m for m in texts(at, "markdown") if "amp-wrote" in m]
    scores = [m for m in texts(at, "markdown") if "amp-scores" in m]
    assert len(wrote) == 1 and "The model wrote neither reading" in wrote[0]
    # an item stored without its prompt holds the paper's min-token P(LF0): the sentence names that measure
    assert len(scores) == 1 and "undecided by each reading&#x27;s least likely token: P(LF0) = 0.50" in scores[0]
    assert not any(item.paraphrase0 in m or item.paraphrase1 in m for m in wrote + scores)
    assert "teach_model_reveal" not in at.session_state or not at.session_state["teach_model_reveal"]  # stored: no model run
    assert any("Appendix A.5" in c for c in texts(at, "caption"))  # how the class number is computed


def test_presentation_shows_poll_results(at):
    store, poll = _poll(1)
    store.submit_vote(poll.code, 0, "s1", 0, 2)
    goto(at, "teach_present")
    at.text_input(key="present_code").set_value(poll.code).run()
    assert_ok(at)
    assert len(at.get("plotly_chart")) == 1
    assert any("1 vote(s)" in c for c in texts(at, "caption"))


def test_the_presentations_reveal_locks_the_items_answers_and_survives_a_reload(at):
    """Issue #41 point 3: Reveal on a poll's slide is recorded in the store: that item's answers are
    locked (the next item's are not) and a fresh session (F5) shows the slide revealed."""
    import dataclasses

    from streamlit.testing.v1 import AppTest

    from amp.teaching.poll import ItemRevealedError

    store = PollStore()
    items = [dataclasses.replace(PollItem.from_pair(p, 0.8), model_match="lf0") for p in gen.pairs("pp")[:2]]
    poll = store.create_poll(items, "reveal")  # the model's numbers stored: no model run
    store.answer(poll.code, 0, "s1", 1, 2)
    goto(at, "teach_present")
    at.text_input(key="present_code").set_value(poll.code).run()
    assert not any(m.label == "Model P(LF0)" for m in at.metric)
    assert store.revealed_items(poll.code) == frozenset()
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    assert any(m.label == "Model P(LF0)" for m in at.metric)
    assert store.revealed_items(poll.code) == frozenset({0})
    with pytest.raises(ItemRevealedError):
        store.answer(poll.code, 0, "s1", 0, 2)
    assert store.answer(poll.code, 1, "s1", 0, 2).vote.choice == 0  # the next item still takes answers

    again = AppTest.from_file(APP, default_timeout=TIMEOUT)  # F5: a new session, the poll and slide in the URL
    again.run()
    again.query_params.update({k: str(v) for k, v in at.query_params.items()})
    goto(again, "teach_present")
    assert_ok(again)
    assert any(m.label == "Model P(LF0)" for m in again.metric)  # revealed without a click


def test_presentation_shows_poll_text_as_plain_text(at):
    """A poll's sentence and readings (teacher-typed or imported) never become live HTML on the projector."""
    import dataclasses

    store, base = _poll(1)
    item = dataclasses.replace(base.items[0], surface="<img src=x onerror=alert(1)> saw",
                               paraphrase0="<b>bold</b> & <script>x()</script>")
    poll = store.create_poll([item], "markup poll")
    goto(at, "teach_present")
    at.text_input(key="present_code").set_value(poll.code).run()
    assert_ok(at)
    html = " ".join(m.value for m in at.markdown if "present-" in m.value)
    assert "<img" not in html and "<script>" not in html and "<b>bold" not in html
    assert "&lt;img src=x onerror=alert(1)&gt; saw" in html and "&lt;b&gt;bold&lt;/b&gt; &amp;" in html


def test_demo_pack_export_and_tampered_import(at):
    # fill the cache with one result: reveal the model's choice on the presentation page
    goto(at, "teach_present")
    at.button(key="present_reveal_0").click().run()
    goto(at, "teach_poll")
    at.button(key="teach_pack_build").click().run()
    assert_ok(at)
    data, count, _own = at.session_state["teach_pack_bytes"]
    assert count >= 1
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert "manifest.json" in zf.namelist()
    # tamper: change one entry's bytes (the manifest's sha256 no longer matches)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as w:
        for name in zf.namelist():
            body = zf.read(name)
            if name.startswith("entries/"):
                body = body.replace(b"{", b"{ ", 1)
            w.writestr(name, body)
    at.file_uploader(key="teach_pack_upload").set_value(("pack.zip", out.getvalue(), "application/zip")).run()
    at.button(key="teach_pack_import").click().run()
    assert_ok(at)
    assert any("not imported" in e for e in texts(at, "error"))
    # the untampered pack imports
    at.file_uploader(key="teach_pack_upload").set_value(("pack.zip", data, "application/zip")).run()
    at.button(key="teach_pack_import").click().run()
    assert_ok(at)
    assert any("Imported" in s for s in texts(at, "success"))


def test_demo_pack_for_chosen_sentences(at):
    surface = gen.sample_pairs("pp", 5, 0)[0].surface
    goto(at, "teach_present")
    assert surface in _all_text(at)
    at.button(key="present_reveal_0").click().run()  # caches the model's P(LF0) for that sentence
    goto(at, "teach_poll")
    at.selectbox(key="teach_pack_model").select("(the results behind chosen sentences)").run()
    at.text_area(key="teach_pack_sentences").input(f"{surface}\nnot a pool sentence").run()
    at.button(key="teach_pack_build").click().run()
    assert_ok(at)
    assert any("not a pool sentence" in w for w in texts(at, "warning"))
    data, count, _own = at.session_state["teach_pack_bytes"]
    assert count >= 1
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert len([n for n in names if n.startswith("entries/")]) == count
    # a sentence with nothing cached: a clear message, and the earlier pack is kept
    other = gen.sample_pairs("conj", 1, 7)[0].surface
    at.text_area(key="teach_pack_sentences").input(other).run()
    at.button(key="teach_pack_build").click().run()
    assert_ok(at)
    assert any("nothing is cached for these sentences" in e for e in texts(at, "error"))
    assert at.session_state["teach_pack_bytes"][1] == count


def test_a_reveal_belongs_to_the_model_that_computed_it(at):
    """A reveal computed in one precision is not shown after a switch to another: the model is
    asked again (a memo entry per model choice, not per spec)."""
    goto(at, "teach_present")
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    assert len(at.session_state["teach_model_reveal"]) == 1
    at.selectbox(key="precision_choice").set_value("int8").run()
    assert_ok(at)
    at.button(key="present_reveal_0").click().run()
    assert_ok(at)
    assert len(at.session_state["teach_model_reveal"]) == 2
