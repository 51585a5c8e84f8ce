"""How many intra-op threads torch gets for a batch: the cores other processes leave free.

During ``inspect eval`` the encoders score while the model generates. When the model runs on the
same CPU (the local llama.cpp server of the README's demo), torch's threads and the model's share
the cores, and a parallel region waits at every operator for a thread the scheduler has paused:
on the 2-core machine, with another process spinning on one core, a pair took about 1.3 times as long
on two threads as on one, and during the README's demo eval a single pair took 1-2.6 s to score
instead of tens of milliseconds; with the cores free, two threads are about 1.6 times as fast as one
(``benchmarks/scorer_profile.py --busy 1`` and without it; docs/performance.md). So each batch runs
on the cores that other processes did not use since the previous batch, at least one and at most
torch's own setting (``OMP_NUM_THREADS`` or torch's default, read once): this process's own CPU
time (the event loop, the scorer) does not count against it. psutil reads the CPU times; no
library chooses a thread count from the machine's load, so this is written here.

What it cannot see: a model that runs inside this process (Inspect's ``hf/`` provider) counts as
the process's own time, so its cores look free, as they did before this budget; and a batch after a
long quiet pause reads the average over the pause.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

logger = logging.getLogger(__name__)

#: the shortest interval a reading is taken over (the first batch waits this long for one)
MIN_INTERVAL_S = 0.05


@dataclass(frozen=True)
class CpuReading:
    at: float  # monotonic seconds
    machine_busy_s: float  # CPU seconds every process spent busy on the cores this one may use
    own_s: float  # CPU seconds this process spent, all threads


def read_cpu() -> CpuReading:
    """Busy time of the cores this process may run on only (``taskset``, a container's cpuset:
    /proc/stat shows every core of the host, and work on the others leaves these free)."""
    import psutil

    allowed = _affinity()
    per_core = psutil.cpu_times(percpu=True)
    if allowed and max(allowed) < len(per_core):
        busy = sum(_busy(times) for core, times in enumerate(per_core) if core in allowed)
    else:  # not Linux, or per-core times that cannot be matched to core numbers: every core
        busy = _busy(psutil.cpu_times())
    own = psutil.Process().cpu_times()
    return CpuReading(time.monotonic(), busy, own.user + own.system)


def _busy(times) -> float:
    busy = times.user + times.system + getattr(times, "nice", 0.0) + getattr(times, "irq", 0.0)
    return busy + getattr(times, "softirq", 0.0) + getattr(times, "steal", 0.0)


def _affinity() -> set[int] | None:
    """The cores this process may run on; None where that cannot be asked (not Linux)."""
    try:
        return os.sched_getaffinity(0)
    except AttributeError:
        return None


def free_cores(before: CpuReading, after: CpuReading, cores: int) -> float:
    """The cores other processes left idle between two readings."""
    elapsed = after.at - before.at
    if elapsed <= 0:
        return float(cores)
    others = (after.machine_busy_s - before.machine_busy_s) - (after.own_s - before.own_s)
    return cores - max(0.0, others) / elapsed


class ThreadBudget:
    """Sets torch's intra-op threads before each batch to the cores left free (see the module)."""

    def __init__(self, reader: Callable[[], CpuReading] = read_cpu, cores: int | None = None):
        self._reader = reader
        self._cores = cores
        self._most: int | None = None  # torch's own setting, the most a batch gets
        self._last: CpuReading | None = None
        self._threads: int | None = None
        self._warned = False
        self._lock = threading.Lock()

    def threads(self) -> int:
        """The threads the next batch gets: the free cores since the last reading, rounded, between 1
        and torch's setting. The first batch reads over ``MIN_INTERVAL_S``; a batch sooner than that
        after the last reading keeps the last choice, and the interval grows until the next one."""
        import torch

        with self._lock:
            if self._most is None:
                self._most = torch.get_num_threads()
            reading = self._reader()
            if self._last is None:
                time.sleep(MIN_INTERVAL_S)
                self._last, reading = reading, self._reader()
            elif self._threads is not None and reading.at - self._last.at < MIN_INTERVAL_S:
                return self._threads
            free = free_cores(self._last, reading, self._cores or usable_cores())
            self._last = reading
            self._threads = max(1, min(self._most, round(free)))
            return self._threads

    def apply(self) -> int:
        """Give torch the threads for the next batch; the number given. Where the CPU times cannot
        be read (no /proc in a sandbox, psutil missing or failing in any other way), torch keeps
        its setting, with one warning: the thread count moves the speed only, never a score, so no
        failure here may fail a batch."""
        import torch

        if not _per_thread_setting():
            return torch.get_num_threads()
        try:
            threads = self.threads()
        except Exception as err:  # noqa: BLE001 - see the docstring
            if not self._warned:
                self._warned = True
                kept = torch.get_num_threads()
                logger.warning("scorer threads: CPU times unreadable (%s); torch keeps %d threads", err, kept)
            return torch.get_num_threads()
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        return threads

    @contextmanager
    def batch(self) -> Iterator[int]:
        """``apply`` for the block, then torch's own setting back: with OpenMP,
        ``torch.set_num_threads`` in one thread also sets the count that every thread not yet using
        torch starts with (the main thread included), so a batch's choice would otherwise become
        the whole process's."""
        import torch

        before = torch.get_num_threads()
        threads = self.apply()
        try:
            yield threads
        finally:
            restore = self._most if self._most is not None else before
            if torch.get_num_threads() != restore:
                torch.set_num_threads(restore)


@functools.cache
def _per_thread_setting() -> bool:
    """Whether torch's intra-op count is per thread (OpenMP, torch's default build). With the native
    pool or TBB it is one for the whole process, and the native pool takes only the first
    ``set_num_threads``: a choice made while the machine was busy would hold every later batch,
    so there torch keeps its own setting (said once)."""
    import torch

    openmp = "ATen parallel backend: OpenMP" in torch.__config__.parallel_info()
    if not openmp:
        logger.info("scorer threads: torch's parallel backend is not OpenMP; torch keeps its own setting")
    return openmp


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system tells it)."""
    allowed = _affinity()
    return len(allowed) if allowed else os.cpu_count() or 1


#: one budget per process (the readings are the process's); ``batch`` sets the calling thread's
#: torch threads for a batch (with OpenMP, torch's default, each thread has its own setting once it
#: has used torch) and puts torch's setting back after it
budget = ThreadBudget()
