"""``compare``: two runs paired on the instances both scored."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...errors import OptionError
from .options import command, readable, skip_unreadable_option


def _compare(args: argparse.Namespace) -> int:
    """is run A's score really different from run B's? (paired, clustered by source narrative)

    A and B are each one run: a log, or a folder holding one run's logs (two settings of one model,
    or two models of one setting). Over the instances both scored: the mean difference of AtAvg,
    QAvg, each metric and judge dimension, with the clustered paired t test over source narratives
    (its 95% interval and two-sided p-value, which agree) and the smallest difference detectable at
    80% power; fewer than 50 narratives, a baseline side and unequal epochs are said. Runs scored
    with different metric signatures, judges (when a judge's quantity is compared: --metrics atavg
    compares runs judged differently), dataset revisions or task versions, or sharing fewer than
    two narratives, are refused."""
    from ..analysis.compare import QUANTITIES, compare_runs, markdown

    pair_on, metrics = (
        tuple(f for f in map(str.strip, (value or "").split(",")) if f)
        for value in (args.pair_on, args.metrics)
    )
    if args.metrics is not None and not metrics:  # an empty variable in a script: not "every quantity"
        raise OptionError(f"--metrics: no quantity named; choose from {', '.join(QUANTITIES)}")
    unknown = [m for m in metrics if m not in QUANTITIES]
    if unknown:
        raise OptionError(f"--metrics: unknown {', '.join(unknown)}; choose from {', '.join(QUANTITIES)}")
    result = compare_runs(readable([args.a], args), readable([args.b], args), pair_on, metrics or QUANTITIES)
    for said in result["caveats"]:
        print(f"caution: {said}", file=sys.stderr)
    text = json.dumps(result, indent=1) + "\n" if args.format == "json" else markdown(result)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"{result['shared_instances']} shared instances; written to {args.output}")
    else:
        print(text, end="")
    return 0


def add_commands(commands) -> None:
    compare = command(commands, "compare", _compare)
    compare.add_argument("a", help="run A: a log, or a folder of one run's logs")
    compare.add_argument("b", help="run B: a log, or a folder of one run's logs")
    compare.add_argument(
        "--format", choices=["markdown", "json"], default="markdown", help="(default: markdown)"
    )
    compare.add_argument("-o", "--output", type=Path, help="write to this file instead of printing")
    compare.add_argument(
        "--pair-on",
        metavar="FIELDS",
        help="pair samples on these comma-separated metadata fields instead of the sample id (imported "
        "generations whose ids are per response: problem_id,template_id,temperature)",
    )
    compare.add_argument(
        "--metrics",
        metavar="NAMES",
        help="compare only these comma-separated quantities (atavg, qavg, a metric or a judge dimension); "
        "runs judged differently compare on the non-judge ones",
    )
    skip_unreadable_option(compare)
