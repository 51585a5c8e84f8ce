"""Writes the report folder: ``report.md``, one CSV per table, and the figures.

The folder is built beside its target and moved into place only when the whole report has
been computed: a report that fails leaves the previous one intact. The target is checked before
any work: it may not be, hold or sit inside an input, nor be a folder this command did not write
(``data.atomic``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ....data.atomic import atomic_dir, check_output_dir
from ..floor import FLOOR_NOTE
from .baselines import BASELINES_TABLE, baseline_tables, is_baseline
from .coverage import COVERAGE_TABLE, MARK_NOTE, low_coverage, marked
from .document import Absent, Report
from .figures import figure2
from .load import load_samples
from .paper_compare import Comparison, compare_with_paper
from .recheck import recheck_logs
from .sensitivity import TABLE as SENSITIVITY_TABLE
from .sensitivity import sensitivity_table
from .tables import build_report

#: Shown in report.md; the other comparison tables (the side-by-sides) are CSV only.
COMPARISON_SHOWN = ("paper_tau_atavg", "paper_tau_by_metric")


def write_report(
    paths: list[str],
    out: Path,
    high_inclusive: bool = False,
    human_csv: str | None = None,
    compare_paper: bool = False,
) -> Report:
    inputs = [*paths, *([human_csv] if human_csv else [])]
    check_output_dir(out, "report", inputs)
    loaded = load_samples(paths)
    rechecked = recheck_logs(loaded.frame, sorted(loaded.frame["log"].unique()))
    # The paper's tables are of models (a baseline in Table 3's Overall row or Table 4's correlations
    # would move them); the baselines have tables of their own, beside the models.
    everything = loaded.frame
    frame = everything[~everything["model"].map(is_baseline)]
    report = build_report(frame, high_inclusive, human_csv)
    if frame.empty:  # build_report's notes would say the scores were missing
        report.notes = ["Only null-baseline runs in these logs: the paper's tables are of models."]
    report.add(SENSITIVITY_TABLE, sensitivity_table(frame.assign(model=frame["row"])))  # one run per row
    for name, table in baseline_tables(everything).items():
        report.add(name, table)
    report.notes += [FLOOR_NOTE] if BASELINES_TABLE in report.tables else []
    comparison = compare_with_paper(frame) if compare_paper else Comparison()
    report.notes = rechecked.notes() + loaded.notes + report.notes
    report.failed_rechecks = rechecked.lines
    report.absent = {**{f"run {name}": reason for name, reason in loaded.absent.items()}, **report.absent}
    low = low_coverage(report.tables.get(COVERAGE_TABLE))
    with atomic_dir(out, "report", inputs) as folder:
        figure = figure2(frame, folder, high_inclusive, low)
        if isinstance(figure, Absent):
            report.absent["figure2_high_by_model"] = figure.reason
        else:
            report.tables["figure2_high_by_model"], report.figures["figure2_high_by_model"] = figure
        summary = (
            f"{len(everything)} samples from {everything['eval_id'].nunique()} logs "
            f"({int(everything['errored'].sum())} errored); "
            f"models: {', '.join(sorted(everything['model'].unique()))}."
        )
        lines = ["# Narrative infilling report", "", summary, ""]
        lines += [f"- {note}" for note in report.notes + ([MARK_NOTE] if any(low.values()) else [])]
        for name, table in report.tables.items():
            table.to_csv(folder / f"{name}.csv")
            lines += ["", f"## {name}", "", readable(marked(table, low, rechecked.failed)).to_markdown()]
        for name, path in report.figures.items():
            lines += ["", f"![{name}]({path.name})"]
        if compare_paper:
            lines += _comparison_section(comparison, folder)
        report.absent.update(comparison.absent)
        report.tables.update(comparison.tables)
        if report.absent:
            lines += ["", "## Absent", ""] + [
                f"- **{name}**: {reason}" for name, reason in report.absent.items()
            ]
        (folder / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report.figures = {name: out / path.name for name, path in report.figures.items()}
    return report


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each two-level header or row name as words (``AtAvg l2``): pandas writes a
    tuple, ``('AtAvg', 'l2')``, into Markdown."""

    def words(index: pd.Index) -> pd.Index:
        if not isinstance(index, pd.MultiIndex):
            return index
        return pd.Index([" ".join(str(part) for part in name if str(part)) for name in index], name=None)

    return table.set_axis(words(table.columns), axis=1).set_axis(words(table.index), axis=0)


def _comparison_section(comparison: Comparison, folder: Path) -> list[str]:
    """report.md's comparison with the paper: one line per table, the rank agreement tables;
    every side-by-side as a CSV."""
    lines = ["", "## Comparison with the paper", ""] + [f"- {line}" for line in comparison.lines]
    for name, table in comparison.tables.items():
        table.to_csv(folder / f"{name}.csv")
        if name in COMPARISON_SHOWN:
            lines += ["", f"### {name}", "", readable(table.round(3)).to_markdown()]
    listed = [name for name in comparison.tables if name not in COMPARISON_SHOWN]
    if listed:
        lines += [
            "",
            "Side by side (paper, ours per scoring, difference), rank agreement with tau's 95% "
            "bounds and missing rows: " + ", ".join(f"`{name}.csv`" for name in listed) + ".",
        ]
    return lines
