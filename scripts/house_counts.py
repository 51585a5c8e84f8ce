"""Issue 59's counts beside its targets: lines of code of the core and the platform (non-blank,
non-comment, docstrings left out), modules over 300 lines, words in docs/, README lines, CHANGELOG
sections, and the cycles of the platform's import graph (imports inside functions included: they
hide a cycle from import time, not from the graph). Run from anywhere: ``python scripts/house_counts.py``."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "narrative_infill"
MODULE_LINES = 300


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers of module, class and function docstrings."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            value = first.value if isinstance(first, ast.Expr) else None
            if first is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(path: Path) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    source = path.read_text(encoding="utf-8")
    docstrings = _docstring_lines(ast.parse(source))
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if token.type == tokenize.ENDMARKER:
            continue
        code.update(range(token.start[0], token.end[0] + 1))
    return len(code - docstrings)


def _module_name(path: Path, package: Path, name: str) -> str:
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join((name, *parts[:-1]) if parts[-1] == "__init__" else (name, *parts))


def _imports(path: Path, package: Path, name: str, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports anywhere in it (a function's body included)."""
    own = _module_name(path, package, name)
    base = own.split(".") if path.name == "__init__.py" else own.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            stem = base[: len(base) - node.level + 1] if node.level else []
            target = ".".join([*stem, *(node.module.split(".") if node.module else [])])
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {module for module in found if module in modules and module != own}


def import_cycles(package: Path, name: str) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan), sorted."""
    paths = sorted(package.rglob("*.py"))
    modules = {_module_name(path, package, name) for path in paths}
    graph = {_module_name(p, package, name): _imports(p, package, name, modules) for p in paths}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def main() -> int:
    platform = PACKAGE / "platform"
    modules = sorted(PACKAGE.rglob("*.py"))
    core = sum(code_lines(p) for p in modules if platform not in p.parents)
    platform_lines = sum(code_lines(p) for p in modules if platform in p.parents)
    tests = sum(code_lines(p) for p in sorted((ROOT / "tests").rglob("*.py")))
    long = sorted(
        (len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT)))
        for p in modules
        if len(p.read_text(encoding="utf-8").splitlines()) > MODULE_LINES
    )
    docs = sorted((ROOT / "docs").glob("*.md"))
    words = sum(len(p.read_text(encoding="utf-8").split()) for p in docs)
    readme = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"(?m)^## (.+)$", changelog)
    cycles = import_cycles(platform, "narrative_infill.platform")
    print(f"core lines of code: {core:,} (target at most 4,500)")
    print(f"platform lines of code: {platform_lines:,} (target at most 7,000)")
    print(f"tests lines of code: {tests:,} (no target: no guarantee weakened)")
    print(f"modules over 300 lines: {len(long)} (target 0)")
    for lines, path in reversed(long):
        print(f"  {path}: {lines}")
    print(f"docs words: {words:,} in {len(docs)} pages (target at most 25,000)")
    print(f"README lines: {readme} (target at most 250)")
    print(f"CHANGELOG sections: {len(sections)}: {'; '.join(sections)} (target: releases, 0.3.0 cut)")
    print(f"platform import cycles: {len(cycles)} (target 0)")
    for cycle in cycles:
        names = ", ".join(m.removeprefix("narrative_infill.platform.") for m in cycle)
        print(f"  {len(cycle)} modules: {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
