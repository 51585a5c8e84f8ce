"""The report as data: its tables, the tables it lacks with the reason, its figures and notes.

A table builder returns its frame, or ``Absent`` with the reason the logs cannot support it;
``Report.add`` files either, so a table is never an empty file and never silently missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import pandas as pd


@dataclass(frozen=True)
class Absent:
    """Why a table is not in the report."""

    reason: str


#: What a table builder returns.
Table: TypeAlias = pd.DataFrame | Absent


@dataclass
class Report:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: the runs whose scores did not recompute from their records, each with why (``recheck``)
    failed_rechecks: list[str] = field(default_factory=list)

    def add(self, name: str, table: Table) -> None:
        if isinstance(table, Absent):
            self.absent[name] = table.reason
        else:
            self.tables[name] = table


def has_columns(frame: pd.DataFrame, columns) -> bool:
    """Whether ``frame`` has each of ``columns`` with at least one value."""
    return all(c in frame.columns for c in columns) and frame[list(columns)].notna().any().all()
