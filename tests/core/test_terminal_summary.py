"""What a user reads at the end of every eval: Inspect's terminal score table for a demo run.

Rendered with Inspect's own table code (``task_scores``, private: a test may reach it; read from its
module at call time, as Inspect's end-of-run panel reads it) at 80 columns, from the log of an ``l2``
demo eval with a mock model and no grader bound.
"""

from __future__ import annotations

import math
import re

import pytest
from helpers import mock_model
from inspect_ai import eval
from inspect_ai._display.core import results as inspect_results
from rich.console import Console

from narrative_infill.tasks.infill import l2


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


def is_whole_row(table: str, name: str) -> bool:
    """Whether ``name`` heads a row of ``table`` uncut: the whole name, then its value."""
    return re.search(rf"(?m)(^|\s){re.escape(name)}\s+(nan|-?\d+\.\d{{3}})(\s|$)", table) is not None


def test_every_metric_name_is_whole_in_the_terminal_table(demo_log):
    """Issue 46's done-when: the demo output shows every metric name whole (Inspect's table at 80
    columns, as ``--display plain`` prints it where no terminal width is known)."""
    table = _terminal_table(demo_log)
    keys = [key for score in demo_log.results.scores for key in score.metrics]
    assert "narrative_infill/breakdowns_rocstories" in keys  # the log keeps its keys: readers see no change
    cut = sorted(key for key in keys if not is_whole_row(table, shown_name(key)))
    assert cut == [], table
