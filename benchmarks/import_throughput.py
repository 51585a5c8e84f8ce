"""Import speed: the 9,800 real outputs of ../shared/data/extraction/responses.jsonl into Inspect logs.

Prints the wall time of ``narrative-infill import`` (target <= 60 s) and the logs written.
Usage: python benchmarks/import_throughput.py [--file PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from narrative_infill.platform.analysis.importer import import_generations

RESPONSES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction" / "responses.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=RESPONSES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as log_dir:
        started = time.perf_counter()
        locations = import_generations([str(args.file)], log_dir)
        elapsed = time.perf_counter() - started
        size = sum(Path(location.removeprefix("file://")).stat().st_size for location in locations)
    rows = sum(1 for line in args.file.open(encoding="utf-8") if line.strip())
    print(
        f"rows={rows} logs={len(locations)} seconds={elapsed:.1f} rows_per_second={rows / elapsed:.0f} log_bytes={size:,}"
    )


if __name__ == "__main__":
    main()
