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
    """Requests queue per event loop; one worker scores them in a thread, a batch at a time.

    A batch goes when ``min_batch`` requests wait, or when the oldest has waited
    ``max_wait_s``, whichever comes first: under ``inspect score`` every sample arrives at once
    and the first batch leaves at once; during ``inspect eval`` samples finish one by one, and
    waiting up to ``max_wait_s`` (0.2 s) gathers them into batches the models handle far
    faster than one pair per call, while no finished sample waits longer than that for its
    batch to start.
    """

    def __init__(
        self, score_batch: Callable[[list[Request]], Sequence[Result]], max_batch: int = 64,
        min_batch: int = 16, max_wait_s: float = 0.2,
    ):  # fmt: skip
        self._score_batch = score_batch
        self._max_batch = max_batch
        self._min_batch = min_batch
        self._max_wait_s = max_wait_s
        # One queue and worker per event loop: `inspect eval` and `inspect score` each run their own.
        self._queues: dict[asyncio.AbstractEventLoop, list[tuple[Request, asyncio.Future, float]]] = {}
        self._workers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}

    async def submit(self, request: Request) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        self._queues.setdefault(loop, []).append((request, future, loop.time()))
        worker = self._workers.get(loop)
        if worker is None or worker.done():
            self._workers[loop] = loop.create_task(self._drain(loop))
        return await future

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        queue = self._queues[loop]
        try:
            while queue:
                # Let the samples finishing alongside this one join, up to the bounded wait.
                while len(queue) < self._min_batch and loop.time() - queue[0][2] < self._max_wait_s:
                    await asyncio.sleep(min(0.02, self._max_wait_s))
                batch = queue[: self._max_batch]
                del queue[: self._max_batch]
                try:
                    results = await anyio.to_thread.run_sync(
                        self._score_batch, [request for request, _, _ in batch]
                    )
                except Exception as err:  # each waiting sample reports the failure as its own
                    for _, future, _ in batch:
                        if not future.done():
                            future.set_exception(err)
                    continue
                for (_, future, _), result in zip(batch, results):
                    if not future.done():
                        future.set_result(result)
        finally:
            self._workers.pop(loop, None)
            if not queue:
                self._queues.pop(loop, None)
