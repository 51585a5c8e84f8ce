"""Extraction throughput on the 9,800 real responses in ../shared, on one core.

Prints responses per second (target >= 2,000/s) and the distribution of statuses.
Usage: python benchmarks/extraction_throughput.py [--file PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from narrative_infill.extraction import extract_answer

DEFAULT_FILE = (
    Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction" / "responses.jsonl"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; the fastest is reported")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    pairs = [(row["response"], row["problem"]) for row in rows]

    best = float("inf")
    statuses: Counter[str] = Counter()
    for _ in range(args.repeat):
        statuses.clear()
        start = time.process_time()  # CPU time of this single-threaded process: one core
        for response, problem in pairs:
            statuses[extract_answer(response, problem).status.value] += 1
        best = min(best, time.process_time() - start)

    slowest = max(pairs, key=lambda pair: _time_one(*pair))
    print(f"responses={len(pairs)}  cpu_seconds={best:.2f}  responses_per_second={len(pairs) / best:.0f}")
    print(f"slowest single response: {_time_one(*slowest) * 1000:.1f} ms ({len(slowest[0])} characters)")
    print("statuses:")
    for status, count in statuses.most_common():
        print(f"  {status:<18} {count:>6}  {count / len(pairs):6.1%}")


def _time_one(response: str, problem: str) -> float:
    start = time.perf_counter()
    extract_answer(response, problem)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
