"""The shared extraction of a sample (``scorers/answer.py``): computed off the event loop."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import narrative_infill.scorers.answer as answer


def test_extraction_runs_in_a_worker_thread_so_other_samples_keep_moving(monkeypatch):
    def slow_extract(response, problem, n=None):
        time.sleep(0.4)  # a 3,000-word response's alignment takes about this long
        return ("extracted", response)

    monkeypatch.setattr(answer, "extract_answer", slow_extract)
    answer._extract.cache_clear()
    state = SimpleNamespace(
        output=SimpleNamespace(completion="a long reply"), input_text="A. ______ B.", metadata={"n": 1}
    )
    ticks = []

    async def other_samples():
        for _ in range(8):
            ticks.append(time.monotonic())
            await asyncio.sleep(0.02)

    async def main():
        return await asyncio.gather(answer.extracted(state), other_samples())

    started = time.monotonic()
    result, _ = asyncio.run(main())
    assert result == ("extracted", "a long reply")
    # Every tick happened while the extraction slept: the loop was never blocked.
    assert ticks[-1] - started < 0.3
    answer._extract.cache_clear()
