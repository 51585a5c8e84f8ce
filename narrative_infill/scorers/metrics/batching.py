"""Dynamic batching of per-sample score requests.

Inspect calls a scorer once per sample, with many samples in flight at once (all of them
under ``inspect score``). Running a transformer once per pair would waste most of its
time on per-call overhead, so requests are queued and a single worker per event loop
scores whatever has accumulated, up to ``max_batch`` pairs, in a worker thread; while a
batch runs, the next one fills. Each sample still gets its own score.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import anyio

Request = TypeVar("Request")
Result = TypeVar("Result")


class DynamicBatcher(Generic[Request, Result]):
    def __init__(self, score_batch: Callable[[list[Request]], Sequence[Result]], max_batch: int = 64, gather_s: float = 0.01):
        self._score_batch = score_batch
        self._max_batch = max_batch
        self._gather_s = gather_s
        # One queue and worker per event loop: `inspect eval` and `inspect score` each run their own.
        self._queues: dict[asyncio.AbstractEventLoop, list[tuple[Request, asyncio.Future]]] = {}
        self._workers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}

    async def submit(self, request: Request) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        self._queues.setdefault(loop, []).append((request, future))
        worker = self._workers.get(loop)
        if worker is None or worker.done():
            self._workers[loop] = loop.create_task(self._drain(loop))
        return await future

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        queue = self._queues[loop]
        await asyncio.sleep(self._gather_s)  # let the samples scored alongside this one join
        try:
            while queue:
                batch = queue[: self._max_batch]
                del queue[: self._max_batch]
                try:
                    results = await anyio.to_thread.run_sync(self._score_batch, [request for request, _ in batch])
                except Exception as err:  # each waiting sample reports the failure as its own
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(err)
                    continue
                for (_, future), result in zip(batch, results):
                    if not future.done():
                        future.set_result(result)
        finally:
            self._workers.pop(loop, None)
            if not queue:
                self._queues.pop(loop, None)
