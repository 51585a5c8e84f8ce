"""The README's Evaluation Report, generated from logs: ``report LOGS -o OUT --readme README.md``.

Inspect Evals expects an eval's README to carry its results beside the paper's with the exact
commands, full model names, samples run, the versions, the date, the data it ran on and the share
of invalid samples (its ``EVALUATION_CHECKLIST.md``). Written by hand, such a section rots the
day a new run lands; here it is rendered from the report the command just built and the headers of
the logs it read, and put between two markers in the README, so regenerating it is one command and
a reader can tell generated text from prose.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ....data.atomic import atomic_file
from ....errors import NarrativeInfillError
from ..floor import IN_FLOOR, NOT_ABOVE
from .baselines import BASELINES_TABLE, MARK, is_baseline
from .document import Report
from .load import read_log, select_logs
from .paper_compare import TAU_RANGE

START = "<!-- evaluation-report:start -->"
END = "<!-- evaluation-report:end -->"
#: Report tables shown in the section, in this order, when the report has them.
SHOWN = (
    ("table3_model_by_level", "Per model and TELeR level (the paper's Table 3)"),
    ("table5_model_by_paradigm", "Per model and reasoning paradigm (the paper's Table 5)"),
    ("paper_tau_atavg", f"Agreement with the paper's model ranking ({TAU_RANGE})"),
)
#: The paper's side-by-side tables, shown folded to a line per setting and quantity (``paper_summary``).
PAPER_SIDE_BY_SIDE = (("paper_table3", "Table 3"), ("paper_table5", "Table 5"))


class ReadmeError(NarrativeInfillError):
    """The README given to ``--readme`` cannot take a generated section."""


@dataclass(frozen=True)
class Run:
    """What the section says of one log: enough to date it and to run it again."""

    model: str
    task: str
    samples: int
    epochs: int
    task_version: str
    created: str
    commit: str
    arguments: tuple[str, ...]
    #: made by ``narrative-infill import`` (replayed generations, or baselines answering them)
    imported: bool = False
    #: what was read (``dataset_identity``): source, hub revision and commit or file digest, instances
    data: str = "not recorded"
    #: Inspect's version, and the package's where Inspect recorded it
    versions: str = "not recorded"
    #: samples that ended in an error and have no score
    errored: int = 0
    #: share of scored samples whose output the token cap cut (the metrics scorer's ``truncated``)
    truncated: float | None = None


def runs_of(paths: list[str]) -> list[Run]:
    """One ``Run`` per log the report read (the same selection: each run's latest successful log)."""
    selected, _, _ = select_logs(paths)
    return sorted((_run(read_log(location)) for location in selected), key=lambda r: (r.model, r.task))


def _run(header) -> Run:
    spec = header.eval
    completed = header.results.completed_samples if header.results else 0
    return Run(
        model=str(spec.model),
        task=str(spec.task),
        samples=int(completed),
        epochs=int(spec.config.epochs or 1),
        task_version=str(spec.task_version),
        created=str(spec.created)[:10],
        commit=(spec.revision.commit[:7] if spec.revision and spec.revision.commit else "unknown"),
        arguments=tuple(_arguments(spec)),
        imported=bool((spec.metadata or {}).get("imported")),
        data=_data(spec.metadata or {}),
        versions=", ".join(f"{name} {version}" for name, version in sorted((spec.packages or {}).items()))
        or "not recorded",
        errored=int(header.results.total_samples - completed) if header.results else 0,
        truncated=_score_mean(header, "truncated"),
    )


def _data(metadata: dict) -> str:
    """The log's ``dataset_identity`` in a line: which source, at which revision and commit (hub) or
    with which SHA-256 (files), and how many instances after the filters."""
    identity = metadata.get("dataset_identity") or {}
    if not identity:
        return "not recorded"
    where = identity.get("source", "unknown")
    if "commit" in identity:
        where += f"@{identity.get('revision')} (commit {identity['commit'][:12]})"
    elif "sha256" in identity:
        where += f" (sha256 {identity['sha256'][:12]})"
    instances = identity.get("instances")
    return where + (f", {instances} instances" if instances is not None else "")


def _score_mean(header, name: str) -> float | None:
    """A score's mean from the log's header, or None when the log has no such score."""
    for score in header.results.scores if header.results else []:
        if score.name == name and "mean" in score.metrics:
            return float(score.metrics["mean"].value)
    return None


def _arguments(spec) -> list[str]:
    """The command-line words that give a run its task arguments, roles and epochs."""
    words = []
    for name, value in sorted((spec.task_args or {}).items()):
        words += ["-T", f"{name}={value}"]
    for name, role in sorted((spec.model_roles or {}).items()):
        words += ["--model-role", f"{name}={role.model}"]
    if (spec.config.epochs or 1) > 1:
        words += ["--epochs", str(spec.config.epochs)]
    return words


def _commands(runs: list[Run]) -> list[str]:
    """One ``inspect eval-set`` line per model and argument set; imported runs (``replay/`` models,
    which never generate, and the baselines ``import --baselines`` answered with) in one line each."""
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    imported: dict[str, list[str]] = {}
    for r in runs:
        if r.imported:
            how = "--baselines" if is_baseline(r.model) else ""
            models = imported.setdefault(how, [])
            models += [] if r.model in models else [r.model]
        else:
            grouped.setdefault((r.model, r.arguments), []).append(r.task)
    lines = [
        f"# narrative-infill import {how}".rstrip() + f": {', '.join(models)}"
        for how, models in imported.items()
    ]
    for (model, arguments), tasks in grouped.items():
        lines.append(shlex.join(["inspect", "eval-set", *tasks, "--model", model, *arguments]))
    return lines


def _runs_table(runs: list[Run]) -> list[str]:
    """One row per model, models whose logs agree in everything shown sharing a row: settings,
    samples, and the versions, dates and commits of their logs."""
    by_model: dict[str, list[Run]] = {}
    for r in runs:
        by_model.setdefault(r.model, []).append(r)
    shared: dict[tuple, list[str]] = {}
    for model, own in by_model.items():
        cells = (
            ", ".join(r.task.split("/")[-1] for r in own),
            sum(r.samples for r in own),
            *(
                ", ".join(sorted({str(getattr(r, f)) for r in own}))
                for f in ("epochs", "task_version", "created", "commit")
            ),
        )
        shared.setdefault(cells, []).append(model)
    rows = [
        "| model | settings | samples (each) | epochs | task version | date | commit |",
        "|---|---|---:|---|---|---|---|",
    ]
    return rows + [_row(", ".join(models), *cells) for cells, models in shared.items()]


def _provenance_table(runs: list[Run]) -> list[str]:
    """One row per model: the data its logs read, the versions that ran them, and the samples that
    did not count (errors) or were cut by the token cap, as shares of all samples run."""
    by_model: dict[str, list[Run]] = {}
    for r in runs:
        by_model.setdefault(r.model, []).append(r)
    rows = [
        "| model | data | versions | invalid samples (errors) | cut by the token cap |",
        "|---|---|---|---:|---:|",
    ]
    for model, own in by_model.items():
        run = sum(r.samples + r.errored for r in own)
        errored = sum(r.errored for r in own)
        shares = [(r.truncated, r.samples) for r in own if r.truncated is not None]
        cut = sum(share * n for share, n in shares) / max(1, sum(n for _, n in shares)) if shares else None
        rows.append(
            _row(
                model,
                "; ".join(sorted({r.data for r in own})),
                "; ".join(sorted({r.versions for r in own})),
                f"{errored} of {run} ({errored / max(1, run):.1%})",
                "not scored" if cut is None else f"{cut:.1%}",
            )
        )
    return rows


def paper_summary(side: pd.DataFrame) -> pd.DataFrame:
    """A paper side-by-side (``paper_table3``: the paper's cell beside the logs' mean and their
    difference, per setting, model and quantity) folded to its means per setting and quantity over
    the models the logs cover, with how many they are."""
    levels = ["setting", "quantity"]
    folded = side.groupby(level=levels, sort=False).mean(numeric_only=True)
    folded.insert(0, "models", side.groupby(level=levels, sort=False).size())
    return folded


def _listed(runs: pd.Index) -> str:
    names = sorted(runs.str.removeprefix("replay/"))
    return f"{len(names)}" + (f": {', '.join(names)}" if names else "")


def baselines_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting, the best null rule the guards keep (the floor over all the setting's instances),
    the null rules they flag, and the models flagged or not above the floor on their own instances
    (the report's ``baselines_vs_models``, folded to a line per setting)."""
    rows = {}
    for setting, runs in table.groupby(level="setting", sort=False):
        runs = runs.droplevel("setting")
        baselines, models = runs[runs["baseline"].astype(bool)], runs[~runs["baseline"].astype(bool)]
        kept = baselines[baselines[MARK] == IN_FLOOR]["AtAvg"]
        flagged = baselines[baselines[MARK].str.startswith("not ranked")]
        # the floor the report computed on the models' own instances, else the kept baseline logs'
        computed: list[str] = []
        if "floor rule" in models:
            floors = models.dropna(subset=["floor AtAvg (same instances)"])
            pairs = zip(floors["floor rule"], floors["floor AtAvg (same instances)"])
            computed = sorted({f"{rule} {value:.3f}" for rule, value in pairs})
        rows[setting] = {
            "floor (best kept null rule)": ", ".join(computed)
            or (f"{kept.idxmax()} {kept.max():.3f}" if len(kept) else "none"),
            "null rules flagged": f"{len(flagged)} of {len(flagged) + len(kept)}",
            "models AtAvg": f"{models['AtAvg'].min():.3f}..{models['AtAvg'].max():.3f}",
            "models flagged": _listed(models.index[models[MARK].str.startswith("not ranked")]),
            "models not above the floor": _listed(models.index[models[MARK].str.startswith(NOT_ABOVE)]),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def render_section(report: Report, runs: list[Run], command: str) -> str:
    """The section's text, markers included."""
    lines = [
        START,
        f"_Generated by `{command}`; regenerate it with the same command after a new run. Do not edit "
        "by hand._",
        "",
        *_runs_table(runs),
        "",
        "**What the runs read and ran with** (invalid samples: ended in an error, so not scored):",
        "",
        *_provenance_table(runs),
    ]
    for name, caption in SHOWN:
        if name in report.tables:
            lines += ["", f"**{caption}** (`{name}`):", "", _markdown(report.tables[name])]
    for name, paper_table in PAPER_SIDE_BY_SIDE:
        if name in report.tables:
            caption = f"Beside the paper's {paper_table}: means over the models both have"
            lines += [
                "",
                f"**{caption}** (`{name}`, folded):",
                "",
                _markdown(paper_summary(report.tables[name])),
            ]
    if BASELINES_TABLE in report.tables:
        lines += [
            "",
            f"**The models beside the null baselines** (`{BASELINES_TABLE}`, folded to a line per setting):",
            "",
            baselines_summary(report.tables[BASELINES_TABLE]).to_markdown(floatfmt=".3f"),
        ]
    if report.notes:
        lines += ["", *(f"- {note}" for note in report.notes)]
    if report.absent:
        absent = "; ".join(f"{name} ({reason})" for name, reason in report.absent.items())
        lines += ["", f"Not in this report: {absent}."]
    lines += ["", "The logs were made by:", "", "```bash", *_commands(runs), "```", END]
    return "\n".join(lines)


def _row(*cells) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _markdown(table: pd.DataFrame) -> str:
    """A report table as Markdown: two-level columns flattened, and each mean shown with its 95%
    half-width (``0.235 ± 0.083``) where the table has one."""
    table = table.round(3)
    if isinstance(table.columns, pd.MultiIndex):
        table.columns = [" ".join(map(str, column)) for column in table.columns]
    for column in list(table.columns):
        half = str(column).replace(" ", " ±95% ", 1)
        if half != column and half in table.columns:
            table[column] = [
                f"{m:.3f}" if pd.isna(h) else f"{m:.3f} ± {h:.3f}" for m, h in zip(table[column], table[half])
            ]
            table = table.drop(columns=half)
    return table.to_markdown()


def check_readme(readme: Path) -> str:
    """The README's text, refused unless it holds exactly one start marker before one end marker."""
    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ReadmeError(f"{readme}: cannot read it as UTF-8 text ({error})") from error
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ReadmeError(
            f"{readme}: needs exactly one {START} line followed by one {END} line, where the generated "
            "section goes; nothing was written"
        )
    return text


def update_readme(readme: Path, section: str) -> None:
    """Replace the text between the markers with ``section`` (which carries them); the README is
    rewritten atomically, everything outside the markers unchanged."""
    text = check_readme(readme)
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    with atomic_file(readme) as temporary:
        temporary.write_text(before + section + after, encoding="utf-8")
