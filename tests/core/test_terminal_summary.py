"""What a user reads at the end of every eval: Inspect's terminal score table for a demo run.

Rendered with Inspect's own table code (``task_scores``, private: a test may reach it; read from its
module at call time, as Inspect's end-of-run panel reads it) at 80 columns, from the log of an ``l2``
demo eval with a mock model and no grader bound.
"""

from __future__ import annotations

import math
import re
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


def shown_names(table: str) -> list[str]:
    """The metric labels ``table`` shows, each as Inspect prints it (cut with "…" where too long)."""
    return re.findall(r"(?m)(?:^|\s{2})(\S+(?: \S+)??)\s+(?:nan|-?\d+\.\d{3})(?=\s|$)", table)


def missing_keys(table: str, log) -> list[str]:
    """The metric keys of ``log``'s results that ``table`` does not label, whole or as Inspect cuts
    them (a label ending in "…" stands for every key it is the start of)."""
    labels = shown_names(table)
    return sorted(
        key
        for score in log.results.scores
        for key in score.metrics
        if not any(_labels(label, key) for label in labels)
    )


def test_the_log_keeps_the_registered_metric_keys(demo_log):
    """The table is Inspect's own (docs/upstream.md proposes whole names upstream): the keys in the
    log stay the registered names that ``inspect score`` and every reader resolve."""
    keys = [key for score in demo_log.results.scores for key in score.metrics]
    assert "narrative_infill/breakdowns_rocstories" in keys
    assert missing_keys(_terminal_table(demo_log), demo_log) == []


def test_the_readme_demo_output_is_inspects_table_of_every_key(demo_log):
    """The README's copy of the demo run's score table (between its ``demo-output`` markers) labels
    every metric key and score a demo log's results hold, as Inspect's table prints them: a renamed
    or added metric fails here until the README's copy is taken from a new run."""
    block = re.search(
        r"<!-- demo-output:start -->(.*?)<!-- demo-output:end -->", README.read_text(encoding="utf-8"), re.S
    )
    assert block, "README.md has no demo-output block"
    assert missing_keys(block.group(1), demo_log) == [], block.group(1)
    labels = re.findall(r"\S+", block.group(1))
    names = [s.name for s in demo_log.results.scores]
    assert [n for n in names if not any(_labels(label, n) for label in labels)] == []


def _labels(label: str, name: str) -> bool:
    """Whether a table label shows ``name``: whole, or cut by Inspect to a start ending in "…"."""
    return label == name or (label.endswith("…") and name.startswith(label[:-1]))
