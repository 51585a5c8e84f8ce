"""Bad input at every entry point (``inspect eval``/``inspect score`` and ``narrative-infill``): a
non-zero exit with one message naming the file, record and field, no traceback, and no earlier
output replaced or input overwritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import mock_model
from inspect_ai import eval

from narrative_infill.data.records import InvalidRecordError
from narrative_infill.definitions import NarrativeInfillError, OptionError
from narrative_infill.tasks import infill_task

DEMO = Path(__file__).resolve().parents[1] / "narrative_infill" / "data" / "demo.jsonl"


def _inspect(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The ``inspect`` command line, as a user runs it (its own exception hook included)."""
    return subprocess.run(
        [sys.executable, "-m", "inspect_ai", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "400"},  # rich wraps the message at the terminal's width
    )  # fmt: skip


@pytest.fixture
def bad_line_7(tmp_path) -> Path:
    """Ten demo records, the seventh cut short."""
    lines = DEMO.read_text(encoding="utf-8").splitlines()[:10]
    lines[6] = '{"dataset": "roc", "ref_id": 9, broken'
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_inspect_eval_prints_a_data_error_without_a_traceback(bad_line_7, tmp_path):
    done = _inspect("eval", "narrative_infill/l2", "-T", f"data={bad_line_7}", "--model", "mockllm/model",
                    "--limit", "1", cwd=tmp_path)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"{bad_line_7}, row 7: unparseable JSON" in output
    assert "Traceback" not in output


def test_inspect_score_shows_a_bad_scorer_option_instead_of_scorer_not_found(tmp_path):
    [log] = eval(
        infill_task("l2", data="demo", judge=False), model=mock_model(lambda m, c: "<ANSWER>x.</ANSWER>"),
        limit=1, score=False, log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    done = _inspect("score", log.location, "--scorer", "narrative_infill/metrics", "-S", "extraction=bogus",
                    "--overwrite", cwd=tmp_path)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "extraction must be one of ('ours', 'published'), got 'bogus'" in output
    assert "couldn't be loaded" not in output and "Traceback" not in output


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("max_tokens", "abc", "max_tokens must be positive (a whole number of tokens), got 'abc'"),
        ("max_tokens_factor", "x", "max_tokens_factor must be positive (a number), got 'x'"),
        ("min_sentences", "x", "min_sentences filter: expected a whole number of sentences, got 'x'"),
        ("judge", "maybe", "judge must be true or false (or left out), got 'maybe'"),
    ],
)
def test_a_task_option_of_the_wrong_type_is_named(option, value, message):
    """``-T`` values arrive as YAML: ``-T max_tokens=abc`` is the string 'abc'."""
    with pytest.raises(NarrativeInfillError) as raised:
        infill_task("l2", data="demo", **{option: value})
    assert str(raised.value) == message


def test_a_task_data_error_keeps_its_type(bad_line_7, tmp_path):
    path = tmp_path / "n.jsonl"
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()[:10]]
    records[6]["n"] = "two"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(
        InvalidRecordError, match=r"n\.jsonl, row 7 .*field 'n': expected an integer, got 'two'"
    ):
        infill_task("l2", data=str(path))
    with pytest.raises(OptionError, match="no prompt variant 'bogus'"):
        infill_task("l2", data="demo", variant="bogus")
