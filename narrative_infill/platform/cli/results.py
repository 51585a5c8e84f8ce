"""``report``, ``submit``, ``verify``, ``leaderboard`` and ``annotate``: from logs to results."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from ...errors import OptionError
from ...paper_protocol import PUBLISHED_INSTANCES
from ..terminal import printable
from .options import command, high_inclusive_option, output_option, passed, readable, skip_unreadable_option


def _report(args: argparse.Namespace) -> int:
    """the paper's tables and Figure 2 from Inspect logs"""
    from ..analysis.report import write_report
    from ..analysis.report.readme import check_readme, render_section, runs_of, update_readme

    started = time.perf_counter()
    if args.readme:
        check_readme(args.readme)  # before any work: a README without its markers writes nothing
    logs = readable(args.logs, args)
    report = write_report(logs, args.output, **passed(args, "high_inclusive", "human_csv", "compare_paper"))
    for line in report.failed_rechecks:  # marked in report.md too
        print(printable(line))
    if args.readme:
        update_readme(args.readme, render_section(report, runs_of(logs), _report_command(args)))
        print(f"{args.readme}: evaluation report section regenerated")
    if args.compare_paper and "paper_tau_atavg" in report.tables:
        from ..analysis.report.paper_compare import TAU_RANGE

        print(
            f"Kendall tau of the AtAvg model ranking against the paper's, per setting and scoring. "
            f"{TAU_RANGE}:"
        )
        print(report.tables["paper_tau_atavg"].round(2).to_markdown())
    print(
        f"{len(report.tables)} tables, {len(report.figures)} figures, {len(report.absent)} absent -> "
        f"{args.output / 'report.md'} ({time.perf_counter() - started:.1f} s)"
    )
    return 0


def _report_command(args: argparse.Namespace) -> str:
    """The ``report`` command as a user would type it again to regenerate the README's section."""
    words = ["narrative-infill", "report", *map(str, args.logs), "-o", str(args.output)]
    words += ["--high-inclusive"] if args.high_inclusive else []
    words += ["--human", str(args.human_csv)] if args.human_csv else []
    words += ["--compare-paper"] if args.compare_paper else []
    return shlex.join([*words, "--readme", str(args.readme)])


def _submit(args: argparse.Namespace) -> int:
    """one model's logs -> a canonical, self-hashed leaderboard submission"""
    from ..analysis.submission.build import read_settings, submission_document, write_submission
    from ..analysis.submission.recompute import recheck_or_refuse
    from ..analysis.submission.verify import NOT_VERIFIED

    started = time.perf_counter()
    _check_counts(args)
    runs = read_settings(readable(args.logs, args))
    document = submission_document(runs, args.track, args.submitter, high_inclusive=args.high_inclusive)
    recheck = recheck_or_refuse(runs, document, args.sample)  # no claim its records do not give
    write_submission(document, args.output, args.logs)
    settings = ", ".join(document["settings"])
    rescored = f"{NOT_VERIFIED} ({recheck.cannot_rescore})" if recheck.cannot_rescore else "re-scored here"
    print(
        *recheck.sampled,  # what a draw read (``sampling``)
        f"{args.output}: {document['model']['id']}, track {args.track}, settings {settings}, "
        f"metrics {rescored}, sha256 {document['sha256'][:16]}... ({time.perf_counter() - started:.1f} s)",
        sep="\n",
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    """check a submission; with --logs recompute every claim from the logs"""
    from ..analysis.submission.verify import NOT_VERIFIED_EXIT, store, verify

    started = time.perf_counter()
    _check_counts(args)
    _check_folders(("--logs", args.logs))
    for option, value in (("--regenerate", args.regenerate), ("--rejudge", args.rejudge)):
        if value and args.logs is None:
            raise OptionError(f"{option} needs --logs (the runs whose samples it repeats)")
    result = verify(
        args.submission,
        args.logs,
        sample=args.sample,
        regenerate=args.regenerate,
        model=args.model,
        rejudge=args.rejudge,
        grader=args.grader,
    )
    stored = store(result, args.submission)
    for line in result.lines():  # one line each: a field's own line break would print a forged line
        print(printable(line))
    print(printable(f"{args.submission}: {result.verdict()}; record: {stored}"), end="")
    print(f" ({time.perf_counter() - started:.1f} s)")
    if not result.passed:
        return 1
    return NOT_VERIFIED_EXIT if result.logs_checked and not result.rescored else 0


def _check_counts(args: argparse.Namespace) -> None:
    """--sample, --regenerate and --rejudge are counts: a bad one fails before anything runs."""
    from ..analysis.submission.rejudge import RejudgeError, check_k

    least = {"sample": 0, "regenerate": 1}
    for option, minimum in least.items():
        value = getattr(args, option, None)
        if value is not None and value < minimum:
            raise OptionError(f"--{option} must be at least {minimum}, got {value}")
    if getattr(args, "rejudge", None) is not None:
        try:
            check_k(args.rejudge)  # a K that can never fail is refused before anything runs
        except RejudgeError as err:
            raise OptionError(str(err)) from None


def _leaderboard(args: argparse.Namespace) -> int:
    """submissions -> leaderboard.md, leaderboard.json and a self-contained index.html"""
    from contextlib import nullcontext

    from ..analysis.submission.board import REFUSED, write_leaderboard
    from ..analysis.submission.verify import rejudging

    _check_counts(args)
    _check_folders(("--logs", args.logs), ("--bundle-logs", args.bundle_logs))
    if args.rejudge and args.logs is None:
        raise OptionError("--rejudge needs --logs (the entries' logs hold what was judged)")
    with rejudging(args.rejudge, args.grader) if args.rejudge else nullcontext():
        rows = write_leaderboard(
            args.submissions, args.output, **passed(args, "high_inclusive", "logs", "sample", "bundle_logs")
        )
    refused = [r for r in rows if r["badge"] == REFUSED]
    entries = sum(not r.get("baseline", False) for r in rows) - len(refused)
    print(
        f"{entries} entries, {len(rows) - entries - len(refused)} baselines, {len(refused)} refused -> "
        f"{args.output}/index.html, leaderboard.md, leaderboard.json"
    )
    for row in refused:  # the board is written, but a refusal is a failure of the run
        for reason in row["reasons"]:
            print(printable(f"refused {row['file']}: {reason}"), file=sys.stderr)
    return 1 if refused else 0


def _check_folders(*options: tuple[str, Path | None]) -> None:
    """A mistyped log folder must fail before anything is written: verify would otherwise record
    every log as missing over an earlier record."""
    for option, folder in options:
        if folder is not None and not folder.is_dir():
            raise OptionError(f"{option} {folder}: no such folder")


def _annotate(args: argparse.Namespace) -> int:
    """a blinded rating page for the human study behind Table 2"""
    from ..analysis.annotate.server import serve
    from ..analysis.annotate.study import check_name, open_study

    check_name(args.annotator)
    if args.n is not None and args.n < 1:
        raise OptionError(f"--n must be at least 1, got {args.n}")
    manifest = open_study(args.output, args.logs, args.n, args.seed)
    try:
        serve(args.output, manifest, args.annotator, args.host, args.port)
    except KeyboardInterrupt:
        return 130
    return 0


def _rejudge_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--rejudge",
        type=int,
        metavar="K",
        help=f"{what} with your own grader (seed drawn at run time) and test the claimed QAvg "
        "(docs/judge.md)",
    )
    parser.add_argument(
        "--grader",
        metavar="MODEL",
        help="with --rejudge: the grader model (default: the one the submission declares), e.g. "
        "openai/gpt-4.1-mini",
    )


def add_commands(commands) -> None:
    """The commands that turn logs into results: submit, verify, leaderboard, annotate, report."""
    _add_submit(commands)
    _add_verify(commands)
    _add_leaderboard(commands)
    _add_annotate(commands)
    _add_report(commands)


def _add_submit(commands) -> None:
    """``submit``: one model's logs as a submission file."""
    submit = command(commands, "submit", _submit)
    submit.add_argument("logs", nargs="+", help="log files or folders of one model")
    output_option(submit, "submission.json")
    submit.add_argument(
        "--track",
        required=True,
        help=f"full (the published {PUBLISHED_INSTANCES:,}), 10pct (the robustness subset), demo, or custom "
        "(any protocol, never ranked)",
    )
    submit.add_argument("--submitter", help="who submits")
    submit.add_argument(
        "--sample",
        type=int,
        metavar="K",
        help="before writing, re-score the metrics of K samples drawn at run time (default: all)",
    )
    high_inclusive_option(submit, "claim High%%")
    skip_unreadable_option(submit)


def _add_verify(commands) -> None:
    """``verify``: a submission checked against its logs."""
    verifier = command(commands, "verify", _verify)
    verifier.add_argument("submission", type=Path)
    verifier.add_argument("--logs", type=Path, help="folder holding the submission's logs")
    verifier.add_argument(
        "--sample",
        type=int,
        metavar="K",
        help="re-score the metrics of K samples drawn at run time (default: all)",
    )
    verifier.add_argument(
        "--regenerate",
        type=int,
        metavar="K",
        help="generate K instances of each setting again (seed drawn at run time) and test the submitted "
        "AtAvg",
    )
    verifier.add_argument(
        "--model", help="with --regenerate: the model to generate with (default: the declared one)"
    )
    _rejudge_options(verifier, "judge K of its judged samples again")


def _add_leaderboard(commands) -> None:
    """``leaderboard``: the site of verified submissions."""
    board = command(commands, "leaderboard", _leaderboard)
    board.add_argument("submissions", type=Path, help="folder of submission .json files")
    board.add_argument(
        "--logs", type=Path, help="folder holding every submission's logs: verify each one here for its badge"
    )
    board.add_argument(
        "--sample", type=int, metavar="K", help="with --logs: re-score K samples per submission"
    )
    output_option(board, "site folder")
    board.add_argument(
        "--bundle-logs",
        type=Path,
        metavar="LOGS",
        help="folder holding the entries' logs: each entry's become a log viewer (inspect view bundle) "
        "linked from its row",
    )
    high_inclusive_option(board, "High%% of every row")
    _rejudge_options(board, "with --logs: judge K samples of each entry again (badge '+ re-judged')")


def _add_annotate(commands) -> None:
    """``annotate``: the human rating study's server."""
    annotate = command(commands, "annotate", _annotate)
    annotate.add_argument("logs", nargs="+", help="log files or folders to draw the study's samples from")
    output_option(annotate, "the study folder (manifest, ratings, ratings.csv)")
    annotate.add_argument(
        "--n", type=int, help="samples in a new study (default 300, the paper's); leave out to join one"
    )
    annotate.add_argument("--seed", type=int, default=0)
    annotate.add_argument(
        "--annotator", default=os.environ.get("USER", "annotator"), help="your name (names your ratings file)"
    )
    annotate.add_argument("--host", default="127.0.0.1")
    annotate.add_argument("--port", type=int, default=8765)


def _add_report(commands) -> None:
    """``report``: the paper's tables from logs."""
    reporter = command(commands, "report", _report)
    reporter.add_argument("logs", nargs="+", help="log directories or .eval files")
    output_option(reporter, "directory for report.md, CSVs and PNGs")
    high_inclusive_option(reporter, "High%%")
    skip_unreadable_option(reporter)
    reporter.add_argument(
        "--human",
        dest="human_csv",
        metavar="CSV",
        help="CSV of human ratings: sample_id, annotator and the five dimensions (Table 2)",
    )
    reporter.add_argument(
        "--compare-paper",
        action="store_true",
        help="side by side with the paper's numbers, rank agreement (Kendall with its 95% bounds, Spearman) "
        "per setting",
    )
    reporter.add_argument(
        "--readme",
        type=Path,
        metavar="README",
        help="also regenerate README's Evaluation Report: the text between its evaluation-report markers",
    )
