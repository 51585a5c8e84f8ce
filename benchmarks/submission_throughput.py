"""Submit and verify at full size: one model's nine logs of 9,142 scored samples each.

The logs are honest, so ``submit`` accepts them: through the importer, ``--distinct`` rows per
setting (real outputs, problems and golds from ../shared when present, synthetic sentences
otherwise) replayed as ``org/model``'s outputs, scored in this process by the metrics scorer
(MiniLM) and by the judge, its grader the ``honest`` stand-in judge of tests/standin_grader.py on
127.0.0.1 (``openai-api/standin/honest``: its replies are in each sample's transcript). Each
log is then filled to ``--n`` samples with copies of its scored samples under new instance ids
(every copy's records still give its scores; scoring all 82,278 afresh would take hours here).
Then ``narrative-infill submit`` and ``narrative-infill verify --logs`` are timed, each in its
own process: verify without re-scoring (``--sample 0``: every other check, every answer
re-extracted) and with every sample re-scored. Submitted as custom (the rows are not the
benchmark's), then relabelled full so that verify runs every check of a ranked track; that
verdict names the relabelling, and the time is what is measured.
Usage: python benchmarks/submission_throughput.py [--n 9142] [--distinct 200] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
RESPONSES = REPO / ".." / "shared" / "data" / "extraction" / "responses.jsonl"
SETTINGS = [("fitb_l0", 0), ("fitb_l1", 0), ("fitb_l2", 0), ("fitb_l3", 0), ("fitb_l4", 0)] + [
    ("reasoning_paradigms", i) for i in range(4)
]


def source_rows(count: int) -> list[dict]:
    """``count`` (problem, gold, response) rows: ../shared's real ones in file order, else synthetic."""
    if RESPONSES.exists():
        with RESPONSES.open(encoding="utf-8") as handle:
            shared = [json.loads(line) for line, _ in zip(handle, range(count))]
        print(f"rows: the first {len(shared)} real outputs of {RESPONSES.resolve()}", flush=True)
        return [{k: row[k] for k in ("problem", "gold_answer", "response")} for row in shared]
    print(f"rows: {count} synthetic stories (../shared is absent)", flush=True)
    return [
        {
            "problem": f"Day {i} began at the market. ______ By evening, stall {i % 7} had sold out.",
            "gold_answer": f"Crowds queued at stall {i % 7} for fresh bread.",
            "response": f"<ANSWER>On day {i}, neighbour {i % 11} bought the last loaves.</ANSWER>",
        }
        for i in range(count)
    ]


def scored_logs(distinct: int, log_dir: Path, grader_url: str) -> list[str]:
    """The nine logs of ``distinct`` rows each, imported and scored (metrics and judge)."""
    from narrative_infill.platform.analysis.importer import import_generations

    rows = source_rows(distinct)
    source = log_dir.parent / "generations.jsonl"
    with open(source, "w", encoding="utf-8") as handle:
        for name, template_id in SETTINGS:
            for i, row in enumerate(rows):
                handle.write(json.dumps({
                    "id": f"rocstories-{i}-n1-i1", "model": "org/model", "template_name": name,
                    "template_id": template_id, "prompt_text": row["problem"], **row,
                }) + "\n")  # fmt: skip
    os.environ.update(STANDIN_BASE_URL=grader_url, STANDIN_API_KEY="standin-key")
    try:
        return import_generations(
            [str(source)], str(log_dir), scorers=["metrics", "judge"],
            model_roles={"grader": "openai-api/standin/honest"},
        )  # fmt: skip
    finally:
        source.unlink()


def fill_with_copies(location: str, n: int) -> None:
    """Fill the log to ``n`` samples with copies of its scored samples under new instance ids,
    and record the full track's dataset identity (what verify of a ranked track reads)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from narrative_infill.inspect_compat import add_samples
    from narrative_infill.platform.analysis.submission.protocol import PUBLISHED_SOURCE

    log = read_eval_log(location)
    scored = log.samples or []
    copies = [
        scored[i % len(scored)].model_copy(update={"id": f"rocstories-{i}-n1-i1", "uuid": None})
        for i in range(len(scored), n)
    ]
    add_samples(log, copies)
    log.eval.metadata = {
        **(log.eval.metadata or {}),
        "dataset_identity": {"source": PUBLISHED_SOURCE, "commit": "0" * 40, "instances": n},
    }
    write_eval_log(log, location)


def write_logs(n: int, distinct: int, log_dir: Path) -> None:
    from standin_grader import judge_server

    with judge_server() as (grader_url, _):
        locations = scored_logs(min(n, distinct), log_dir, grader_url)
    for location in locations:
        fill_with_copies(location, n)


def relabel_full(path: Path) -> None:
    from narrative_infill.platform.analysis.submission.build import content_hash

    document = json.loads(path.read_text())
    document["track"] = "full"
    document["sha256"] = content_hash(document)
    path.write_text(json.dumps(document))


def timed(command: list[str], must_pass: bool) -> float:
    """Seconds of ``command``; a refusal where it ``must_pass`` stops the benchmark (its output shown)."""
    started = time.perf_counter()
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if must_pass and done.returncode != 0:
        output = done.stdout[-3000:] + done.stderr[-3000:]
        raise SystemExit(f"{' '.join(command[3:5])} failed (exit {done.returncode}):\n{output}")
    return time.perf_counter() - started


def verified(seconds: float, submission: Path) -> float:
    """``seconds`` of a verify that ran to its verdict: it wrote its record (the verdict itself
    fails, on the relabelled track); a crash stops the benchmark."""
    record = submission.with_name(submission.name + ".verification.json")
    if not record.exists():
        raise SystemExit(f"verify wrote no record {record}: it did not reach a verdict")
    record.unlink()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=9142, help="samples per setting (9,142: the full track)")
    parser.add_argument("--distinct", type=int, default=200, help="rows per setting scored afresh")
    parser.add_argument("--keep", type=Path, help="write the logs here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        log_dir = args.keep or Path(scratch) / "logs"
        log_dir.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        write_logs(args.n, args.distinct, log_dir)
        print(f"wrote 9 logs x {args.n} scored samples in {time.perf_counter() - started:.0f} s", flush=True)
        out = Path(scratch) / "submission.json"
        cli = [sys.executable, "-m", "narrative_infill.platform.cli"]
        submit_s = timed([*cli, "submit", str(log_dir), "-o", str(out), "--track", "custom"], must_pass=True)
        relabel_full(out)
        verify = [*cli, "verify", str(out), "--logs", str(log_dir)]
        checked_s = verified(timed([*verify, "--sample", "0"], must_pass=False), out)
        rescored_s = verified(timed(verify, must_pass=False), out)
        size_mb = out.stat().st_size / 1e6
        per_1000 = 1000 / (9 * args.n)
        print(
            f"samples={9 * args.n} submit_seconds={submit_s:.1f} verify_seconds_no_rescore={checked_s:.1f} "
            f"verify_seconds_rescore_all={rescored_s:.1f} per_1000_samples: {checked_s * per_1000:.2f} s / "
            f"{rescored_s * per_1000:.2f} s submission_mb={size_mb:.1f}"
        )


if __name__ == "__main__":
    main()
