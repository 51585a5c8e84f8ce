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


def main() -> None:
    from inspect_ai.log import read_eval_log_sample_summaries

    from narrative_infill.analysis.sample_records import check_log

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path)
    logs = sorted(str(p) for p in parser.parse_args().logs.rglob("*.eval"))
    started = time.perf_counter()
    samples = sum(len(read_eval_log_sample_summaries(location)) for location in logs)
    inspect_s = time.perf_counter() - started
    started = time.perf_counter()
    for location in logs:
        check_log(location)
    check_s = time.perf_counter() - started
    print(
        f"logs={len(logs)} samples={samples} check_seconds={check_s:.1f} "
        f"check_ms_per_sample={1000 * check_s / samples:.3f} inspect_summaries_seconds={inspect_s:.1f}"
    )


if __name__ == "__main__":
    main()
