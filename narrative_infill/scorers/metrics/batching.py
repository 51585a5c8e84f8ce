"""Dynamic batching of per-sample score requests.

Inspect calls a scorer once per sample, with many samples in flight at once (all of them
under ``inspect score``). Running a transformer once per pair would waste most of its
time on per-call overhead, so requests are queued and a single worker per event loop
scores whatever has accumulated, up to ``max_batch`` pairs, in a worker thread; while a
batch runs, the next one fills. Each sample still gets its own score, and its own failure:
a batch that fails is scored again request by request, so only the request that cannot be
scored fails (its sample errors, as Inspect reports any scorer error; its batch-mates are
scored).

No request waits for company: during ``inspect eval`` a sample being scored holds its sample
slot (Inspect runs scorers inside the ``max_samples`` limit), so any fixed wait would be
generation time lost. Batches size themselves instead: at a low rate a batch is the one or two
samples that finished while the previous batch ran; when samples finish faster than they are
scored, the queue and so the next batch grow, and larger batches score more pairs a second.
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

    A batch is everything queued (up to ``max_batch``) when the worker is free, after one turn of
    the event loop so that samples finishing at the same moment go together: under ``inspect
    score`` every sample arrives at once and the first batch leaves at once; during ``inspect
    eval`` a finished sample's batch starts as soon as the previous batch is done. A caller that
    wants company can ask a batch to wait until ``min_batch`` requests are queued or the oldest has
    waited ``max_wait_s`` (the defaults, 1 and 0 s, never wait).
    """

    def __init__(
        self,
        score_batch: Callable[[list[Request]], Sequence[Result]],
        max_batch: int = 64,
        min_batch: int = 1,
        max_wait_s: float = 0.0,
    ):
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
                await asyncio.sleep(0)  # the samples finishing alongside this one join it
                while len(queue) < self._min_batch and loop.time() - queue[0][2] < self._max_wait_s:
                    await asyncio.sleep(min(0.02, self._max_wait_s))
                batch = queue[: self._max_batch]
                del queue[: self._max_batch]
                await self._settle(batch)
        finally:
            self._workers.pop(loop, None)
            if not queue:
                self._queues.pop(loop, None)

    async def _settle(self, batch: list[tuple[Request, asyncio.Future, float]]) -> None:
        """Score ``batch`` together; if that fails, each request alone, so a request that cannot be
        scored fails its own sample (with its own exception) and never its batch-mates."""
        try:
            results = await anyio.to_thread.run_sync(self._score_batch, [request for request, _, _ in batch])
        except Exception as err:
            if len(batch) == 1:
                _settle_future(batch[0][1], error=err)
                return
            for entry in batch:
                await self._settle([entry])
            return
        for (_, future, _), result in zip(batch, results):
            _settle_future(future, result=result)


def _settle_future(future: asyncio.Future, result: object = None, error: Exception | None = None) -> None:
    """Hand a result or an error to a waiting sample, unless it stopped waiting (cancelled)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
