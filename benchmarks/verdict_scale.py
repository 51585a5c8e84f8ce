"""What one entry costs at the benchmark's real size: ``submit``, ``verify`` and ``leaderboard --logs``.

One honest entry of the nine settings at two sizes (``--sizes``: rows per setting), each answer a
distinct real output of ../shared (synthetic sentences where it is absent) imported and scored in
this process (metrics with MiniLM, the judge by the ``honest`` stand-in grader of
tests/standin_grader.py); that scoring is not timed. Each step is then timed in its own process,
cold (an empty cache folder: a machine that never read these answers) and warm (again, with the
cache its cold run left). From the two sizes: each step's cost an answer at the margin and its fixed
cost, and the extrapolations to a full-track entry (82,278 answers), to a cold board of twenty such
entries and to the rebuild of that board unchanged.
Usage: python benchmarks/verdict_scale.py [--sizes 1 2] [--steps submit verify leaderboard] [--keep DIR]
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
SETTINGS = [(f"fitb_l{level}", 0) for level in range(5)] + [("reasoning_paradigms", i) for i in range(4)]
FULL_ENTRY = 9 * 9142
BOARD = 20
STEPS = ("submit", "verify", "leaderboard")


def source_rows(count: int) -> list[dict]:
    """``count`` distinct (problem, gold, response) rows: ../shared's real ones, else synthetic."""
    if RESPONSES.exists():
        rows, seen = [], set()
        with RESPONSES.open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row["response"] not in seen:
                    seen.add(row["response"])
                    rows.append({k: row[k] for k in ("problem", "gold_answer", "response")})
                if len(rows) == count:
                    return rows
    return [
        {
            "problem": f"Day {i} began at the market. ______ By evening, stall {i % 7} had sold out.",
            "gold_answer": f"Crowds queued at stall {i % 7} for fresh bread.",
            "response": f"<ANSWER>On day {i}, neighbour {i % 11} bought the last loaves.</ANSWER>",
        }
        for i in range(count)
    ]


def write_logs(per_setting: int, log_dir: Path) -> None:
    """The entry's nine logs, ``per_setting`` rows each (no answer repeated), imported and scored."""
    from standin_grader import judge_server

    from narrative_infill.platform.analysis.importer import import_generations

    rows = source_rows(per_setting * len(SETTINGS))
    source = log_dir.parent / f"generations-{per_setting}.jsonl"
    with open(source, "w", encoding="utf-8") as handle:
        for s, (name, template_id) in enumerate(SETTINGS):
            for i in range(per_setting):
                row = rows[s * per_setting + i]
                handle.write(json.dumps({
                    "id": f"rocstories-{i}-n1-i1", "model": "org/model", "template_name": name,
                    "template_id": template_id, "prompt_text": row["problem"], **row,
                }) + "\n")  # fmt: skip
    with judge_server() as (grader_url, _):
        os.environ.update(STANDIN_BASE_URL=grader_url, STANDIN_API_KEY="standin-key")
        import_generations(
            [str(source)], str(log_dir), scorers=["metrics", "judge"],
            model_roles={"grader": "openai-api/standin/honest"},
        )  # fmt: skip


def timed(command: list[str], cache: Path) -> float:
    """Seconds of ``command`` with its caches under ``cache``; a failure stops the benchmark."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NARRATIVE_INFILL_")}
    env.update(XDG_CACHE_HOME=str(cache), NARRATIVE_INFILL_EMBEDDING_CACHE=str(cache / "embeddings"))
    started = time.perf_counter()
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[3:5])} failed (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return seconds


def measure(per_setting: int, root: Path, steps: list[str]) -> dict[str, dict[str, float]]:
    """{step: {"cold": s, "warm": s}} for one entry of ``per_setting`` rows a setting."""
    logs, board = root / "logs", root / "submissions"
    logs.mkdir(parents=True)
    board.mkdir()
    write_logs(per_setting, logs)
    cli = [sys.executable, "-m", "narrative_infill.platform.cli"]
    entry = board / "entry.json"
    commands = {
        "submit": [*cli, "submit", str(logs), "-o", str(entry), "--track", "custom"],
        "verify": [*cli, "verify", str(entry), "--logs", str(logs)],
        "leaderboard": [*cli, "leaderboard", str(board), "--logs", str(logs), "-o", str(root / "site")],
    }
    times: dict[str, dict[str, float]] = {}
    for step in steps:
        cache = root / f"cache-{step}"  # each step on a machine of its own: its cold run reads all
        times[step] = {"cold": timed(commands[step], cache), "warm": timed(commands[step], cache)}
        (board / "entry.json.verification.json").unlink(missing_ok=True)  # not a submission
        print(
            f"{9 * per_setting} answers: {step} cold {times[step]['cold']:.1f} s, "
            f"warm {times[step]['warm']:.1f} s",
            flush=True,
        )
    return times


def read_costs(per_setting: int) -> tuple[float, float]:
    """(s a fluency reading, s a metrics re-scoring) of this entry's answers, cold, in this process:
    the two costs a sampled verdict pays per answer it reads."""
    from narrative_infill.platform.analysis.fluency import fluency_reader
    from narrative_infill.scorers.metrics.embedding import resolve_backbones
    from narrative_infill.scorers.metrics.pairs import score_pairs

    rows = source_rows(per_setting * len(SETTINGS))
    answers = [row["response"].replace("<ANSWER>", "").replace("</ANSWER>", "") for row in rows]
    os.environ["NARRATIVE_INFILL_FLUENCY_CACHE"] = "off"
    read = fluency_reader()
    read("warm the model up")
    started = time.perf_counter()
    for answer in answers:
        read(answer)
    fluency_s = (time.perf_counter() - started) / len(answers)
    backbones = resolve_backbones("minilm")
    score_pairs(answers[:2], [row["gold_answer"] for row in rows[:2]], backbones)  # load the backbones
    started = time.perf_counter()
    score_pairs(answers, [row["gold_answer"] for row in rows], backbones, use_cache=False)
    return fluency_s, (time.perf_counter() - started) / len(answers)


def main() -> None:
    from narrative_infill.platform.analysis.submission.sampling import FLUENCY_READS, RESCORED

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[1, 2], help="rows per setting, two sizes")
    parser.add_argument("--keep", type=Path, help="write the logs and caches here and keep them")
    parser.add_argument(
        "--steps", nargs="+", choices=STEPS, default=list(STEPS),
        help="the steps to time (CI's smoke times submit alone: each step is a process start a size)",
    )  # fmt: skip
    args = parser.parse_args()
    small, large = sorted(args.sizes)
    if small == large or 9 * large > min(FLUENCY_READS, RESCORED):
        parser.error(
            f"--sizes: two different sizes, each of at most {min(FLUENCY_READS, RESCORED) // 9} rows"
        )
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        measured = {size: measure(size, root / f"size-{size}", args.steps) for size in (small, large)}
    fluency_s, rescore_s = read_costs(large)
    print(f"cold, in process: {fluency_s:.3f} s a fluency reading, {rescore_s:.4f} s a metrics re-scoring")
    answers = {size: 9 * size for size in (small, large)}
    totals: dict[str, float] = {}
    negative: list[str] = []
    print(
        "| step | cache | s an answer at the margin | fixed s | every answer read: full entry h "
        "| drawn: full entry h |"
    )
    print("|---|---|---|---|---|---|")
    for step in args.steps:
        for state in ("cold", "warm"):
            a, b = measured[small][step][state], measured[large][step][state]
            margin = (b - a) / (answers[large] - answers[small])
            fixed = a - margin * answers[small]
            every = fixed + margin * FULL_ENTRY
            # at these sizes every answer is read; a full entry's draws read FLUENCY_READS and RESCORED
            # (submit and verify each; the board recalls a warm verdict, so its warm margin is the rest)
            reads = fluency_s * FLUENCY_READS + rescore_s * RESCORED
            drawn = (
                every if state == "warm" else fixed + (margin - fluency_s - rescore_s) * FULL_ENTRY + reads
            )
            totals[state] = totals.get(state, 0.0) + drawn
            negative += [f"{step} {state}"] if min(margin, drawn) < 0 else []
            print(
                f"| {step} | {state} | {margin:.4f} | {fixed:.1f} | {every / 3600:.2f} | {drawn / 3600:.2f} |"
            )
            if step == "leaderboard":
                what = "cold board" if state == "cold" else "unchanged rebuild"
                print(
                    f"board of {BOARD} full entries, {what}: {((drawn - fixed) * BOARD + fixed) / 60:.1f} min"
                )
    print(f"full entry (drawn): {' + '.join(args.steps)} cold {totals['cold'] / 3600:.2f} h")
    if negative:
        print(f"negative at {', '.join(negative)}: the load moved more than the cost an answer; re-measure")


if __name__ == "__main__":
    main()
