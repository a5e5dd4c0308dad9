"""The API backend: a model behind an OpenAI-compatible endpoint (vLLM, llama.cpp's server, ollama, hosted APIs).

Implements :class:`amp.parser.backend.Backend` for what an endpoint can do, with the official
``openai`` client (an optional dependency: ``pip install 'amp-explorer[api]'``):

* **parse** — the paper's protocol for GPT-3.5 (docs/paper-notes.md §10): temperature 0, ``n``
  = the beam size (5), ``max_tokens`` from the prompt's budget
  (:func:`~amp.parser.backends.api_protocol.token_budget`), in ``chat`` mode the prompt split into
  messages (:func:`~amp.parser.backends.api_protocol.chat_messages`), in ``completions`` mode the
  prompt as is, stopped at the first line break.  The n choices, in the endpoint's order, are the
  top-k beams; the reader decides later whether each is an LF (an unparseable choice is neither).
  **An endpoint that ignores n** (llama.cpp's server returns one choice whatever n says) gets the
  missing choices as separate requests, n in all: at temperature 0 they are the same greedy answer,
  which is what n = 5 at temperature 0 gives on the paper's API too.
* **log-probs** (``ApiSettings.logprobs``) — each choice's token probabilities (its steps: the
  heatmap's confidences), and **P(LF0)** by scoring both readings from the prompt log-probs of an
  echoed completion (``echo=True``; llama.cpp's server and vLLM give them, chat-only APIs do not).
  :meth:`ApiBackend.load` probes once whether the endpoint echoes; where it does not (or log-probs
  are off) :attr:`ApiBackend.scores` is False, sweeps leave P(LF0) empty, and a view that needs
  them gets a :class:`~amp.parser.core.errors.LogprobsUnavailable` saying why.
* **grammar** (``ApiSettings.grammar``) — the decoding grammar sent as GBNF in the request's
  ``grammar`` field (llama.cpp's server), rendered from the same declaration as the automaton's
  (:mod:`amp.logic.gbnf`), for searches that are constrained.
* **bounds** — at most ``concurrency`` requests in flight, each with ``timeout_s``; the client
  retries a 408/409/429/5xx or a lost connection ``retries`` times with exponential backoff
  (0.5 s doubling to 8 s, or the server's ``Retry-After``).  Failures become one typed error each:
  :class:`~amp.parser.core.errors.EndpointUnreachable` (a sweep stops at it: what finished is
  cached), ``unauthorized`` (a missing or refused key), ``unknown-model`` (the endpoint does not
  list the name), :class:`~amp.parser.core.errors.ModelRefused`, ``timeout``, ``server``.

The API key comes from ``$AMP_API_KEY`` or ``$OPENAI_API_KEY`` when the client is made; it is
held by the client only — never in a cache key or value, a run manifest, a log or an error
message (a message the endpoint echoes it in has it replaced by ``***``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from functools import partial
from importlib import metadata
from typing import Any, TypeVar

from amp.logic.gbnf import gbnf_text
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.backends import api_protocol as proto
from amp.parser.backends.api_protocol import ApiMode, ApiSettings
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.errors import (
    BackendError,
    EndpointUnreachable,
    LogprobsUnavailable,
    ModelLoadError,
    ModelRefused,
)
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, Runtime, TokenStep
from amp.parser.search.settings import Ask, SearchSettings

T = TypeVar("T")
#: Seconds :attr:`ApiBackend.scores` waits before probing an unreachable endpoint again.
UNREACHABLE_QUIET_S = 30.0
#: Sent as the key to an endpoint that needs none (llama.cpp's server, vLLM and ollama without one).
NO_KEY = "no-key"


def api_key() -> str | None:
    """The first of ``$AMP_API_KEY``, ``$OPENAI_API_KEY`` that is set (never stored or shown)."""
    return next((os.environ[name] for name in proto.KEY_ENVS if os.environ.get(name)), None)


def client_version() -> str:
    try:
        return metadata.version("openai")
    except metadata.PackageNotFoundError:
        return "none"


class ApiBackend:
    """A model behind the endpoint of ``settings``; ``key`` defaults to :func:`api_key`."""

    kind = "api"

    def __init__(self, settings: ApiSettings, *, key: str | None = None) -> None:
        self.settings = settings
        self.__key = key if key is not None else api_key()
        self._client: Any = None
        self._pool = ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="amp-api")
        self._lock = threading.Lock()  # load()
        self._client_lock = threading.Lock()  # client(), from the request threads
        self._checked = False
        self._n_honoured: bool | None = None  # whether the endpoint returns n choices for n > 1
        self._echoes: bool | None = None  # whether it returns prompt log-probs (echo)
        self._quiet_until = 0.0  # no new probe before this (monotonic s) after the endpoint was unreachable

    # -- what it computes with ----------------------------------------------------------------------

    @property
    def spec(self) -> str:
        return self.settings.spec

    @property
    def loaded(self) -> bool:
        return True  # nothing loads here; load() checks the endpoint once

    @property
    def jobs(self) -> None:
        return None

    @property
    def device(self) -> str:
        return "api"

    @property
    def dtype(self) -> str:
        return "api"

    def runtime(self) -> Runtime:
        return self.settings.runtime(client_version())

    def describe(self) -> str:
        s = self.settings
        return (f"API {s.base_url} · {s.mode}" + (" · log-probs" if s.logprobs else "")
                + (" · grammar" if s.grammar else ""))

    def capabilities(self) -> Capabilities:
        """No engine of this process and no gradients; the search with or without the grammar; P(LF0)
        where :attr:`scores` (prompt log-probs); a sweep's items per call are the requests in flight
        (:func:`amp.parser.batch.default_batch_size`), so an endpoint that dies mid-sweep loses at most
        that many items' work."""
        scores = self.scores
        return Capabilities(engine="", gradients=False, scores=scores, unconstrained=True,
                            batch_size=self.settings.concurrency, no_scores_reason="" if scores else self.why_no_scores())

    @property
    def scores(self) -> bool:
        """Whether P(LF0) can be computed (log-probs on and the endpoint echoes prompt log-probs).

        Asks the endpoint once (:meth:`load`); an endpoint that cannot be reached now counts as
        able, so cached scores are still read."""
        if not self.settings.logprobs:
            return False
        if self._echoes is None:
            if time.monotonic() < self._quiet_until:
                return True
            try:
                self.load()
            except EndpointUnreachable:
                self._quiet_until = time.monotonic() + UNREACHABLE_QUIET_S  # pages ask often: not every time
                return True
        return bool(self._echoes)

    def why_no_scores(self) -> str:
        """Why :attr:`scores` is False, in words."""
        if not self.settings.logprobs:
            return "log-probs are off for this API model (--api-logprobs on to ask for them)"
        return (f"the endpoint at {self.settings.base_url} returns no prompt log-probs (echo), "
                "which scoring both readings needs")

    def load(self) -> None:
        """Check once that the endpoint answers and lists the model; probe echo log-probs."""
        if self._checked:
            return
        with self._lock:
            if self._checked:
                return
            names = self._model_names()
            if names is not None and self.settings.model not in names:
                listed = ", ".join(sorted(names)[:10]) or "none"
                raise BackendError(f"the endpoint at {self.settings.base_url} has no model "
                                   f"{self.settings.model!r} (it lists: {listed})", kind="unknown-model")
            if self.settings.logprobs and self._echoes is None:
                self._echoes = self._probe_echo()
            self._checked = True

    # -- transport ----------------------------------------------------------------------------------------

    def client(self) -> Any:
        """The ``openai`` client, made once (it holds the key)."""
        with self._client_lock:
            return self._client or self._make_client()

    def _make_client(self) -> Any:
        if self._client is None:
            try:
                import openai  # late: optional dependency (openai)
            except ImportError as exc:
                raise ModelLoadError("a model behind an API needs the openai package: "
                                     "pip install 'amp-explorer[api]'") from exc
            s = self.settings
            self._client = openai.OpenAI(base_url=s.base_url, api_key=self.__key or NO_KEY,
                                         timeout=s.timeout_s, max_retries=s.retries)
        return self._client

    def _hide(self, text: str) -> str:
        key = self.__key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    def _call(self, fn: Callable[[Any], T]) -> T:
        """``fn(client)``, its failures as the typed errors of the module docstring."""
        client = self.client()
        import openai  # late: optional dependency (openai)

        s = self.settings
        try:
            return fn(client)
        except openai.APITimeoutError:
            raise BackendError(f"the model endpoint at {s.base_url} did not answer within {s.timeout_s:g} s "
                               f"({s.retries} retries)", kind="timeout") from None
        except openai.APIConnectionError as exc:
            cause = self._hide(str(exc.__cause__ or exc))
            raise EndpointUnreachable(f"cannot reach the model endpoint at {s.base_url} ({cause}); "
                                      "results finished so far are cached") from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None

    def _status_error(self, exc: Any) -> BackendError:
        s, code = self.settings, int(exc.status_code)
        message = self._hide(_server_message(exc))
        if code in (401, 403):
            hint = ("no API key is set: set AMP_API_KEY or OPENAI_API_KEY" if not self.__key
                    else "the API key was refused: check AMP_API_KEY / OPENAI_API_KEY")
            return BackendError(f"the model endpoint at {s.base_url} refused access ({code}): {hint}",
                                kind="unauthorized", status=code)
        if code == 404:
            return BackendError(f"the endpoint at {s.base_url} has no model {s.model!r} or no "
                                f"{s.mode} API (404): {message}", kind="unknown-model", status=code)
        if code == 429:
            return BackendError(f"the model endpoint at {s.base_url} is rate-limiting requests (429, after "
                                f"{s.retries} retries): {message}", kind="server", status=code)
        kind = "server" if code >= 500 else "refused"
        return BackendError(f"the model endpoint at {s.base_url} refused the request ({code}): {message}",
                            kind=kind, status=code)

    def _gather(self, calls: Sequence[Callable[[], T]]) -> list[T]:
        """Run ``calls`` at most ``concurrency`` at a time; results in order, the first error raised."""
        futures: list[Future[T]] = [self._pool.submit(c) for c in calls]
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        for f in futures:
            if f in done and f.exception() is not None:
                for p in pending:
                    p.cancel()
                raise f.exception()  # type: ignore[misc]
        return [f.result() for f in futures]

    def _model_names(self) -> set[str] | None:
        """The model names the endpoint lists; None when it has no model list (404)."""
        try:
            return {m.id for m in self._call(lambda c: list(c.models.list()))}
        except BackendError as exc:
            if exc.status == 404 or exc.kind == "unknown-model":
                return None
            raise

    def _probe_echo(self) -> bool:
        try:
            reply = self._call(lambda c: c.completions.create(
                model=self.settings.model, prompt="Human: hi\nComputer:", max_tokens=1, temperature=0,
                echo=True, logprobs=1))
        except BackendError as exc:
            if exc.kind in ("refused", "unknown-model"):
                return False
            raise
        lp = reply.choices[0].logprobs if reply.choices else None
        return bool(lp and lp.tokens and lp.text_offset and any(v is not None for v in lp.token_logprobs or []))

    # -- one request --------------------------------------------------------------------------------------

    def _request(self, prompt: str, *, n: int, fmt: str, top_n: int, grammar: bool, max_tokens: int,
                 temperature: float = 0.0, seed: int | None = None,
                 words: OwnWords = NO_WORDS) -> list[tuple[str, bool, tuple[TokenStep, ...]]]:
        """One request: its choices as ``(text, finished, steps)``."""
        s = self.settings
        args: dict[str, Any] = {"model": s.model, "n": n, "temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            args["seed"] = seed
        if grammar:
            args["extra_body"] = {"grammar": gbnf_text(fmt, words)}  # type: ignore[arg-type]
        if s.mode == ApiMode.CHAT:
            if s.logprobs:
                args.update(logprobs=True, top_logprobs=max(1, top_n))
            reply = self._call(lambda c: c.chat.completions.create(messages=proto.chat_messages(prompt), **args))
            out = []
            for ch in reply.choices:
                refusal = getattr(ch.message, "refusal", None)
                if refusal or ch.finish_reason == "content_filter":
                    raise ModelRefused(f"the model {s.model!r} refused to answer: "
                                       f"{self._hide(str(refusal or 'its content filter stopped the reply'))}")
                steps = proto.chat_steps(ch.logprobs.content if ch.logprobs else None, top_n)
                out.append((ch.message.content or "", ch.finish_reason == "stop", steps))
            return out
        if s.logprobs:
            args["logprobs"] = max(1, top_n)
        reply = self._call(lambda c: c.completions.create(prompt=prompt, stop=["\n"], **args))
        return [(ch.text or "", ch.finish_reason == "stop", proto.completion_steps(ch.logprobs, top_n))
                for ch in reply.choices]

    def _choices(self, prompts: Sequence[str], budgets: Sequence[int], n: int,
                 **kw: Any) -> list[list[tuple[str, bool, tuple[TokenStep, ...]]]]:
        """``n`` choices per prompt: one request with ``n``, then single requests for what is missing."""
        ask_n = n if self._n_honoured is not False else 1
        got = self._gather([partial(self._request, p, n=ask_n, max_tokens=m, **kw)
                            for p, m in zip(prompts, budgets, strict=True)])
        if n > 1 and ask_n > 1:
            self._n_honoured = all(len(g) >= n for g in got)
        extra = [i for i in range(len(prompts)) for _ in range(max(0, n - len(got[i])))]
        more = self._gather([partial(self._request, prompts[i], n=1, max_tokens=budgets[i], **kw) for i in extra])
        for i, choices in zip(extra, more, strict=True):
            got[i].extend(choices)
        return [g[:n] for g in got]

    # -- the work -----------------------------------------------------------------------------------------

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        self.load()
        grammar = self.settings.grammar and search.constrained
        budgets = [search.max_new_tokens or proto.token_budget(p) for p in prompts]
        replies = self._choices(prompts, budgets, search.beams, fmt=fmt, top_n=top_n, grammar=grammar, words=words)
        out = []
        for choices, budget in zip(replies, budgets, strict=True):
            beams = tuple(proto.choice_beam(i, raw, fin, steps, fmt, words)
                          for i, (raw, fin, steps) in enumerate(choices))
            out.append(ParseResult(beams=beams, constrained=grammar, fmt=fmt,
                                   settings={**search.as_dict(), "top_n": top_n, "api_mode": str(self.settings.mode),
                                             "max_tokens": budget, "temperature": 0.0}))
        return out

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int, search: SearchSettings,
                        words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]:
        parses = self.parse([p for p, _a, _b in asks], fmt=fmt, top_n=top_n, search=search, words=words)
        scored = [(p, a, b) for p, a, b in asks if a is not None and b is not None]
        pairs = iter(self.score_pairs(scored, fmt=fmt, top_n=top_n, words=words))
        return [(parse, next(pairs) if a is not None and b is not None else None)
                for parse, (_p, a, b) in zip(parses, asks, strict=True)]

    def _forced_one(self, prompt: str, lf: str, top_n: int) -> ForcedScore:
        reply = self._call(lambda c: c.completions.create(
            model=self.settings.model, prompt=f"{prompt} {lf}\n", max_tokens=1, temperature=0, echo=True,
            logprobs=max(1, top_n)))
        try:
            return proto.forced_from_echo(lf, len(prompt), reply.choices[0].logprobs, top_n)
        except (ValueError, IndexError, AttributeError, TypeError) as exc:
            raise LogprobsUnavailable(f"the endpoint at {self.settings.base_url} sent no usable prompt "
                                      f"log-probs for the LF ({exc})") from None

    def _check_scores(self) -> None:
        if not self.scores:
            raise LogprobsUnavailable(f"scoring an LF needs log-probs: {self.why_no_scores()}")

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        self._check_scores()
        return self._gather([partial(self._forced_one, prompt, lf, top_n) for lf in lfs])

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        if not items:
            return []
        self._check_scores()
        from amp.parser.search.scoring import pair_score  # late: start-up cost (torch)

        scores = self._gather([partial(self._forced_one, p, lf, top_n) for p, a, b in items for lf in (a, b)])
        return [pair_score(scores[2 * i], scores[2 * i + 1]) for i in range(len(items))]

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        if beam.steps:
            return beam.steps
        why = ("log-probs are off for this API model" if not self.settings.logprobs
               else "the endpoint sent none for this choice")
        raise LogprobsUnavailable(f"token confidences need log-probs: {why}")

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]:
        self.load()
        budget = max_new_tokens or proto.token_budget(prompt)

        def one(i: int) -> str | None:
            ((raw, finished, _steps),) = self._request(prompt, n=1, fmt=fmt, top_n=0, grammar=self.settings.grammar,
                                                       max_tokens=budget, temperature=temperature, seed=seed + i,
                                                       words=words)[:1]
            return proto.lf_text(raw) if finished and proto.lf_text(raw) else None

        return self._gather([partial(one, i) for i in range(n)])

    def close(self) -> None:
        """Stop the request threads and close the HTTP client."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._client is not None:
            self._client.close()

    def __repr__(self) -> str:
        return f"ApiBackend({self.settings.spec!r} at {self.settings.base_url!r})"


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
        if body.get("detail"):
            return str(body["detail"])[:500]
    return str(getattr(exc, "message", "") or exc)[:500]
