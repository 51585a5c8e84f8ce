"""The package's rooms: the core apart from the platform, imports flow one way, modules stay short and
say what they are for."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "narrative_infill"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: The core's rooms (what ``inspect eval narrative_infill/l2`` needs) and those each may import from,
#: besides itself and the shared modules.
CORE = {
    "data": set(),
    "extraction": set(),
    "scorers": {"extraction", "data"},
    "solvers": {"data"},
    "tasks": {"solvers", "scorers", "data"},
}
#: The platform's rooms (under ``platform/``): any of the core's rooms, and the platform rooms named.
PLATFORM = {
    "local": set(),
    "analysis": {"local"},
    "grid": {"local"},
    "lm_eval": set(),  # the lm-eval tasks: the core's loader, prompts and scoring
    "cli": {"analysis", "grid", "local", "lm_eval"},  # the command above every room
}
#: The rules every room shares, one module per topic (``paper_protocol``: the paper's run protocol;
#: ``copy_guards``, ``number_rules``, ``task_options``, ``errors``): modules that import no room.
LEAVES = {"paper_protocol", "copy_guards", "number_rules", "task_options", "errors"}
#: Shared modules of the core that any room may use (``prompts`` is a folder: the templates).
SHARED_MODULES = {"prompts", "inspect_compat", "nltk_data"} | LEAVES
#: Shared modules that may import only the leaves.
ON_LEAVES = {"inspect_compat", "nltk_data"}
#: Inspect's entry points: the core's registry, the platform's hooks.
CORE_ENTRY_POINTS = {"_registry", "__init__"}
PLATFORM_ENTRY_POINTS = {"inspect_hooks", "__init__"}
#: Modules of the platform any of its rooms may use: which extra brings which library, the rule for
#: model names, and text from files made safe for the terminal.
PLATFORM_SHARED = {"extras", "names", "terminal"}


def _room(path: Path) -> str:
    """``tasks``, ``paper_protocol``, ... for the core; ``platform/cli``, ``platform/analysis``, ... ."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return "/".join(parts[:2]) if parts[0] == "platform" and len(parts) > 1 else parts[0]


def _imported_modules(path: Path) -> set[tuple[str, ...]]:
    """Modules of ``narrative_infill`` that ``path`` imports (relative or absolute), as parts under
    the package: ``from ..data import x`` in ``tasks/a.py`` is ``("data",)``; ``from . import x`` is
    the package's ``x``."""
    package_parts = path.relative_to(PACKAGE).parent.parts
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = tuple(package_parts[: len(package_parts) - (node.level - 1)])
                target = base + tuple(node.module.split(".") if node.module else ())
                names = [] if node.module else [a.name for a in node.names if not a.name.startswith("__")]
                modules.update([target + (name,) for name in names] if names else [target])
            elif node.module == "narrative_infill":  # ``from narrative_infill import platform``
                modules.update((alias.name,) for alias in node.names if not alias.name.startswith("__"))
            elif node.module and node.module.split(".")[0] == "narrative_infill":
                modules.add(tuple(node.module.split(".")[1:]))
        elif isinstance(node, ast.Import):
            modules.update(
                tuple(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == "narrative_infill"
            )
    return {module for module in modules if module}


def _imported_rooms(path: Path) -> set[str]:
    return {_room(PACKAGE.joinpath(*module)) for module in _imported_modules(path)}


def _import_problem(path: Path) -> str | None:
    """Why ``path``'s imports break the rooms' one-way flow, None when they do not."""
    room, name, rooms = _room(path), path.relative_to(PACKAGE), _imported_rooms(path)
    if room in LEAVES:
        return f"{name} imports from the package" if rooms else None
    if room in ON_LEAVES:
        return f"{name} imports a room" if not rooms <= LEAVES else None
    if room in CORE_ENTRY_POINTS:
        allowed = set(CORE) | SHARED_MODULES
    elif room.startswith("platform/"):
        inner = room.removeprefix("platform/")
        if inner in PLATFORM_ENTRY_POINTS:
            return None
        own = (
            PLATFORM.get(inner, set())
            | {inner}
            | (PLATFORM_SHARED if inner not in PLATFORM_SHARED else set())
        )
        allowed = set(CORE) | SHARED_MODULES | {f"platform/{r}" for r in own}
    else:
        allowed = CORE.get(room, set()) | {room} | SHARED_MODULES
    foreign = rooms - allowed
    return f"{name} ({room}) imports {sorted(foreign)}" if foreign else None


# One test per check over every module (not one per module): a failure lists every offender.
def test_imports_flow_one_way():
    problems = [problem for path in MODULES if (problem := _import_problem(path))]
    assert not problems, "\n".join(problems)


def test_the_core_imports_nothing_from_the_platform():
    """The line between the two parts, arrows one way: no module outside ``platform/`` imports one
    inside it (relative or absolute import, or the module's path in a string, as ``import_module``
    would take it). Failed before: ``_registry`` imported the platform's hooks, ``solvers/infill.py``
    its served-context cap."""
    core = [path for path in MODULES if _room(path).split("/")[0] != "platform"]
    problems = [
        f"{path.relative_to(PACKAGE)} imports {'.'.join(module)}"
        for path in core
        for module in sorted(_imported_modules(path))
        if module[0] == "platform"
    ]
    problems += [
        f"{path.relative_to(PACKAGE)} names narrative_infill.platform"
        for path in core
        if "narrative_infill.platform" in path.read_text(encoding="utf-8")
    ]
    assert not problems, "\n".join(problems)


#: A module path with ``platform`` as one of its parts (``narrative_infill.platform``, ``..platform.cli``,
#: ``.platform``): what ``import_module``, ``__import__`` or ``find_spec`` would take.
_PLATFORM_PATH = re.compile(r"(?:^|\.)platform(?:\.|$)")


def _names_the_platform_in_a_call(source: str) -> bool:
    """Whether a string handed to a call names a platform module: ``import_module("..platform.x",
    __package__)``, ``__import__("narrative_infill" + ".platform")``, an f-string's literal part."""
    return any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and _PLATFORM_PATH.search(node.value)
        for call in ast.walk(ast.parse(source))
        if isinstance(call, ast.Call)
        for argument in [*call.args, *(keyword.value for keyword in call.keywords)]
        for node in ast.walk(argument)
    )


@pytest.mark.parametrize(
    "source, names",
    [
        ('importlib.import_module("..platform.local.server", __package__)', True),
        ('importlib.import_module(".platform", package="narrative_infill")', True),
        ('__import__("narrative_infill" + ".platform", fromlist=["x"])', True),
        ('importlib.import_module(f"{__package__}.platform.cli")', True),
        ('importlib.util.find_spec("narrative_infill.platform.extras")', True),
        ('print("the platform. A sentence.")', False),
        ("sys.platform.startswith('linux')", False),
        ('importlib.import_module("narrative_infill.scorers")', False),
    ],
)
def test_the_string_scan_sees_a_platform_path_handed_to_a_call(source, names):
    assert _names_the_platform_in_a_call(source) is names


def test_no_core_module_hands_a_platform_path_to_a_call():
    core = [path for path in MODULES if _room(path).split("/")[0] != "platform"]
    named = [
        str(path.relative_to(PACKAGE))
        for path in core
        if _names_the_platform_in_a_call(path.read_text(encoding="utf-8"))
    ]
    assert named == []


TESTS = PACKAGE.parent / "tests"


def _absolute_imports(path: Path) -> set[str]:
    """Every module ``path`` imports by its absolute name (``import a.b``, ``from a.b import c``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    modules |= {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level
    }
    return modules


def test_the_core_tests_import_nothing_from_the_platform():
    """contributing.md: ``tests/core/`` holds the tests that import only the core (and the shared
    helpers in ``tests/``, themselves free of the platform), so the core's tests run where only the
    core is installed. Failed before: test_core_runs_without_the_platform.py imported the platform's
    table of extras."""
    local_helpers = {path.stem: path for path in TESTS.glob("*.py")}
    problems = []
    for path in sorted((TESTS / "core").glob("*.py")):
        imported = _absolute_imports(path)
        for source in [path, *(local_helpers[name] for name in imported if name in local_helpers)]:
            if any(module.startswith("narrative_infill.platform") for module in _absolute_imports(source)):
                problems.append(f"{path.name} imports the platform (through {source.relative_to(TESTS)})")
    assert not problems, "\n".join(problems)


def test_no_test_module_imports_another():
    """contributing.md: what tests share sits in ``tests/`` (helpers.py, submission_runs.py, ...); a
    test module never imports another, not even inside a function. Failed before: test_tampering.py
    imported ``_small_run`` from test_report.py and ``_copy`` from test_verification.py in its bodies."""
    problems = [
        f"{path.relative_to(TESTS)} imports {module}"
        for path in sorted(TESTS.glob("*/test_*.py"))
        for module in sorted(_absolute_imports(path))
        if module.split(".")[0].startswith("test_")
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "relative, source, imported",
    [
        ("tasks/x.py", "from ..platform.local import server", {("platform", "local")}),
        ("_registry.py", "from .platform import inspect_hooks", {("platform",)}),
        ("solvers/x.py", "import narrative_infill.platform.cli", {("platform", "cli")}),
        ("platform/cli/x.py", "from ...tasks import l2", {("tasks",)}),
        ("platform/cli/x.py", "from .. import analysis", {("platform", "analysis")}),
        ("tasks/x.py", "from narrative_infill import platform", {("platform",)}),
        ("tasks/x.py", "from narrative_infill.platform import extras", {("platform",)}),
    ],
)
def test_the_import_scan_sees_every_spelling(tmp_path, monkeypatch, relative, source, imported):
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path)
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    assert _imported_modules(path) == imported


def test_modules_are_short_and_say_what_they_are_for():
    problems = []
    for path in MODULES:
        text, name = path.read_text(encoding="utf-8"), path.relative_to(PACKAGE)
        if len(text.splitlines()) > 400:
            problems.append(f"{name}: {len(text.splitlines())} lines")
        if "fmt: skip" in text:  # the formatter's layout counts toward the limit, not a packed one
            problems.append(f"{name} keeps lines from the formatter (fmt: skip)")
        if not ast.get_docstring(ast.parse(text)):
            problems.append(f"{name} opens without a docstring")
    assert not problems, "\n".join(problems)


#: The longest a function may be, in lines from ``def`` to its end, docstring excluded: contributing.md's
#: "functions read as one idea (about 60 lines at most)".
MAX_FUNCTION_LINES = 60


def _function_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """``node``'s length in lines, without its docstring (nested functions count toward it)."""
    length = (node.end_lineno or node.lineno) - node.lineno + 1
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        length -= (first.end_lineno or first.lineno) - first.lineno + 1
    return length


def test_functions_read_as_one_idea():
    problems = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}: {lines} lines"
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (lines := _function_lines(node)) > MAX_FUNCTION_LINES
    ]
    assert not problems, "\n".join(problems)


def test_a_paper_default_says_which_paper_thing_it_is():
    """``"paper"`` is a prompt variant, a judge variant and a backbone: a default names the one it is
    (``PAPER_PROMPT_VARIANT``, ``PAPER_JUDGE_VARIANT``, ``PAPER_BACKBONE``), never the bare literal."""
    bare = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(
            isinstance(default, ast.Constant) and default.value == "paper"
            for default in [*node.args.defaults, *node.args.kw_defaults]
        )
    ]
    assert bare == []


def test_inspects_entry_point_imports_only_tasks_scorers_and_solvers():
    """``_registry`` is imported whenever Inspect resolves a name: no platform code behind it (it
    imported the importer for the replay provider, then the platform's hooks)."""
    assert _imported_rooms(PACKAGE / "_registry.py") <= {"tasks", "scorers", "solvers"}


def test_rooms_are_the_documented_ones():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    platform = {p.name for p in (PACKAGE / "platform").iterdir() if p.is_dir() and p.name != "__pycache__"}
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert rooms == set(CORE) | {"prompts", "platform"}
    assert platform == set(PLATFORM)
    assert {p.stem for p in (PACKAGE / "platform").glob("*.py")} == PLATFORM_ENTRY_POINTS | PLATFORM_SHARED
    assert loose == {"__init__.py", "_registry.py"} | {f"{name}.py" for name in SHARED_MODULES - {"prompts"}}


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


def test_the_output_cap_rule_has_one_home():
    """``paper_protocol.output_cap`` is the cap every harness and check applies: no other module
    reads the reasoning room or recomputes the per-sample cap (five modules did)."""

    def reads_the_rule(path: Path) -> bool:
        names = {
            getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", None)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        }
        return bool(names & {"REASONING_MAX_TOKENS", "max_tokens_for"})

    readers = [
        str(p.relative_to(PACKAGE)) for p in MODULES if p.name != "paper_protocol.py" and reads_the_rule(p)
    ]
    assert readers == []


#: Modules only lm-eval imports (a task YAML's ``!function``): they import lm-eval at the top.
LOADED_BY_LM_EVAL = {"narrative_infill.platform.lm_eval.task"}


def test_every_module_imports():
    """On every supported Python (CI's matrix runs this without torch): heavy imports stay lazy."""
    problems = []
    for path in MODULES:
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if not (name in LOADED_BY_LM_EVAL and err.name == "lm_eval"):
                problems.append(f"{name}: {type(err).__name__}: {err}")
        except Exception as err:  # every module that fails to import is listed, not only the first
            problems.append(f"{name}: {type(err).__name__}: {err}")
    assert not problems, "\n".join(problems)
