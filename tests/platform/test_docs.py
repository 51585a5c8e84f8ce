"""Docs that cannot rot: every command, option, task, module and figure the README and docs/ name
exists or names its source.

The checks read commands out of code spans and code blocks: a ``narrative-infill SUB ...`` line's
subcommand and ``--options`` against the CLI's parser, an ``inspect eval``/``score`` line's
``narrative_infill/`` tasks, ``-T`` names and ``-S`` names against the tasks' and scorers'
signatures, every repository path against the tree, and every paragraph that gives a measured
figure (``Measured:``) against the convention in docs/contributing.md: the command, the commit and
the date.
"""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: A command as a user would type it, inside a code span or a code block line.
COMMAND = re.compile(r"(?:\.venv/bin/)?(narrative-infill|inspect (?:eval-set|eval|score))\s([^`\n]*)")
#: (Not a name Inspect's score table cut with "…", such as ``narrative_infill/breakdo…``.)
PATH = re.compile(
    r"(?<![\w./-])((?:narrative_infill|benchmarks|scripts|tests|docs|\.ci)/[\w./-]*[\w/])(?![\w./-]*…)"
)
MEASURED = re.compile(r"\bmeasured:", re.IGNORECASE)


def code_lines(text: str) -> list[str]:
    """The text of every code block line and every inline code span, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", text)
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    lines = [line for block in blocks for line in block.splitlines() if not line.lstrip().startswith("#")]
    return lines + spans


def commands(text: str) -> list[tuple[str, list[str]]]:
    """(program, its words) for each command found in the code of ``text``."""
    found = []
    for line in code_lines(text):
        for match in COMMAND.finditer(line):
            words = re.split(r"\s+", match.group(2).split(" #")[0].split("|")[0].split("&&")[0].strip())
            cut = next(
                (i + 1 for i, w in enumerate(words) if w.endswith(")") or w.endswith(')"')), len(words)
            )
            words = [w.rstrip(")\"'") for w in words[:cut]]  # a $(...) substitution ends the command
            found.append((match.group(1), [w for w in words if w]))
    return found


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from narrative_infill.platform.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def cli_problems(text: str) -> list[str]:
    """Subcommands and long options of ``narrative-infill`` lines that the CLI does not have."""
    subparsers, problems = _subparsers(), []
    for program, words in commands(text):
        if program != "narrative-infill" or not words or words[0].startswith(("-", "<", "[", "...")):
            continue
        name, rest = words[0], words[1:]
        if name not in subparsers:
            problems.append(f"narrative-infill {name}: no such command")
            continue
        parser = subparsers[name]
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if nested and rest and rest[0] in nested[0].choices:  # export eee ...
            parser, rest = nested[0].choices[rest[0]], rest[1:]
        known = {o for a in parser._actions for o in a.option_strings}
        rest = rest[: rest.index("--")] if "--" in rest else rest
        for word in rest:
            option = word.split("=")[0].strip("[]")
            if option.startswith("--") and option not in known:
                problems.append(f"narrative-infill {name}: no option {option}")
    return problems


def _task_parameters() -> dict[str, set[str]]:
    from narrative_infill.paper_protocol import SETTINGS
    from narrative_infill.tasks import infill, judge_check

    tasks = {name: set(inspect.signature(getattr(infill, name)).parameters) for name in SETTINGS}
    tasks["judge_check"] = set(inspect.signature(judge_check.judge_check).parameters)
    return tasks


def _scorer_parameters() -> set[str]:
    from narrative_infill.scorers.judge.scorer import judge
    from narrative_infill.scorers.metrics.scorer import metrics

    return set(inspect.signature(metrics).parameters) | set(inspect.signature(judge).parameters)


def inspect_problems(text: str) -> list[str]:
    """Tasks, ``-T`` and ``-S`` names of ``inspect`` lines that the package does not have."""
    tasks, scorer_options, problems = _task_parameters(), _scorer_parameters(), []
    for program, words in commands(text):
        if not program.startswith("inspect"):
            continue
        named = [
            w.split("@")[-1].removeprefix("narrative_infill/") for w in words if "narrative_infill/" in w
        ]
        for task in named:
            if task not in tasks and task not in ("metrics", "judge") and not task.endswith(".py"):
                problems.append(f"{program}: no task narrative_infill/{task}")
        ours = [tasks[t] for t in named if t in tasks]
        for flag, value in zip(words, words[1:]):
            option = value.split("=")[0].strip("'\"")
            if flag == "-T" and ours and not all(option in params for params in ours):
                problems.append(f"{program}: no -T option {option}")
            if flag == "-S" and option not in scorer_options:
                problems.append(f"{program}: no -S option {option}")
    return problems


def path_problems(text: str) -> list[str]:
    """Repository paths named in the text that do not exist (registry names such as
    ``narrative_infill/l2`` or ``narrative_infill/metrics`` are names, not paths)."""
    registered = {*_task_parameters(), "metrics", "judge", "breakdowns", "copied_share", "reused_share"}
    missing = []
    for match in PATH.finditer(text):
        path = match.group(1)
        if text[match.end() : match.end() + 1] == "<" or "*" in path or path.startswith("tests/fixtures/"):
            continue
        if path.removeprefix("narrative_infill/") in registered:
            continue
        if not (ROOT / path).exists():
            missing.append(f"{path}: no such file or folder")
    return missing


def figure_problems(text: str) -> list[str]:
    """Paragraphs with a measured figure that do not name their command, commit and date."""
    problems = []
    for paragraph in re.split(r"\n\s*\n", text):
        if not MEASURED.search(paragraph):
            continue
        needs = {
            "a command in a code span": re.search(
                r"`(?:\.venv/bin/)?(?:python|narrative-infill|inspect|bash|lm_eval|pytest)[^`]*`", paragraph
            ),
            "a commit": re.search(r"commit\s+[0-9a-f]{7}", paragraph),
            "a date": re.search(r"\b20\d\d-\d\d-\d\d\b", paragraph),
        }
        lacking = [what for what, found in needs.items() if not found]
        if lacking:
            problems.append(f"measured figure without {', '.join(lacking)}: {paragraph.strip()[:90]}...")
    return problems


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_named_thing_exists(page: Path):
    text = page.read_text(encoding="utf-8")
    problems = cli_problems(text) + inspect_problems(text) + path_problems(text) + figure_problems(text)
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)


#: A line that is one upper-case word: a helper's placeholder for a figure not yet filled in
#: (``MEASUREMENTS`` stood in docs/statistics.md for a whole section).
PLACEHOLDER_LINE = re.compile(r"^[A-Z][A-Z0-9_]{5,}$")


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_placeholder_is_left_in_a_page(page: Path):
    lines = page.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if PLACEHOLDER_LINE.match(line.strip())]


def test_a_misspelled_option_or_command_is_caught():
    text = (
        "```bash\nnarrative-infill report logs/ -o out/ --compare-papr\n"
        "narrative-infill reprot logs/ -o out/\n"
        "inspect eval narrative_infill/l2 --model m -T domian=sind\n"
        "inspect score LOG --scorer narrative_infill/metrics -S backbnoe=minilm\n```\n"
        "See `narrative_infill/scorers/metrix.py`.\n\n"
        "Measured: 3.2 s on 2 cores.\n"
    )
    problems = cli_problems(text) + inspect_problems(text) + path_problems(text) + figure_problems(text)
    assert any("--compare-papr" in p for p in problems)
    assert any("reprot" in p for p in problems)
    assert any("domian" in p for p in problems)
    assert any("backbnoe" in p for p in problems)
    assert any("metrix.py" in p for p in problems)
    assert any("measured figure" in p for p in problems)


def test_the_correct_spelling_passes():
    text = (
        "```bash\nnarrative-infill report logs/ -o out/ --compare-paper\n"
        "inspect eval narrative_infill/l2 --model m -T domain=sind\n```\n"
        "Measured: 3.2 s with `python benchmarks/metrics_grid.py` at commit abc1234 on 2026-12-03.\n"
    )
    assert cli_problems(text) + inspect_problems(text) + figure_problems(text) == []


def test_the_readme_is_short_and_starts_with_running_a_model():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    copied = [  # the generated report and the demo run's copied output are not prose
        section.group(0).count("\n")
        for name in ("evaluation-report", "demo-output")
        if (section := re.search(rf"<!-- {name}:start -->.*?<!-- {name}:end -->", text, re.S))
    ]
    assert len(lines) - sum(copied) <= 220, "README.md grew past about 200 lines of prose"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## Install", "## Usage"]
