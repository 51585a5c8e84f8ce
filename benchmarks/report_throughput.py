"""Report speed on synthetic logs: N scored samples (default 100,000) over 20 models x 9 settings.

Writes the logs once (replayed outputs with metric and judge scores attached, built through
the importer), then times ``narrative-infill report`` on them and prints its wall time
(target <= 60 s) and the peak RSS of the report process.
Usage: python benchmarks/report_throughput.py [--n 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETTINGS = ["fitb_l0", "fitb_l1", "fitb_l2", "fitb_l3", "fitb_l4"] + [
    ("reasoning_paradigms", i) for i in range(4)
]


def write_logs(n: int, log_dir: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.scorer import Score

    from narrative_infill.platform.analysis.importer import import_generations

    rng = random.Random(0)
    source = log_dir.with_name(log_dir.name + "-synthetic.jsonl")  # the import refuses a non-empty folder
    with open(source, "w", encoding="utf-8") as handle:
        for i in range(n):
            setting = SETTINGS[i % len(SETTINGS)]
            name, template_id = (setting, 0) if isinstance(setting, str) else setting
            handle.write(json.dumps({
                "id": i, "model": f"org/model-{(i // len(SETTINGS)) % 20}", "template_name": name, "template_id": template_id,
                "problem": f"Story {i % 500} begins. ______ It ends.", "gold_answer": "The middle happened.",
                "response": f"<ANSWER>Answer {i}.</ANSWER>", "prompt_text": f"Story {i % 500} begins. ______ It ends.",
            }) + "\n")  # fmt: skip
    locations = import_generations([str(source)], str(log_dir))
    dimensions = (
        "fluency",
        "context_faithfulness",
        "bidirectional_coherence",
        "narrative_consistency",
        "informativeness",
    )
    for location in locations:
        log = read_eval_log(location)
        for sample in log.samples:
            metric_values = {k: rng.random() for k in ("bertscore", "rouge1", "meteor", "chrf", "semf1")}
            metric_values["atavg"] = sum(metric_values.values()) / 5
            judge_values = {d: rng.randint(1, 5) for d in dimensions}
            judge_values["qavg"] = sum(judge_values.values()) / 5
            judge_values["grader_failed"] = 0.0
            # the answer scored, as the scorers record it (the report refuses an empty answer scored above 0)
            answer = sample.output.completion
            sample.scores = {
                "metrics": Score(value=metric_values, answer=answer),
                "judge": Score(value=judge_values, answer=answer),
            }
        write_eval_log(log, location)
    source.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="write the synthetic logs here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log_dir = args.keep or Path(scratch) / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        write_logs(args.n, log_dir)
        print(f"wrote {args.n} synthetic scored samples in {time.perf_counter() - started:.0f} s", flush=True)
        out = Path(scratch) / "report"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "narrative_infill.platform.cli", "report", str(log_dir), "-o", str(out)], check=True
        )
        elapsed = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"samples={args.n} report_seconds={elapsed:.1f} report_peak_rss_mb={peak_mb:.0f}")


if __name__ == "__main__":
    main()
