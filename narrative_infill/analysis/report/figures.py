"""Figure 2: High% per model, instruction vs reasoning prompting, as a PNG."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...definitions import PARADIGMS, high_label, is_high
from ...definitions import TELER_LEVELS as LEVELS
from .document import Absent, has_columns


def figure2(frame: pd.DataFrame, out: Path, high_inclusive: bool) -> tuple[pd.DataFrame, Path] | Absent:
    """(the figure's table, its PNG in ``out``), or why it cannot be drawn."""
    if not has_columns(frame, ("qavg",)):
        return Absent("no judge scores in the logs")
    kind = frame["setting"].map(
        lambda s: "instruction" if s in LEVELS else "reasoning" if s in PARADIGMS else None
    )
    high = is_high(frame["qavg"], high_inclusive)
    table = (frame.assign(kind=kind, high=high.where(frame["qavg"].notna())).dropna(subset=["kind", "high"])
             .groupby(["model", "kind"])["high"].mean().unstack("kind") * 100)  # fmt: skip
    if table.empty:
        return Absent("no judged TELeR or reasoning runs")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = table.plot.bar(figsize=(max(6, len(table) * 0.6), 4))
    axes.set_ylabel(f"High% ({high_label(high_inclusive)})")
    axes.set_title("High-quality completions by model: instruction vs reasoning prompting")
    plt.tight_layout()
    path = out / "figure2_high_by_model.png"
    plt.savefig(path, dpi=120)
    plt.close("all")
    return table, path
