"""The README's Evaluation Report is generated between its markers, and nothing else is touched."""

from __future__ import annotations

import pandas as pd
import pytest

from narrative_infill.analysis.report.document import Report
from narrative_infill.analysis.report.readme import (
    END,
    START,
    ReadmeError,
    Run,
    render_section,
    update_readme,
)


def _report() -> Report:
    columns = pd.MultiIndex.from_tuples([("AtAvg", "l1"), ("AtAvg ±95%", "l1"), ("AtAvg", "l2")])
    table = pd.DataFrame([[0.25, 0.05, 0.3]], index=["m"], columns=columns)
    report = Report()
    report.add("table3_model_by_level", table)
    return report


def _runs() -> list[Run]:
    return [
        Run("vllm/m", "narrative_infill/l1", 24, 1, "3", "2026-12-03", "abc1234", ("-T", "data=demo")),
        Run("vllm/m", "narrative_infill/l2", 24, 1, "3", "2026-12-03", "abc1234", ("-T", "data=demo")),
        Run("replay/x", "narrative_infill/l1", 30, 1, "0", "2026-12-02", "def5678", ()),
    ]


def test_the_section_names_runs_commands_and_results():
    section = render_section(_report(), _runs(), "narrative-infill report logs -o out --readme README.md")
    assert section.startswith(START) and section.endswith(END)
    assert "| vllm/m | l1, l2 | 48 | 1 | 3 | 2026-12-03 | abc1234 |" in section
    assert "inspect eval-set narrative_infill/l1 narrative_infill/l2 --model vllm/m -T data=demo" in section
    assert "replay/x: imported generations" in section
    assert "0.250 ± 0.050" in section and "±95%" not in section.split("(`table3_model_by_level`)")[1]


def test_only_the_text_between_the_markers_changes(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nprose\n\n{START}\nold\n{END}\n\nmore prose\n", encoding="utf-8")
    update_readme(readme, f"{START}\nnew\n{END}")
    assert readme.read_text(encoding="utf-8") == f"# Title\n\nprose\n\n{START}\nnew\n{END}\n\nmore prose\n"


@pytest.mark.parametrize("body", ["no markers\n", f"{END}\n{START}\n", f"{START}\n{START}\n{END}\n"])
def test_a_readme_without_one_pair_of_markers_is_refused_untouched(tmp_path, body):
    readme = tmp_path / "README.md"
    readme.write_text(body, encoding="utf-8")
    with pytest.raises(ReadmeError, match="needs exactly one"):
        update_readme(readme, f"{START}\nnew\n{END}")
    assert readme.read_text(encoding="utf-8") == body
