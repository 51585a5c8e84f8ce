"""The core alone runs and scores the demo eval (issue 46): in a fresh interpreter where the
platform's libraries cannot be imported (as in an install without extras), ``narrative_infill/l2``
on the demo set with a mock model ends in success with every sample scored; of the platform, only
the hooks Inspect loads through the platform's entry point (off unless a platform command set their
variable) are loaded on the way. .ci/installed-wheel checks the same with the built wheel installed
without extras in a fresh venv."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import packages_distributions

import pytest
from helpers import REPO, core_closure, pyproject_project, requirement_name

pytestmark = [pytest.mark.subprocess, pytest.mark.heavy]

#: The extras that bring the platform's libraries (pyproject's ``[project.optional-dependencies]``).
PLATFORM_EXTRAS = ("report", "local", "vllm", "lm-eval")


def blocked_modules() -> list[str]:
    """The modules of the platform's extras that no core requirement brings: what an install
    without extras lacks (a distribution not installed here by its name with underscores)."""
    extras, closure = pyproject_project()["optional-dependencies"], core_closure()
    wanted = {requirement_name(r) for extra in PLATFORM_EXTRAS for r in extras[extra]} - closure
    modules_of: dict[str, set[str]] = {}
    for module, distributions in packages_distributions().items():
        for distribution in distributions:
            modules_of.setdefault(requirement_name(distribution), set()).add(module)
    return sorted(m for d in wanted for m in modules_of.get(d, {d.replace("-", "_")}))


RUN = """
import json, sys
sys.modules.update({name: None for name in BLOCKED})  # "No module named ...", as without the extras
sys.path.insert(0, TESTS)
from helpers import mock_model
from inspect_ai import eval
[log] = eval("narrative_infill/l2", task_args={"data": "demo"}, limit=2, display="none",
             model=mock_model(lambda messages, config: "<ANSWER>They walked home together.</ANSWER>"))
print(json.dumps({
    "status": log.status,
    "scored": [sorted(sample.scores) for sample in log.samples],
    "atavg": [sample.scores["metrics"].value["atavg"] for sample in log.samples],
    "platform": sorted(name for name in sys.modules if name.startswith("narrative_infill.platform")),
}))
"""


def loaded_platform_modules(code: str, cwd) -> list[str]:
    listing = (
        "import sys; print(*sorted(m for m in sys.modules if m.startswith('narrative_infill.platform')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"{code}\n{listing}"], capture_output=True, text=True, cwd=cwd, check=True
    )
    return result.stdout.split()


def test_the_demo_eval_runs_and_is_scored_without_the_platform(tmp_path):
    blocked = blocked_modules()
    assert {"openpyxl", "lm_eval"} <= set(blocked)  # bert-score brings matplotlib, sacrebleu tabulate
    code = f"BLOCKED = {blocked!r}\nTESTS = {str(REPO / 'tests')!r}\n{RUN}"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["status"] == "success"
    assert outcome["scored"] == [["metrics"]] * 2  # no grader bound: the judge is left out
    assert all(0 <= value <= 1 for value in outcome["atavg"])
    hooks = loaded_platform_modules("import narrative_infill.platform.inspect_hooks", tmp_path)
    assert "narrative_infill.platform.inspect_hooks" in hooks
    assert set(outcome["platform"]) <= set(hooks), "the core's eval loaded platform code"
