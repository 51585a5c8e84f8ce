"""A batch's thread choice must stay the batch's: with OpenMP, ``torch.set_num_threads`` in a worker
thread also sets the count every thread that has not used torch yet starts with (the main thread of
``inspect eval``, the next benchmark in .ci/smoke_together.py, a caller's own threads). A budget
that chose one thread while the machine was busy left the whole process on one thread after it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
import threading
import torch
from narrative_infill.scorers.metrics import loading, pairs, scorer
from narrative_infill.scorers.metrics import threads as threads_module
from narrative_infill.scorers.metrics.threads import CpuReading, ThreadBudget

threads_module.time.sleep = lambda seconds: None
busy = [CpuReading(0.0, 0.0, 0.0), CpuReading(1.0, 2.0, 0.0)]  # others used both cores: one thread
budget = ThreadBudget(reader=lambda: busy.pop(0), cores=2)
scorer.budget = budget
threads_module.budget = budget
seen = []

def fake_score_pairs(predictions, references, backbones, **options):
    seen.append(torch.get_num_threads())
    return [pairs.PairScores(dict.fromkeys([*pairs.METRIC_NAMES, pairs.ATAVG], 0.5))] * len(predictions)

pairs.score_pairs = fake_score_pairs
scorer.wait_loaded = lambda backbones: None
batcher, _ = scorer._batcher.__wrapped__("minilm", None, None, None, 64, None)
worker = threading.Thread(target=batcher._score_batch, args=([("an answer", "a gold")],))
worker.start()
worker.join()
later = []
fresh = threading.Thread(target=lambda: later.append(torch.get_num_threads()))
fresh.start()
fresh.join()
print("batch", seen[0], "main", torch.get_num_threads(), "new thread", later[0])
"""


def test_a_batch_on_one_thread_leaves_the_process_default_alone():
    environment = {**os.environ, "OMP_NUM_THREADS": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # the batch ran on the one free core; the main thread and a new thread keep torch's 2
    assert done.stdout.strip().splitlines()[-1] == "batch 1 main 2 new thread 2"


@pytest.mark.parametrize(
    "error",
    [
        ValueError("unparsable /proc/stat"),
        NotImplementedError("cpu_times"),
        ImportError("No module named 'psutil'"),
    ],
)
def test_any_failure_to_read_the_cpu_times_leaves_the_batch_to_score(error, caplog):
    """The thread count moves the speed only, never a score (threads.py): a reading that fails in a
    way other than OSError or psutil.Error (psutil missing from a broken install, a /proc line it
    cannot parse, a platform it does not support) must not fail the batch, and so every sample."""
    import threading

    import torch

    from narrative_infill.scorers.metrics.threads import CpuReading, ThreadBudget

    def unreadable() -> CpuReading:
        raise error

    budget = ThreadBudget(reader=unreadable, cores=2)
    seen: list[object] = []

    def run() -> None:
        try:
            with budget.batch() as threads:
                seen.append(threads)
        except BaseException as err:  # the test's own report of what escaped
            seen.append(err)

    with caplog.at_level("WARNING"):
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    assert seen == [torch.get_num_threads()]
    assert any("CPU times unreadable" in record.getMessage() for record in caplog.records)


def test_cores_outside_the_process_affinity_do_not_count_against_it(monkeypatch):
    """``taskset -c 0,1 inspect eval`` on a 4-core machine (or a container given cores 0-1 of a
    bigger host, where /proc/stat still shows every core): other processes busy on cores 2 and 3
    leave cores 0 and 1, the only ones torch can use, free. Read machine-wide, their busy time was
    set against the process's 2 cores and the scorer ran on one thread however idle its cores."""
    import os
    from types import SimpleNamespace

    import psutil

    from narrative_infill.scorers.metrics import threads as threads_module

    def core(busy: float) -> SimpleNamespace:
        return SimpleNamespace(user=busy, system=0.0, nice=0.0, irq=0.0, softirq=0.0, steal=0.0, idle=0.0)

    moment = {"at": 0.0}

    def cpu_times(percpu: bool = False):
        # cores 0-1 idle; cores 2-3 busy the whole time, by other processes
        cores = [core(0.0), core(0.0), core(moment["at"]), core(moment["at"])]
        if percpu:
            return cores
        return core(sum(c.user for c in cores))

    class Process:
        def cpu_times(self):
            return SimpleNamespace(user=0.0, system=0.0)

    monkeypatch.setattr(psutil, "cpu_times", cpu_times)
    monkeypatch.setattr(psutil, "Process", Process)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(threads_module.time, "monotonic", lambda: moment["at"])
    before = threads_module.read_cpu()
    moment["at"] = 1.0
    after = threads_module.read_cpu()
    assert threads_module.free_cores(before, after, threads_module.usable_cores()) == 2.0


def test_a_torch_without_openmp_keeps_its_setting(monkeypatch):
    """With torch's native thread pool (or TBB) the intra-op count is one for the whole process, and
    the native pool takes only the first ``set_num_threads`` (later ones warn and change nothing):
    a budget that chose one thread at the warm-up, while the machine was busy, would hold every
    later batch to one. Only an OpenMP torch has the per-thread setting the budget relies on."""
    import torch

    from narrative_infill.scorers.metrics import threads as threads_module
    from narrative_infill.scorers.metrics.threads import CpuReading, ThreadBudget

    info = torch.__config__.parallel_info().replace(
        "ATen parallel backend: OpenMP", "ATen parallel backend: native thread pool"
    )
    monkeypatch.setattr(torch.__config__, "parallel_info", lambda: info)
    threads_module._per_thread_setting.cache_clear()  # read once per process: read the patched one
    calls: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    monkeypatch.setattr(threads_module.time, "sleep", lambda seconds: None)
    busy = [CpuReading(0.0, 0.0, 0.0), CpuReading(1.0, 64.0, 0.0)]
    budget = ThreadBudget(reader=lambda: busy.pop(0), cores=2)
    try:
        with budget.batch() as threads:
            assert threads == torch.get_num_threads()
    finally:
        threads_module._per_thread_setting.cache_clear()
    assert calls == []
