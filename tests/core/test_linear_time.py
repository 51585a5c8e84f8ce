"""Every pattern applied to model output runs in time linear in its input (issue 35, finding 1).

Each shape is a hostile or degenerate output that once made a pattern backtrack quadratically (or,
for the published rule, cubically): on b96fdae ``"." * N + "a"`` took 126 s at 64 KB, and
``"<ANSWER>"`` + 4,000 spaces took 159 s under the published rule. Each is timed at 16, 64 and
256 KB, side by side in one run (the best of three runs per size, after a warm-up call, in this
process's CPU time: other processes on the cores, such as CI's lane beside the slow tiers, do not
move it as they move wall time), and must grow about linearly: from 64 to 256 KB the time may grow at most 10x (a quadratic pattern: 16x).
No absolute time is asserted; times under ``NOISE_FLOOR_S`` count as that floor, so a shape that
takes microseconds does not fail on timer noise. Extraction runs here without its input limit
(``max_chars=None``): the limit bounds the cost of real runs, this test shows that each rule is
linear below it. Run with ``-s`` to see the timing table (docs/extraction-limits.md holds one).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from narrative_infill.data.text import remove_eos, split_sentences
from narrative_infill.extraction import extract_answer, extract_published

pytestmark = pytest.mark.slow  # about a minute on two shared cores

PROBLEM = "Maya had been saving her allowance. ______ She rode her bike to the shop."
SIZES_KB = (16, 64, 256)
#: The most 256 KB may cost over 64 KB (linear: 4, quadratic: 16); generous, because other
#: processes share the cores (a loaded run measured 8.3 for a shape that is 4.5 at 1 MB).
MAX_GROWTH = 10.0
#: 16 KB is the warm-up size, its times the noisiest (other processes share the cores): from 16 to
#: 64 KB the growth is checked only loosely, to stop a quadratic shape before it runs at 256 KB.
FAIL_FAST_GROWTH = 12.0
#: Timer noise: a faster run counts as this long (a quadratic shape takes seconds at 64 KB).
NOISE_FLOOR_S = 0.02
REPEATS = 3


def _ours(make: Callable[[int], str]) -> Callable[[int], object]:
    return lambda size: extract_answer(make(size), PROBLEM, max_chars=None)


def _bold_sentences(size: int) -> str:
    return "".join(f"**w{i}** x y z{i}. " for i in range(size // 20))


def _restated_story(size: int) -> str:
    return "".join(
        f"Maya had been saving her allowance {i}. She rode her bike to {i}. " for i in range(size // 60)
    )


SHAPES: dict[str, Callable[[int], object]] = {
    # The shapes.
    "dots": _ours(lambda size: "." * size + "a"),
    "dots_tagged": _ours(lambda size: "<ANSWER>" + "." * size + "a</ANSWER>"),
    "questions": _ours(lambda size: "?" * size + "a"),
    "lt_spaces": _ours(lambda size: "<" + " " * size + "x"),
    "quick_brown_spaces": _ours(lambda size: "The quick brown" + " " * size + "x"),
    # Shapes found by reading every pattern.
    "braces": _ours(lambda size: "{" * size),
    "bold_words_one_line": _ours(lambda size: "Answer: " + "**a** " * (size // 6) + "x"),
    "bold_sentences": _ours(_bold_sentences),
    "short_lines": _ours(lambda size: "x\n" * (size // 2)),
    "restated_story": _ours(_restated_story),
    "published_spaces": lambda size: extract_published("<ANSWER>" + " " * size + "x"),
    "published_opens": lambda size: extract_published("<ANSWER>" * (size // 8)),
    "eos_spaces": lambda size: (split_sentences(" " * size + "x", "rocstories"), remove_eos(" " * size)),
    # Issue 44: a slot opened and never closed, repeated ("{{a{{a..."): the examples stage's slot
    # pattern rescanned the rest of the text from each opening (2.2 s at 64 KB). Every reader of
    # model output gets it.
    "slot_opens": _ours(lambda size: "{{a" * (size // 3)),
    "slot_opens_published": lambda size: extract_published("{{a" * (size // 3)),
    "slot_opens_sentences": lambda size: split_sentences("{{a" * (size // 3), "rocstories"),
}


def _best_time(run: Callable[[int], object], size: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.process_time()
        run(size)
        best = min(best, time.process_time() - start)
    return best


def _growth(times: dict[int, float], small: int, large: int) -> float:
    return max(times[large], NOISE_FLOOR_S) / max(times[small], NOISE_FLOOR_S)


@pytest.mark.parametrize("shape", SHAPES)
def test_time_grows_linearly(shape: str) -> None:
    run = SHAPES[shape]
    run(64)  # warm-up: templates, compiled patterns
    times: dict[int, float] = {}
    for kb in SIZES_KB[:2]:
        times[kb] = _best_time(run, kb * 1024)
    # Checked before the 256 KB runs: a quadratic shape fails here instead of running for an hour.
    assert _growth(times, 16, 64) < FAIL_FAST_GROWTH, (shape, times)
    times[256] = _best_time(run, 256 * 1024)
    assert _growth(times, 64, 256) < MAX_GROWTH, (shape, times)
    row = "  ".join(f"{kb:>3} KB {times[kb]:7.3f} s" for kb in SIZES_KB)
    print(f"\n{shape:22s} {row}  t256/t64 {_growth(times, 64, 256):4.1f}")
