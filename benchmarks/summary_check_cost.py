"""What checking each sample summary against its record costs report and submit.

Times, over every ``.eval`` log under a folder (e.g. the synthetic logs ``report_throughput.py
--keep DIR`` writes): ``check_log`` (records and summaries read from the zip, compared), and, for
scale, reading the summaries through Inspect (what ``samples_df``, hence the report, reads anyway).
Usage: python benchmarks/summary_check_cost.py DIR
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def _seconds(step, logs: list[str]) -> tuple[float, list]:
    """(wall seconds, results) of ``step`` run on every log."""
    started = time.perf_counter()
    results = [step(location) for location in logs]
    return time.perf_counter() - started, results


def main() -> None:
    from inspect_ai.log import read_eval_log_sample_summaries

    from narrative_infill.platform.analysis.sample_records import check_log

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path)
    logs = sorted(str(p) for p in parser.parse_args().logs.rglob("*.eval"))
    inspect_s, summaries = _seconds(read_eval_log_sample_summaries, logs)
    check_s, _ = _seconds(check_log, logs)
    samples = sum(map(len, summaries))
    print(
        f"logs={len(logs)} samples={samples} check_seconds={check_s:.1f} "
        f"check_ms_per_sample={1000 * check_s / samples:.3f} inspect_summaries_seconds={inspect_s:.1f}"
    )


if __name__ == "__main__":
    main()
