"""Figure 2: High% per model, instruction vs reasoning prompting, as a PNG."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ....paper_protocol import PARADIGMS, high_label, is_high
from ....paper_protocol import TELER_LEVELS as LEVELS
from .coverage import MARK, MARK_NOTE
from .document import Absent, has_columns


def figure2(
    frame: pd.DataFrame, out: Path, high_inclusive: bool, low: dict[str, set[tuple[str, str]]] | None = None
) -> tuple[pd.DataFrame, Path] | Absent:
    """(the figure's table, its PNG in ``out``), or why it cannot be drawn. A model row with a judged
    cell under the coverage threshold (``low``, from ``coverage.low_coverage``) is marked in its label."""
    low = low or {}
    if not has_columns(frame, ("qavg",)):
        return Absent("no judge scores in the logs")
    kind = frame["setting"].map(
        lambda s: "instruction" if s in LEVELS else "reasoning" if s in PARADIGMS else None
    )
    high = is_high(frame["qavg"], high_inclusive)
    table = (
        frame.assign(kind=kind, high=high.where(frame["qavg"].notna()))
        .dropna(subset=["kind", "high"])
        .groupby(["row", "kind"])["high"]
        .mean()
        .unstack("kind")
        .rename_axis("model")
        * 100
    )
    if table.empty:
        return Absent("no judged TELeR or reasoning runs")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    short = {model for model, setting in low.get("judge", ()) if setting in LEVELS + PARADIGMS}
    shown = table.rename(index=lambda model: f"{model} {MARK}" if model in short else model)
    axes = shown.plot.bar(figsize=(max(6, len(table) * 0.6), 4))
    if short:
        axes.set_xlabel(f"model ({MARK_NOTE})")
    axes.set_ylabel(f"High% ({high_label(high_inclusive)})")
    axes.set_ylim(0, 100)  # a percentage: all-zero bars still read as 0%, not an axis around 0
    axes.set_title("High-quality completions by model:\ninstruction vs reasoning prompting")
    plt.tight_layout()
    path = out / "figure2_high_by_model.png"
    plt.savefig(path, dpi=120)
    plt.close("all")
    return table, path
