"""The tasks' options are written once (``tasks.options.InfillOptions``): every registered task, the
lm-eval tasks and docs/options.md take them from there, whole (names, defaults, types)."""

from __future__ import annotations

import inspect
import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from inspect_ai._util.registry import registry_info, registry_lookup

from narrative_infill.paper_protocol import SETTINGS
from narrative_infill.platform.lm_eval.options import HARNESS_OPTIONS, HarnessOptions
from narrative_infill.tasks.options import InfillOptions

ROOT = Path(__file__).resolve().parents[2]


def _whole(parameters) -> list[tuple[str, object, object]]:
    return [(p.name, p.default, p.annotation) for p in parameters]


OPTIONS = _whole(inspect.signature(InfillOptions).parameters.values())


@pytest.mark.parametrize("name", SETTINGS)
def test_every_registered_task_takes_the_options_object_whole(name):
    registered = registry_lookup("task", f"narrative_infill/{name}")
    assert _whole(inspect.signature(registered).parameters.values()) == OPTIONS
    assert registry_info(registered).metadata["params"] == [name for name, _, _ in OPTIONS]
    assert [(f.name, f.default, f.type) for f in fields(InfillOptions)] == OPTIONS


def test_the_lm_eval_options_are_the_options_object_s():
    harness = {f.name: (f.default, f.type) for f in fields(HarnessOptions)}
    assert harness.pop("template") == (MISSING, "str")
    assert harness == {f.name: (f.default, f.type) for f in fields(InfillOptions)}
    assert set(HARNESS_OPTIONS) < {f.name for f in fields(InfillOptions)}
    recorded = HarnessOptions.from_metadata({"template": "l2", "data_revision": "abc"}).recorded()
    assert recorded == {"template": "l2", "data_revision": "abc"} | {
        name: getattr(InfillOptions(), name) for name in HARNESS_OPTIONS if name != "revision"
    }


def test_docs_options_table_lists_every_option_once_with_its_default():
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    table = text.split("\n| option | default | meaning |\n", 1)[1].split("\n\n", 1)[0]
    rows = [row.strip("| ").split(" | ") for row in table.splitlines()[1:]]
    named = [name for row in rows for name in re.findall(r"`(\w+)`", row[0])]
    assert sorted(named) == sorted(f.name for f in fields(InfillOptions))
    defaults = {f.name: f.default for f in fields(InfillOptions)}
    for name, default in ((row[0].strip("`"), row[1]) for row in rows):
        if default.startswith("`"):  # a literal default, as written on the command line
            value = defaults[name]
            assert default.strip("`") == (str(value).lower() if isinstance(value, bool) else str(value)), name
