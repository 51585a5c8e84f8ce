"""Side-by-side timing on a shared machine: the two sides alternate in one process, A B A B ...

One run's ratio moves by a third when other jobs share the cores, so a benchmark times each side
``rounds`` times (at least three), interleaved so a burst of load hits both sides alike, and
reports the median of the per-round ratios with their spread (min-max), the load average at
start and end, and the process's peak RSS. Its last line is ``ratio=<median>``.
"""

from __future__ import annotations

import ctypes
import gc
import os
import resource
import statistics
import time
from collections.abc import Callable

MIN_ROUNDS = 3


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def release_freed_memory() -> None:
    """Collect garbage and hand freed heap back to the system, so one side's leftovers (worker
    threads' malloc arenas keep what they freed) do not add to the next side's peak."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def alternate(
    side_a: Callable[[], object],
    side_b: Callable[[], object],
    rounds: int = MIN_ROUNDS,
    prepare_a: Callable[[], object] | None = None,
) -> list[tuple[float, float]]:
    """Seconds of (A, B) in each round; each side is called once per round, A first, after the
    untimed ``prepare_a`` (e.g. reading the log A rescores)."""
    if rounds < MIN_ROUNDS:
        raise ValueError(f"rounds must be at least {MIN_ROUNDS}: one run cannot show a 10% difference here")
    times = []
    for round_number in range(1, rounds + 1):
        if prepare_a is not None:
            prepare_a()
        release_freed_memory()
        started = time.perf_counter()
        side_a()
        a_seconds = time.perf_counter() - started
        release_freed_memory()
        started = time.perf_counter()
        side_b()
        b_seconds = time.perf_counter() - started
        times.append((a_seconds, b_seconds))
        print(
            f"  round {round_number}: A {a_seconds:.1f} s  B {b_seconds:.1f} s  A/B {a_seconds / b_seconds:.3f}"
            f"  (load {load_average()}, peak RSS {peak_rss_mb():.0f} MB)",
            flush=True,
        )
    return times


def summary(times: list[tuple[float, float]], label: str = "") -> tuple[float, str]:
    """The median A/B ratio and a line with it, its spread and the medians of both sides."""
    ratios = sorted(a / b for a, b in times)
    median = statistics.median(ratios)
    line = (
        f"{label}median A {statistics.median(a for a, _ in times):.1f} s  "
        f"B {statistics.median(b for _, b in times):.1f} s  "
        f"ratio {median:.3f} (spread {ratios[0]:.3f}-{ratios[-1]:.3f} over {len(times)} rounds)"
    )
    return median, line
