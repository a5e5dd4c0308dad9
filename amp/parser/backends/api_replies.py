"""An OpenAI-compatible endpoint's replies, checked, and the bounds of a conversation with it.

:mod:`amp.parser.backends.api` reads every reply through here:

* :func:`reply_json`, :func:`completion_choices`, :func:`chat_choices`, :func:`echo_logprobs` and
  :func:`model_ids` read a reply's bytes into typed records (:class:`Choice`,
  :class:`CompletionLogprobs`); anything not JSON or of the wrong shape is one
  :class:`~amp.parser.core.errors.InvalidReply` naming the endpoint and what was wrong, never an
  ``AttributeError`` from deep inside.  :func:`error_message` is an error reply's own text.
* the bounds: the byte cap of a reply (:data:`MAX_REPLY_BYTES`), the longest ``Retry-After``
  honoured (:data:`MAX_RETRY_AFTER_S`, read by :func:`retry_after_s`), the backoff
  (:func:`backoff_s`), how many requests were made in words (:func:`requests_made`), and
  :func:`strip_controls` / :func:`endpoint_text`: an endpoint's or a model's text without terminal
  control sequences, wherever it is shown.
* chat-template markers in a choice (:data:`CHAT_TEMPLATE_MARKERS`, :func:`template_markers`): a
  server that applies a chat format other than the model's own lets them into the answers (issue
  #46: llama-2's ``<s>[INST]`` from a Gemma); :func:`template_message` says so and what to do.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from amp.parser.backends.api_protocol import token_step
from amp.parser.core.errors import InvalidReply
from amp.parser.core.results import TokenStep

#: The largest reply body read from an endpoint, in bytes (a declared length over it is refused
#: unread; a chunked stream is cut there).  An answer of n = 64 choices × 1,024 tokens with their
#: alternatives, or the echoed log-probs of a long prompt, is well under a megabyte.
MAX_REPLY_BYTES = 8 * 2**20
#: The longest ``Retry-After`` waited for before a retry (seconds); a server that asks for longer
#: ends the request with an error that says how long it asked for.
MAX_RETRY_AFTER_S = 60.0
#: The backoff before a retry when the server names no ``Retry-After``: the first, doubling to the last.
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 8.0
#: Characters of an endpoint's own text (an error message, a refusal) kept in a message.
MAX_ENDPOINT_TEXT = 500


#: A terminal control sequence (CSI, OSC up to its terminator, any other ESC pair) or one C0/C1
#: control character or DEL.  Tab and line feed are matched too; :func:`strip_controls` keeps them where asked.
_CONTROLS = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x9b[0-?]*[ -/]*[@-~]?"
                       r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x7e]?|[\x00-\x1f\x7f-\x9f]")


def strip_controls(text: str, *, keep: str = "\n\t") -> str:
    """``text`` without terminal control sequences: CSI (``\\x1b[2J``), OSC (a window title),
    other ESC pairs, and every other C0/C1 control and DEL — except the characters of ``keep``
    (line feed and tab by default; ``keep=""`` for one-line texts, where they become spaces)."""

    def drop(match: re.Match[str]) -> str:
        hit = match.group(0)
        if hit in keep:
            return hit
        return " " if hit in "\n\t\r" else ""

    return _CONTROLS.sub(drop, str(text))


def endpoint_text(text: str, limit: int = MAX_ENDPOINT_TEXT) -> str:
    """An endpoint's own text for a message: no controls, on one line, at most ``limit`` characters."""
    one_line = " ".join(strip_controls(text, keep="").split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a reply's headers ask for before a retry, in seconds (``retry-after-ms``, or
    ``Retry-After`` as seconds or an HTTP date; names in any case); None when they ask for none
    or it cannot be read.  ``now`` (Unix time) is for the HTTP date."""
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = lowered.get(name, "").strip()
        if not value:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            if name == "retry-after-ms":
                continue
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError, OverflowError):
                return None
            seconds = when.timestamp() - (time.time() if now is None else now)
        return None if math.isnan(seconds) else max(0.0, seconds)
    return None


def backoff_s(retry: int) -> float:
    """The wait before retry number ``retry`` (1, 2, …) when the server names none:
    :data:`FIRST_BACKOFF_S` doubling to :data:`MAX_BACKOFF_S`."""
    return min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2.0 ** max(0, retry - 1))


def requests_made(count: int) -> str:
    """How many requests were made, for a message: ``no request`` / ``1 request, no retry`` /
    ``3 requests: 2 retries``."""
    if count <= 0:
        return "no request"
    if count == 1:
        return "1 request, no retry"
    return f"{count} requests: {count - 1} {'retry' if count == 2 else 'retries'}"


#: Markers of chat formats (llama-2, ChatML, Gemma, Llama 3, Zephyr/Phi, end of text) that have no
#: place in an answer — no LF format uses ``<``, ``[`` or ``|`` — so one in a choice says the server
#: framed the conversation in a format other than the model's own.
CHAT_TEMPLATE_MARKERS = ("<s>", "</s>", "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "<|im_start|>", "<|im_end|>",
                         "<start_of_turn>", "<end_of_turn>", "<|begin_of_text|>", "<|start_header_id|>",
                         "<|end_header_id|>", "<|eot_id|>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>",
                         "<|endoftext|>")


def template_markers(text: str) -> tuple[str, ...]:
    """The :data:`CHAT_TEMPLATE_MARKERS` in ``text``, in their declared order."""
    return tuple(m for m in CHAT_TEMPLATE_MARKERS if m in (text or ""))


def template_message(markers: list[str] | tuple[str, ...], base_url: str) -> str:
    """One sentence: which markers leaked from the endpoint's chat template, and what to do."""
    return (f"chat-template markers ({' '.join(markers)}) leaked into the choices of the model endpoint at "
            f"{base_url}: its server frames the chat in a format that is not the model's own — start it with the "
            "model's chat format (llama-cpp-python: --chat_format; llama.cpp's llama-server: --jinja), or use "
            "--api-mode completions")


@dataclass(frozen=True)
class Choice:
    """One choice of a reply: its ``text``, why it stopped (``finish_reason``: ``"stop"``,
    ``"length"``, ``"content_filter"``, … or None), a chat model's ``refusal`` and the token
    ``steps`` (empty when the endpoint sent no log-probs)."""

    text: str
    finish_reason: str | None
    refusal: str | None = None
    steps: tuple[TokenStep, ...] = ()

    @property
    def finished(self) -> bool:
        return self.finish_reason == "stop"


@dataclass(frozen=True)
class CompletionLogprobs:
    """A completion choice's log-probs: parallel ``tokens``, ``text_offset`` (characters from the
    start of the echoed text), ``token_logprobs`` (None where the endpoint has none, as for the
    first prompt token) and ``top_logprobs`` (token → log-prob, or None)."""

    tokens: tuple[str, ...]
    text_offset: tuple[int, ...]
    token_logprobs: tuple[float | None, ...]
    top_logprobs: tuple[Mapping[str, float] | None, ...]


def reply_json(content: bytes, where: str) -> Any:
    """The JSON of a reply's body, or :class:`InvalidReply` naming ``where`` (the endpoint)."""
    try:
        return json.loads(content)
    except RecursionError:
        raise InvalidReply(f"invalid reply from {where}: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise InvalidReply(f"invalid reply from {where}: not JSON ({endpoint_text(str(exc), 120)})") from None


def error_message(content: bytes) -> str:
    """An error reply's own text: ``error.message``, ``error`` as a string, ``detail`` or ``message``
    of its JSON, else its body as text; controls stripped, on one line (the caller hides the key
    and cuts it to :data:`MAX_ENDPOINT_TEXT`)."""
    head = content[: 64 * 1024]
    text = head.decode("utf-8", "replace")
    try:
        body = json.loads(head)
    except (ValueError, RecursionError):
        return endpoint_text(text, len(text) + 1)
    found: Any = body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            found = err.get("message") or err.get("detail") or err
        elif err:
            found = err
        else:
            found = body.get("detail") or body.get("message") or body
    shown = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)
    return endpoint_text(shown, len(shown) + 1)


def _bad(where: str, what: str) -> InvalidReply:
    return InvalidReply(f"invalid reply from {where}: {what}")


def _object(value: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(where, f"{what} is not a JSON object but {_json_kind(value)}")
    return value


def _array(value: Any, where: str, what: str, *, optional: bool = False) -> list[Any]:
    if value is None and optional:
        return []
    if not isinstance(value, list):
        raise _bad(where, f"{what} is not a list but {_json_kind(value)}")
    return value


def _text(value: Any, where: str, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _bad(where, f"{what} is not text but {_json_kind(value)}")


def _number(value: Any, where: str, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(where, f"{what} is not a number but {_json_kind(value)}")
    return float(value)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "true/false", str: "text", int: "a number", float: "a number", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _choices(data: Any, where: str) -> list[dict[str, Any]]:
    body = _object(data, where, "the reply")
    choices = _array(body.get("choices"), where, "choices")
    if not choices:
        raise _bad(where, "no choices")
    return [_object(ch, where, f"choices[{i}]") for i, ch in enumerate(choices)]


def completion_logprobs(value: Any, where: str, what: str = "logprobs") -> CompletionLogprobs | None:
    """A completion choice's ``logprobs`` checked into a record (None when the endpoint sent none)."""
    if value is None:
        return None
    lp = _object(value, where, what)
    tokens = tuple(t if isinstance(t, str) else "" for t in
                   (_text(t, where, f"{what}.tokens[{i}]") for i, t in
                    enumerate(_array(lp.get("tokens"), where, f"{what}.tokens", optional=True))))
    values = tuple(_number(v, where, f"{what}.token_logprobs[{i}]") for i, v in
                   enumerate(_array(lp.get("token_logprobs"), where, f"{what}.token_logprobs", optional=True)))
    offsets = []
    for i, off in enumerate(_array(lp.get("text_offset"), where, f"{what}.text_offset", optional=True)):
        if isinstance(off, bool) or not isinstance(off, int):
            raise _bad(where, f"{what}.text_offset[{i}] is not a whole number but {_json_kind(off)}")
        offsets.append(off)
    tops: list[Mapping[str, float] | None] = []
    for i, top in enumerate(_array(lp.get("top_logprobs"), where, f"{what}.top_logprobs", optional=True)):
        if top is None:
            tops.append(None)
            continue
        top = _object(top, where, f"{what}.top_logprobs[{i}]")
        tops.append({str(t): v for t, v in
                     ((t, _number(v, where, f"{what}.top_logprobs[{i}]")) for t, v in top.items()) if v is not None})
    return CompletionLogprobs(tokens=tokens, text_offset=tuple(offsets), token_logprobs=values, top_logprobs=tuple(tops))


def _completion_steps(logprobs: CompletionLogprobs | None, top_n: int) -> tuple[TokenStep, ...]:
    """Steps of a completion choice's log-probs (parallel lists; tokens without a value are cut)."""
    if logprobs is None or not logprobs.tokens:
        return ()
    tops = list(logprobs.top_logprobs) + [None] * (len(logprobs.tokens) - len(logprobs.top_logprobs))
    return tuple(token_step(t, lp, top, top_n)
                 for t, lp, top in zip(logprobs.tokens, logprobs.token_logprobs, tops, strict=False))


def completion_choices(data: Any, top_n: int, where: str) -> list[Choice]:
    """The choices of a ``/completions`` reply (``text``, ``finish_reason``, ``logprobs``), checked."""
    out = []
    for i, ch in enumerate(_choices(data, where)):
        lp = completion_logprobs(ch.get("logprobs"), where, f"choices[{i}].logprobs")
        out.append(Choice(text=_text(ch.get("text"), where, f"choices[{i}].text") or "",
                          finish_reason=_text(ch.get("finish_reason"), where, f"choices[{i}].finish_reason"),
                          steps=_completion_steps(lp, top_n)))
    return out


def echo_logprobs(data: Any, where: str) -> CompletionLogprobs | None:
    """The first choice's log-probs of an echoed ``/completions`` reply (None when it sent none)."""
    return completion_logprobs(_choices(data, where)[0].get("logprobs"), where, "choices[0].logprobs")


def _chat_steps(value: Any, top_n: int, where: str, what: str) -> tuple[TokenStep, ...]:
    """Steps of a chat choice's ``logprobs.content`` (items with ``token``, ``logprob``, ``top_logprobs``)."""
    if value is None:
        return ()
    content = _array(_object(value, where, what).get("content"), where, f"{what}.content", optional=True)
    steps = []
    for i, item in enumerate(content):
        here = f"{what}.content[{i}]"
        item = _object(item, where, here)
        top: dict[str, float] = {}
        for j, alt in enumerate(_array(item.get("top_logprobs"), where, f"{here}.top_logprobs", optional=True)):
            alt = _object(alt, where, f"{here}.top_logprobs[{j}]")
            value_j = _number(alt.get("logprob"), where, f"{here}.top_logprobs[{j}].logprob")
            if value_j is not None:
                top[_text(alt.get("token"), where, f"{here}.top_logprobs[{j}].token") or ""] = value_j
        steps.append(token_step(_text(item.get("token"), where, f"{here}.token") or "",
                                _number(item.get("logprob"), where, f"{here}.logprob"), top, top_n))
    return tuple(steps)


def chat_choices(data: Any, top_n: int, where: str) -> list[Choice]:
    """The choices of a ``/chat/completions`` reply (``message.content``, ``message.refusal``,
    ``finish_reason``, ``logprobs.content``), checked."""
    out = []
    for i, ch in enumerate(_choices(data, where)):
        message = _object(ch.get("message"), where, f"choices[{i}].message")
        out.append(Choice(text=_text(message.get("content"), where, f"choices[{i}].message.content") or "",
                          finish_reason=_text(ch.get("finish_reason"), where, f"choices[{i}].finish_reason"),
                          refusal=_text(message.get("refusal"), where, f"choices[{i}].message.refusal"),
                          steps=_chat_steps(ch.get("logprobs"), top_n, where, f"choices[{i}].logprobs")))
    return out


def model_ids(data: Any, where: str) -> set[str]:
    """The model names of a ``/models`` reply (``data[].id``), checked."""
    listed = _array(_object(data, where, "the reply").get("data"), where, "data")
    return {_text(_object(m, where, f"data[{i}]").get("id"), where, f"data[{i}].id") or "" for i, m in enumerate(listed)}
