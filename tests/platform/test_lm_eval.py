"""The lm-eval tasks send what the Inspect tasks send, cap each sample as they do, and refuse bad options."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys

import pytest
import yaml
from helpers import mock_model, require
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelName
from inspect_ai.solver import TaskState

from narrative_infill.data.dataset import infill_dataset
from narrative_infill.errors import NarrativeInfillError
from narrative_infill.platform.lm_eval import include_path
from narrative_infill.paper_protocol import PARADIGMS, SETTINGS
from narrative_infill.prompts import variants
from narrative_infill.solvers import infill_prompt
from narrative_infill.tasks.infill import TEMPERATURE, TOP_P, l2

pytestmark = pytest.mark.heavy  # lm-eval (the [lm-eval] extra) is not in the light Python-matrix install


def lm_eval_tasks(names: list[str], **metadata) -> dict:
    """The named lm-eval tasks built as ``lm_eval --include_path ... --metadata`` builds them."""
    require(importlib.util.find_spec("lm_eval"), "needs lm-eval: pip install 'narrative-infill[lm-eval]'")
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(include_path()), include_defaults=False, metadata=metadata)
    return manager.load(names)["tasks"]


def sent_by_lm_eval(task, doc) -> list[dict[str, str]]:
    """The chat messages lm-eval sends for ``doc`` (``--apply_chat_template``, no few-shot)."""
    return task.fewshot_context(
        doc, 0, apply_chat_template=True, chat_template=lambda messages, add_generation_prompt: messages
    )


def sent_by_inspect(setting: str, variant: str, system_role: bool, sample) -> list[dict[str, str]]:
    """The messages the Inspect tasks' prompt solver puts in the conversation for ``sample``."""
    state = TaskState(
        ModelName("mockllm/model"),
        sample.id,
        1,
        sample.input,
        [],
        target=sample.target,
        metadata=sample.metadata,
    )
    solve = infill_prompt(setting, variant=variant, system_role=system_role)
    state = asyncio.run(solve(state, None))
    return [{"role": message.role, "content": message.text} for message in state.messages]


def test_the_command_prints_the_folder_of_every_setting_and_both_groups():
    shown = subprocess.run(
        [sys.executable, "-m", "narrative_infill.platform.cli", "lm-eval-tasks"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shown == str(include_path())
    files = {path.stem: yaml.safe_load(path.read_text()) for path in include_path().glob("*.yaml")}
    named = {config.get("group") or config["task"] for config in files.values()}
    settings = {f"narrative_infill_{setting}" for setting in SETTINGS}
    assert set(files) == named == settings | {"narrative_infill", "narrative_infill_paradigms"}


@pytest.mark.parametrize("system_role", [False, True])
def test_every_setting_and_variant_sends_the_inspect_tasks_text(system_role):
    samples = list(infill_dataset("demo"))
    compared = 0
    for setting in SETTINGS:
        for variant in variants(setting):
            name = f"narrative_infill_{setting}"
            task = lm_eval_tasks([name], data="demo", variant=variant, system_role=system_role)[name]
            docs = list(task.test_docs())
            assert [doc["id"] for doc in docs] == [sample.id for sample in samples]
            for doc, sample in zip(docs, samples):
                assert sent_by_lm_eval(task, doc) == sent_by_inspect(setting, variant, system_role, sample)
                compared += 1
    assert compared == 30 * len(samples)  # 30 (setting, variant) pairs, every demo sample


def test_the_group_files_hold_the_teler_levels_and_the_paradigms():
    groups = {
        path.stem: yaml.safe_load(path.read_text())
        for path in include_path().glob("*.yaml")
        if "group" in yaml.safe_load(path.read_text())
    }
    assert groups["narrative_infill"]["task"] == [f"narrative_infill_l{level}" for level in range(5)]
    assert groups["narrative_infill_paradigms"]["task"] == [f"narrative_infill_{p}" for p in PARADIGMS]
    for group in groups.values():
        assert [entry["metric"] for entry in group["aggregate_metric_list"]] == ["atavg"]


def test_decoding_is_the_inspect_tasks():
    [task] = lm_eval_tasks(["narrative_infill_l2"], data="demo").values()
    settings = task.config.generation_kwargs
    assert (settings["temperature"], settings["top_p"]) == (TEMPERATURE, TOP_P)
    assert settings["do_sample"] is True and settings["until"] == []  # no stop sequence, as in Inspect


def inspect_caps(setting_task, **task_args) -> dict[str, int]:
    """The output cap the Inspect task gave each demo sample (the model sees it as max_tokens)."""
    caps: dict[str, int] = {}
    model = mock_model(lambda messages, config: "<ANSWER>x</ANSWER>")
    [log] = inspect_eval(
        setting_task(data="demo", judge=False, **task_args), model=model, score=False, display="none"
    )
    for sample in log.samples:
        caps[str(sample.id)] = sample.metadata["max_tokens"]
    return caps


@pytest.mark.parametrize("setting", ["l2", "cot"])
def test_each_document_gets_the_inspect_tasks_output_cap(setting):
    from narrative_infill.tasks import infill

    name = f"narrative_infill_{setting}"
    task = lm_eval_tasks([name], data="demo")[name]
    lm_caps = {
        doc["id"]: task.construct_requests(doc, "ctx", metadata=(name, 0, 1)).arguments[1]["max_gen_toks"]
        for doc in task.test_docs()
    }
    assert lm_caps == inspect_caps(getattr(infill, setting))
    if setting == "l2":
        assert len(set(lm_caps.values())) > 1  # per sample: twice the gold span


def test_a_users_max_gen_toks_wins_as_max_tokens_does():
    [task] = lm_eval_tasks(["narrative_infill_l2"], data="demo").values()
    task.set_config("generation_kwargs", {"max_gen_toks": 7}, update=True)  # what --gen_kwargs does
    caps = {
        task.construct_requests(doc, "ctx", metadata=("t", 0, 1)).arguments[1]["max_gen_toks"]
        for doc in task.test_docs()
    }
    assert caps == {7} and set(inspect_caps(l2, max_tokens=7).values()) == {7}


def test_data_options_reach_the_packages_loader():
    [task] = lm_eval_tasks(["narrative_infill_l2"], data="demo", domain="sind", n=1).values()
    assert [d["id"] for d in task.test_docs()] == [s.id for s in infill_dataset("demo", domain="sind", n=1)]
    assert task.config.metadata["data"] == "demo" and task.config.metadata["extraction"] == "ours"


@pytest.mark.parametrize(
    "option, value, named",
    [
        ("variant", "code9", "no prompt variant 'code9'"),
        ("extraction", "bogus", "extraction must be one of"),
        ("system_role", "yes", "system_role must be true or false"),
        ("max_tokens_factor", 0, "max_tokens_factor must be positive"),
        ("domain", "wikipedai", "domain filter"),
    ],
)
def test_a_bad_option_is_refused_by_name(option, value, named):
    with pytest.raises(NarrativeInfillError, match=named):
        lm_eval_tasks(["narrative_infill_l2"], data="demo", **{option: value})


def test_serve_hands_a_command_its_key_as_openai_api_key_unless_one_is_set(tmp_path):
    from narrative_infill.platform.local.server import LocalModelServer

    server = LocalModelServer(tmp_path / "model.gguf", port=1)
    assert (
        server.child_environment({})["OPENAI_API_KEY"] == server.api_key
    )  # what local-chat-completions reads
    kept = server.child_environment({"OPENAI_API_KEY": "sk-a-real-key"})
    assert kept["OPENAI_API_KEY"] == "sk-a-real-key" and kept["LLAMA_CPP_PYTHON_API_KEY"] == server.api_key
