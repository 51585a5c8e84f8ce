"""Writes the report folder: ``report.md``, one CSV per table, and the figures.

The folder is built beside its target and moved into place only when the whole report has
been computed: a report that fails leaves the previous one intact.
"""

from __future__ import annotations

from pathlib import Path

from ...data.atomic import atomic_dir
from .document import Absent, Report
from .figures import figure2
from .load import load_samples
from .tables import build_report


def write_report(
    paths: list[str], out: Path, high_inclusive: bool = False, human_csv: str | None = None
) -> Report:
    loaded = load_samples(paths)
    frame = loaded.frame
    report = build_report(frame, high_inclusive, human_csv)
    report.notes = loaded.notes + report.notes
    report.absent = {**{f"run {name}": reason for name, reason in loaded.absent.items()}, **report.absent}
    with atomic_dir(out) as folder:
        figure = figure2(frame, folder, high_inclusive)
        if isinstance(figure, Absent):
            report.absent["figure2_high_by_model"] = figure.reason
        else:
            report.tables["figure2_high_by_model"], report.figures["figure2_high_by_model"] = figure
        lines = ["# Narrative infilling report", "", f"{len(frame)} samples from {frame['eval_id'].nunique()} logs; "
                 f"models: {', '.join(sorted(frame['model'].unique()))}.", ""]  # fmt: skip
        lines += [f"- {note}" for note in report.notes]
        for name, table in report.tables.items():
            table.to_csv(folder / f"{name}.csv")
            lines += ["", f"## {name}", "", table.round(3).to_markdown()]
        for name, path in report.figures.items():
            lines += ["", f"![{name}]({path.name})"]
        if report.absent:
            lines += ["", "## Absent", ""] + [
                f"- **{name}**: {reason}" for name, reason in report.absent.items()
            ]
        (folder / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report.figures = {name: out / path.name for name, path in report.figures.items()}
    return report
