"""What a user reads at the end of every eval: Inspect's terminal score table for a demo run.

Rendered with Inspect's own table code (``task_scores``, private: a test may reach it; read from its
module at call time, as Inspect's end-of-run panel reads it) at 80 columns, from the log of an ``l2``
demo eval with a mock model and no grader bound.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest
from helpers import mock_model
from inspect_ai import eval
from inspect_ai._display.core import results as inspect_results
from rich.console import Console

from narrative_infill.tasks.infill import l2

README = Path(__file__).resolve().parents[2] / "README.md"

#: The demo eval scores with MiniLM (torch): the Python matrix, without heavy extras, leaves it out.
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory):
    """The demo set at l2, answered by a mock model, with no grader: the judge's keys stay empty."""
    [log] = eval(
        l2(data="demo", backbone="minilm"),
        model=mock_model(lambda m, c: "<ANSWER>They went home.</ANSWER>"),
        display="none",
        log_dir=str(tmp_path_factory.mktemp("logs")),
    )
    assert log.status == "success", log.error
    return log


def _terminal_table(log, width: int = 80) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for row in inspect_results.task_scores(log.results.scores):
        console.print(row)
    return console.export_text()


def test_a_key_with_no_values_shows_no_zero_interval(demo_log):
    """QAvg without a judge: its mean is nan, so its interval is nan too, never ``0.000``."""
    [qavg] = [score for score in demo_log.results.scores if score.name == "qavg"]
    assert math.isnan(qavg.metrics["mean"].value)
    interval = {key: m.value for key, m in qavg.metrics.items() if key.startswith("ci_")}
    assert interval and all(math.isnan(value) for value in interval.values()), interval
    table = _terminal_table(demo_log)
    qavg_block = table[table.index("qavg") :]
    assert not re.search(r"ci_(lower|upper)\s+0\.000", qavg_block), table


def shown_name(key: str) -> str:
    """The name the table shows for a results key: the key without the package's registry prefix."""
    return key.removeprefix("narrative_infill/")


def cut_names(table: str, log) -> list[str]:
    """The metric names of ``log``'s results that ``table`` does not show whole, as often as the
    results hold them (``narratives`` twice: AtAvg's and QAvg's): a whole row is the name, then
    its value."""
    shown = Counter(shown_name(key) for score in log.results.scores for key in score.metrics)
    return sorted(
        name
        for name, count in shown.items()
        if len(re.findall(rf"(?m)(?:^|\s){re.escape(name)}\s+(?:nan|-?\d+\.\d{{3}})(?=\s|$)", table)) < count
    )


def cut_score_names(table: str, log) -> list[str]:
    """The names of ``log``'s scores that ``table`` does not show whole."""
    return [s.name for s in log.results.scores if not re.search(rf"(?m)(?:^|\s){s.name}(?=\s|$)", table)]


def test_every_metric_name_is_whole_in_the_terminal_table(demo_log):
    """Issue 46's done-when: the demo output shows every metric name whole (Inspect's table at 80
    columns, as ``--display plain`` prints it where no terminal width is known)."""
    table = _terminal_table(demo_log)
    keys = [key for score in demo_log.results.scores for key in score.metrics]
    assert "narrative_infill/breakdowns_rocstories" in keys  # the log keeps its keys: readers see no change
    assert cut_names(table, demo_log) == [], table


def test_every_score_name_is_whole_in_the_terminal_table(demo_log):
    """The scores' own names head their columns: four to a row, the judge's dimensions
    (``bidirectional_coherence``, ``narrative_consistency``) were cut at 80 columns."""
    table = _terminal_table(demo_log)
    assert cut_score_names(table, demo_log) == [], table


def test_the_readme_demo_output_shows_every_metric_name_whole(demo_log):
    """The README's copy of the demo run's score table (between its ``demo-output`` markers) names
    every metric key a demo log's results hold, each whole: a renamed or added metric, or a cut
    name, fails here until the README's copy is taken from a new run."""
    block = re.search(
        r"<!-- demo-output:start -->(.*?)<!-- demo-output:end -->", README.read_text(encoding="utf-8"), re.S
    )
    assert block, "README.md has no demo-output block"
    assert cut_names(block.group(1), demo_log) == [], block.group(1)
    assert cut_score_names(block.group(1), demo_log) == [], block.group(1)
