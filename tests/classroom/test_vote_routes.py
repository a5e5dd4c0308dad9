"""The light vote page's routes (issue #41), on a real uvicorn server on loopback and a real poll store.

Expected texts are written out here (not read from the module under test), so a changed message or
a lost rule fails a test.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path

import pytest

from amp.teaching.poll_records import PollItem
from amp.teaching.poll_store import PollStore

ITEMS = [PollItem(surface="The boy saw the man with the telescope.", type="pp", lf0="a # 0", lf1="b # 0",
                  paraphrase0="the boy used the telescope", paraphrase1="the man had the telescope"),
         PollItem(surface="<b>Every</b> student read a book.", type="scope", lf0="a # 1", lf1="b # 1",
                  paraphrase0="each read some book", paraphrase1="one book <i>all</i> read")]
LOCKED = "Your teacher has revealed this sentence's answer, so its answers are locked."


@dataclass
class Served:
    host: str
    port: int
    store: PollStore

    def call(self, method: str, path: str, body: bytes | None = None, *, cookie: str | None = None,
             content_type: str | None = "application/json") -> tuple[int, dict, dict[str, str]]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        headers = {}
        if cookie:
            headers["Cookie"] = cookie
        if body is not None and content_type:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body, headers=headers)
        reply = conn.getresponse()
        raw = reply.read()
        conn.close()
        heads = {k.lower(): v for k, v in reply.getheaders()}
        try:
            data = json.loads(raw)
        except ValueError:
            data = {"raw": raw.decode("utf-8", "replace")}
        return reply.status, data, heads

    def answer(self, code: str, item: object, choice: object, confidence: object = 2, *, cookie: str | None):
        body = json.dumps({"poll": code, "item": item, "choice": choice, "confidence": confidence}).encode()
        return self.call("POST", "/vote/api/answer", body, cookie=cookie)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    import uvicorn
    from starlette.applications import Starlette

    from amp.classroom.vote_routes import vote_routes

    store = PollStore(Path(tmp_path_factory.mktemp("votes")) / "polls.sqlite")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=vote_routes(lambda: store)), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield Served("127.0.0.1", port, store)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _join(served: Served, code: str) -> str:
    """Open the poll as a new phone: the ``Cookie`` header its browser sends from now on."""
    status, state, heads = served.call("GET", f"/vote/api/state?poll={code}")
    assert status == 200, state
    jar = SimpleCookie(heads["set-cookie"])
    morsel = jar[f"amp_voter_{code}"]
    return f"amp_voter_{code}={morsel.value}"


def test_a_phone_opens_the_poll_gets_one_voter_cookie_and_sees_the_sentences(served: Served) -> None:
    code = served.store.create_poll(ITEMS, title="<script>x</script>").code
    status, state, heads = served.call("GET", f"/vote/api/state?poll={code.lower()}")
    assert status == 200
    cookie = heads["set-cookie"]
    assert cookie.startswith(f"amp_voter_{code}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Max-Age=10368000" in cookie and "Path=/" in cookie  # 120 days
    assert state["code"] == code and state["title"] == "<script>x</script>" and state["closed"] is False
    assert state["items"] == [{"surface": "The boy saw the man with the telescope.",
                               "readings": ["the boy used the telescope", "the man had the telescope"]},
                              {"surface": "<b>Every</b> student read a book.",
                               "readings": ["each read some book", "one book <i>all</i> read"]}]
    assert state["votes"] == {} and state["revealed"] == []
    assert state["confidence"] == {"1": "not confident", "2": "somewhat confident", "3": "very confident"}
    assert state["say"]["choice"] == "Which meaning do you understand?"
    # a browser that has its cookie keeps it: no new one
    status, _, heads = served.call("GET", f"/vote/api/state?poll={code}", cookie=_join(served, code))
    assert status == 200 and "set-cookie" not in heads


def test_an_answer_is_recorded_once_changed_until_the_reveal_then_locked(served: Served) -> None:
    code = served.store.create_poll(ITEMS).code
    phone = _join(served, code)
    voter = phone.split("=", 1)[1]
    status, got, _ = served.answer(code, 0, 1, 3, cookie=phone)
    assert status == 200
    assert got == {"outcome": "recorded",
                   "message": "Thanks! Your answer is in. Your answer: “the man had the telescope”, very confident. "
                              "You can change it until your teacher reveals this sentence.",
                   "vote": {"choice": 1, "confidence": 3, "words": "“the man had the telescope”, very confident"}}
    status, got, _ = served.answer(code, 0, 1, 3, cookie=phone)  # a double tap
    assert (status, got["outcome"], got["message"]) == (
        200, "unchanged", "Your answer stays “the man had the telescope”, very confident.")
    status, got, _ = served.answer(code, 0, 0, 1, cookie=phone)
    assert (status, got["outcome"], got["message"]) == (
        200, "changed", "Changed to “the boy used the telescope”, not confident.")
    votes = served.store.votes(code)
    assert [(v.item_index, v.voter_id, v.choice, v.confidence) for v in votes] == [(0, voter, 0, 1)]
    _, state, _ = served.call("GET", f"/vote/api/state?poll={code}", cookie=phone)
    assert state["votes"] == {"0": {"choice": 0, "confidence": 1,
                                    "words": "“the boy used the telescope”, not confident"}}
    served.store.reveal_item(code, 0)
    status, got, _ = served.answer(code, 0, 1, 3, cookie=phone)
    assert (status, got) == (409, {"error": f"Not recorded: {LOCKED}"})
    _, state, _ = served.call("GET", f"/vote/api/state?poll={code}", cookie=phone)
    assert state["revealed"] == [0] and state["votes"]["0"]["choice"] == 0  # the vote stays as it was
    assert served.store.results(code).items[0].n_voters == 1


def test_two_phones_count_twice_and_a_cookie_of_another_poll_is_not_a_voter_here(served: Served) -> None:
    code = served.store.create_poll(ITEMS).code
    other = served.store.create_poll(ITEMS).code
    a, b = _join(served, code), _join(served, code)
    assert a != b
    assert served.answer(code, 1, 0, cookie=a)[0] == 200 and served.answer(code, 1, 1, cookie=b)[0] == 200
    assert served.store.results(code).items[1].counts == (1, 1)
    status, got, _ = served.answer(other, 0, 0, cookie=a)  # a's cookie names the first poll only
    assert status == 400 and "allow cookies" in got["error"]
    assert served.store.votes(other) == ()


def test_no_cookie_no_vote(served: Served) -> None:
    """A browser that keeps no cookie would vote anew on every answer: it is refused, nothing stored."""
    code = served.store.create_poll(ITEMS).code
    for cookie in (None, f"amp_voter_{code}=", f"amp_voter_{code}=bad id!"):
        status, got, _ = served.answer(code, 0, 0, cookie=cookie)
        assert status == 400, (cookie, got)
        assert got == {"error": "Your answer was not recorded: this browser keeps no cookie for the poll; allow "
                                "cookies for this page and open the link again"}
    assert served.store.votes(code) == ()


def test_a_closed_poll_says_so_and_takes_no_answer(served: Served) -> None:
    code = served.store.create_poll(ITEMS).code
    phone = _join(served, code)
    served.store.close_poll(code)
    _, state, _ = served.call("GET", f"/vote/api/state?poll={code}", cookie=phone)
    assert state["closed"] is True
    status, got, _ = served.answer(code, 0, 0, cookie=phone)
    assert (status, got) == (409, {"error": "The poll was just closed: your answer was not recorded."})


@pytest.mark.parametrize(("item", "choice", "confidence", "says"), [
    (0, 2, 2, "choice must be 0 (LF0) or 1 (LF1), got 2"),
    (0, 0, 4, "confidence must be 1, 2 or 3 (not/somewhat/very), got 4"),
    (0, "0", 2, "choice must be 0 (LF0) or 1 (LF1), got '0'"),
    (2, 0, 2, "there is no sentence 2 in this poll"),
    (-1, 0, 2, "there is no sentence -1 in this poll"),
    (True, 0, 2, "there is no sentence True in this poll"),
    ("0", 0, 2, "there is no sentence '0' in this poll"),
])
def test_a_bad_field_is_a_422_naming_it_and_nothing_is_stored(served: Served, item, choice, confidence, says) -> None:
    code = served.store.create_poll(ITEMS).code
    status, got, _ = served.answer(code, item, choice, confidence, cookie=_join(served, code))
    assert status == 422
    assert got == {"error": f"Your answer was not recorded: {says}"}
    assert served.store.votes(code) == ()


def test_what_is_not_an_answer_is_refused_with_its_reason(served: Served) -> None:
    code = served.store.create_poll(ITEMS).code
    phone = _join(served, code)
    cases = [
        (b'{"poll": "', "application/json", 400, "The answer is not JSON."),
        (b"[1, 2]", "application/json", 400, "The answer is a JSON object with poll, item, choice and confidence."),
        (b"poll=X", "application/x-www-form-urlencoded", 415, "An answer is sent as JSON (Content-Type: application/json)."),
        (json.dumps({"poll": code, "item": 0, "choice": 0, "confidence": 2, "pad": "x" * 3000}).encode(),
         "application/json", 413, "An answer holds at most 2048 bytes."),
    ]
    for body, kind, status, error in cases:
        got = served.call("POST", "/vote/api/answer", body, cookie=phone, content_type=kind)
        assert got[:2] == (status, {"error": error}), (body[:30], got[:2])
    assert served.store.votes(code) == ()


@pytest.mark.parametrize("code", ["NOSUCH", "", "x" * 500, "K7QX2"])
def test_an_unknown_poll_is_a_404_in_the_error_envelope(served: Served, code: str) -> None:
    status, got, _ = served.call("GET", f"/vote/api/state?poll={code}")
    assert status == 404 and set(got) == {"error"}
    assert got["error"].startswith("There is no poll with the code ")
    assert got["error"].endswith(". Check the link or ask your teacher for the code.")
    assert len(got["error"]) < 200  # a long code is cut, not echoed whole


def test_the_page_and_every_answer_carry_the_safety_headers(served: Served) -> None:
    code = served.store.create_poll(ITEMS).code
    for path, kind in [(f"/vote?poll={code}", "text/html"), ("/vote/vote.js", "text/javascript"),
                       ("/vote/vote.css", "text/css"), (f"/vote/api/state?poll={code}", "application/json")]:
        status, _, heads = served.call("GET", path)
        assert status == 200, path
        assert heads["content-type"].startswith(kind), (path, heads["content-type"])
        assert "frame-ancestors 'none'" in heads["content-security-policy"]
        assert heads["content-security-policy"].startswith("default-src 'self'")
        assert heads["x-content-type-options"] == "nosniff" and heads["cache-control"] == "no-store"
    assert served.call("POST", f"/vote?poll={code}", b"{}")[0] == 405  # the page only reads


def test_the_page_script_never_writes_markup() -> None:
    """The sentences, readings and titles are a teacher's own text: the script puts them in with
    textContent only (no innerHTML, outerHTML, insertAdjacentHTML or document.write)."""
    from importlib import resources

    script = resources.files("amp.classroom").joinpath("static", "vote.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    assert "textContent" in script
