"""The package's rooms: imports flow one way, modules stay short and say what they are for."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "narrative_infill"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: Rooms a room may import from (besides itself and the shared ones, which any room may use).
ALLOWED = {
    "data": set(),
    "extraction": set(),
    "prompts": set(),
    "local": set(),
    "scorers": {"extraction", "data"},
    "solvers": {"data"},
    "tasks": {"solvers", "scorers", "data"},
    "analysis": {"scorers", "extraction", "data", "tasks", "solvers"},
    "grid": {"data"},
    "lm_eval": {"data", "extraction", "scorers", "solvers"},  # the lm-eval tasks: same loader, prompts, scoring
}
#: ``definitions`` is a module, the home of the rules every room shares; it imports no room.
SHARED_ROOMS = {"prompts", "local", "definitions", "inspect_compat"}
#: The entry points sit above every room.
ENTRY_POINTS = {"_registry", "cli", "__init__"}


def _room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0].removesuffix(".py") if parts else ""


def _imported_rooms(path: Path) -> set[str]:
    """Top-level rooms of ``narrative_infill`` that ``path`` imports (relative or absolute)."""
    package_parts = path.relative_to(PACKAGE).parent.parts
    rooms = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package_parts[: len(package_parts) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                names = (
                    []
                    if node.module
                    else [alias.name for alias in node.names if not alias.name.startswith("__")]
                )
                rooms.update([target[0]] if target else names)
            elif node.module and node.module.startswith("narrative_infill."):
                rooms.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            rooms.update(a.name.split(".")[1] for a in node.names if a.name.startswith("narrative_infill."))
    return rooms


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_one_way(path):
    room = _room(path)
    if room in ENTRY_POINTS:
        return
    if room == "definitions":
        assert not _imported_rooms(path), "definitions.py imports from the package"
        return
    if room == "inspect_compat":
        assert _imported_rooms(path) <= {"definitions"}, "inspect_compat.py imports a room"
        return
    foreign = _imported_rooms(path) - {room} - SHARED_ROOMS
    assert foreign <= ALLOWED[room], (
        f"{path.relative_to(PACKAGE)} ({room}) imports {sorted(foreign - ALLOWED[room])}"
    )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_short_and_say_what_they_are_for(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400, f"{path.name}: {len(text.splitlines())} lines"
    assert ast.get_docstring(ast.parse(text)), f"{path.relative_to(PACKAGE)} opens without a docstring"


def test_rooms_are_the_documented_ones():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert rooms == set(ALLOWED) | {"cli"}
    assert loose == {"__init__.py", "_registry.py", "definitions.py", "inspect_compat.py"}


_PRIVATE_PATH = re.compile(r"\binspect_ai(?:\.\w+)*\._(?!_)\w+")  # in code or a string; __version__ is public


def _reaches_private_inspect(source: str) -> bool:
    """``inspect_ai._x`` or ``inspect_ai.y._z`` anywhere (an import, ``import_module("...")``), or a
    private name imported from a public module (``from inspect_ai.log import _recorders``)."""
    if _PRIVATE_PATH.search(source):
        return True
    return any(
        isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[0] == "inspect_ai"
        and any(alias.name.startswith("_") and not alias.name.startswith("__") for alias in node.names)
        for node in ast.walk(ast.parse(source))
    )


@pytest.mark.parametrize(
    "source, private",
    [
        ("from inspect_ai._util import x", True),
        ("import inspect_ai._cli.util", True),
        ('importlib.import_module("inspect_ai._cli")', True),
        ("from inspect_ai import _util", True),
        ("from inspect_ai.log import _recorders", True),
        ("from inspect_ai.model import (\n    get_model,\n    _model,\n)", True),
        ("from inspect_ai import __version__, eval", False),
        ("from inspect_ai.log import read_eval_log", False),
    ],
)
def test_the_private_inspect_check_sees_every_spelling(source, private):
    assert _reaches_private_inspect(source) is private


def test_private_inspect_apis_are_reached_only_through_inspect_compat():
    """One seam for Inspect's internals: ``inspect_ai._x`` or ``inspect_ai.y._z`` nowhere else."""
    users = [
        p.relative_to(PACKAGE) for p in MODULES if _reaches_private_inspect(p.read_text(encoding="utf-8"))
    ]
    assert [str(p) for p in users] == ["inspect_compat.py"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_imports(path):
    """On every supported Python (CI's matrix runs this without torch): heavy imports stay lazy."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
