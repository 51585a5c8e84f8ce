"""Issue 59's counts, printed by ``scripts/house_counts.py`` beside the issue's targets: the script
runs on this checkout, names every measure, and counts code as the issue defines it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "house_counts.py"


def _script():
    spec = importlib.util.spec_from_file_location("house_counts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_prints_every_count_with_its_target():
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for measure in (
        "core lines of code",
        "platform lines of code",
        "modules over 300 lines",
        "docs words",
        "README lines",
        "CHANGELOG sections",
        "platform import cycles",
    ):
        [line] = [line for line in lines if line.startswith(measure)]
        assert "target" in line, line


def test_code_lines_leave_out_blanks_comments_and_docstrings(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        '"""A module\n\nwith a docstring."""\n\n# a comment\nimport os  # kept\n\n\n'
        'def f():\n    """Its docstring."""\n    return """not a docstring\n    but a string"""\n',
        encoding="utf-8",
    )
    assert _script().code_lines(source) == 4  # import, def, and the two lines of the returned string


def test_a_cycle_is_found_through_imports_inside_functions(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from . import b\n", encoding="utf-8")
    (package / "b.py").write_text("def f():\n    from .c import x\n", encoding="utf-8")
    (package / "c.py").write_text("from .a import y\n", encoding="utf-8")
    (package / "d.py").write_text("from .a import y\n", encoding="utf-8")
    assert _script().import_cycles(package, "pkg") == [["pkg.a", "pkg.b", "pkg.c"]]
