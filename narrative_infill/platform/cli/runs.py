"""``import``, ``judge-check`` and ``grid``: making and scoring runs."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from ...errors import OptionError
from ...paper_protocol import JUDGE_MODEL, PAPER_JUDGE_VARIANT
from ...task_options import as_list
from .options import command, model_role_option, output_option, passed


def _import(args: argparse.Namespace) -> int:
    """turn existing generations (authors' xlsx/csv, or JSONL) into Inspect .eval logs

    One .eval log per (model, task): the stored prompt and response are replayed as the model's output,
    so every scorer, inspect view and inspect score work on them. lm-eval runs of the packaged tasks
    (their --log_samples folder, or its results_*.json and samples_*.jsonl files) are read as they are.
    """
    from ...data.baselines import BASELINES
    from ...inspect_compat import parse_model_roles
    from ..analysis.importer import import_generations
    from ..analysis.lm_eval_import import import_lm_eval, is_lm_eval_output

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

    from ...inspect_compat import parse_model_roles
    from ...tasks.judge_check import describe, judge_check

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
    """run, submit to Slurm or print (--dry-run) the paper's grid of models x settings as inspect eval-sets

    One inspect eval-set process per model (and per robustness run), each with its own log folder under
    --log-dir; running the same command again resumes. --scheduler slurm submits one sbatch array per
    study instead (one array task per run). The dry run adds tokens, and with --model-cost-config
    dollars. Arguments after -- go to every inspect command (for example: -- --max-connections 64).
    `narrative-infill grid status LOG_DIR` shows every run's state.
    """
    from ..grid.plan import describe, load_grid, plan
    from ..grid.slurm import SlurmOptions, array_scripts

    grid = load_grid(args.grid)
    chosen = {key: _listed(getattr(args, key)) for key in ("models", "tasks", "studies")}
    # On Slurm, the jobs read and write the log folder by its absolute (shared) path.
    log_dir = Path(args.log_dir).resolve() if args.scheduler == "slurm" else Path(args.log_dir)
    result = plan(grid, log_dir, **chosen, extra_args=args.inspect_args)
    slurm = SlurmOptions(args.partition, args.account, args.time)
    if args.dry_run:
        from ..grid.cost import describe_cost, load_prices

        prices = load_prices(args.model_cost_config) if args.model_cost_config else None
        if args.scheduler == "slurm":
            print("\n".join(script.text for script in array_scripts(result.runs, log_dir, slurm)))
        print(describe(result))
        print(describe_cost(result, prices, args.samples_per_hour))
        return 0
    if args.scheduler == "slurm":
        return _submit_grid(result, log_dir, slurm)
    return _run_grid(result, log_dir)


def _run_grid(result, log_dir: Path) -> int:
    from ..grid.plan import STUDIES
    from ..grid.record import write_record
    from ..grid.run import run_plan

    write_record(log_dir, result.runs)
    status = run_plan(result)
    studies = [study for study in STUDIES if any(r.study == study for r in result.runs)]
    reports = [f"narrative-infill report {log_dir}/{study} -o report/{study}" for study in studies]
    submit = f"narrative-infill submit {log_dir}/main/<model> -o submission.json --track full"
    print("\nnext: " + "; ".join([*reports, submit]))
    return status


def _submit_grid(result, log_dir: Path, slurm) -> int:
    """Submits the unfinished runs (those whose logs are not all finished) as sbatch arrays."""
    from ..grid.record import recorded_runs, write_record
    from ..grid.slurm import array_scripts, submit
    from ..grid.status import FINISHED, run_status

    scripts = array_scripts(result.runs, log_dir, slurm)  # a script it cannot write fails before any file
    write_record(log_dir, result.runs)
    finished = {
        run.folder
        for run in recorded_runs(result.runs, log_dir)
        if run_status(log_dir, run, None).state == FINISHED
    }
    jobs = submit(scripts, log_dir, finished)
    print(f"\n{len(jobs)} job(s) submitted; follow them with: narrative-infill grid status {log_dir}")
    return 0


def _grid_status(args: argparse.Namespace) -> int:
    """every run of a grid: finished, running, failed (with its error) or not started, samples done, Slurm job

    Read from the grid's log folder (its logs, and the grid record the grid command writes there) and,
    for runs submitted to Slurm, from sacct or scontrol; on a folder copied off the cluster the states
    come from the logs alone. Spelled `narrative-infill grid status LOG_DIR`.
    """
    from ..grid.plan import load_grid, plan
    from ..grid.record import read_record, recorded_runs
    from ..grid.status import FAILED, describe_status, grid_status

    log_dir = Path(args.log_dir)
    if args.grid:
        runs, jobs = recorded_runs(plan(load_grid(args.grid), log_dir).runs, log_dir), []
        if (log_dir / "grid.json").is_file():
            jobs = read_record(log_dir)[1]
    else:
        runs, jobs = read_record(log_dir)
    statuses, source = grid_status(log_dir, runs, jobs)
    print(describe_status(statuses, source))
    return 1 if any(s.state == FAILED for s in statuses) else 0


def _listed(values: list[str] | None) -> list[str] | None:
    """Repeated or comma-separated option values, flattened (each split as ``as_list`` splits)."""
    return [part for value in values for part in as_list(value) or []] if values else None


def add_commands(commands) -> None:
    _add_import(commands)
    _add_judge_check(commands)
    _add_grid(commands)


def _add_import(commands) -> None:
    from ...data.baselines import BASELINES
    from ...extraction import DEFAULT_EXTRACTION, EXTRACTIONS

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
    from ...scorers.judge.rubric import JUDGE_VARIANTS
    from ...scorers.judge.schema import MODES
    from ...tasks.judge_check import MIN_GAP

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


def _samples_per_hour(text: str) -> float:
    """``--samples-per-hour``: a positive finite number (a negative, nan or infinite one would print as
    GPU-hours; zero would be read as not given)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"a throughput is a positive number of samples, got {text!r}")
    return value


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
        "--dry-run",
        action="store_true",
        help="print the commands (and Slurm scripts) with their samples, grader calls, tokens and cost",
    )
    grid.add_argument(
        "--scheduler",
        choices=("local", "slurm"),
        default="local",
        help="local: run here, one run at a time; slurm: one sbatch array per study (a task per run)",
    )
    grid.add_argument("--partition", help="Slurm partition (sbatch --partition)")
    grid.add_argument("--account", help="Slurm account (sbatch --account)")
    grid.add_argument("--time", help="Slurm time limit per array task, as sbatch takes it (HH:MM:SS)")
    grid.add_argument(
        "--model-cost-config",
        type=Path,
        help="Inspect's model cost file (YAML/JSON: model -> input/output/input_cache_write/input_cache_read "
        "dollars per million tokens): the dry run adds dollars",
    )
    grid.add_argument(
        "--samples-per-hour",
        type=_samples_per_hour,
        help="samples one model server finishes an hour, as you measured it: the dry run adds GPU-hours",
    )
    # What follows -- (split off in main: argparse cannot take options there).
    grid.set_defaults(inspect_args=[])

    status = command(commands, "grid-status", _grid_status)
    status.set_defaults(subcommand="grid status")  # as it is typed: errors name it so
    status.add_argument("log_dir", help="the grid's --log-dir")
    status.add_argument("--grid", help="the grid (packaged name or file) where the folder has no grid record")
