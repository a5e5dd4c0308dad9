"""A route from a poll's sentences to a parse and a presentation (issue #11 point 5), for a
template sentence and for a teacher's own sentence (whose prompt carries its own words)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import assert_ok, goto

from amp.data import generate as gen
from amp.teaching.own_library import OwnLibrary
from amp.teaching.own_sentences import OwnSentence
from amp.teaching.poll import PollItem, PollStore

DUCK = OwnSentence(
    "I saw her duck",
    "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)",
    "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)",
    "she lowered her head and I saw it", "I saw the bird she owns", name0="she ducked", name1="her bird",
)


@pytest.fixture
def poll_code(app_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AMP_OWN_SENTENCES", str(tmp_path / "own.json"))
    OwnLibrary(tmp_path / "own.json").add(DUCK)
    pool = gen.pairs("pp")[0]
    items = [PollItem.from_pair(pool), DUCK.poll_item()]
    return PollStore().create_poll(items, "routes").code


def _open(at, code: str) -> None:
    goto(at, "teach_poll")
    at.session_state["teach_poll_code"] = code
    at.run()
    assert_ok(at)


def test_parse_a_template_sentence_of_the_poll(at, poll_code: str) -> None:
    _open(at, poll_code)
    surface = gen.pairs("pp")[0].surface
    at.selectbox(key="tp_route_sentence").select(surface).run()
    at.button(key="tp_route_parse").click().run()
    assert_ok(at)
    prompt = at.session_state["prompt"]
    assert prompt.test_utterance == surface and len(prompt.examples) == 10 and not prompt.words


def test_parse_and_present_an_own_sentence_of_the_poll(at, poll_code: str) -> None:
    _open(at, poll_code)
    at.selectbox(key="tp_route_sentence").select("I saw her duck").run()
    at.button(key="tp_route_parse").click().run()
    assert_ok(at)
    prompt = at.session_state["prompt"]
    assert prompt.test_utterance == "I saw her duck" and prompt.words == DUCK.words
    assert prompt.gold_lf0 == DUCK.lf0 and len(prompt.examples) == 10
    _open(at, poll_code)
    at.selectbox(key="tp_route_sentence").select("I saw her duck").run()
    at.button(key="tp_route_present").click().run()
    assert_ok(at)
    shown = "\n".join(m.value for m in at.markdown)
    assert "I saw her duck" in shown and "she ducked" in shown and "I saw the bird she owns" in shown


def test_presenting_a_poll_sentence_keeps_the_poll_and_its_votes(at, poll_code: str) -> None:
    """From the poll, the Presentation shows that sentence *of the poll*: the class's votes on it
    stay on screen, and Next goes on through the poll."""
    from amp.teaching.poll import PollStore

    store = PollStore()
    poll = store.get_poll(poll_code)
    index = [i.surface for i in poll.items].index("I saw her duck")
    store.submit_vote(poll_code, index, "s1", 1, 2)
    _open(at, poll_code)
    at.selectbox(key="tp_route_sentence").select("I saw her duck").run()
    at.button(key="tp_route_present").click().run()
    assert_ok(at)
    assert at.session_state["present_code"] == poll_code and at.session_state["present_pos"] == index
    shown = "\n".join(m.value for m in at.markdown)
    assert "I saw her duck" in shown and any(c.value.startswith("Class: 1 vote(s)") for c in at.caption)
