"""The shared extraction of a sample (``scorers/answer.py``): computed off the event loop."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import narrative_infill.scorers.answer as answer
from narrative_infill.extraction import Extraction, ExtractionStatus


def test_extraction_runs_in_a_worker_thread_so_other_samples_keep_moving(monkeypatch):
    """The extraction blocks until another sample's coroutine releases it: that can only
    happen when the extraction runs off the event loop (no wall-clock threshold)."""
    released = threading.Event()
    seen = {}

    def blocking_extract(extraction, response, problem):
        seen["thread"] = threading.get_ident()
        seen["released"] = released.wait(timeout=60)  # the bound only ends a deadlock: it fails the test
        return Extraction(f"extracted from {response}", ExtractionStatus.WHOLE_RESPONSE)

    monkeypatch.setattr(answer, "extract_with", blocking_extract)
    answer.read_answer.cache_clear()
    state = SimpleNamespace(
        output=SimpleNamespace(completion="a long reply"), input_text="A. ______ B.", metadata={"n": 1}
    )

    async def other_sample():
        await asyncio.sleep(0)
        released.set()

    async def main():
        return await asyncio.gather(answer.extracted(state), other_sample())

    loop_thread = threading.get_ident()
    result, _ = asyncio.run(main())
    answer.read_answer.cache_clear()
    assert result.text == "extracted from a long reply"
    assert seen == {"thread": seen["thread"], "released": True} and seen["thread"] != loop_thread


def test_the_extraction_is_computed_once_per_response_and_problem(monkeypatch):
    calls = []
    monkeypatch.setattr(
        answer, "extract_with", lambda *args: calls.append(args) or Extraction("x", ExtractionStatus.LINE)
    )
    answer.read_answer.cache_clear()
    state = SimpleNamespace(
        output=SimpleNamespace(completion="reply"), input_text="A. ______ B.", metadata={}
    )
    for _ in range(3):
        asyncio.run(answer.extracted(state))
    answer.read_answer.cache_clear()
    assert calls == [("ours", "reply", "A. ______ B.")]
