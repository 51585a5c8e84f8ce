"""Bad input at every entry point (``inspect eval``/``inspect score`` and ``narrative-infill``): a
non-zero exit with one message naming the file, record and field, no traceback, and no earlier
output replaced or input overwritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import mock_model
from inspect_ai import eval
from inspect_ai._util.error import PrerequisiteError  # the type Inspect prints as a message alone

from narrative_infill.platform.cli import main
from narrative_infill.data.records import InvalidRecordError
from narrative_infill.errors import NarrativeInfillError, OptionError
from narrative_infill.inspect_compat import ShownByInspect
from narrative_infill.tasks import infill_task

DEMO = Path(__file__).resolve().parents[2] / "narrative_infill" / "data" / "demo.jsonl"


def _inspect(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The ``inspect`` command line, as a user runs it (its own exception hook included)."""
    return subprocess.run(
        [sys.executable, "-m", "inspect_ai", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "400"},  # rich wraps the message at the terminal's width
    )  # fmt: skip


@pytest.fixture
def bad_line_7(tmp_path) -> Path:
    """Ten demo records, the seventh cut short."""
    lines = DEMO.read_text(encoding="utf-8").splitlines()[:10]
    lines[6] = '{"dataset": "roc", "ref_id": 9, broken'
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.subprocess
def test_inspect_eval_prints_a_data_error_without_a_traceback(bad_line_7, tmp_path):
    done = _inspect("eval", "narrative_infill/l2", "-T", f"data={bad_line_7}", "--model", "mockllm/model",
                    "--limit", "1", cwd=tmp_path)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"{bad_line_7}, row 7: unparseable JSON" in output
    assert "Traceback" not in output


@pytest.mark.subprocess
def test_inspect_score_shows_a_bad_scorer_option_instead_of_scorer_not_found(tmp_path):
    [log] = eval(
        infill_task("l2", data="demo", judge=False), model=mock_model(lambda m, c: "<ANSWER>x.</ANSWER>"),
        limit=1, score=False, log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    done = _inspect("score", log.location, "--scorer", "narrative_infill/metrics", "-S", "extraction=bogus",
                    "--overwrite", cwd=tmp_path)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "extraction must be one of ('ours', 'published'), got 'bogus'" in output
    assert "couldn't be loaded" not in output and "Traceback" not in output


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("max_tokens", "abc", "max_tokens must be positive (a whole number of tokens), got 'abc'"),
        ("max_tokens_factor", "x", "max_tokens_factor must be positive (a number), got 'x'"),
        ("min_sentences", "x", "min_sentences filter: expected a whole number of sentences, got 'x'"),
        ("judge", "maybe", "judge must be true or false (or left out), got 'maybe'"),
    ],
)
def test_a_task_option_of_the_wrong_type_is_named(option, value, message):
    """``-T`` values arrive as YAML: ``-T max_tokens=abc`` is the string 'abc'."""
    with pytest.raises(NarrativeInfillError) as raised:
        infill_task("l2", data="demo", **{option: value})
    assert str(raised.value) == message


def test_a_task_error_is_one_inspect_shows_and_keeps_the_error_as_its_cause(bad_line_7, tmp_path):
    """The factories raise ``ShownByInspect`` (a class written once, not one made at run time by
    reassigning the error's ``__class__``): Inspect prints it as its message alone, and the error
    with its own type is its cause."""
    path = tmp_path / "n.jsonl"
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()[:10]]
    records[6]["n"] = "two"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(
        ShownByInspect, match=r"n\.jsonl, row 7 .*field 'n': expected an integer, got 'two'"
    ) as raised:
        infill_task("l2", data=str(path))
    assert type(raised.value) is ShownByInspect and isinstance(raised.value, PrerequisiteError)
    assert isinstance(raised.value.__cause__, InvalidRecordError)
    with pytest.raises(ShownByInspect, match="no prompt variant 'bogus'") as raised:
        infill_task("l2", data="demo", variant="bogus")
    assert isinstance(raised.value.__cause__, OptionError)


def _fails(capsys, *argv: str) -> str:
    """Run the command, which must fail with exit 1 and one message: return the message."""
    assert main(list(argv)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"narrative-infill {argv[0]}: ") and "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def a_log(tmp_path_factory) -> Path:
    """One finished (unscored) l2 log of two demo instances."""
    folder = tmp_path_factory.mktemp("logs")
    [log] = eval(
        infill_task("l2", data="demo", judge=False), model=mock_model(lambda m, c: "<ANSWER>x.</ANSWER>"),
        limit=2, score=False, log_dir=str(folder), display="none",
    )  # fmt: skip
    return Path(log.location)


def test_report_refuses_a_mistyped_or_empty_path_instead_of_leaving_it_out(a_log, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = str(tmp_path / "mising")
    assert f"{missing}: no such log or folder" in _fails(
        capsys, "report", str(a_log), missing, "-o", str(tmp_path / "r")
    )
    assert f"{empty}: no .eval logs" in _fails(
        capsys, "report", str(a_log), str(empty), "-o", str(tmp_path / "r")
    )
    assert not (tmp_path / "r").exists()


def test_a_broken_log_is_named(tmp_path, capsys):
    broken = tmp_path / "logs" / "2026-01-01T00-00-00-00-00_l2_abc.eval"
    broken.parent.mkdir()
    broken.write_bytes(b"not a zip")
    for command in (["report"], ["submit", "--track", "demo"], ["annotate", "--n", "3"]):
        message = _fails(capsys, command[0], str(broken.parent), "-o", str(tmp_path / "out"), *command[1:])
        assert f"{broken.name}: not a readable Inspect log" in message


def test_an_output_that_cannot_be_written_is_named(a_log, tmp_path, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert f"cannot write {a_file}/out" in _fails(capsys, "report", str(a_log), "-o", str(a_file / "out"))
    assert "cannot write" in _fails(capsys, "setup-data", "--dir", str(a_file / "nltk"))
    built = _fails(capsys, "build", "--source", "jsonl", str(DEMO), "-o", str(a_file / "b.jsonl"))
    assert f"cannot write {a_file}/b.jsonl" in built


def test_report_names_a_human_ratings_file_that_is_missing_or_empty(a_log, tmp_path, capsys):
    empty = tmp_path / "ratings.csv"
    empty.write_text("")
    out = str(tmp_path / "r")
    assert f"{empty}: empty file" in _fails(capsys, "report", str(a_log), "-o", out, "--human", str(empty))
    missing = str(tmp_path / "none.csv")
    assert f"{missing}: cannot read" in _fails(capsys, "report", str(a_log), "-o", out, "--human", missing)


@pytest.mark.parametrize("name, content", [("g.jsonl", ""), ("g.csv", ""), ("g.csv", "\n")])
def test_import_names_an_empty_file(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_text(content)
    message = _fails(capsys, "import", str(path), "-o", str(tmp_path / "out"))
    assert f"{path}: " in message and ("no rows" in message or "empty file" in message)
    assert not (tmp_path / "out").exists()


@pytest.fixture
def narratives(tmp_path) -> Path:
    path = tmp_path / "raw.jsonl"
    texts = [" ".join(f"Sentence {i} of story {s}." for i in range(6)) for s in range(4)]
    path.write_text("".join(json.dumps({"id": f"d{s}", "text": t}) + "\n" for s, t in enumerate(texts)))
    return path


def test_build_never_writes_over_its_input(narratives, capsys):
    before = narratives.read_bytes()
    message = _fails(capsys, "build", "--source", "jsonl", str(narratives), "-o", str(narratives))
    assert f"output {narratives} is the input" in message
    assert narratives.read_bytes() == before


def test_build_with_nothing_to_write_keeps_the_earlier_output(narratives, tmp_path, capsys):
    out = tmp_path / "built.jsonl"
    assert main(["build", "--source", "jsonl", str(narratives), "-o", str(out)]) == 0
    good = out.read_bytes()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "no instances to write" in _fails(capsys, "build", "--source", "jsonl", str(empty), "-o", str(out))
    assert out.read_bytes() == good


@pytest.mark.parametrize(
    "edit, message",
    [({"id": "d1"}, "narrative id 'd1' (jsonl) repeats one of"), ({"id": ""}, ":3: field 'id' is empty")],
    ids=["duplicate", "empty"],
)
def test_build_refuses_narrative_ids_that_would_collide(narratives, tmp_path, capsys, edit, message):
    records = [json.loads(line) for line in narratives.read_text().splitlines()]
    records[2].update(edit)
    narratives.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert message in _fails(
        capsys, "build", "--source", "jsonl", str(narratives), "-o", str(tmp_path / "b.jsonl")
    )


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda rows: rows[6].update(n="two"),
            "row 7 (dataset='sind', ref_id=1): field 'n': expected an integer",
        ),
        (
            lambda rows: rows.append(dict(rows[2])),
            "row 11 (dataset='roc', ref_id=1): field '(dataset, ref_id",
        ),
        (
            lambda rows: rows[6].update(ref_id=""),
            "row 7 (dataset='sind', ref_id=''): field 'ref_id': missing",
        ),
    ],
    ids=["wrong-type", "duplicate", "empty-id"],
)
def test_build_stats_checks_records_as_a_task_loads_them(tmp_path, capsys, edit, message):
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()[:10]]
    edit(rows)
    path = tmp_path / "built.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert message in _fails(capsys, "build-stats", str(path))


def test_small_commands_refuse_what_they_cannot_use(a_log, tmp_path, capsys):
    empty = tmp_path / "labels.jsonl"
    empty.write_text("")
    assert f"{empty}: no labelled rows" in _fails(capsys, "extract-eval", str(empty))
    grid = tmp_path / "grid.yaml"
    grid.write_text("models: [\n")
    assert f"{grid}, line 2: not valid YAML" in _fails(capsys, "grid", str(grid), "--dry-run")
    assert "unknown study(ies) ['mains']" in _fails(
        capsys, "grid", "paper", "--dry-run", "--studies", "mains"
    )
    assert "--n must be at least 1, got 0" in _fails(
        capsys, "annotate", str(a_log), "-o", str(tmp_path / "s"), "--n", "0"
    )
    assert not (tmp_path / "s").exists()
    assert "instances must be a whole number from 1, got 0" in _fails(
        capsys, "judge-check", "--model-role", "grader=mockllm/model", "-n", "0"
    )
    with pytest.raises(SystemExit):
        main(["serve", "--port", "99999", "--", "true"])
    assert "a port is a whole number from 1 to 65535, got '99999'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit, message",
    [
        ({"id": ""}, "row 7: missing or empty field(s): id"),
        ({"n": "two"}, "row 7: field 'n': expected an integer, got 'two'"),
        ({"id": "s3"}, "row 7: field 'id': 's3' repeats"),
        ({"model": ""}, "row 7: missing or empty field(s): model"),
    ],
    ids=["empty-id", "wrong-type", "duplicate", "empty-field"],
)
def test_import_names_the_row_and_field(tmp_path, capsys, edit, message):
    rows = [{"id": f"s{i}", "problem": "A. ______ C.", "gold_answer": "B.", "response": "<ANSWER>B.</ANSWER>",
             "model": "m", "template_name": "fitb_l2", "template_id": 0} for i in range(10)]  # fmt: skip
    rows[6].update(edit)
    path = tmp_path / "gen.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert f"{path}, {message}" in _fails(capsys, "import", str(path), "-o", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_mistyped_logs_folder_fails_before_verify_records_anything(tmp_path, capsys):
    submission = tmp_path / "s.json"
    submission.write_text("{}")
    missing = tmp_path / "logz"
    assert f"--logs {missing}: no such folder" in _fails(
        capsys, "verify", str(submission), "--logs", str(missing)
    )
    assert list(tmp_path.iterdir()) == [submission]
    board = ["leaderboard", str(tmp_path), "-o", str(tmp_path / "site"), "--bundle-logs", str(missing)]
    assert f"--bundle-logs {missing}: no such folder" in _fails(capsys, *board)


@pytest.mark.parametrize(
    "filters, message",
    [
        ({"domain": "sind,wikipeda"}, "domain filter: ['wikipeda'] not in the data; its domains: "),
        ({"n": "1,4"}, "n filter: expected integers 1-3, got '1,4'"),
    ],
)
def test_a_mistyped_filter_value_is_not_silently_left_out(filters, message):
    with pytest.raises(NarrativeInfillError) as raised:
        infill_task("l2", data="demo", **filters)
    assert message in str(raised.value)
