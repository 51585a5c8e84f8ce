"""Where the metrics scorer's steady-state time goes, and how it scales with cores (issue 49).

Scores N real (answer, gold) pairs of ../shared (the stored outputs, extracted as the scorer does,
against their golds; synthetic sentences when ../shared is absent, and it says so) through
``score_pairs`` in batches of ``--batch`` pairs, as the scorer's batcher hands them over when samples
queue, with the golds' caches off so every round does the same work. torch runs at 1 and at 2
intra-op threads, alternating, ``--rounds`` times. Timers name the parts:

- encoder: the encoders' forward passes (BERTScore's and Sem-F1's), timed by forward hooks; torch
  releases the GIL inside them and runs them in its intra-op threads;
- lexical: ROUGE-1, METEOR and chrF, Python under the GIL;
- rest: the wall time left (tokenising, padding, sentence splits, BERTScore's greedy matching),
  Python under the GIL for most of it.

The encoders' linear layers' FLOPs are counted from their inputs' shapes (forward hooks on each
``nn.Linear``), so the encoder's achieved GFLOP/s stands beside a plain torch matmul of the largest
linear layer's shape at the same thread count, timed in the same run: near it, the passes already
run as fast as these cores multiply, so more cores or a GPU, not code, makes them faster.

Prints, per thread count, the pairs a second and each part's milliseconds a pair (medians over the
rounds), the GFLOP/s beside the matmul's; then the scaling from 1 to 2 threads, and the ceiling the
GIL-holding parts set: pairs/s if the encoder took no time, which a machine with many cores or a
GPU approaches and cannot pass (a projection from these figures, not a measurement on such a
machine). Last line ``ratio=<pairs/s at 2 threads / at 1 thread>``.

``--busy K`` keeps K other processes spinning on a core each while the rounds run, as a local model
generating on the same CPU would: then more threads than free cores are slower, not faster (the
reason the scorer gives torch only the free cores, ``scorers/metrics/threads.py``).

Usage: python benchmarks/scorer_profile.py [--n 512] [--batch 64] [--rounds 3] [--busy 0] [--backbone auto]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import load_average, peak_rss_mb

RESPONSES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction" / "responses.jsonl"
THREADS = (1, 2)
PARTS = ("encoder", "lexical", "rest")


def scored_pairs(n: int) -> list[tuple[str, str]]:
    """``n`` (extracted answer, gold) pairs: ../shared's outputs cycled in file order, else synthetic."""
    from narrative_infill.scorers.answer import read_answer

    if not RESPONSES.exists():
        print("pairs: synthetic sentences (../shared is absent)")
        return [
            (f"On day {i} the neighbour walked to market {i % 7}.", f"The neighbour {i % 5} bought bread.")
            for i in range(n)
        ]
    rows = [json.loads(line) for line in RESPONSES.open(encoding="utf-8") if line.strip()]
    chosen = [rows[i % len(rows)] for i in range(n)]
    print(f"pairs: {n} stored outputs of {RESPONSES.resolve()} (extraction ours) against their golds")
    return [(read_answer("ours", row["response"], row["problem"]).text, row["gold_answer"]) for row in chosen]


class Clock:
    """Seconds spent in each part, and the encoders' linear-layer FLOPs, since the last ``reset``."""

    def __init__(self) -> None:
        self.handles: list = []
        self.reset()

    def reset(self) -> None:
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self.flops = 0.0
        self._depth, self._entered = 0, 0.0  # encoder passes under way; when the outermost began

    def timed(self, part: str, function: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - started

        return wrapper

    def watch_encoders(self, encoders: list) -> None:
        """Time each of ``encoders``' forward passes and count their linear layers' multiply-adds."""
        for encoder in encoders:
            self.handles += [
                encoder.register_forward_pre_hook(self._enter),
                encoder.register_forward_hook(self._leave, always_call=True),
            ]
        for layer in self.linear_layers(encoders):
            self.handles.append(layer.register_forward_hook(self._count_linear))

    @staticmethod
    def linear_layers(encoders: list) -> list:
        """Each linear layer once, however many of ``encoders`` hold it."""
        import torch

        found = {id(m): m for e in encoders for m in e.modules() if isinstance(m, torch.nn.Linear)}
        return list(found.values())

    def _enter(self, _module, _args) -> None:
        """Only the outermost of nested hooked passes is timed: sentence-transformers 3-5's first
        module calls the encoder through its hooks, and under the MiniLM fallback BERTScore's encoder
        is that same encoder, so one Sem-F1 pass would otherwise be timed twice."""
        if self._depth == 0:
            self._entered = time.perf_counter()
        self._depth += 1

    def _leave(self, _module, _args, _output) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds["encoder"] += time.perf_counter() - self._entered

    def _count_linear(self, layer, args, output) -> None:
        self.flops += 2.0 * args[0].numel() * layer.out_features


@contextmanager
def instrumented(backbones) -> Iterator[tuple[Clock, tuple[int, int]]]:
    """``score_pairs``' lexical metrics wrapped and its encoders hooked, for the block (undone after,
    since CI's smoke step runs other benchmarks in this process); the largest linear layer's shape."""
    from narrative_infill.scorers.metrics import embedding, pairs

    clock = Clock()
    lexical = {name: getattr(pairs, name) for name in ("rouge1_f1", "meteor", "chrf")}
    try:  # undone however the setting up ends, too
        for name, function in lexical.items():
            setattr(pairs, name, clock.timed("lexical", function))
        _, bert_encoder, _ = embedding._bertscore_encoder(
            backbones.bertscore_model, backbones.bertscore_layer, backbones.semf1_model
        )
        # BERTScore calls its encoder; sentence-transformers calls its first module, which runs the
        # encoder's forward (without the encoder's hooks from version 6; through them before, when
        # the Clock times only the outer pass).
        encoders = [bert_encoder, embedding._sentence_model(backbones.semf1_model)[0]]
        clock.watch_encoders(encoders)
        largest = max(clock.linear_layers(encoders), key=lambda m: m.in_features * m.out_features)
        yield clock, (largest.in_features, largest.out_features)
    finally:
        for name, function in lexical.items():
            setattr(pairs, name, function)
        for handle in clock.handles:
            handle.remove()


@contextmanager
def spinning(processes: int) -> Iterator[None]:
    """``processes`` other Python processes, each keeping one core busy, for the block."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def matmul_gflops(shape: tuple[int, int], seconds: float = 0.5) -> float:
    """GFLOP/s of a plain float32 matmul of 4,096 rows through a linear layer of ``shape``."""
    import torch

    rows = torch.randn(4096, shape[0])
    weight = torch.randn(shape[0], shape[1])
    torch.matmul(rows, weight)  # first call allocates
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        torch.matmul(rows, weight)
        calls += 1
    return 2.0 * 4096 * shape[0] * shape[1] * calls / (time.perf_counter() - started) / 1e9


def one_round(batches: list[list[tuple[str, str]]], backbones, clock: Clock) -> tuple[float, dict, float]:
    """(wall seconds, seconds per part, linear FLOPs) of scoring every batch once, caches off."""
    from narrative_infill.scorers.metrics.pairs import score_pairs

    clock.reset()
    started = time.perf_counter()
    for batch in batches:
        score_pairs([a for a, _ in batch], [g for _, g in batch], backbones, use_cache=False)
    wall = time.perf_counter() - started
    parts = dict(clock.seconds, rest=wall - clock.seconds["encoder"] - clock.seconds["lexical"])
    return wall, parts, clock.flops


def positive(text: str) -> int:
    """argparse's type for a count of at least one."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def gflops(flops: float, seconds: float) -> str:
    """GFLOP/s, or ``n/a`` where the encoder ran no pass (every answer of the round empty)."""
    return f"{flops / seconds / 1e9:.1f}" if seconds > 0 else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=positive, default=512, help="pairs scored per round")
    parser.add_argument("--batch", type=positive, default=64, help="pairs per score_pairs call")
    parser.add_argument("--rounds", type=positive, default=3, help="rounds per thread count, alternating")
    parser.add_argument("--busy", type=int, default=0, help="other processes spinning on a core each")
    parser.add_argument("--backbone", default="auto", choices=["auto", "paper", "minilm"])
    args = parser.parse_args()

    import torch

    from narrative_infill.scorers.metrics.loading import wait_loaded
    from narrative_infill.scorers.metrics.pairs import resolve_backbones

    print(f"{os.cpu_count()} CPUs  load {load_average()}  torch {torch.__version__}")
    pairs = scored_pairs(args.n)
    batches = [pairs[i : i + args.batch] for i in range(0, len(pairs), args.batch)]
    backbones = resolve_backbones(args.backbone)
    wait_loaded(backbones)
    results: dict[int, list[tuple[float, dict, float, float]]] = {t: [] for t in THREADS}
    threads_before = torch.get_num_threads()
    if args.busy:
        print(f"{args.busy} other process(es) spinning on a core each while the rounds run")
    with instrumented(backbones) as (clock, shape), spinning(args.busy):
        try:
            for round_number in range(1, args.rounds + 1):
                for threads in THREADS:
                    torch.set_num_threads(threads)
                    wall, parts, flops = one_round(batches, backbones, clock)
                    peak = matmul_gflops(shape)
                    results[threads].append((wall, parts, flops, peak))
                    print(f"  round {round_number}, {threads} thread(s): {args.n / wall:.1f} pairs/s, "
                          f"encoder {gflops(flops, parts['encoder'])} GFLOP/s, matmul {peak:.1f} "
                          f"GFLOP/s  (load {load_average()})", flush=True)  # fmt: skip
        finally:
            torch.set_num_threads(threads_before)

    rates = {}
    for threads in THREADS:
        runs = results[threads]
        wall = statistics.median(run[0] for run in runs)
        per_pair = {part: statistics.median(run[1][part] for run in runs) / args.n * 1000 for part in PARTS}
        timed = [run[2] / run[1]["encoder"] / 1e9 for run in runs if run[1]["encoder"] > 0]
        encoder_rate = statistics.median(timed) if timed else None
        peak = statistics.median(run[3] for run in runs)
        rates[threads] = (args.n / wall, per_pair)
        print(f"{threads} thread(s): {args.n / wall:.1f} pairs/s; ms a pair: "
              + ", ".join(f"{part} {per_pair[part]:.1f}" for part in PARTS)
              + (f"; encoder linear layers {encoder_rate:.1f} GFLOP/s against a plain matmul's {peak:.1f} "
                 f"({encoder_rate / peak:.0%})" if encoder_rate is not None else
                 "; the encoder ran no pass (every answer empty): its GFLOP/s are not measured"))  # fmt: skip
    one, two = rates[1], rates[2]
    gil_ms = two[1]["lexical"] + two[1]["rest"]
    encoder_scaling = (
        f"x{one[1]['encoder'] / two[1]['encoder']:.2f}" if two[1]["encoder"] > 0 else "not measured"
    )
    cap = f"{1000 / gil_ms:.0f} pairs/s" if gil_ms > 0 else "no rate (they took no time)"
    print(f"1 -> 2 threads: whole x{two[0] / one[0]:.2f}, the encoder {encoder_scaling}; the "
          f"GIL-holding parts ({gil_ms:.1f} ms a pair) cap the rate at {cap} however "
          f"fast the encoder (a projection)")  # fmt: skip
    print(f"load {load_average()}, peak RSS {peak_rss_mb():.0f} MB")
    print(f"ratio={two[0] / one[0]:.3f}")


if __name__ == "__main__":
    main()
