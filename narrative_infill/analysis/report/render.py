"""Writes the report folder: ``report.md``, one CSV per table, and the figures."""

from __future__ import annotations

from pathlib import Path

from .figures import figure2
from .load import load_samples
from .tables import Report, build_report


def write_report(paths: list[str], out: Path, high_inclusive: bool = False, human_csv: str | None = None) -> Report:
    out.mkdir(parents=True, exist_ok=True)
    frame = load_samples(paths)
    report = build_report(frame, high_inclusive, human_csv)
    figure2(frame, out, report, high_inclusive)
    lines = ["# Narrative infilling report", "", f"{len(frame)} samples from {frame['eval_id'].nunique()} logs; "
             f"models: {', '.join(sorted(frame['model'].unique()))}.", ""]  # fmt: skip
    lines += [f"- {note}" for note in report.notes]
    for name, table in report.tables.items():
        table.to_csv(out / f"{name}.csv")
        lines += ["", f"## {name}", "", table.round(3).to_markdown()]
    for name, path in report.figures.items():
        lines += ["", f"![{name}]({path.name})"]
    if report.absent:
        lines += ["", "## Absent", ""] + [f"- **{name}**: {reason}" for name, reason in report.absent.items()]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report
