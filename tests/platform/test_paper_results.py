"""The paper's numbers shipped in the package match the paper, number by number."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from helpers import REPO, SHARED
from paper_tables import paper_cells

from narrative_infill.platform.analysis.report.paper_results import model_id, paper_model_ids, paper_results

PAPER_MD = SHARED / "paper" / "paper.md"
EXPECTED_COUNTS = {
    "table3": 21 * 10, "table4": 25, "table5": 11 * 8, "table6": 3, "table7": 6 * 6 + 8 * 6,
    "table8": 3, "table10": 3 * 20 * 12, "table11": 2 * 20 * 12, "table12": 4 * 10 * 12,
    "table13": 12, "table14": 8,
}  # fmt: skip


def _parsed() -> pd.DataFrame:
    parsed = pd.DataFrame(
        paper_cells(PAPER_MD), columns=["table", "setting", "row", "column", "value", "source"]
    )
    parsed["value"] = parsed["value"].astype(float)
    return parsed


def _differences(parsed: pd.DataFrame, shipped: pd.DataFrame) -> pd.DataFrame:
    """Cells missing on one side, or whose numbers differ."""
    keys = ["table", "setting", "row", "column", "source"]
    merged = parsed.merge(shipped, on=keys, how="outer", suffixes=("_paper", "_file"), indicator=True)
    return merged[(merged["_merge"] != "both") | (merged["value_paper"] != merged["value_file"])]


@pytest.mark.shared
def test_every_number_matches_the_papers_markdown():
    differences = _differences(_parsed(), paper_results())
    assert differences.empty, f"cells that differ from the paper:\n{differences.to_string()}"


@pytest.mark.shared
def test_a_typo_or_a_lost_row_is_caught():
    shipped = paper_results()
    shipped.loc[shipped.index[5], "value"] += 0.001  # one digit off
    shipped = shipped.drop(shipped.index[7])
    assert len(_differences(_parsed(), shipped)) == 2


def test_every_table_is_complete_and_cells_are_unique():
    shipped = paper_results()
    assert shipped.groupby("table").size().to_dict() == EXPECTED_COUNTS
    assert not shipped.duplicated(["table", "setting", "row", "column"]).any()


def test_the_papers_model_names_map_to_the_grids_ids():
    grid = yaml.safe_load((REPO / "narrative_infill" / "platform" / "grid" / "paper.yaml").read_text(encoding="utf-8"))
    grid_ids = {model["name"].casefold(): model["id"] for model in grid["models"]}
    assert paper_model_ids() == grid_ids
    names = set(paper_results().query("table in ['table3', 'table13', 'table14']")["row"]) - {"Overall"}
    assert all(model_id(name) in grid_ids.values() for name in names)


def _swap(frame: pd.DataFrame, table: str, field: str) -> pd.DataFrame:
    """``frame`` with the labels of the first two rows (or columns) of ``table`` exchanged."""
    cells = frame[frame["table"] == table]
    first, second = sorted(set(cells[field]))[:2]
    swapped = frame.copy()
    swapped.loc[cells.index[cells[field] == first], field] = second
    swapped.loc[cells.index[cells[field] == second], field] = first
    return swapped


@pytest.mark.shared
@pytest.mark.parametrize("table", sorted(EXPECTED_COUNTS))
def test_every_table_catches_a_changed_number_swapped_labels_and_its_own_loss(table):
    parsed, shipped = _parsed(), paper_results()
    cells = shipped[shipped["table"] == table]
    changed = shipped.copy()
    changed.loc[cells.index[len(cells) // 2], "value"] += 0.001
    assert len(_differences(parsed, changed)) == 1
    for field in ("row", "column"):
        if cells[field].nunique() > 1:
            assert not _differences(parsed, _swap(shipped, table, field)).empty, field
    assert len(_differences(parsed, shipped[shipped["table"] != table])) == len(cells)
