"""``ParserWorker``: the model replicas of the parser service (a Ray Serve deployment).

One replica per GPU (``num_gpus=1``) on a GPU host, CPU replicas elsewhere; each holds one
:class:`amp.serve.work.Work` (an in-process model with the server's result cache).  Parse and
parse-and-score calls go through ``@serve.batch``: calls that arrive within
:data:`BATCH_WAIT_S` of each other (up to :data:`MAX_BATCH_CALLS`) are merged into shared
batched forward passes, so thirty students asking at once cost a few batched passes, not thirty
sequential parses.  The model work runs in threads (:data:`WORK_THREADS`), so the replica keeps
accepting calls, and up to :data:`MAX_CONCURRENT_BATCHES` batches are under way at once.

**Fair sharing** (issue #44): the pieces of model work of one replica take turns at its
:class:`~amp.parser.search.fair_share.StepGate`, a decode step at a time, the one that has used
the model least going first — a one-beam parse sent behind a search of minutes waits for one of
its steps, not for all of them.  **Deadline**: a request still running
:attr:`~amp.serve.work.ServeConfig.deadline_s` after it reached the replica (its wait for the
turn included) stops at its next step and is answered with a 503 naming the setting.

A call whose client went away (a closed connection, a client timeout: Serve cancels the request,
and the ingress cancels its call here) stops its search or sampling at the next decode step, or
leaves the gate's queue (:func:`amp.parser.search.cancel.cancel_scope`); a merged batch stops once
every call in it is cancelled.  ``/v1/info``'s ``stats`` count the pieces of work running,
cancelled and stopped at the deadline.  After each piece of model work the replica hands freed
memory back to the system (:func:`release_memory`), so one big request does not leave the replica
gigabytes larger; a piece counts as running until that is done.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import math
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from ray import serve

from amp.parser.core.errors import SearchCancelled
from amp.parser.search.cancel import cancel_scope
from amp.parser.search.fair_share import StepGate
from amp.serve.errors import DeadlinePassed
from amp.serve.work import ServeConfig, Work, error_answer

#: Calls merged into one batch, and how long the first waits for company.
MAX_BATCH_CALLS = 32
BATCH_WAIT_S = 0.02
#: Batches of merged calls under way at once on one replica (Serve's default, one, made every
#: batch wait until the one before it had finished: a one-beam parse waited minutes behind a long
#: search, issue #44); they take turns on the model at the replica's step gate.
MAX_CONCURRENT_BATCHES = 16
#: Threads of one replica's model work: one computes at a time, the others wait for their turn.
WORK_THREADS = 64

T = TypeVar("T")


def release_memory() -> None:
    """Collect garbage and ask glibc to return free heap pages to the system (no-op elsewhere)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name and "libc" in name:
        try:
            ctypes.CDLL(name).malloc_trim(0)
        except (OSError, AttributeError):
            pass  # not glibc: nothing to trim


def deadline_passed(seconds: float) -> DeadlinePassed:
    """The error of a request stopped at the deadline (a 503 naming the setting)."""
    return DeadlinePassed(
        f"the request ran past the service's deadline of {seconds:g} s on the model and was stopped "
        "(the service's deadline_s setting, amp serve --deadline): ask for less in one request (fewer prompts, "
        "beams, samples or tokens), or send a sweep as a job")


@serve.deployment(name="ParserWorker", max_ongoing_requests=128, health_check_period_s=2.0,
                  graceful_shutdown_timeout_s=5.0)
class ParserWorker:
    def __init__(self, config: dict[str, Any]) -> None:
        cfg = ServeConfig.from_dict(config)
        import torch  # late: start-up cost (torch)

        torch.set_num_threads(max(1, cfg.threads))
        self.work = Work(cfg)
        self.deadline_s = cfg.deadline_s
        self.gate = StepGate(interleave=self.work.interleaves)
        self.pool = ThreadPoolExecutor(WORK_THREADS, thread_name_prefix="amp-model")
        self._tally_lock = threading.Lock()

    def _tally(self, key: str, delta: int = 1) -> None:
        with self._tally_lock:
            self.work.stats[key] += delta

    async def _run(self, work: Callable[[], T], cancelled: Callable[[], bool] | None = None, *,
                   deadline: bool = True) -> T:
        """``work()`` in a model thread, holding the replica's turn at its step gate (passed on at
        each decode step); it stops at its next step, or leaves the queue, once this coroutine is
        cancelled, ``cancelled()`` turns true or the deadline passes (:class:`DeadlinePassed`, here
        only).  Memory is released afterwards."""
        flag = threading.Event()
        limit = time.monotonic() + self.deadline_s if deadline else math.inf

        def gone() -> bool:
            return flag.is_set() or (cancelled is not None and cancelled())

        def stopped() -> bool:
            return gone() or time.monotonic() > limit

        def run() -> T:
            self._tally("running")
            ticket = self.gate.ticket()
            try:
                with self.gate.turn(ticket, stopped), cancel_scope(self.gate.step_check(ticket, stopped)):
                    return work()
            except SearchCancelled:
                self._tally("cancelled" if gone() else "deadline")
                raise
            finally:
                release_memory()
                self._tally("running", -1)  # (after the release: no work running means memory handed back)

        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, run)
        except asyncio.CancelledError:
            flag.set()
            raise
        except SearchCancelled:
            if not gone() and time.monotonic() > limit:
                raise deadline_passed(self.deadline_s) from None
            raise

    async def _answer(self, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """One call's answer; past the deadline, the 503 error answer naming it."""
        try:
            return await self._run(work)
        except DeadlinePassed as exc:
            return error_answer(exc)

    async def _answers(self, work: Callable[[], list[dict[str, Any]]],
                       flags: list[threading.Event]) -> list[dict[str, Any]]:
        """A merged batch's answers; stopped once every call is cancelled; past the deadline, each
        call gets the 503 error answer naming it."""
        try:
            return await self._run(work, lambda: all(f.is_set() for f in flags))
        except DeadlinePassed as exc:
            return [error_answer(exc)] * len(flags)

    async def info(self) -> dict[str, Any]:
        return self.work.info()

    async def joint(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._one(cast(Any, self)._joint, call)

    async def parse(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._one(cast(Any, self)._parse, call)

    @staticmethod
    async def _one(batched: Any, call: dict[str, Any]) -> dict[str, Any]:
        """One call through a batched method, with its own cancel flag (set when it is cancelled)."""
        flag = threading.Event()
        try:
            return await batched(call, flag)
        except asyncio.CancelledError:
            flag.set()
            raise

    # (Serve's batch typing knows one argument; it batches each positional argument into a list)
    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S,  # type: ignore[arg-type]
                 max_concurrent_batches=MAX_CONCURRENT_BATCHES)
    async def _joint(self, calls: list[dict[str, Any]], flags: list[threading.Event]) -> list[dict[str, Any]]:  # type: ignore[misc]
        return await self._answers(lambda: self.work.joint(calls), flags)

    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S,  # type: ignore[arg-type]
                 max_concurrent_batches=MAX_CONCURRENT_BATCHES)
    async def _parse(self, calls: list[dict[str, Any]], flags: list[threading.Event]) -> list[dict[str, Any]]:  # type: ignore[misc]
        return await self._answers(lambda: self.work.parse(calls), flags)

    async def forced(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._answer(lambda: self.work.forced(call))

    async def pairs(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._answer(lambda: self.work.pairs(call))

    async def steps(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._answer(lambda: self.work.steps(call))

    async def sample(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._answer(lambda: self.work.sample(call))

    async def chunk(self, call: dict[str, Any]) -> dict[str, Any]:
        return await self._run(lambda: self.work.chunk(call), deadline=False)

    async def chunk_stream(self, call: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """:meth:`chunk` as a stream: ``{"searched": n}`` each time items' searches finish inside
        the batch (so a job's progress moves item by item), then the answer itself."""
        loop = asyncio.get_running_loop()
        heard: asyncio.Queue[int] = asyncio.Queue()

        def on_searched(n: int) -> None:  # called from the model's thread
            loop.call_soon_threadsafe(heard.put_nowait, n)

        work = asyncio.ensure_future(self._run(lambda: self.work.chunk(call, on_searched), deadline=False))
        try:
            while not work.done():
                news = asyncio.ensure_future(heard.get())
                await asyncio.wait({work, news}, return_when=asyncio.FIRST_COMPLETED)
                if news.done():
                    yield {"searched": news.result()}
                else:
                    news.cancel()
            while not heard.empty():
                yield {"searched": heard.get_nowait()}
            yield work.result()
        finally:
            work.cancel()  # the caller went away: the search stops at its next step
