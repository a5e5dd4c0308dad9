"""``ParserWorker``: the model replicas of the parser service (a Ray Serve deployment).

One replica per GPU (``num_gpus=1``) on a GPU host, CPU replicas elsewhere; each holds one
:class:`amp.serve.work.Work` (an in-process model with the server's result cache).  Parse and
parse-and-score calls go through ``@serve.batch``: calls that arrive within
:data:`BATCH_WAIT_S` of each other (up to :data:`MAX_BATCH_CALLS`) are merged into shared
batched forward passes, so thirty students asking at once cost a few batched passes, not thirty
sequential parses.  The model work runs in a thread, so the replica keeps accepting calls.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ray import serve

from amp.serve.work import ServeConfig, Work

#: Calls merged into one batch, and how long the first waits for company.
MAX_BATCH_CALLS = 32
BATCH_WAIT_S = 0.02


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

    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S)
    async def joint(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.work.joint, calls)

    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S)
    async def parse(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.work.parse, calls)

    async def forced(self, call: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.work.forced, call)

    async def pairs(self, call: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.work.pairs, call)

    async def steps(self, call: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.work.steps, call)

    async def sample(self, call: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.work.sample, call)

    async def chunk(self, call: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.work.chunk, call)
