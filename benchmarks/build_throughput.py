"""Instance-building speed for ROC-sized stories: narratives per minute (target >= 10,000/min).

Writes N synthetic five-sentence stories as a ROCStories CSV, then times the whole
``narrative-infill build`` path (read, choose spans, mask, write JSONL) with each policy.
Usage: python benchmarks/build_throughput.py [--n 20000]
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

from narrative_infill.data.builder import BuildReport, build, write_records
from narrative_infill.data.sources import read_source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "roc.csv"
        with open(source, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["storyid", "storytitle", *(f"sentence{i}" for i in range(1, 6))])
            for story in range(args.n):
                writer.writerow([f"s{story}", f"Story {story}", *(
                    f"On day {day} of story {story}, the neighbours talked about the weather and the harvest." for day in range(5)
                )])  # fmt: skip
        for policy, options in (("paper-code", {}), ("all-positions", {"all_spans": True})):
            report = BuildReport()
            start = time.perf_counter()
            written = write_records(build(read_source("rocstories", [str(source)]), policy=policy, seed=1, report=report, **options),
                                    Path(scratch) / "out.jsonl")  # fmt: skip
            elapsed = time.perf_counter() - start
            print(
                f"{policy:<14} {'all spans' if options else 'one per n':<10} narratives={report.narratives} "
                f"instances={written} seconds={elapsed:.2f} narratives_per_minute={report.narratives / elapsed * 60:,.0f}"
            )


if __name__ == "__main__":
    main()
