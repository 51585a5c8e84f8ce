"""The platform's Inspect hooks (``serve``'s key for the llama-cpp-python provider, how each task
ended) register through the platform's own Inspect entry point, so the core's registry imports
nothing of the platform (issue 46). Inspect loads every entry point of its group when it starts
its hooks; these tests read the installed package's entry points (a checkout installed before the
split needs ``pip install -e .`` again)."""

from __future__ import annotations

from importlib.metadata import entry_points

from inspect_ai.hooks import Hooks

from narrative_infill.platform.local.provider_key import LocalServerKey
from narrative_infill.platform.local.run_status import RunStatus

PLATFORM_ENTRY = "narrative_infill_platform"


def test_the_installed_platform_entry_point_registers_both_hooks():
    installed = {entry.name: entry for entry in entry_points(group="inspect_ai")}
    assert PLATFORM_ENTRY in installed, "the platform's entry point is not installed: pip install -e ."
    assert {name: entry.value for name, entry in installed.items() if name.startswith("narrative")} == {
        "narrative_infill": "narrative_infill._registry",
        PLATFORM_ENTRY: "narrative_infill.platform.inspect_hooks",
    }
    module = installed[PLATFORM_ENTRY].load()
    hooks = {getattr(module, name) for name in module.__all__}
    assert hooks == {LocalServerKey, RunStatus} and all(issubclass(hook, Hooks) for hook in hooks)
