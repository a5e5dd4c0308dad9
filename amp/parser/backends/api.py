"""The API backend: a model behind an OpenAI-compatible endpoint (vLLM, llama.cpp's server, ollama, hosted APIs).

Implements :class:`amp.parser.backend.Backend` for what an endpoint can do, with the official
``openai`` client (an optional dependency: ``pip install 'amp-explorer[api]'``):

* **parse** — the paper's protocol for GPT-3.5 (docs/paper-notes.md §10): temperature 0, ``n``
  = the beam size (5), ``max_tokens`` from the prompt's budget
  (:func:`~amp.parser.backends.api_protocol.token_budget`), in ``chat`` mode the prompt split into
  messages (:func:`~amp.parser.backends.api_protocol.chat_messages`), in ``completions`` mode the
  prompt as is, stopped at the first line break.  The n choices, in the endpoint's order, are the
  top-k beams; the reader decides later whether each is an LF (an unparseable choice is neither).
  **An endpoint that ignores n** (llama.cpp's servers return one choice whatever n says) is
  learnt from the first request that asked for more, once per endpoint for the process
  (:mod:`amp.parser.backends.api_probe`), and from then on asked once per prompt with n = 1: at
  temperature 0 every further request would repeat the same greedy choice (what n = 5 at
  temperature 0 gives on the paper's API too), so that choice stands for the n beams; the parse's
  settings say so (``api_choices``) and an :class:`~amp.parser.core.errors.ApiWarning` once.
  Choices beyond n are dropped.  **Chat-template markers** in a choice (llama-2's ``<s>[INST]``
  from a server started with the wrong chat format) are named in the settings
  (``api_template``) and a warning that says how to start the server.
* **log-probs** (``ApiSettings.logprobs``) — **P(LF0)** by scoring both readings from the prompt
  log-probs of an echoed completion (``echo=True``; llama.cpp's servers and vLLM give them,
  chat-only APIs do not), and a beam's token probabilities (the heatmap's confidences,
  :meth:`ApiBackend.beam_steps`) the same way.  :meth:`ApiBackend.load` probes once per endpoint
  whether it echoes; where it does, generations ask for **no** log-probs (they made llama.cpp's
  server three times slower per reply, issue #46), where it does not they do (a choice's own
  log-probs are then its only token confidences).  Where the endpoint does not echo (or log-probs
  are off) :attr:`ApiBackend.scores` is False, sweeps leave P(LF0) empty, and a view that needs
  them gets a :class:`~amp.parser.core.errors.LogprobsUnavailable` saying why.
* **grammar** (``ApiSettings.grammar``) — the decoding grammar sent as GBNF in the request's
  ``grammar`` field (llama.cpp's server), rendered from the same declaration as the automaton's
  (:mod:`amp.logic.gbnf`), for searches that are constrained.
* **bounds** — at most ``concurrency`` requests in flight; each request has one deadline,
  ``timeout_s`` for connecting and every read together, and all requests of the backend together
  the budget ``budget_s`` from the first one on (:mod:`amp.parser.backends.api_transport` holds
  both, and cuts every reply at :data:`~amp.parser.backends.api_replies.MAX_REPLY_BYTES`).  With
  ``adaptive`` (the default) the requests in flight and the timeout follow the measured reply
  times (:mod:`amp.parser.backends.api_pace`: one request first, fewer in flight when replies
  slow down, a timeout of 4 × their p90 when that is longer); the budget holds either way.
* **progress** — the requests planned, done and retried, and the time left, told to the listener
  of :func:`~amp.parser.backends.api_progress.request_progress_scope` in the caller's thread
  about once a second; the check of :func:`~amp.parser.search.cancel.cancel_scope` is honoured
  between replies (:class:`~amp.parser.core.errors.SearchCancelled`).  The
  backend itself (the ``openai`` client retries nothing) retries a 408/409/429/5xx, a request past
  its deadline or a lost connection ``retries`` times, after the server's ``Retry-After`` (up to
  :data:`~amp.parser.backends.api_protocol.MAX_RETRY_AFTER_S`; a longer one is an error saying how
  long it asked for) or else a backoff of 0.5 s doubling to 8 s; every message says how many
  requests were made.  Failures become one typed error each:
  :class:`~amp.parser.core.errors.EndpointUnreachable` (a sweep stops at it: what finished is
  cached), :class:`~amp.parser.core.errors.BudgetSpent` (the same, for the budget),
  ``unauthorized`` (a missing or refused key), ``unknown-model`` (the endpoint does not list the
  name), :class:`~amp.parser.core.errors.ModelRefused`, :class:`~amp.parser.core.errors.DeadlinePassed`,
  ``server``, :class:`~amp.parser.core.errors.ReplyTooLarge` and
  :class:`~amp.parser.core.errors.InvalidReply` (not JSON, or JSON of the wrong shape: one line
  naming the endpoint, never an ``AttributeError``).

The API key comes from ``$AMP_API_KEY`` or ``$OPENAI_API_KEY`` when the client is made; it is
held by the client only — never in a cache key or value, a run manifest, a log or an error
message (a message the endpoint echoes it in has it replaced by ``***``).  An endpoint's own
text in a message has its terminal controls stripped
(:func:`~amp.parser.backends.api_protocol.endpoint_text`).
"""

from __future__ import annotations

import math
import os
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from functools import partial
from importlib import metadata
from typing import Any, TypeVar

from amp.logic.gbnf import gbnf_text
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.backends import api_probe as probe
from amp.parser.backends import api_protocol as proto
from amp.parser.backends import api_replies as replies
from amp.parser.backends.api_pace import Pace, StopWaiting
from amp.parser.backends.api_probe import EndpointKey, ServerTraits
from amp.parser.backends.api_progress import RequestWatch, current_watch
from amp.parser.backends.api_protocol import ApiMode, ApiSettings
from amp.parser.backends.api_replies import Choice
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.errors import (
    ApiWarning,
    BackendError,
    BudgetSpent,
    DeadlinePassed,
    EndpointUnreachable,
    LogprobsUnavailable,
    ModelLoadError,
    ModelRefused,
    SearchCancelled,
)
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, Runtime, TokenStep
from amp.parser.search.cancel import current_check
from amp.parser.search.settings import Ask, SearchSettings

# long: ~640 lines — one class, the Backend protocol over one endpoint, and its request loop (deadline,
# budget, retries, the pace, progress and cancel between replies) that every method shares; its
# protocol, replies, transport, pace, probe memory and progress record are already modules of their
# own (api_protocol, api_replies, api_transport, api_pace, api_probe, api_progress).

T = TypeVar("T")
#: Seconds :attr:`ApiBackend.scores` waits before probing an unreachable endpoint again.
UNREACHABLE_QUIET_S = 30.0
#: Sent as the key to an endpoint that needs none (llama.cpp's server, vLLM and ollama without one).
NO_KEY = "no-key"
#: HTTP statuses a request is retried after (with 5xx): timeout, conflict, rate limit.
RETRIED_STATUSES = frozenset({408, 409, 429})
#: Seconds between two progress reports (and cancel checks) while requests run.
TICK_S = 1.0
#: The kinds of request the pace measures apart (their reply times differ): a generation, a forced scoring.
GENERATE, SCORE = "generate", "score"
#: The prompt of the echo probe (a scoring of a few characters).
PROBE_PROMPT = "Human: hi\nComputer:"


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
        self._key = EndpointKey(settings.base_url, settings.model, str(settings.mode))
        self._pace = Pace(floor_s=settings.timeout_s, ceiling=settings.concurrency, adaptive=settings.adaptive)
        self._warned: set[str] = set()  # the ApiWarnings this backend gave (each once)
        self._quiet_until = 0.0  # no new probe before this (monotonic s) after the endpoint was unreachable
        self._attempt = threading.local()  # the deadline of the request the calling thread makes
        self._budget_lock = threading.Lock()
        self._budget_until: float | None = None  # the end of budget_s (monotonic s), from the first request
        self._closed = threading.Event()  # close(): a wait before a retry ends

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
        if self.traits.echoes is None:
            if time.monotonic() < self._quiet_until:
                return True
            try:
                self.load()
            except EndpointUnreachable:
                self._quiet_until = time.monotonic() + UNREACHABLE_QUIET_S  # pages ask often: not every time
                return True
        return bool(self.traits.echoes)

    @property
    def traits(self) -> ServerTraits:
        """What this process learnt of the endpoint (:mod:`amp.parser.backends.api_probe`)."""
        return probe.remembered(self._key)

    @property
    def pace(self) -> Pace:
        """The measured reply times and the timeout and concurrency that follow them."""
        return self._pace

    def why_no_scores(self) -> str:
        """Why :attr:`scores` is False, in words."""
        if not self.settings.logprobs:
            return "log-probs are off for this API model (--api-logprobs on to ask for them)"
        return (f"the endpoint at {self.settings.base_url} returns no prompt log-probs (echo), "
                "which scoring both readings needs")

    def load(self) -> None:
        """Check once that the endpoint answers and lists the model; probe echo log-probs (once per
        endpoint for the process, :mod:`amp.parser.backends.api_probe`)."""
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
            if self.settings.logprobs and self.traits.echoes is None:
                probe.remember(self._key, echoes=self._probe_echo())
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

                from amp.parser.backends import api_transport  # late: optional dependency (openai)
            except ImportError as exc:
                raise ModelLoadError("a model behind an API needs the openai package: "
                                     "pip install 'amp-explorer[api]'") from exc
            s = self.settings
            http = api_transport.bounded_http_client(s.base_url, self._deadline,
                                                     where=f"the model endpoint at {s.base_url}")
            # the deadline of each attempt (api_transport) bounds it; an adaptive one may exceed timeout_s
            self._client = openai.OpenAI(base_url=s.base_url, api_key=self.__key or NO_KEY,
                                         timeout=proto.MAX_TIMEOUT_S if s.adaptive else s.timeout_s,
                                         max_retries=0, http_client=http)
        return self._client

    def _hide(self, text: str) -> str:
        key = self.__key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    def _shown(self, text: str) -> str:
        """An endpoint's text for a message: controls stripped, the key hidden, then cut."""
        return replies.endpoint_text(self._hide(replies.endpoint_text(text, 64 * 1024)))

    # -- deadlines and retries ---------------------------------------------------------------------------

    def _deadline(self) -> tuple[float, bool]:
        """The deadline of the request the calling thread makes (the transport asks), and whether
        it is the budget's; none outside :meth:`_call`."""
        return getattr(self._attempt, "deadline", (math.inf, False))

    def _budget_end(self) -> float:
        """The end of the budget (monotonic s; infinite without one), counted from the first request."""
        if self.settings.budget_s is None:
            return math.inf
        with self._budget_lock:
            if self._budget_until is None:
                self._budget_until = time.monotonic() + float(self.settings.budget_s)
            return self._budget_until

    def _budget_spent(self, made: int) -> BudgetSpent:
        tried = f"{replies.requests_made(made)} for this call" if made else "no request made"
        return BudgetSpent(f"the time budget of {self.settings.budget_s:g} s for the model endpoint at "
                           f"{self.settings.base_url} ran out (--api-budget; {tried}); results finished so far "
                           "are cached")

    # One attempt loop: a place in flight, the deadline, the reply measured, each failure mapped to its typed
    # long: error and retried or not — its steps share the attempt's state (made, ticket, timeout, budget end)
    def _call(self, path: str, fn: Callable[[Any], Any], *, kind: str | None = GENERATE, size: float = 1.0) -> Any:
        """The JSON reply of ``fn(client)`` (a raw-response call of ``path``), retried as the module
        docstring says; its failures as the typed errors there, each saying how many requests it made.

        Each attempt waits for a place in flight and gets the timeout of :attr:`pace` for its
        ``kind`` (:data:`GENERATE`, :data:`SCORE`; None: the model list, neither measured nor
        adapted) and ``size`` (a scoring's: the characters it echoes)."""
        client = self.client()
        import openai  # late: optional dependency (openai)

        s = self.settings
        watch: RequestWatch | None = getattr(self._attempt, "watch", None)
        made = 0
        while True:
            budget_end = self._budget_end()
            if time.monotonic() >= budget_end:
                raise self._budget_spent(made)
            try:
                ticket = self._pace.enter(partial(self._stop_waiting, budget_end))
            except StopWaiting:
                if self._closed.is_set():
                    raise EndpointUnreachable(f"the client of the model endpoint at {s.base_url} was closed "
                                              "before the request was sent") from None
                raise self._budget_spent(made) from None
            made += 1
            if made > 1 and watch is not None:
                watch.retried()
            timeout = self._pace.timeout_s(kind, size) if kind is not None else s.timeout_s
            if watch is not None:
                watch.sent(timeout)
            sent = time.monotonic()
            mine = sent + timeout
            self._attempt.deadline = (mine, False) if mine <= budget_end else (budget_end, True)
            asked_wait: float | None = None
            try:
                raw = fn(client)
                if kind is not None:
                    self._pace.replied(time.monotonic() - sent, ticket, kind, size)
                return replies.reply_json(raw.content, f"the model endpoint at {s.base_url} ({path})")
            except DeadlinePassed as exc:
                if exc.budget:
                    raise self._budget_spent(made) from None
                self._pace.timed_out(timeout, kind or "")
                failure: BackendError = self._too_slow(path, made, timeout)
            except openai.APITimeoutError:
                self._pace.timed_out(timeout, kind or "")
                failure = self._too_slow(path, made, timeout)
            except openai.APIConnectionError as exc:
                cause = self._shown(str(exc.__cause__ or exc))
                failure = EndpointUnreachable(f"cannot reach the model endpoint at {s.base_url} ({cause}; "
                                              f"{replies.requests_made(made)}); results finished so far are cached")
            except openai.APIStatusError as exc:
                failure = self._status_error(exc, made)
                code = int(exc.status_code)
                if code not in RETRIED_STATUSES and code < 500:
                    raise failure from None
                asked_wait = replies.retry_after_s(exc.response.headers)
            finally:
                self._attempt.deadline = (math.inf, False)
                self._pace.leave()
            if made > s.retries:
                raise failure
            if asked_wait is not None and asked_wait > replies.MAX_RETRY_AFTER_S:
                raise BackendError(f"{failure}; it asked to wait {asked_wait:g} s before a retry (Retry-After), "
                                   f"over the {replies.MAX_RETRY_AFTER_S:g} s this client waits",
                                   kind=failure.kind, status=failure.status)
            wait = replies.backoff_s(made) if asked_wait is None else asked_wait
            if time.monotonic() + wait >= budget_end:
                raise self._budget_spent(made)
            if self._closed.wait(wait):
                raise failure

    def _stop_waiting(self, budget_end: float) -> bool:
        """Whether a wait for a place in flight ends: the backend closed or the budget ran out."""
        return self._closed.is_set() or time.monotonic() >= budget_end

    def _too_slow(self, path: str, made: int, timeout: float) -> DeadlinePassed:
        s = self.settings
        grown = (f" (--api-timeout {s.timeout_s:g} s, lengthened to the endpoint's pace"
                 if timeout > s.timeout_s else " (--api-timeout")
        return DeadlinePassed(f"the model endpoint at {s.base_url} did not finish a request ({path}) within "
                              f"{timeout:g} s{grown}, for connecting and every read together; "
                              f"{replies.requests_made(made)})")

    def _status_error(self, exc: Any, made: int) -> BackendError:
        s, code = self.settings, int(exc.status_code)
        message = self._shown(replies.error_message(exc.response.content))
        if code in (401, 403):
            hint = ("no API key is set: set AMP_API_KEY or OPENAI_API_KEY" if not self.__key
                    else "the API key was refused: check AMP_API_KEY / OPENAI_API_KEY")
            return BackendError(f"the model endpoint at {s.base_url} refused access ({code}): {hint}",
                                kind="unauthorized", status=code)
        if code == 404:
            return BackendError(f"the endpoint at {s.base_url} has no model {s.model!r} or no "
                                f"{s.mode} API (404): {message}", kind="unknown-model", status=code)
        if code == 429:
            return BackendError(f"the model endpoint at {s.base_url} is rate-limiting requests (429; "
                                f"{replies.requests_made(made)}): {message}", kind="server", status=code)
        kind = "server" if code >= 500 else "refused"
        return BackendError(f"the model endpoint at {s.base_url} refused the request ({code}; "
                            f"{replies.requests_made(made)}): {message}", kind=kind, status=code)

    def _gather(self, calls: Sequence[Callable[[], T]], kind: str = GENERATE) -> list[T]:
        """Run ``calls`` (one request each, retries included) as :attr:`pace` allows; results in
        order, the first error raised (``kind``: theirs, for the timeout the progress names).  In the caller's thread, after each reply and every
        :data:`TICK_S`: the requests' progress to the listener of
        :func:`~amp.parser.backends.api_progress.request_progress_scope`, and the check of
        :func:`~amp.parser.search.cancel.cancel_scope` (true: :class:`SearchCancelled`; the
        requests not yet sent are dropped)."""
        watch, check = current_watch(), current_check()
        if watch is not None:
            watch.planned(len(calls))

        def run(call: Callable[[], T]) -> T:
            self._attempt.watch = watch
            try:
                return call()
            finally:
                self._attempt.watch = None
                if watch is not None:
                    watch.finished()

        futures: list[Future[T]] = [self._pool.submit(run, c) for c in calls]
        pending: set[Future[T]] = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=TICK_S, return_when=FIRST_COMPLETED)
                for f in done:
                    if f.exception() is not None:
                        raise f.exception()  # type: ignore[misc]
                if watch is not None:
                    watch.tell(in_flight=self._pace.in_flight, limit=self._pace.limit, timeout_s=self._pace.timeout_s(kind))
                if pending and check is not None and check():
                    raise SearchCancelled(f"the requests to the model endpoint at {self.settings.base_url} "
                                          "were cancelled")
        finally:
            for p in pending:
                p.cancel()
        return [f.result() for f in futures]

    def _where(self, path: str) -> str:
        return f"the model endpoint at {self.settings.base_url} ({path})"

    def _model_names(self) -> set[str] | None:
        """The model names the endpoint lists; None when it has no model list (404)."""
        try:
            return replies.model_ids(self._call("/models", lambda c: c.models.with_raw_response.list(),
                                                kind=None), self._where("/models"))
        except BackendError as exc:
            if exc.status == 404 or exc.kind == "unknown-model":
                return None
            raise

    def _probe_echo(self) -> bool:
        """Whether the endpoint echoes prompt log-probs: one tiny scoring (its time paces the first
        real ones, :mod:`amp.parser.backends.api_pace`)."""
        try:
            reply = self._call("/completions", lambda c: c.completions.with_raw_response.create(
                model=self.settings.model, prompt=PROBE_PROMPT, max_tokens=1, temperature=0,
                echo=True, logprobs=1), kind=SCORE, size=len(PROBE_PROMPT))
        except BackendError as exc:
            if exc.kind in ("refused", "unknown-model"):
                return False
            raise
        lp = replies.echo_logprobs(reply, self._where("/completions"))
        return bool(lp and lp.tokens and lp.text_offset and any(v is not None for v in lp.token_logprobs))

    # -- one request --------------------------------------------------------------------------------------

    @property
    def generation_logprobs(self) -> bool:
        """Whether a generation asks for log-probs: only where they are on and the endpoint cannot
        echo (its choices' own log-probs are then the only token confidences); elsewhere the forced
        scoring asks for them when they are needed (:meth:`beam_steps`, P(LF0)), and generation
        runs without them (several times faster on llama.cpp's servers, issue #46)."""
        return self.settings.logprobs and self.traits.echoes is False

    def _request(self, prompt: str, *, n: int, fmt: str, top_n: int, grammar: bool, max_tokens: int,
                 temperature: float = 0.0, seed: int | None = None,
                 words: OwnWords = NO_WORDS) -> list[Choice]:
        """One request: its choices (checked: :class:`~amp.parser.core.errors.InvalidReply` otherwise)."""
        s = self.settings
        logprobs = self.generation_logprobs
        args: dict[str, Any] = {"model": s.model, "n": n, "temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            args["seed"] = seed
        if grammar:
            args["extra_body"] = {"grammar": gbnf_text(fmt, words)}  # type: ignore[arg-type]
        if s.mode == ApiMode.CHAT:
            if logprobs:
                args.update(logprobs=True, top_logprobs=max(1, top_n))
            path = "/chat/completions"
            reply = self._call(path, lambda c: c.chat.completions.with_raw_response.create(
                messages=proto.chat_messages(prompt), **args))
            choices = replies.chat_choices(reply, top_n, self._where(path))[:n]
            for ch in choices:
                if ch.refusal or ch.finish_reason == "content_filter":
                    raise ModelRefused(f"the model {s.model!r} refused to answer: "
                                       f"{self._shown(ch.refusal or 'its content filter stopped the reply')}")
            return choices
        if logprobs:
            args["logprobs"] = max(1, top_n)
        reply = self._call("/completions", lambda c: c.completions.with_raw_response.create(
            prompt=prompt, stop=["\n"], **args))
        return replies.completion_choices(reply, top_n, self._where("/completions"))[:n]

    def _choices(self, prompts: Sequence[str], budgets: Sequence[int], n: int,
                 **kw: Any) -> tuple[list[list[Choice]], bool]:
        """Up to ``n`` choices per prompt at temperature 0, and whether they are one greedy choice
        repeated: one request per prompt, with ``n`` where the endpoint honours it (or is not known
        yet: the first such request teaches it, :mod:`amp.parser.backends.api_probe`) and with 1
        where it ignores ``n`` — every further request would repeat the same greedy choice."""
        ask_n = 1 if self.traits.honours_n is False else n
        got = self._gather([partial(self._request, p, n=ask_n, max_tokens=m, **kw)
                            for p, m in zip(prompts, budgets, strict=True)])
        if n > 1 and ask_n > 1 and got:
            honours = any(len(g) > 1 for g in got)
            if self.traits.honours_n is None and not honours:
                self._warn_once("n", f"the model endpoint at {self.settings.base_url} ignores n: each prompt is "
                                     f"asked once, and its greedy choice (temperature 0) stands for the {n} choices")
            probe.remember(self._key, honours_n=honours)
        repeated = n > 1 and self.traits.honours_n is False
        if repeated:
            return [g[:1] * n for g in got], True
        return [g[:n] for g in got], False

    def _warn_once(self, what: str, message: str) -> None:
        """An :class:`~amp.parser.core.errors.ApiWarning`, once per backend for each ``what``."""
        if what not in self._warned:
            self._warned.add(what)
            warnings.warn(message, ApiWarning, stacklevel=4)

    def _template_note(self, choices: Sequence[Sequence[Choice]]) -> dict[str, str]:
        """What a parse's settings say when chat-template markers leaked into its choices (and a
        warning, once): the server applies a chat format that is not the model's own."""
        leaked = replies.template_markers("\n".join(ch.text for cs in choices for ch in cs))
        if not leaked:
            return {}
        note = replies.template_message(leaked, self.settings.base_url)
        self._warn_once("template", note)
        return {"api_template": note}

    # -- the work -----------------------------------------------------------------------------------------

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        self.load()
        grammar = self.settings.grammar and search.constrained
        budgets = [search.max_new_tokens or proto.token_budget(p) for p in prompts]
        got, repeated = self._choices(prompts, budgets, search.beams, fmt=fmt, top_n=top_n, grammar=grammar,
                                      words=words)
        template = self._template_note(got)
        out = []
        for choices, budget in zip(got, budgets, strict=True):
            beams = tuple(proto.choice_beam(i, ch.text, ch.finished, ch.steps, fmt, words)
                          for i, ch in enumerate(choices))
            out.append(ParseResult(beams=beams, constrained=grammar, fmt=fmt,
                                   settings={**search.as_dict(), "top_n": top_n, "api_mode": str(self.settings.mode),
                                             "max_tokens": budget, "temperature": 0.0,
                                             **probe.choices_note(search.beams, len(beams), repeated=repeated),
                                             **template}))
        return out

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int, search: SearchSettings,
                        words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]:
        parses = self.parse([p for p, _a, _b in asks], fmt=fmt, top_n=top_n, search=search, words=words)
        scored = [(p, a, b) for p, a, b in asks if a is not None and b is not None]
        pairs = iter(self.score_pairs(scored, fmt=fmt, top_n=top_n, words=words))
        return [(parse, next(pairs) if a is not None and b is not None else None)
                for parse, (_p, a, b) in zip(parses, asks, strict=True)]

    def _forced_one(self, prompt: str, lf: str, top_n: int) -> ForcedScore:
        reply = self._call("/completions", lambda c: c.completions.with_raw_response.create(
            model=self.settings.model, prompt=f"{prompt} {lf}\n", max_tokens=1, temperature=0, echo=True,
            logprobs=max(1, top_n)), kind=SCORE, size=len(prompt) + len(lf) + 2)
        logprobs = replies.echo_logprobs(reply, self._where("/completions"))
        try:
            if logprobs is None:
                raise ValueError("the reply holds no log-probs")
            return proto.forced_from_echo(lf, len(prompt), logprobs, top_n)
        except (ValueError, IndexError) as exc:
            raise LogprobsUnavailable(f"the endpoint at {self.settings.base_url} sent no usable prompt "
                                      f"log-probs for the LF ({exc})") from None

    def _check_scores(self) -> None:
        if not self.scores:
            raise LogprobsUnavailable(f"scoring an LF needs log-probs: {self.why_no_scores()}")

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        self._check_scores()
        return self._gather([partial(self._forced_one, prompt, lf, top_n) for lf in lfs], SCORE)

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        if not items:
            return []
        self._check_scores()
        from amp.parser.search.scoring import pair_score  # late: start-up cost (torch)

        scores = self._gather([partial(self._forced_one, p, lf, top_n) for p, a, b in items for lf in (a, b)], SCORE)
        return [pair_score(scores[2 * i], scores[2 * i + 1]) for i in range(len(items))]

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        """The beam's own steps where its generation carried log-probs; else those of a forced
        scoring of its text (an echoed completion, where the endpoint echoes)."""
        if beam.steps:
            return beam.steps
        if self.settings.logprobs and beam.text and self.scores:
            return self._gather([partial(self._forced_one, prompt, beam.text, top_n)], SCORE)[0].steps
        why = ("log-probs are off for this API model" if not self.settings.logprobs
               else "the choice is empty: no text to score" if not beam.text
               else "the endpoint sent none for this choice")
        raise LogprobsUnavailable(f"token confidences need log-probs: {why}")

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]:
        self.load()
        budget = max_new_tokens or proto.token_budget(prompt)

        def one(i: int) -> str | None:
            (choice,) = self._request(prompt, n=1, fmt=fmt, top_n=0, grammar=self.settings.grammar,
                                      max_tokens=budget, temperature=temperature, seed=seed + i, words=words)[:1]
            return proto.lf_text(choice.text) if choice.finished and proto.lf_text(choice.text) else None

        return self._gather([partial(one, i) for i in range(n)])

    def close(self) -> None:
        """Stop the request threads (a wait before a retry ends) and close the HTTP client."""
        self._closed.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._client is not None:
            self._client.close()

    def __repr__(self) -> str:
        return f"ApiBackend({self.settings.spec!r} at {self.settings.base_url!r})"

