"""``ParserWorker``: the model replicas of the parser service (a Ray Serve deployment).

One replica per GPU (``num_gpus=1``) on a GPU host, CPU replicas elsewhere; each holds one
:class:`amp.serve.work.Work` (an in-process model with the server's result cache).  Parse and
parse-and-score calls go through ``@serve.batch``: calls that arrive within
:data:`BATCH_WAIT_S` of each other (up to :data:`MAX_BATCH_CALLS`) are merged into shared
batched forward passes, so thirty students asking at once cost a few batched passes, not thirty
sequential parses.  The model work runs in a thread, so the replica keeps accepting calls.

A call whose client went away (a closed connection, a client timeout: Serve cancels the request,
and the ingress cancels its call here) stops its search at the next decode step
(:func:`amp.parser.search.cancel.cancel_scope`); a merged batch stops once every call in it is
cancelled.  After each piece of model work the replica hands freed memory back to the system
(:func:`release_memory`), so one big request does not leave the replica gigabytes larger.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, cast

from ray import serve

from amp.parser.search.cancel import cancel_scope
from amp.serve.work import ServeConfig, Work

#: Calls merged into one batch, and how long the first waits for company.
MAX_BATCH_CALLS = 32
BATCH_WAIT_S = 0.02

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


async def cancellable(work: Callable[[], T], cancelled: Callable[[], bool] | None = None) -> T:
    """``work()`` in a thread inside a :func:`cancel_scope`: it stops at its next decode step once
    this coroutine is cancelled (or ``cancelled()`` turns true); memory is released afterwards."""
    flag = threading.Event()

    def check() -> bool:
        return flag.is_set() or (cancelled is not None and cancelled())

    def run() -> T:
        try:
            with cancel_scope(check):
                return work()
        finally:
            release_memory()

    try:
        return await asyncio.to_thread(run)
    except asyncio.CancelledError:
        flag.set()
        raise


@serve.deployment(name="ParserWorker", max_ongoing_requests=128, health_check_period_s=2.0,
                  graceful_shutdown_timeout_s=5.0)
class ParserWorker:
    def __init__(self, config: dict[str, Any]) -> None:
        cfg = ServeConfig.from_dict(config)
        import torch  # late: start-up cost (torch)

        torch.set_num_threads(max(1, cfg.threads))
        self.work = Work(cfg)

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
    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S)  # type: ignore[arg-type]
    async def _joint(self, calls: list[dict[str, Any]], flags: list[threading.Event]) -> list[dict[str, Any]]:  # type: ignore[misc]
        return await cancellable(lambda: self.work.joint(calls), lambda: all(f.is_set() for f in flags))

    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S)  # type: ignore[arg-type]
    async def _parse(self, calls: list[dict[str, Any]], flags: list[threading.Event]) -> list[dict[str, Any]]:  # type: ignore[misc]
        return await cancellable(lambda: self.work.parse(calls), lambda: all(f.is_set() for f in flags))

    async def forced(self, call: dict[str, Any]) -> dict[str, Any]:
        return await cancellable(lambda: self.work.forced(call))

    async def pairs(self, call: dict[str, Any]) -> dict[str, Any]:
        return await cancellable(lambda: self.work.pairs(call))

    async def steps(self, call: dict[str, Any]) -> dict[str, Any]:
        return await cancellable(lambda: self.work.steps(call))

    async def sample(self, call: dict[str, Any]) -> dict[str, Any]:
        return await cancellable(lambda: self.work.sample(call))

    async def chunk(self, call: dict[str, Any]) -> dict[str, Any]:
        return await cancellable(lambda: self.work.chunk(call))

    async def chunk_stream(self, call: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """:meth:`chunk` as a stream: ``{"searched": n}`` each time items' searches finish inside
        the batch (so a job's progress moves item by item), then the answer itself."""
        loop = asyncio.get_running_loop()
        heard: asyncio.Queue[int] = asyncio.Queue()

        def on_searched(n: int) -> None:  # called from the model's thread
            loop.call_soon_threadsafe(heard.put_nowait, n)

        work = asyncio.ensure_future(cancellable(lambda: self.work.chunk(call, on_searched)))
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
