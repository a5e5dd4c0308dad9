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
  missing choices as separate requests, at most :data:`~amp.parser.backends.api_protocol.MAX_FILL_REQUESTS`
  per prompt (n = 5, the paper's, in full): at temperature 0 they are the same greedy answer, which
  is what n = 5 at temperature 0 gives on the paper's API too.  Beyond that cap a parse holds fewer
  beams than asked, says so in its settings (``api_choices``) and warns once
  (:class:`~amp.parser.core.errors.ApiWarning`); choices beyond n are dropped.
* **log-probs** (``ApiSettings.logprobs``) — each choice's token probabilities (its steps: the
  heatmap's confidences), and **P(LF0)** by scoring both readings from the prompt log-probs of an
  echoed completion (``echo=True``; llama.cpp's server and vLLM give them, chat-only APIs do not).
  :meth:`ApiBackend.load` probes once whether the endpoint echoes; where it does not (or log-probs
  are off) :attr:`ApiBackend.scores` is False, sweeps leave P(LF0) empty, and a view that needs
  them gets a :class:`~amp.parser.core.errors.LogprobsUnavailable` saying why.
* **grammar** (``ApiSettings.grammar``) — the decoding grammar sent as GBNF in the request's
  ``grammar`` field (llama.cpp's server), rendered from the same declaration as the automaton's
  (:mod:`amp.logic.gbnf`), for searches that are constrained.
* **bounds** — at most ``concurrency`` requests in flight; each request has one deadline,
  ``timeout_s`` for connecting and every read together, and all requests of the backend together
  the budget ``budget_s`` from the first one on (:mod:`amp.parser.backends.api_transport` holds
  both, and cuts every reply at :data:`~amp.parser.backends.api_protocol.MAX_REPLY_BYTES`).  The
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
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from functools import partial
from importlib import metadata
from typing import Any, TypeVar

from amp.logic.gbnf import gbnf_text
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.backends import api_protocol as proto
from amp.parser.backends import api_replies as replies
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
)
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, Runtime, TokenStep
from amp.parser.search.settings import Ask, SearchSettings

# long: ~510 lines — one class, the Backend protocol over one endpoint, and its request loop (deadline,
# budget, retries, the count of requests made) that every method shares; its protocol, replies and
# transport are already modules of their own (api_protocol, api_replies, api_transport).

T = TypeVar("T")
#: Seconds :attr:`ApiBackend.scores` waits before probing an unreachable endpoint again.
UNREACHABLE_QUIET_S = 30.0
#: Sent as the key to an endpoint that needs none (llama.cpp's server, vLLM and ollama without one).
NO_KEY = "no-key"
#: HTTP statuses a request is retried after (with 5xx): timeout, conflict, rate limit.
RETRIED_STATUSES = frozenset({408, 409, 429})


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

                from amp.parser.backends import api_transport  # late: optional dependency (openai)
            except ImportError as exc:
                raise ModelLoadError("a model behind an API needs the openai package: "
                                     "pip install 'amp-explorer[api]'") from exc
            s = self.settings
            http = api_transport.bounded_http_client(s.base_url, self._deadline,
                                                     where=f"the model endpoint at {s.base_url}")
            self._client = openai.OpenAI(base_url=s.base_url, api_key=self.__key or NO_KEY,
                                         timeout=s.timeout_s, max_retries=0, http_client=http)
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

    def _call(self, path: str, fn: Callable[[Any], Any]) -> Any:
        """The JSON reply of ``fn(client)`` (a raw-response call of ``path``), retried as the module
        docstring says; its failures as the typed errors there, each saying how many requests it made."""
        client = self.client()
        import openai  # late: optional dependency (openai)

        s = self.settings
        made = 0
        while True:
            budget_end = self._budget_end()
            if time.monotonic() >= budget_end:
                raise self._budget_spent(made)
            made += 1
            mine = time.monotonic() + s.timeout_s
            self._attempt.deadline = (mine, False) if mine <= budget_end else (budget_end, True)
            asked_wait: float | None = None
            try:
                raw = fn(client)
                return replies.reply_json(raw.content, f"the model endpoint at {s.base_url} ({path})")
            except DeadlinePassed as exc:
                if exc.budget:
                    raise self._budget_spent(made) from None
                failure: BackendError = self._too_slow(path, made)
            except openai.APITimeoutError:
                failure = self._too_slow(path, made)
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

    def _too_slow(self, path: str, made: int) -> DeadlinePassed:
        s = self.settings
        return DeadlinePassed(f"the model endpoint at {s.base_url} did not finish a request ({path}) within "
                              f"{s.timeout_s:g} s (--api-timeout, for connecting and every read together; "
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

    def _where(self, path: str) -> str:
        return f"the model endpoint at {self.settings.base_url} ({path})"

    def _model_names(self) -> set[str] | None:
        """The model names the endpoint lists; None when it has no model list (404)."""
        try:
            return replies.model_ids(self._call("/models", lambda c: c.models.with_raw_response.list()),
                                   self._where("/models"))
        except BackendError as exc:
            if exc.status == 404 or exc.kind == "unknown-model":
                return None
            raise

    def _probe_echo(self) -> bool:
        try:
            reply = self._call("/completions", lambda c: c.completions.with_raw_response.create(
                model=self.settings.model, prompt="Human: hi\nComputer:", max_tokens=1, temperature=0,
                echo=True, logprobs=1))
        except BackendError as exc:
            if exc.kind in ("refused", "unknown-model"):
                return False
            raise
        lp = replies.echo_logprobs(reply, self._where("/completions"))
        return bool(lp and lp.tokens and lp.text_offset and any(v is not None for v in lp.token_logprobs))

    # -- one request --------------------------------------------------------------------------------------

    def _request(self, prompt: str, *, n: int, fmt: str, top_n: int, grammar: bool, max_tokens: int,
                 temperature: float = 0.0, seed: int | None = None,
                 words: OwnWords = NO_WORDS) -> list[Choice]:
        """One request: its choices (checked: :class:`~amp.parser.core.errors.InvalidReply` otherwise)."""
        s = self.settings
        args: dict[str, Any] = {"model": s.model, "n": n, "temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            args["seed"] = seed
        if grammar:
            args["extra_body"] = {"grammar": gbnf_text(fmt, words)}  # type: ignore[arg-type]
        if s.mode == ApiMode.CHAT:
            if s.logprobs:
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
        if s.logprobs:
            args["logprobs"] = max(1, top_n)
        reply = self._call("/completions", lambda c: c.completions.with_raw_response.create(
            prompt=prompt, stop=["\n"], **args))
        return replies.completion_choices(reply, top_n, self._where("/completions"))[:n]

    def _choices(self, prompts: Sequence[str], budgets: Sequence[int], n: int,
                 **kw: Any) -> list[list[Choice]]:
        """Up to ``n`` choices per prompt: one request with ``n``, then single requests for what is
        missing, at most :data:`~amp.parser.backends.api_protocol.MAX_FILL_REQUESTS` per prompt
        (an :class:`~amp.parser.core.errors.ApiWarning` says when that leaves some out)."""
        ask_n = n if self._n_honoured is not False else 1
        got = self._gather([partial(self._request, p, n=ask_n, max_tokens=m, **kw)
                            for p, m in zip(prompts, budgets, strict=True)])
        if n > 1 and ask_n > 1:
            self._n_honoured = all(len(g) >= n for g in got)
        extra = [i for i in range(len(prompts)) for _ in range(min(proto.MAX_FILL_REQUESTS, max(0, n - len(got[i]))))]
        more = self._gather([partial(self._request, prompts[i], n=1, max_tokens=budgets[i], **kw) for i in extra])
        for i, choices in zip(extra, more, strict=True):
            got[i].extend(choices[:1])
        short = min(len(g) for g in got) if got else n
        if short < n:
            warnings.warn(f"the model endpoint at {self.settings.base_url} ignores n: {short} of {n} choices per "
                          f"prompt (one request and at most {proto.MAX_FILL_REQUESTS} single ones)",
                          ApiWarning, stacklevel=3)
        return [g[:n] for g in got]

    @staticmethod
    def _choices_note(asked: int, got: int) -> dict[str, str]:
        """What a parse's settings say when the endpoint gave fewer choices than asked (nothing otherwise)."""
        if got >= asked:
            return {}
        return {"api_choices": f"{got} of {asked}: the endpoint ignores n and at most "
                               f"{proto.MAX_FILL_REQUESTS} single requests fill in"}

    # -- the work -----------------------------------------------------------------------------------------

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        self.load()
        grammar = self.settings.grammar and search.constrained
        budgets = [search.max_new_tokens or proto.token_budget(p) for p in prompts]
        replies = self._choices(prompts, budgets, search.beams, fmt=fmt, top_n=top_n, grammar=grammar, words=words)
        out = []
        for choices, budget in zip(replies, budgets, strict=True):
            beams = tuple(proto.choice_beam(i, ch.text, ch.finished, ch.steps, fmt, words)
                          for i, ch in enumerate(choices))
            out.append(ParseResult(beams=beams, constrained=grammar, fmt=fmt,
                                   settings={**search.as_dict(), "top_n": top_n, "api_mode": str(self.settings.mode),
                                             "max_tokens": budget, "temperature": 0.0,
                                             **self._choices_note(search.beams, len(beams))}))
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
            logprobs=max(1, top_n)))
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

