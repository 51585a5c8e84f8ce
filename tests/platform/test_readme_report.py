"""The README's Evaluation Report is generated between its markers, and nothing else is touched."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from narrative_infill.platform.analysis.report.document import Report
from narrative_infill.platform.analysis.report.paper_compare import TAU_RANGE
from narrative_infill.platform.analysis.report.readme import (
    END,
    START,
    ReadmeError,
    Run,
    baselines_summary,
    render_section,
    update_readme,
)
from narrative_infill.platform.analysis.floor import ABOVE, IN_FLOOR, NOT_ABOVE, REUSE_RULE
from narrative_infill.platform.analysis.report.baselines import BASELINES_TABLE, MARK


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
        Run("replay/x", "narrative_infill/l1", 30, 1, "0", "2026-12-02", "def5678", (), imported=True),
        Run("replay/y", "narrative_infill/l1", 30, 1, "0", "2026-12-02", "def5678", (), imported=True),
        Run("baseline/context", "narrative_infill/l1", 5, 1, "0", "2026-12-02", "def5678", (), imported=True),
        Run("baseline/empty", "narrative_infill/l1", 5, 1, "0", "2026-12-02", "def5678", (), imported=True),
        Run(
            "baseline/context",
            "narrative_infill/l2",
            24,
            1,
            "3",
            "2026-12-03",
            "abc1234",
            ("-T", "data=demo"),
        ),
    ]


def test_the_section_names_runs_commands_and_results():
    section = render_section(_report(), _runs(), "narrative-infill report logs -o out --readme README.md")
    assert section.startswith(START) and section.endswith(END)
    assert "| vllm/m | l1, l2 | 48 | 1 | 3 | 2026-12-03 | abc1234 |" in section
    assert "inspect eval-set narrative_infill/l1 narrative_infill/l2 --model vllm/m -T data=demo" in section
    # runs that agree in everything shown share a row and a line: 20 imported models are not 40 lines
    assert "| replay/x, replay/y | l1 | 30 | 1 | 0 | 2026-12-02 | def5678 |" in section
    assert "# narrative-infill import: replay/x, replay/y" in section
    assert "# narrative-infill import --baselines: baseline/context, baseline/empty" in section
    # a baseline run by inspect eval is said to be, not taken for an imported one
    assert "inspect eval-set narrative_infill/l2 --model baseline/context -T data=demo" in section
    assert "0.250 ± 0.050" in section and "±95%" not in section.split("(`table3_model_by_level`)")[1]


def test_the_baselines_table_is_folded_to_a_line_per_setting():
    runs = pd.DataFrame(
        [
            ["l2", "baseline/sorted-story-words", True, 0.31, REUSE_RULE],
            ["l2", "baseline/neighbour", True, 0.12, IN_FLOOR],
            ["l2", "baseline/empty", True, 0.0, IN_FLOOR],
            ["l2", "a", False, 0.10, f"{NOT_ABOVE} (baseline/neighbour 0.120)"],
            ["l2", "b", False, 0.40, ABOVE],
            ["l2", "c", False, 0.35, REUSE_RULE],
            ["l3", "baseline/empty", True, 0.0, IN_FLOOR],
            ["l3", "a", False, 0.30, ABOVE],
        ],
        columns=["setting", "run", "baseline", "AtAvg", MARK],
    ).set_index(["setting", "run"])
    report = _report()
    report.add(BASELINES_TABLE, runs)
    section = render_section(report, _runs(), "narrative-infill report logs -o out --readme README.md")
    summary = baselines_summary(runs)
    # the sorted words score highest, but the guard flags them: the floor is the best rule it keeps
    assert summary.loc["l2", "floor (best kept null rule)"] == "baseline/neighbour 0.120"
    assert summary.loc["l2", "null rules flagged"] == "1 of 3"
    assert summary.loc["l2", "models not above the floor"] == "1: a"
    assert summary.loc["l2", "models flagged"] == "1: c"
    assert (
        summary.loc["l3", "models not above the floor"] == "0"
        and summary.loc["l2", "models AtAvg"] == "0.100..0.400"
    )
    assert (
        f"(`{BASELINES_TABLE}`, folded to a line per setting)" in section
        and "baseline/neighbour 0.120" in section
    )


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


@pytest.mark.heavy  # scores with MiniLM (torch)
def test_the_section_says_what_the_runs_read_which_versions_ran_them_and_what_did_not_count(tmp_path):
    """EVALUATION_CHECKLIST.md asks for the data, the versions and the invalid-sample share: read
    from a real log in which one sample of four ends in an error."""
    from helpers import mock_model
    from inspect_ai import __version__ as inspect_version
    from inspect_ai import eval as inspect_eval

    from narrative_infill.platform.analysis.report.readme import runs_of
    from narrative_infill.tasks import infill_task

    calls = []

    def respond(messages, config):
        calls.append(None)
        if len(calls) == 1:  # exactly one sample (whichever asks first) ends in an error
            raise RuntimeError("stand-in failure")
        return "<ANSWER>She went home.</ANSWER>"

    task = infill_task("l2", data="demo", judge=False, backbone="minilm")
    model = mock_model(respond)
    inspect_eval(task, model=model, limit=4, fail_on_error=False, log_dir=str(tmp_path), display="none")
    [run] = runs_of([str(tmp_path)])
    assert (run.samples, run.errored, run.truncated) == (3, 1, 0.0)
    assert run.data.startswith("demo (sha256 ") and run.data.endswith(", 24 instances")
    assert f"inspect_ai {inspect_version}" in run.versions
    section = render_section(Report(), [run], "narrative-infill report logs -o out --readme README.md")
    assert f"| mockllm/model | {run.data} | {run.versions} | 1 of 4 (25.0%) | 0.0% |" in section


def test_the_paper_side_by_side_is_folded_to_its_means_per_setting():
    from narrative_infill.platform.analysis.report.readme import paper_summary

    index = pd.MultiIndex.from_tuples(
        [("l1", "A", "atavg"), ("l1", "B", "atavg"), ("l2", "A", "atavg")],
        names=["setting", "paper_model", "quantity"],
    )
    side = pd.DataFrame({"paper": [0.2, 0.4, 0.3], "ours": [0.25, 0.35, 0.3]}, index=index)
    side["diff ours"] = side["ours"] - side["paper"]
    folded = paper_summary(side)
    assert folded.loc[("l1", "atavg")].tolist() == pytest.approx([2, 0.3, 0.3, 0.0])
    report = _report()
    report.add("paper_table3", side)
    section = render_section(report, _runs(), "narrative-infill report logs -o out --readme README.md")
    assert "Beside the paper's Table 3" in section and "| ('l1', 'atavg') |" in section


def test_the_committed_readme_section_labels_its_figures_as_its_generator_does():
    """The generator labels every ± and the τ range where it shows them; the README's own section
    must carry those labels, not the old caption the prose above it contradicts."""
    text = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = re.search(r"<!-- evaluation-report:start -->.*?<!-- evaluation-report:end -->", text, re.S)
    assert section is not None
    assert "95% bootstrap interval" not in section.group(0)
    assert f"({TAU_RANGE})" in section.group(0) and "Tables 3 and 5, ±95%" in section.group(0)
