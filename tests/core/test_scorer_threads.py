"""The scorer's torch threads follow the cores other processes leave free (issue 49): with another
process busy on one of two cores, two torch threads scored a pair 1.3 times slower than one, and in
the README's demo eval (llama.cpp generating on the same CPU) a single pair took 1-2.6 s."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

import pytest

from narrative_infill.scorers.metrics import threads as threads_module
from narrative_infill.scorers.metrics.threads import CpuReading, ThreadBudget, free_cores, read_cpu

torch = pytest.importorskip("torch")


def test_free_cores_counts_other_processes_only():
    before = CpuReading(at=0.0, machine_busy_s=10.0, own_s=3.0)
    # 2 s pass: the machine was busy 3.0 CPU-s, 1.0 of them this process's own: others used 1 core
    after = CpuReading(at=2.0, machine_busy_s=13.0, own_s=4.0)
    assert free_cores(before, after, cores=2) == pytest.approx(1.0)
    # this process busy on both cores, nobody else: every core is free for it
    assert free_cores(before, CpuReading(2.0, 14.0, 7.0), cores=2) == pytest.approx(2.0)


def _scripted(readings: list[CpuReading]):
    queue = list(readings)
    return lambda: queue.pop(0)


def _budget_in_thread(budget: ThreadBudget, calls: int) -> list[tuple[int, int]]:
    """(chosen, torch's setting after apply) per call, in a thread of its own so that the test
    process's torch setting is untouched."""
    seen: list[tuple[int, int]] = []

    def run() -> None:
        for _ in range(calls):
            with budget.batch() as chosen:  # apply() alone would leave torch's default changed
                seen.append((chosen, torch.get_num_threads()))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return seen


def test_a_busy_core_leaves_one_thread_and_free_cores_give_torch_its_setting(monkeypatch):
    monkeypatch.setattr(threads_module.time, "sleep", lambda seconds: None)
    readings = [
        CpuReading(0.00, 0.0, 0.0),
        CpuReading(0.05, 0.10, 0.05),  # first interval: others used 0.05 CPU-s in 0.05 s, one core
        CpuReading(1.05, 1.10, 1.05),  # others idle for a second
        CpuReading(1.06, 1.12, 1.06),  # 10 ms later: too short to read, the last choice stays
        CpuReading(3.05, 6.10, 2.05),  # others used both cores: none free, still one thread
    ]
    budget = ThreadBudget(reader=_scripted(readings), cores=2)
    budget._most = 2  # torch's own setting caps it
    seen = _budget_in_thread(budget, 4)
    assert seen == [(1, 1), (2, 2), (2, 2), (1, 1)]


def test_the_cap_is_torchs_setting_when_first_asked(monkeypatch):
    monkeypatch.setattr(threads_module.time, "sleep", lambda seconds: None)
    idle = [CpuReading(0.0, 0.0, 0.0), CpuReading(1.0, 0.0, 0.0)]
    budget = ThreadBudget(reader=_scripted(idle), cores=64)
    seen = _budget_in_thread(budget, 1)
    assert seen == [(torch.get_num_threads(), torch.get_num_threads())]


def test_a_process_spinning_on_a_core_is_read_as_busy():
    """The real reading: another process spinning on one core for the interval leaves at most
    ``cores - 0.5`` free (the spinner holds one core whole unless the machine is overloaded, which
    leaves even less)."""
    spinner = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 5\nwhile time.time() < end: pass"]
    )
    try:
        import time

        time.sleep(0.3)  # the spinner is running
        before = read_cpu()
        time.sleep(0.5)
        after = read_cpu()
    finally:
        spinner.kill()
        spinner.wait()
    cores = threads_module.usable_cores()
    assert free_cores(before, after, cores) <= cores - 0.5


def test_the_scorer_sets_the_threads_before_each_batch(monkeypatch):
    """Every batch the metrics scorer runs goes through the budget, after the models are loaded
    and before the pairs are scored."""
    from narrative_infill.scorers.metrics import pairs, scorer

    events: list[str] = []

    class Recorder:
        @contextlib.contextmanager
        def batch(self):
            events.append("threads")
            yield 1
            events.append("restored")

    def fake_score_pairs(predictions, references, backbones, **options):
        events.append(f"scored {len(predictions)}")
        return [pairs.PairScores(dict.fromkeys([*pairs.METRIC_NAMES, pairs.ATAVG], 0.5))] * len(predictions)

    monkeypatch.setattr(scorer, "budget", Recorder())
    monkeypatch.setattr(scorer, "wait_loaded", lambda backbones: events.append("loaded"))
    monkeypatch.setattr(pairs, "score_pairs", fake_score_pairs)
    batcher, _ = scorer._batcher.__wrapped__("minilm", None, None, None, 64, None)
    batcher._score_batch([("an answer", "a gold"), ("another", "gold")])
    batcher._score_batch([("a third", "gold")])
    assert events == [
        "loaded",
        "threads",
        "scored 2",
        "restored",
        "loaded",
        "threads",
        "scored 1",
        "restored",
    ]


def test_unreadable_cpu_times_leave_torchs_setting_with_one_warning(caplog):
    def unreadable() -> CpuReading:
        raise PermissionError("/proc/stat")

    budget = ThreadBudget(reader=unreadable, cores=2)
    with caplog.at_level("WARNING", logger=threads_module.__name__):
        seen = _budget_in_thread(budget, 3)
    assert seen == [(torch.get_num_threads(), torch.get_num_threads())] * 3
    assert [r.getMessage() for r in caplog.records].count(
        f"scorer threads: CPU times unreadable (/proc/stat); torch keeps {torch.get_num_threads()} threads"
    ) == 1
