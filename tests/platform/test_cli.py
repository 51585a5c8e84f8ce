"""The command line: the package's own errors are one line, anything else is a bug with a traceback."""

from __future__ import annotations

import pytest

from narrative_infill.platform import cli
from narrative_infill.copy_guards import is_near_verbatim
from narrative_infill.errors import NarrativeInfillError
from narrative_infill.paper_protocol import is_high, is_low

COMMANDS = [
    *("serve", "local-model", "setup-data", "extract-eval", "build", "build-stats", "import", "judge-check"),
    *("grid", "grid-status", "submit", "verify", "leaderboard", "annotate", "report", "compare", "export"),
    "lm-eval-tasks",
]


def _commands(parser) -> list[str]:
    [subparsers] = [a for a in parser._actions if a.dest == "subcommand"]
    return list(subparsers.choices)


def test_every_command_is_kept():
    assert _commands(cli.build_parser()) == COMMANDS


def test_every_command_name_is_written_out_where_it_is_made():
    """``grep -rn '"verify"' narrative_infill/platform/cli`` finds the command (names were derived from the
    handlers' function names)."""
    from pathlib import Path

    source = "".join(p.read_text(encoding="utf-8") for p in Path(cli.__file__).parent.glob("*.py"))
    assert [name for name in COMMANDS if f'"{name}"' not in source] == []


@pytest.fixture
def failing_report(monkeypatch):
    """``report`` whose handler raises the exception the test puts in ``raised``."""
    raised: list[Exception] = []

    def run(args):
        raise raised[0]

    parser = cli.build_parser

    def patched():
        built = parser()
        [subparsers] = [a for a in built._actions if a.dest == "subcommand"]
        subparsers.choices["report"].set_defaults(run=run)
        return built

    monkeypatch.setattr(cli, "build_parser", patched)
    return raised


def test_a_package_error_is_one_line_and_exit_1(failing_report, capsys):
    failing_report.append(NarrativeInfillError("logs/x.eval: not a log"))
    assert cli.main(["report", "logs", "-o", "out"]) == 1
    assert capsys.readouterr().err == "narrative-infill report: logs/x.eval: not a log\n"


@pytest.mark.parametrize("error", [ValueError("a bug"), RuntimeError("a bug"), OSError("a bug")])
def test_any_other_error_is_a_bug_and_keeps_its_traceback(failing_report, error):
    failing_report.append(error)
    with pytest.raises(type(error), match="a bug"):
        cli.main(["report", "logs", "-o", "out"])


def test_debug_shows_the_traceback_of_a_package_error_too(failing_report):
    failing_report.append(NarrativeInfillError("bad input"))
    with pytest.raises(NarrativeInfillError, match="bad input"):
        cli.main(["--debug", "report", "logs", "-o", "out"])


def test_grid_passes_what_follows_the_double_dash_on_with_debug_in_front():
    argv = ["--debug", "grid", "paper", "--dry-run", "--", "--max-connections", "64"]
    assert cli._split_passed_on(argv) == (argv[:4], ["--max-connections", "64"])
    assert cli._split_passed_on(["report", "a", "--", "b"]) == (["report", "a", "--", "b"], [])


def test_the_high_and_low_rule():
    assert [is_high(q) for q in (3.8, 4.0, 4.2)] == [False, False, True]
    assert [is_high(q, inclusive=True) for q in (3.8, 4.0, 4.2)] == [False, True, True]
    assert [is_low(q) for q in (1.8, 2.0)] == [True, False]
    assert [is_near_verbatim(r) for r in (0.79, 0.8)] == [False, True]


@pytest.mark.parametrize("command", ["report", "submit", "leaderboard"])
def test_every_command_that_counts_high_takes_high_inclusive(command):
    [subparsers] = [a for a in cli.build_parser()._actions if a.dest == "subcommand"]
    assert "--high-inclusive" in subparsers.choices[command]._option_string_actions


def test_import_takes_the_yaml_role_syntax_the_readme_recommends_for_batch_mode(monkeypatch, tmp_path):
    import narrative_infill.platform.analysis.importer as importer

    seen = {}

    def fake_import(files, output, **options):
        seen.update(options)
        return []

    monkeypatch.setattr(importer, "import_generations", fake_import)
    role = "grader={model: mockllm/model, batch: true}"
    assert cli.main(["import", "x.jsonl", "-o", str(tmp_path), "--score", "judge", "--model-role", role]) == 0
    grader = seen["model_roles"]["grader"]
    assert grader.name == "model" and grader.config.batch is True


def test_a_model_role_that_does_not_parse_is_named(capsys, tmp_path):
    assert (
        cli.main(["import", "x.jsonl", "-o", str(tmp_path), "--model-role", "grader={model: [unclosed"]) == 1
    )
    assert "--model-role grader={model: [unclosed" in capsys.readouterr().err
