"""The light vote path: a phone votes with two small HTTP calls, beside the Streamlit app (issue #41).

A Streamlit page costs its server a script run per click (about 0.15 CPU s for the student form),
so 150 phones answering within ten seconds queue for tens of seconds on a 2-core laptop.  The
student link (:attr:`amp.teaching.poll_records.Poll.vote_query`) therefore opens a small static page
served by the app's own server (``asgi.py`` mounts these routes on Streamlit's Starlette server, same
host and port): it reads the poll once and sends each answer as one JSON request that is one store
write — no Streamlit session, no script run.  It says what the Streamlit student page says
(:mod:`amp.teaching.student_messages`), holds the same voter id (the cookie ``amp_voter_<CODE>``) and
obeys the same rules: one vote per voter and sentence, changeable until the teacher reveals it.

Routes (:data:`PAGE_PATH` and below):

* ``GET /vote?poll=CODE`` — the page (HTML, its script and style beside it, nothing fetched off the
  machine); the script shows text with ``textContent`` only, never as markup;
* ``GET /vote/api/state?poll=CODE`` — the poll (title, sentences and their two readings), this
  browser's votes, the revealed sentences, whether it is closed; sets the voter cookie when the
  browser has none (``HttpOnly``, ``SameSite=Lax``);
* ``POST /vote/api/answer`` — ``{"poll", "item", "choice", "confidence"}`` as JSON (at most
  :data:`MAX_BODY_BYTES`); refused without the voter cookie (a browser that keeps no cookie would
  otherwise vote anew on every answer).

Errors are JSON ``{"error": …}`` with a 4xx status (404 no such poll, 409 revealed or closed, 422
a bad field, 400 no cookie or not JSON, 413 too large, 415 not JSON); the store's work runs in a
worker thread, so the server's event loop (which also carries every Streamlit page) never waits on
the disk.  A student can do nothing here but read the poll and answer it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from amp.classroom.errors import VoteRefused
from amp.errors import AmpError
from amp.teaching import student_messages as say
from amp.teaching.errors import InvalidVoteError
from amp.teaching.poll import ItemRevealedError, PollClosedError, PollNotFoundError, PollStore, shared_store
from amp.teaching.poll_records import CONFIDENCE_LABELS, normalise_code
from amp.teaching.voter import VOTER_COOKIE_AGE_S, is_voter_id, new_voter_id, voter_cookie

__all__ = ["ANSWER_PATH", "MAX_BODY_BYTES", "PAGE_PATH", "STATE_PATH", "vote_routes"]

#: The page a student's link opens (``/vote?poll=CODE``), and its two calls.
PAGE_PATH = "/vote"
STATE_PATH = "/vote/api/state"
ANSWER_PATH = "/vote/api/answer"
#: The most an answer's body may hold (an answer is ~80 bytes).
MAX_BODY_BYTES = 2048
#: The page's files (amp/classroom/static), by the path they are served at.
ASSETS = {PAGE_PATH: ("vote.html", "text/html; charset=utf-8"),
          "/vote/vote.js": ("vote.js", "text/javascript; charset=utf-8"),
          "/vote/vote.css": ("vote.css", "text/css; charset=utf-8")}
#: Headers of every answer: nothing framed, sniffed, cached or fetched from elsewhere.
SAFE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                               "form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _json(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=SAFE_HEADERS)


def _asset(name: str, media_type: str) -> Callable[[Request], Any]:
    data = resources.files("amp.classroom").joinpath("static", name).read_bytes()

    async def serve(request: Request) -> Response:
        return Response(data, media_type=media_type, headers=SAFE_HEADERS)

    return serve


def _code(value: Any) -> str:
    """The poll code as the store spells it; a 404 for what cannot be one."""
    try:
        return normalise_code(value)
    except PollNotFoundError:
        raise VoteRefused(404, say.no_poll(value[:64] if isinstance(value, str) else "")) from None


def _state(store: PollStore, code: str, voter: str) -> dict[str, Any]:
    try:
        poll = store.get_poll(code)
        votes, revealed = store.voter_votes(poll.code, voter), store.revealed_items(poll.code)
    except PollNotFoundError:
        raise VoteRefused(404, say.no_poll(code)) from None
    return {
        "code": poll.code, "title": poll.title, "closed": poll.closed,
        "items": [{"surface": it.surface, "readings": [it.paraphrase(0), it.paraphrase(1)]} for it in poll.items],
        "votes": {str(i): {"choice": v.choice, "confidence": v.confidence,
                           "words": say.answer_words(poll.items[i], v.choice, v.confidence)} for i, v in votes.items()},
        "revealed": sorted(revealed),
        "confidence": {str(k): label for k, label in CONFIDENCE_LABELS.items()},
        "say": {"choice": say.CHOICE_QUESTION, "confidence": say.CONFIDENCE_QUESTION, "locked": say.LOCKED,
                "change": say.CHANGE_UNTIL_REVEAL, "pick": say.PICK_FIRST, "closed": say.CLOSED,
                "done": say.ALL_DONE},
    }


def _answer(store: PollStore, body: dict[str, Any], voter: str) -> dict[str, Any]:
    code = _code(body.get("poll"))
    item, choice, confidence = body.get("item"), body.get("choice"), body.get("confidence")
    try:
        poll = store.get_poll(code)
        if not isinstance(item, int) or isinstance(item, bool) or not 0 <= item < len(poll.items):
            raise VoteRefused(422, say.not_recorded(f"there is no sentence {item!r} in this poll"))
        done = store.answer(poll.code, item, voter, choice, confidence)  # type: ignore[arg-type]
    except PollNotFoundError:
        raise VoteRefused(404, say.no_poll(code)) from None
    except ItemRevealedError:
        raise VoteRefused(409, f"Not recorded: {say.LOCKED}") from None
    except PollClosedError:
        raise VoteRefused(409, say.CLOSED_NOT_RECORDED) from None
    except InvalidVoteError as exc:
        raise VoteRefused(422, say.not_recorded(str(exc))) from None
    words = say.answer_words(poll.items[item], done.vote.choice, done.vote.confidence)
    return {"outcome": done.outcome.value, "message": say.answered(done.outcome, words),
            "vote": {"choice": done.vote.choice, "confidence": done.vote.confidence, "words": words}}


async def _body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise VoteRefused(415, "An answer is sent as JSON (Content-Type: application/json).")
    size = 0
    chunks: list[bytes] = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise VoteRefused(413, f"An answer holds at most {MAX_BODY_BYTES} bytes.")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise VoteRefused(400, "The answer is not JSON.") from None
    if not isinstance(body, dict):
        raise VoteRefused(400, "The answer is a JSON object with poll, item, choice and confidence.")
    return body


def vote_routes(store: Callable[[], PollStore] = shared_store) -> list[Route]:
    """The light vote page's routes on the poll store ``store()`` (the app's, by default)."""

    async def state(request: Request) -> Response:
        try:
            code = _code(request.query_params.get("poll", ""))
            given = request.cookies.get(voter_cookie(code))
            voter = given if is_voter_id(given) else new_voter_id()
            body = await run_in_threadpool(_state, store(), code, voter)
        except VoteRefused as refused:
            return _json({"error": refused.message}, refused.status)
        except AmpError as exc:
            return _json({"error": f"The poll cannot be read: {exc}"}, 503)
        response = _json(body)
        if voter != given:
            response.set_cookie(voter_cookie(body["code"]), voter, max_age=VOTER_COOKIE_AGE_S, path="/",
                                httponly=True, samesite="lax")
        return response

    async def answer(request: Request) -> Response:
        try:
            body = await _body(request)
            code = _code(body.get("poll"))
            voter = request.cookies.get(voter_cookie(code))
            if not is_voter_id(voter):
                raise VoteRefused(400, say.not_recorded("this browser keeps no cookie for the poll; allow cookies "
                                                     "for this page and open the link again"))
            return _json(await run_in_threadpool(_answer, store(), body, voter))
        except VoteRefused as refused:
            return _json({"error": refused.message}, refused.status)
        except AmpError as exc:
            return _json({"error": say.not_recorded(str(exc))}, 503)

    routes = [Route(path, _asset(name, media), methods=["GET"]) for path, (name, media) in ASSETS.items()]
    return [*routes, Route(STATE_PATH, state, methods=["GET"]), Route(ANSWER_PATH, answer, methods=["POST"])]
