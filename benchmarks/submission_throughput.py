"""Submit and verify at full size: one model's nine logs of 9,142 scored samples each (synthetic).

Builds the logs once through the importer (replayed outputs with metric and judge scores,
headers set as a full-track run, the metric signature this machine's MiniLM scoring gives), then
times ``narrative-infill submit`` and ``narrative-infill verify --logs`` on them, each in its own
process: verify without re-scoring (``--sample 0``: every other check, every answer re-extracted)
and with every sample re-scored. The synthetic scores are random, so the re-score names
mismatches; the time is what is measured.
Usage: python benchmarks/submission_throughput.py [--n 9142] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from narrative_infill.paper_protocol import DIMENSIONS

SETTINGS = [("fitb_l0", 0), ("fitb_l1", 0), ("fitb_l2", 0), ("fitb_l3", 0), ("fitb_l4", 0)] + [
    ("reasoning_paradigms", i) for i in range(4)
]


def write_logs(n: int, log_dir: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.scorer import Score

    from narrative_infill.platform.analysis.importer import import_generations
    from narrative_infill.platform.analysis.submission.protocol import PUBLISHED_SOURCE
    from narrative_infill.scorers.metrics.pairs import metrics_signature, resolve_backbones
    from narrative_infill.scorers.metrics.scorer import with_extraction

    signature = with_extraction(metrics_signature(resolve_backbones("minilm")), "ours")
    rng = random.Random(0)
    source = log_dir.parent / "synthetic.jsonl"
    with open(source, "w", encoding="utf-8") as handle:
        for name, template_id in SETTINGS:
            for i in range(n):
                handle.write(json.dumps({
                    "id": f"rocstories-{i}-n1-i1", "model": "org/model", "template_name": name, "template_id": template_id,
                    "problem": f"Story {i} begins. ______ It ends.", "gold_answer": "The middle happened.",
                    "response": f"<ANSWER>Answer {i}.</ANSWER>", "prompt_text": f"Story {i} begins. ______ It ends.",
                }) + "\n")  # fmt: skip
    locations = import_generations([str(source)], str(log_dir))
    source.unlink()
    for location in locations:
        log = read_eval_log(location)
        log.eval.metadata = {
            **(log.eval.metadata or {}),
            "dataset_identity": {"source": PUBLISHED_SOURCE, "commit": "0" * 40, "instances": n},
        }
        for sample in log.samples:
            metrics = {k: rng.random() for k in ("bertscore", "rouge1", "meteor", "chrf", "semf1")}
            judge = {d: rng.randint(1, 5) for d in DIMENSIONS}
            sample.scores = {
                "metrics": Score(value={"atavg": sum(metrics.values()) / 5, **metrics, "truncated": 0.0}, answer=sample.output.completion,
                                 metadata={"metrics_signature": signature}),
                "judge": Score(value={"qavg": sum(judge.values()) / 5, **judge, "grader_failed": 0.0}, answer=sample.output.completion,
                               metadata={"judge_models": "grader=synthetic/judge"}),
            }  # fmt: skip
        write_eval_log(log, location)


def relabel_full(path: Path) -> None:
    from narrative_infill.platform.analysis.submission.build import content_hash

    document = json.loads(path.read_text())
    document["track"] = "full"
    document["sha256"] = content_hash(document)
    path.write_text(json.dumps(document))


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=9142, help="samples per setting (9,142: the full track)")
    parser.add_argument("--keep", type=Path, help="write the synthetic logs here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log_dir = args.keep or Path(scratch) / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        write_logs(args.n, log_dir)
        print(f"wrote 9 logs x {args.n} scored samples in {time.perf_counter() - started:.0f} s", flush=True)
        out = Path(scratch) / "submission.json"
        cli = [sys.executable, "-m", "narrative_infill.platform.cli"]
        # Submitted as custom (synthetic logs are off the protocol), then relabelled full so that
        # verify runs every check of a ranked track, the per-sample prompt rebuild included.
        submit_s = timed([*cli, "submit", str(log_dir), "-o", str(out), "--track", "custom"])
        relabel_full(out)
        checked_s = timed([*cli, "verify", str(out), "--logs", str(log_dir), "--sample", "0"])
        rescored_s = timed([*cli, "verify", str(out), "--logs", str(log_dir)])
        size_mb = out.stat().st_size / 1e6 if out.exists() else float("nan")
        per_1000 = 1000 / (9 * args.n)
        print(
            f"samples={9 * args.n} submit_seconds={submit_s:.1f} verify_seconds_no_rescore={checked_s:.1f} "
            f"verify_seconds_rescore_all={rescored_s:.1f} per_1000_samples: {checked_s * per_1000:.2f} s / "
            f"{rescored_s * per_1000:.2f} s submission_mb={size_mb:.1f}"
        )


if __name__ == "__main__":
    main()
