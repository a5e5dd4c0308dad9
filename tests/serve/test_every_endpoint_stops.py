"""Every endpoint's model work stops at its next step once its client is gone (issue #44 point 2).

The replica (:mod:`amp.serve.worker`) runs each call of :class:`amp.serve.work.Work` inside a
:func:`~amp.parser.search.cancel.cancel_scope` whose check is its step gate and its client's
cancel flag.  Here, without Ray, on the tiny saved GPT-2: under a check that is already true
every endpoint (``/v1/parse``, ``/v1/parse_and_score``, ``/v1/sample``, ``/v1/forced``,
``/v1/pairs``, ``/v1/steps``) raises :class:`SearchCancelled` — the replica counts it as
cancelled, it is never answered as an error — a job's chunk answers none of its items, and under a check that turns true after
its first step a forced scoring of many LFs (chunks of one LF each) runs exactly one forward pass.
The same calls with a check that stays false answer.  (The Ray tests in ``test_service.py``
check a real disconnect on ``/v1/parse`` and ``/v1/sample``; forced scoring on the tiny model is
over before a client could go away, hence this check.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from amp.parser.core.errors import SearchCancelled
from amp.parser.search import prefix
from amp.parser.search.cancel import cancel_scope
from amp.serve.work import ServeConfig, Work
from tests.scoring_passes import count_scoring_passes

PROMPT = "Human: the man saw a girl\nComputer:"
LF0 = "exists x . man(x)"
LF1 = "exists y . man(y)"
SEARCH = {"beams": 2, "max_new_tokens": 8}


@pytest.fixture(scope="module")
def work(saved_tiny_model: Path) -> Work:
    return Work(ServeConfig(spec=str(saved_tiny_model), device="cpu", dtype="float32", use_cache=False))


@pytest.fixture(scope="module")
def beam(work: Work) -> dict[str, Any]:
    answer = work.parse([{"prompts": [PROMPT], "search": SEARCH}])[0]
    found = dict(answer["results"][0]["beams"][0])
    found.pop("steps", None)  # (a beam that carries its steps is answered from them)
    return found


def _calls(work: Work, beam: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """One call per endpoint, as the ingress hands it to the replica."""
    common = {"fmt": "fol", "top_n": 5}
    return {
        "/v1/parse": lambda: work.parse([{"prompts": [PROMPT], "search": SEARCH}]),
        "/v1/parse_and_score": lambda: work.joint([{"items": [[PROMPT, LF0, LF1]], "search": SEARCH}]),
        "/v1/sample": lambda: work.sample({"prompt": PROMPT, "n": 2, "temperature": 1.0, "seed": 0, "fmt": "fol",
                                           "max_new_tokens": 8}),
        "/v1/forced": lambda: work.forced({"prompt": PROMPT, "lfs": [LF0, LF1], **common}),
        "/v1/pairs": lambda: work.pairs({"items": [[PROMPT, LF0, LF1]], **common}),
        "/v1/steps": lambda: work.steps({"prompt": PROMPT, "beam": beam, "constrained": True, **common}),
    }


def _chunk(work: Work) -> dict[str, Any]:
    """A job's chunk of two items (a job's run stops cleanly: it answers the items it finished)."""
    return work.chunk({"items": [{"id": k, "prompt": f"{PROMPT} {k}", "lf0": LF0, "lf1": LF1} for k in "ab"],
                       "search": SEARCH, "top_n": 5})


def test_every_endpoint_answers_while_its_client_waits(work: Work, beam: dict[str, Any]) -> None:
    for name, call in _calls(work, beam).items():
        with cancel_scope(lambda: False):
            answer = call()
        answers = answer if isinstance(answer, list) else [answer]
        assert all("error" not in a for a in answers), (name, answer)
    with cancel_scope(lambda: False):
        assert len(_chunk(work)["results"]) == 2


def test_every_endpoint_stops_once_its_client_is_gone(work: Work, beam: dict[str, Any]) -> None:
    for name, call in _calls(work, beam).items():
        with cancel_scope(lambda: True), pytest.raises(SearchCancelled):
            call()
            pytest.fail(f"{name} ran to its end after its client went away")
    with cancel_scope(lambda: True):
        assert _chunk(work)["results"] == []  # a job's chunk: cancelled before its first item


def test_a_forced_scoring_stops_at_its_next_chunk(work: Work, monkeypatch: pytest.MonkeyPatch) -> None:
    passes = count_scoring_passes(monkeypatch)
    monkeypatch.setattr(prefix, "CHUNK_BYTES", 1)  # one LF per chunk: each chunk is a step
    lfs = ["exists x . man(x)", "exists x . girl(x)", "exists x . man(x) AND girl(x)", "exists x . walked(x)"]
    call = {"prompt": "Human: a girl walked\nComputer:", "lfs": lfs, "fmt": "fol", "top_n": 5}
    asked = iter([False, True])  # the client goes away after the first step
    with cancel_scope(lambda: next(asked, True)), pytest.raises(SearchCancelled):
        work.forced(call)
    assert passes == [1]  # one chunk scored, not the four
    passes.clear()
    answer = work.forced(call)  # no client to lose
    assert len(answer["results"]) == 4 and passes == [1, 1, 1, 1]
