"""``build``, ``build-stats`` and ``extract-eval``: instance files and the extraction's accuracy."""

from __future__ import annotations

import argparse
from pathlib import Path

from .options import command, output_option


def _extract_eval(args: argparse.Namespace) -> int:
    """measure answer extraction against a labelled JSONL (response, problem, expected)

    Print n, perfect-match rate (after collapsing whitespace), mean ROUGE-1 F1 and failure rate (ROUGE-1
    = 0) of the extraction against the labels, by status and by model.
    """
    from ..analysis.extraction_eval import judge_rows, read_labelled, report

    rows = read_labelled(args.file)
    print(report(judge_rows(rows), errors=args.errors))
    return 0


def _build(args: argparse.Namespace) -> int:
    """build infilling instances from raw narratives (published schema, CSV or JSONL)

    Mask 1-3 contiguous sentences of each narrative. Same inputs and seed give byte-identical output.
    """
    from ...data.builder import BuildReport, build, write_records
    from ...data.sources import read_source

    report = BuildReport()
    records = build(
        read_source(args.source, args.files),
        policy=args.policy,
        seed=args.seed,
        per_narrative=args.per_narrative,
        all_spans=args.all_spans,
        min_sentences=args.min_sentences,
        max_sentences=args.max_sentences,
        max_tokens=args.max_tokens,
        report=report,
    )
    written = write_records(records, args.output, args.files)
    print(f"{written} instances from {report.narratives} narratives -> {args.output}")
    for reason, count in sorted(report.skipped.items()):
        print(f"  skipped: {count} x {reason}")
    return 0


def _build_stats(args: argparse.Namespace) -> int:
    """Table-1-like summary of a built (or published) instance file"""
    from ...data.builder import build_stats, read_built
    from ...data.dataset import load_benchmark

    load_benchmark(str(args.file))  # each record checked (fields, duplicates) as a task loads it
    records = read_built(args.file)
    print(build_stats(records))
    return 0


def add_commands(commands) -> None:
    from ...data.builder import POLICIES
    from ...data.sources import SOURCES

    extract = command(commands, "extract-eval", _extract_eval)
    extract.add_argument(
        "file", type=Path, help="JSONL with response, problem, expected (and optional n, model)"
    )
    extract.add_argument("--errors", action="store_true", help="list each mismatch with expected and got")

    builder = command(commands, "build", _build)
    builder.add_argument("--source", required=True, choices=SOURCES)
    builder.add_argument(
        "files", nargs="+", help="source files (cnn_dailymail/wikipedia also accept hf or hf:CONFIG:SPLIT)"
    )
    output_option(builder, "OUT.csv or OUT.jsonl")
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

    stats = command(commands, "build-stats", _build_stats)
    stats.add_argument("file", type=Path)
