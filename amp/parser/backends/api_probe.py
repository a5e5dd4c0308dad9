"""What an OpenAI-compatible endpoint honours, learnt once per endpoint, model and mode for the process.

Servers differ in what they do with the same request: llama.cpp's servers return one choice
whatever ``n`` says, chat-only APIs give no prompt log-probs (``echo``), and a server asked for
log-probs on every generation may answer several times slower.  :class:`ServerTraits` records
what was learnt of one endpoint: whether it honours ``n`` (from the first request that asked for
more than one choice) and whether it echoes prompt log-probs (from one tiny probe).  The record is
kept in memory for the process (:func:`remembered`, :func:`remember`), keyed by
:class:`EndpointKey`, so every backend of the same endpoint — a command's, each page's, Compare's
model B — asks once; :func:`forget` drops it all (a restarted server may differ).

:mod:`amp.parser.backends.api` plans its requests from these traits:

* **n** — where honoured, one request with ``n`` per prompt; where ignored, one request with
  ``n = 1``: at temperature 0 every further request repeats the same greedy choice, so it stands
  for the ``n`` choices (the parse's settings say so: :func:`choices_note`);
* **log-probs** — asked for only by the forced scoring that needs them (an echoed completion:
  P(LF0) and a beam's token confidences); a generation asks for them only where the endpoint
  cannot echo (its own choices' log-probs are then the only token confidences there are).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

__all__ = ["EndpointKey", "ServerTraits", "choices_note", "forget", "remember", "remembered"]


@dataclass(frozen=True)
class EndpointKey:
    """One endpoint as asked: its base URL, the model name and the mode (chat or completions)."""

    base_url: str
    model: str
    mode: str


@dataclass(frozen=True)
class ServerTraits:
    """What an endpoint was seen to honour; ``None``: not learnt yet.

    ``honours_n``: a request with ``n`` > 1 came back with ``n`` choices; ``echoes``: a completion
    with ``echo`` came back with the prompt's log-probs (forced scoring works there)."""

    honours_n: bool | None = None
    echoes: bool | None = None


_LOCK = threading.Lock()
_KNOWN: dict[EndpointKey, ServerTraits] = {}


def remembered(key: EndpointKey) -> ServerTraits:
    """What this process learnt of ``key`` (all ``None`` before anything was learnt)."""
    with _LOCK:
        return _KNOWN.get(key, ServerTraits())


def remember(key: EndpointKey, *, honours_n: bool | None = None, echoes: bool | None = None) -> ServerTraits:
    """Record what was learnt of ``key`` (``None`` leaves a trait as it was); the traits now."""
    with _LOCK:
        now = _KNOWN.get(key, ServerTraits())
        if honours_n is not None:
            now = replace(now, honours_n=honours_n)
        if echoes is not None:
            now = replace(now, echoes=echoes)
        _KNOWN[key] = now
        return now


def forget() -> None:
    """Drop everything learnt (the next request to each endpoint learns it again)."""
    with _LOCK:
        _KNOWN.clear()


def choices_note(asked: int, got: int, *, repeated: bool) -> dict[str, str]:
    """What a parse's settings say when the endpoint did not return ``asked`` choices itself
    (nothing when it did): ``repeated`` — it ignores ``n``, so its one greedy choice (temperature 0)
    stands for all of them; otherwise it returned only ``got``."""
    if repeated and asked > 1:
        return {"api_choices": f"1 asked, {asked - 1} repeated: the endpoint ignores n, and at temperature 0 "
                               f"every request gives its one greedy choice, so it was asked once for the {asked}"}
    if got < asked:
        return {"api_choices": f"{got} of {asked}: the endpoint returned {got} choice{'s' if got != 1 else ''}"}
    return {}
