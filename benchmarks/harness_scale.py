"""The harness's own ceiling at scale: ``inspect eval`` against a server that answers at once.

An OpenAI-compatible stand-in on 127.0.0.1 (tests/standin_openai_server.py) answers every request
at once with a real model output from ../shared drawn at random (seeded), so no answer/gold pair
repeats; without ../shared it answers with synthetic sentences, and says so. Three sides, each at
two sizes (the demo set's 24 instances times the epochs), alternating A B C per size and round:

A: ``inspect eval narrative_infill/l2`` (a fresh process, metrics on) through Inspect's
   ``openai-api/standin/smollm2`` provider, ``--max-connections 32 --max-samples 64 --display none``;
B: the same command with ``--no-score``;
C: a plain async ``openai`` client sending the same requests (A's log's messages, 32 at a time).

Two sizes separate the fixed cost (process start, imports, models) from the marginal rate:
rate = (n2 - n1) / (t2 - t1), fixed = t1 - n1 / rate, per side from its median times. The CPU
time of A's and B's processes (user + system, all threads) is read the same way: the marginal
core-milliseconds a sample, and what that caps the rate at on this machine's cores when nothing
else runs (cores / CPU a sample): a side whose rate is near its cap is bound by the cores, not by
waiting. Prints each run, A/B and A/C at each size, each side's marginal rate and fixed cost,
the CPU figures, the load average, and last ``ratio=<A/B at the larger size>``.
Usage: python benchmarks/harness_scale.py [--epochs 10 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import load_average
from vllm_overhead import standin_server

from narrative_infill.scorers.metrics.threads import usable_cores

REPO = Path(__file__).resolve().parents[1]
RESPONSES = REPO / ".." / "shared" / "data" / "extraction" / "responses.jsonl"
CONNECTIONS = 32
MAX_SAMPLES = 64
DEMO_INSTANCES = 24


def answers_file(folder: Path) -> Path:
    """The replies the stand-in draws from: ../shared's real outputs, else synthetic ones."""
    if RESPONSES.exists():
        replies = [json.loads(line)["response"] for line in RESPONSES.open(encoding="utf-8") if line.strip()]
        print(f"replies: {len(replies)} real model outputs from {RESPONSES.resolve()}")
    else:
        replies = [
            f"<ANSWER>On day {i}, the neighbour {i % 7} walked to the market and bought bread.</ANSWER>"
            for i in range(2000)
        ]
        print(f"replies: {len(replies)} synthetic sentences (../shared is absent)")
    path = folder / "answers.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def through_inspect(
    base_url: str, key: str, epochs: int, log_dir: Path, score: bool
) -> tuple[float, float, Path]:
    """(seconds, CPU seconds, the log) of one ``inspect eval`` process: start-up, generation and
    scoring; the CPU seconds are the process's user and system time, all its threads."""
    command = [
        str(Path(sys.executable).with_name("inspect")), "eval", "narrative_infill/l2",
        "--model", "openai-api/standin/smollm2", "-T", "data=demo", "--epochs", str(epochs),
        "--max-connections", str(CONNECTIONS), "--max-samples", str(MAX_SAMPLES),
        "--display", "none", "--log-dir", str(log_dir), "--log-format", "eval",
    ] + ([] if score else ["--no-score"])  # fmt: skip
    environment = {**os.environ, "STANDIN_BASE_URL": base_url, "STANDIN_API_KEY": key}
    before = set(log_dir.glob("*.eval"))
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"inspect eval failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    [log] = set(log_dir.glob("*.eval")) - before
    return seconds, cpu, log


def _children_cpu() -> float:
    """User + system seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def requests_of(log: Path) -> list[tuple[list[dict], int | None]]:
    """Each sample's request as A sent it: the messages before the reply and the token cap."""
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(log))
    if header.status != "success":
        raise SystemExit(f"{log}: status {header.status}: {header.error}")
    return [
        (
            [{"role": m.role, "content": m.text} for m in sample.messages[:-1]],
            sample.metadata.get("max_tokens"),
        )
        for sample in header.samples or []
    ]


async def _plain(base_url: str, key: str, requests: list[tuple[list[dict], int | None]]) -> None:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=600)
    gate = asyncio.Semaphore(CONNECTIONS)

    async def one(messages: list[dict], cap: int | None) -> None:
        async with gate:
            await client.chat.completions.create(model="smollm2", messages=messages, max_tokens=cap)

    try:
        await asyncio.gather(*(one(messages, cap) for messages, cap in requests))
    finally:
        await client.close()


def through_plain_client(base_url: str, key: str, requests: list) -> float:
    started = time.perf_counter()
    asyncio.run(_plain(base_url, key, requests))
    return time.perf_counter() - started


def marginal(sizes: list[int], seconds: list[float]) -> tuple[float, float]:
    """(samples/s past the fixed cost, the fixed cost in s) from the two sizes' times."""
    (n1, n2), (t1, t2) = sizes, seconds
    rate = (n2 - n1) / (t2 - t1) if t2 > t1 else float("inf")
    return rate, t1 - n1 / rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--epochs", type=int, nargs=2, default=[10, 40], help="the two sizes, in epochs of 24"
    )
    parser.add_argument("--rounds", type=int, default=2, help="A B C runs per size")
    args = parser.parse_args()
    sizes = [DEMO_INSTANCES * e for e in args.epochs]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    print(f"commit {commit.stdout.strip()}  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  "
          f"{os.cpu_count()} CPUs  load {load_average()}")  # fmt: skip
    times: dict[str, dict[int, list[float]]] = {side: {n: [] for n in sizes} for side in "ABC"}
    cpu: dict[str, dict[int, list[float]]] = {side: {n: [] for n in sizes} for side in "AB"}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        with standin_server(60.0, ["--answers", str(answers_file(folder))]) as (base_url, key):
            for round_number in range(1, args.rounds + 1):
                for epochs, n in zip(args.epochs, sizes):
                    a_seconds, a_cpu, log = through_inspect(base_url, key, epochs, folder, score=True)
                    b_seconds, b_cpu, _ = through_inspect(base_url, key, epochs, folder, score=False)
                    cpu["A"][n].append(a_cpu)
                    cpu["B"][n].append(b_cpu)
                    c_seconds = through_plain_client(base_url, key, requests_of(log))
                    for side, seconds in zip("ABC", (a_seconds, b_seconds, c_seconds)):
                        times[side][n].append(seconds)
                    print(f"  round {round_number}, {n} samples: A {a_seconds:.1f} s ({a_cpu:.1f} CPU-s)  "
                          f"B {b_seconds:.1f} s ({b_cpu:.1f} CPU-s)  C {c_seconds:.1f} s  "
                          f"(load {load_average()})", flush=True)  # fmt: skip
    medians = {side: [statistics.median(times[side][n]) for n in sizes] for side in "ABC"}
    for i, n in enumerate(sizes):
        a, b, c = (medians[side][i] for side in "ABC")
        print(f"{n} samples: A {a:.1f} s  B {b:.1f} s  C {c:.2f} s  A/B {a / b:.2f}  A/C {a / c:.1f}")
    for side, name in zip("ABC", ("A (metrics on)", "B (--no-score)", "C (plain client)")):
        rate, fixed = marginal(sizes, medians[side])
        print(f"{name}: marginal rate {rate:.1f} samples/s, fixed cost {fixed:.1f} s")
    cores = usable_cores()
    for side in "AB":
        (n1, n2), (c1, c2) = sizes, [statistics.median(cpu[side][n]) for n in sizes]
        per_sample = (c2 - c1) / (n2 - n1)
        if per_sample <= 0:
            print(f"{side}: CPU a sample not measurable at these sizes (the larger run used no more CPU)")
            continue
        rate, _ = marginal(sizes, medians[side])
        if not math.isfinite(rate):
            print(f"{side}: {per_sample * 1000:.1f} core-ms a sample; its rate not measurable at these sizes")
            continue
        cap = cores / per_sample
        print(f"{side}: {per_sample * 1000:.1f} core-ms a sample at the margin, {c1 - n1 * per_sample:.1f} "
              f"CPU-s fixed; {cores} cores cap it at {cap:.0f} samples/s, it ran at "
              f"{rate / cap:.0%} of that")  # fmt: skip
    a_rate, a_fixed = marginal(sizes, medians["A"])
    b_rate, b_fixed = marginal(sizes, medians["B"])
    print(f"steady-state A/B rate {a_rate / b_rate:.2f} (target >= 0.8); "
          f"fixed cost A - B {a_fixed - b_fixed:.1f} s (target <= 5); load {load_average()}")  # fmt: skip
    print(f"ratio={medians['A'][1] / medians['B'][1]:.3f}")


if __name__ == "__main__":
    main()
