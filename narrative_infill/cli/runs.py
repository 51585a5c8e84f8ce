"""``import``, ``judge-check`` and ``grid``: making and scoring runs."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..errors import OptionError
from ..paper_protocol import JUDGE_MODEL, PAPER_JUDGE_VARIANT
from ..task_options import as_list
from .options import command, model_role_option, output_option, passed


def _import(args: argparse.Namespace) -> int:
    """turn existing generations (authors' xlsx/csv, or JSONL) into Inspect .eval logs

    One .eval log per (model, task): the stored prompt and response are replayed as the model's output,
    so every scorer, inspect view and inspect score work on them. lm-eval runs of the packaged tasks
    (their --log_samples folder, or its results_*.json and samples_*.jsonl files) are read as they are.
    """
    from ..analysis.importer import import_generations
    from ..analysis.lm_eval_import import import_lm_eval, is_lm_eval_output
    from ..data.baselines import BASELINES
    from ..inspect_compat import parse_model_roles

    if args.extraction and not args.scorers:
        raise OptionError("--extraction says how --score reads the answers; add --score metrics (or judge)")
    started = time.perf_counter()
    roles = parse_model_roles(args.model_role)
    importer = import_lm_eval if is_lm_eval_output(args.files) else import_generations
    locations = importer(
        args.files,
        args.output,
        **passed(args, "max_tasks", "overwrite", "scorers", "extraction"),
        baselines=list(BASELINES) if args.baselines == [] else args.baselines,
        model_roles=roles or None,
    )
    scored = f", scored with {', '.join(args.scorers)}" if args.scorers else ""
    scored += f" (extraction={args.extraction})" if args.scorers and args.extraction else ""
    print(
        f"{len(locations)} logs written to {args.output}{scored} in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    if not args.scorers:
        print(
            f"score one: inspect score {args.output}/<log>.eval --scorer narrative_infill/metrics --overwrite"
        )
    return 0


def _judge_check(args: argparse.Namespace) -> int:
    """judge the gold span against empty and copied answers on N instances: a grader must tell them apart

    Judge four fixed answers per instance, the gold span and three probes (nothing, the story around the
    blank, the sentences next to it), and print each QAvg and the gold's gap to each probe; exit 1
    (flagged, naming the probes) when any gap is below --min-gap.
    """
    from inspect_ai import eval as inspect_eval

    from ..inspect_compat import parse_model_roles
    from ..tasks.judge_check import describe, judge_check

    roles = parse_model_roles(args.model_role)
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
        error = log.error.message if log.error else log.status
        print(
            f"narrative-infill judge-check: the grader failed: {error} (log: {log.location})", file=sys.stderr
        )
        return 1
    text, flagged = describe(log, args.min_gap)
    print(text)
    return 1 if flagged else 0


def _grid(args: argparse.Namespace) -> int:
    """run (or print, --dry-run) the paper's grid of models x settings as inspect eval-set commands

    One inspect eval-set process per model (and per robustness run), each with its own log folder under
    --log-dir; running the same command again resumes. Arguments after -- go to every inspect command
    (for example: -- --max-connections 64).
    """
    from ..grid.plan import STUDIES, describe, load_grid, plan
    from ..grid.run import run_plan

    grid = load_grid(args.grid)
    chosen = {key: _listed(getattr(args, key)) for key in ("models", "tasks", "studies")}
    result = plan(grid, Path(args.log_dir), **chosen, extra_args=args.inspect_args)
    if args.dry_run:
        print(describe(result))
        return 0
    status = run_plan(result)
    studies = [study for study in STUDIES if any(r.study == study for r in result.runs)]
    reports = [f"narrative-infill report {args.log_dir}/{study} -o report/{study}" for study in studies]
    submit = f"narrative-infill submit {args.log_dir}/main/<model> -o submission.json --track full"
    print("\nnext: " + "; ".join([*reports, submit]))
    return status


def _listed(values: list[str] | None) -> list[str] | None:
    """Repeated or comma-separated option values, flattened (each split as ``as_list`` splits)."""
    return [part for value in values for part in as_list(value) or []] if values else None


def add_commands(commands) -> None:
    _add_import(commands)
    _add_judge_check(commands)
    _add_grid(commands)


def _add_import(commands) -> None:
    from ..data.baselines import BASELINES
    from ..extraction import DEFAULT_EXTRACTION, EXTRACTIONS

    importer = command(commands, "import", _import)
    importer.add_argument(
        "files",
        nargs="+",
        help="xlsx, csv or jsonl with problem, gold_answer (or answer), response, model, template_name, "
        "template_id; or an lm-eval --output_path folder (or its results and samples files)",
    )
    output_option(importer, "log directory", type=str)
    importer.add_argument("--max-tasks", type=int, default=8, help="logs written in parallel")
    importer.add_argument(
        "--overwrite", action="store_true", help="replace the contents of a non-empty output folder"
    )
    importer.add_argument(
        "--score",
        dest="scorers",
        nargs="+",
        choices=("metrics", "judge"),
        default=[],
        help="score the imported logs in this process (models load once)",
    )
    importer.add_argument(
        "--baselines",
        nargs="*",
        choices=BASELINES,
        help="also write the null baselines' logs answering the same instances (baseline/<rule>, as "
        "--model baseline/<rule> answers the tasks), for the report's baselines table; no rule named: all",
    )
    importer.add_argument(
        "--extraction",
        choices=EXTRACTIONS,
        help=f"how --score reads the answers (default: the scorers', {DEFAULT_EXTRACTION})",
    )
    model_role_option(
        importer,
        f"model role for --score judge, as for inspect eval: grader={JUDGE_MODEL} or "
        f"'grader={{model: {JUDGE_MODEL}, batch: true}}'",
    )


def _add_judge_check(commands) -> None:
    from ..scorers.judge.rubric import JUDGE_VARIANTS
    from ..scorers.judge.schema import MODES
    from ..tasks.judge_check import MIN_GAP

    checker = command(commands, "judge-check", _judge_check)
    model_role_option(checker, f"the grader, as for inspect eval: grader={JUDGE_MODEL}", required=True)
    checker.add_argument("--data", default="demo", help="instances, as the tasks' -T data (default: demo)")
    checker.add_argument("-n", "--n", type=int, default=12, help="instances (each judged twice)")
    checker.add_argument("--judge-variant", default=PAPER_JUDGE_VARIANT, choices=list(JUDGE_VARIANTS))
    checker.add_argument("--structured", default=MODES[0], choices=MODES)
    checker.add_argument("--min-gap", type=float, default=MIN_GAP, help="smallest acceptable QAvg gap")
    checker.add_argument("--log-dir", default="logs/judge-check")
    checker.add_argument("--max-retries", type=int, default=2)
    checker.add_argument("--timeout", type=int, default=120)


def _add_grid(commands) -> None:
    grid = command(commands, "grid", _grid)
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
    # What follows -- (split off in main: argparse cannot take options there).
    grid.set_defaults(inspect_args=[])
