"""The core alone runs and scores the demo eval (issue 46): in a fresh interpreter where the
platform's libraries cannot be imported (as in an install without extras), ``narrative_infill/l2``
on the demo set with a mock model ends in success with every sample scored; of the platform, only
the hooks Inspect loads through the platform's entry point (off unless a platform command set their
variable) are loaded on the way. .ci/installed-wheel checks the same with the built wheel installed
without extras in a fresh venv."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, requires

import pytest
from helpers import REPO

from narrative_infill.platform.extras import EXTRA_OF_MODULE

pytestmark = [pytest.mark.subprocess, pytest.mark.heavy]

#: distributions whose name is not their module's with dashes
DISTRIBUTION = {"llama_cpp": "llama-cpp-python"}


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def core_closure() -> set[str]:
    """Every distribution the core's requirements bring, through the installed packages' metadata
    (sacrebleu brings tabulate, sentence-transformers scipy: those come with the core anyway)."""
    seen, todo = set(), [r for r in requires("narrative-infill") or [] if "extra ==" not in r]
    while todo:
        name = _name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        with contextlib.suppress(PackageNotFoundError):  # an optional one not installed here
            todo += [r for r in requires(name) or [] if "extra ==" not in r]
    return seen


def blocked_modules() -> list[str]:
    """The platform's libraries that no core requirement brings: what an install without extras lacks."""
    closure = core_closure()
    return sorted(m for m in EXTRA_OF_MODULE if DISTRIBUTION.get(m, m.replace("_", "-")) not in closure)


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
