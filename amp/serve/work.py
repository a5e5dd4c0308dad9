"""What a parser replica does, without Ray: answer JSON calls with a cached :class:`Parser`.

:class:`Work` is the plain core of :class:`amp.serve.worker.ParserWorker` (so it is testable
without a cluster).  Each call is a JSON dict and each answer a JSON dict: results as the
``to_dict()`` JSON of :mod:`amp.parser.core.results`, or ``{"error": {type, message, status}}`` —
a bad LF, a prompt over the context or a model that cannot load becomes an error *answer*, never
an exception, so the replica keeps serving.

:meth:`Work.joint` and :meth:`Work.parse` take a *list* of calls: Serve's request batching hands
over the calls that arrived together, and they are merged into shared batched forward passes
(identical asks computed once), :data:`batch_size` items per model call.  If a merged pass
fails, each call is retried on its own so that only the guilty call gets the error.

A call that is stopped (its client went away, or it ran past :attr:`ServeConfig.deadline_s`)
raises :class:`~amp.parser.core.errors.SearchCancelled` out of every method here: the replica
(:mod:`amp.serve.worker`) counts it in :attr:`Work.stats` and answers a deadline with a 503.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from amp.cache import ResultCache
from amp.errors import AmpError
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.backends.local import InProcessBackend
from amp.parser.backends.remote import API_VERSION, WORK_TIMEOUT_S, code_version
from amp.parser.batch import run_batch
from amp.parser.core import limits
from amp.parser.core.errors import ModelLoadError, RequestTooLarge, SearchCancelled
from amp.parser.core.results import BatchItem, Beam
from amp.parser.engines import local_backend
from amp.parser.parser import Parser
from amp.parser.search.cancel import current_check, progress_scope
from amp.parser.search.settings import DEFAULT_TOP_N, SearchSettings
from amp.records import JsonRecord, describe
from amp.serve.errors import DeadlinePassed

#: The default of :attr:`ServeConfig.deadline_s`: five minutes, well under the seconds the
#: project's own client waits for an answer (:data:`~amp.parser.backends.remote.WORK_TIMEOUT_S`).
DEFAULT_DEADLINE_S = 300.0


@dataclass(frozen=True)
class ServeConfig(JsonRecord):
    """How the service runs; validated once by :func:`amp.serve.launch.config_from_args`."""

    spec: str = "default"
    device: str | None = None
    dtype: str | None = None
    #: A registered engine (:mod:`amp.parser.engines`), checked and chosen once by
    #: :func:`amp.serve.launch.config_from_args`; the replicas build its backend, whatever their env says.
    engine: str | None = None
    trust_remote_code: bool = False
    replicas: int = 1
    cpus_per_replica: float = 1.0
    gpus_per_replica: float = 0.0
    host: str = "127.0.0.1"
    port: int = 8600
    address: str | None = None
    cache_dir: str | None = None
    use_cache: bool = True
    top_n: int = DEFAULT_TOP_N
    batch_size: int = 8
    threads: int = 1
    #: Seconds a finished job is kept (:mod:`amp.serve.jobs`; default a week).
    job_retention_s: float = 7 * 24 * 3600.0
    #: Seconds one request may take on a replica, waiting for its turn included: past it the work
    #: stops and the client gets a 503 naming it (``amp serve --deadline``; jobs' chunks have none:
    #: a job outlives its client and is cancelled on its own).  Above 0, below the client's wait.
    deadline_s: float = DEFAULT_DEADLINE_S


def check_deadline(seconds: Any) -> float:
    """A deadline in seconds: above 0 and below the client's own wait
    (:data:`~amp.parser.backends.remote.WORK_TIMEOUT_S`), so the client hears why (a ``ValueError`` otherwise)."""
    value = float(seconds)
    if not 0 < value < WORK_TIMEOUT_S:
        raise ValueError(f"the deadline must be above 0 and below {WORK_TIMEOUT_S:g} s (the client's own wait), "
                         f"not {seconds:g}")
    return value


def error_answer(exc: BaseException) -> dict[str, Any]:
    """``{"error": {...}}`` for an exception: 400 for bad input, 503 for a model that cannot load or
    a request past its deadline."""
    if isinstance(exc, (ModelLoadError, DeadlinePassed)):
        status = 503
    elif isinstance(exc, RequestTooLarge):
        status = 413
    elif isinstance(exc, (AmpError, ValueError, KeyError, TypeError)):
        status = 400
    else:
        status = 500
    text = f"a record of the request does not fit: {describe(exc)}" if isinstance(exc, ValidationError) else str(exc)
    message = " ".join(text.split()) or type(exc).__name__
    return {"error": {"type": type(exc).__name__, "message": message, "status": status}}


def _words(call: dict[str, Any]) -> OwnWords:
    """The own words of a call (validated by :class:`OwnWords`: a bad word is a 400), or none."""
    given = call.get("words")
    if not given:
        return NO_WORDS
    return OwnWords(tuple(given.get("unary", ())), tuple(given.get("binary", ())), tuple(given.get("constants", ())))


def _safe(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return fn()
    except SearchCancelled:
        raise  # stopped, not answered (the replica counts it, and answers a deadline itself)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an answer; the replica keeps serving
        return error_answer(exc)


class Work:
    """A cached in-process parser answering the service's calls (see the module docstring)."""

    def __init__(self, config: ServeConfig) -> None:

        self.config = config
        self.backend = local_backend(config.spec, engine=config.engine, device=config.device, dtype=config.dtype,
                                     trust_remote_code=config.trust_remote_code, threads=config.threads)
        self.cache = ResultCache() if config.use_cache else None
        self._parsers: dict[int, Any] = {}
        #: Calls answered and merged passes run by :meth:`joint`/:meth:`parse` (``/v1/info`` shows them);
        #: the replica's own counts (:mod:`amp.serve.worker`): ``running``, pieces of model work under
        #: way now (waiting for their turn included); ``cancelled``, pieces stopped because every caller
        #: went away; ``deadline``, those stopped at :attr:`ServeConfig.deadline_s`.
        self.stats = {"merged_calls": 0, "merged_passes": 0, "running": 0, "cancelled": 0, "deadline": 0}

    @property
    def interleaves(self) -> bool:
        """Whether requests may take turns on the model between decode steps: the in-process
        (transformers) engine keeps each call's state in the call; llama.cpp's cells are shared."""
        return isinstance(self.backend, InProcessBackend)

    def parser(self, top_n: int) -> Any:
        """The facade for ``top_n`` (one per value; all share one backend and one cache)."""

        if top_n not in self._parsers:
            self._parsers[top_n] = Parser(backend=self.backend, cache=self.cache, top_n=top_n)
        return self._parsers[top_n]

    def info(self) -> dict[str, Any]:
        """``/v1/info``'s answer (an error answer, 503, if the model spec cannot be resolved)."""
        return _safe(self._info)

    def _info(self) -> dict[str, Any]:

        return {"api": API_VERSION, "code": code_version(), "spec": self.backend.spec,
                "runtime": self.backend.runtime().to_dict(), "top_n": self.config.top_n,
                "replicas": self.config.replicas, "replica": os.getpid(), "loaded": self.backend.loaded,
                "stats": dict(self.stats),
                "capabilities": self.backend.capabilities().to_dict(),
                "limits": {name.lower(): getattr(limits, name) for name in dir(limits) if name.startswith("MAX_")}}

    # -- merged calls ----------------------------------------------------------------------------------

    def joint(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Parse-and-score calls, merged per (fmt, top_n, search)."""
        def run(parser: Any, asks: list[tuple], fmt: str, search: SearchSettings,
                words: OwnWords) -> list[dict[str, Any]]:
            out = []
            size = limits.prompts_per_call(search.beams, search.max_new_tokens, self.config.batch_size)
            for start in range(0, len(asks), size):
                part = parser.parse_and_score_many(asks[start:start + size], fmt=fmt,
                                                   words=words, **search.as_dict())
                out += [{"parse": p.to_dict(), "pair": q.to_dict() if q is not None else None} for p, q in part]
            return out

        return self._merged(calls, lambda c: [tuple(i) for i in c["items"]], run)

    def parse(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Beam-search calls, merged per (fmt, top_n, search)."""
        def run(parser: Any, prompts: list[str], fmt: str, search: SearchSettings,
                words: OwnWords) -> list[dict[str, Any]]:
            out = []
            size = limits.prompts_per_call(search.beams, search.max_new_tokens, self.config.batch_size)
            for start in range(0, len(prompts), size):
                part = parser.parse_many(prompts[start:start + size], fmt=fmt, words=words,
                                         **search.as_dict())
                out += [r.to_dict() for r in part]
            return out

        return self._merged(calls, lambda c: list(c["prompts"]), run)

    def _merged(self, calls: list[dict[str, Any]], inputs: Callable[[dict[str, Any]], list[Any]],
                run: Callable[[Any, list[Any], str, SearchSettings, OwnWords], list[dict[str, Any]]],
                ) -> list[dict[str, Any]]:
        answers: list[dict[str, Any] | None] = [None] * len(calls)
        groups: dict[str, list[int]] = {}
        for i, call in enumerate(calls):
            key = json.dumps([call.get("fmt", DEFAULT_FORMAT), call.get("top_n", DEFAULT_TOP_N), call.get("search", {}),
                              call.get("words")], sort_keys=True)
            groups.setdefault(key, []).append(i)
        for members in groups.values():
            first = calls[members[0]]
            try:
                search = SearchSettings(**first.get("search", {}))
                parser = self.parser(int(first.get("top_n", DEFAULT_TOP_N)))
                fmt = first.get("fmt", DEFAULT_FORMAT)
                unique = list(dict.fromkeys(x for i in members for x in inputs(calls[i])))
                done = dict(zip(unique, run(parser, unique, fmt, search, _words(first)), strict=True))
                self.stats["merged_calls"] += len(members)
                self.stats["merged_passes"] += 1
                for i in members:
                    answers[i] = {"results": [done[x] for x in inputs(calls[i])]}
            except SearchCancelled:
                raise  # every caller went away, or the deadline passed: nothing to answer here
            except Exception:  # noqa: BLE001 - find the guilty call: each on its own
                for i in members:
                    answers[i] = _safe(functools.partial(self._alone, calls[i], inputs, run))
        return answers  # type: ignore[return-value]

    def _alone(self, call: dict[str, Any], inputs: Callable[[dict[str, Any]], list[Any]],
               run: Callable[[Any, list[Any], str, SearchSettings, OwnWords], list[dict[str, Any]]]) -> dict[str, Any]:
        search = SearchSettings(**call.get("search", {}))
        return {"results": run(self.parser(int(call.get("top_n", DEFAULT_TOP_N))), inputs(call), call.get("fmt", DEFAULT_FORMAT), search,
                               _words(call))}

    # -- single calls -----------------------------------------------------------------------------------

    def forced(self, call: dict[str, Any]) -> dict[str, Any]:
        return _safe(lambda: {"results": [s.to_dict() for s in self.parser(call["top_n"]).score(
            call["prompt"], call["lfs"], fmt=call["fmt"], words=_words(call))]})

    def pairs(self, call: dict[str, Any]) -> dict[str, Any]:
        return _safe(lambda: {"results": [s.to_dict() for s in self.parser(call["top_n"]).score_pairs(
            [tuple(i) for i in call["items"]], fmt=call["fmt"], words=_words(call))]})

    def steps(self, call: dict[str, Any]) -> dict[str, Any]:

        def go() -> dict[str, Any]:
            beam = Beam.from_dict(call["beam"])
            steps = self.parser(call["top_n"]).beam_steps(call["prompt"], beam, fmt=call["fmt"],
                                                          constrained=call["constrained"], words=_words(call))
            return {"steps": [s.to_dict() for s in steps]}

        return _safe(go)

    def sample(self, call: dict[str, Any]) -> dict[str, Any]:
        return _safe(lambda: {"samples": self.parser(self.config.top_n).sample(
            call["prompt"], n=call["n"], temperature=call["temperature"], seed=call["seed"], fmt=call["fmt"],
            max_new_tokens=call.get("max_new_tokens"), words=_words(call))})

    def chunk(self, call: dict[str, Any], on_searched: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Part of a job: its items, in order, through :func:`~amp.parser.batch.run_batch`;
        ``on_searched(n)`` hears of items whose search finished before the batch returns."""

        def go() -> dict[str, Any]:
            items = [BatchItem.from_dict(d) for d in call["items"]]
            search = SearchSettings(**call["search"])
            with progress_scope(on_searched):
                run = run_batch(self.parser(int(call["top_n"])), items, batch_size=len(items), ordered=True,
                                cancel=current_check(), **search.as_dict())
                return {"results": [r.to_dict() for r in run]}

        return _safe(go)
