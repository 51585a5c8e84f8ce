"""The installed package exposes every task by registry name, and importing it stays light."""

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from inspect_ai import Task
from inspect_ai.util import registry_create

from narrative_infill.paper_protocol import PARADIGMS, TELER_LEVELS
from narrative_infill.tasks.options import option_names

ALL_TASKS = TELER_LEVELS + PARADIGMS


@pytest.mark.parametrize("name", ALL_TASKS)
def test_task_resolves_from_installed_package(name):
    task = registry_create("task", f"narrative_infill/{name}", data="demo")
    assert isinstance(task, Task)
    assert task.name == f"narrative_infill/{name}"
    assert len(task.dataset) == 24
    assert task.metadata["template"] == name
    assert task.config.temperature == 0.8 and task.config.top_p == 0.9


def test_tasks_accept_documented_options():
    task = registry_create(
        "task",
        "narrative_infill/l3",
        data="demo",
        domain="sind",
        n=3,
        variant="code1",
        system_role=True,
        max_tokens_factor=3.0,
    )
    assert [s.id for s in task.dataset] == ["sind-1-n3-i2", "sind-2-n3-i1"]


def test_registry_import_is_light():
    code = (
        "import sys, narrative_infill._registry; "
        "heavy = [m for m in ('torch', 'llama_cpp', 'bert_score', 'sentence_transformers', 'datasets', 'transformers') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_judge_check_resolves_by_name():
    task = registry_create("task", "narrative_infill/judge_check", instances=2)
    assert task.name == "narrative_infill/judge_check" and len(task.dataset) == 8


def test_inspect_lists_every_task_from_the_source_files():
    # `inspect list tasks` reads files for @task definitions (it does not import the package).
    result = subprocess.run(
        [str(Path(sys.executable).with_name("inspect")), "list", "tasks"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    listed = sorted(result.stdout.split())
    assert listed == sorted(
        [f"narrative_infill/tasks/infill.py@{name}" for name in ALL_TASKS]
        + ["narrative_infill/tasks/judge_check.py@judge_check"]
    )


@pytest.mark.subprocess
def test_inspect_eval_takes_a_task_option(tmp_path):
    """``inspect eval narrative_infill/l2 -T ...``: the options reach the task and its log."""
    from inspect_ai.log import read_eval_log

    subprocess.run(
        [str(Path(sys.executable).with_name("inspect")), "eval", "narrative_infill/l2", "--model",
         "baseline/generic-sentence", "-T", "data=demo", "-T", "domain=sind", "-T", "judge=false",
         "-T", "max_tokens_factor=3", "--limit", "2", "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path), header_only=True)
    assert log.eval.task_args["domain"] == "sind" and log.eval.task_args["max_tokens_factor"] == 3
    assert log.eval.task_args["backbone"] == "auto"  # a default, recorded from the signature
    assert list(log.eval.task_args) == list(option_names())  # every option, none other
    assert log.results.total_samples == 2
