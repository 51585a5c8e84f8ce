"""Output folders and files (``data/atomic.py``): replaced whole only when this package wrote them and
they are apart from the inputs; created with the user's umask."""

import pytest
from helpers import umask

from narrative_infill.data.atomic import MARKER, OutputFolderError, atomic_dir, atomic_file


def _write(target, command="report", inputs=(), files=("report.md",)):
    with atomic_dir(target, command, inputs) as folder:
        for name in files:
            (folder / name).write_text(name)


def _listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_its_own_folder_is_replaced_whole(tmp_path):
    _write(tmp_path / "out", files=("a.csv", "report.md"))
    _write(tmp_path / "out", files=("b.csv",))
    assert _listing(tmp_path / "out") == [MARKER, "b.csv"]
    assert _listing(tmp_path) == ["out", f"out/{MARKER}", "out/b.csv"]  # no partial or old folder left


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        (lambda out: (out / "thesis.tex").write_text("x"), "not written by narrative-infill"),
        (lambda out: (_write(out), (out / "notes.txt").write_text("x")), "files it did not write: notes.txt"),
        (
            lambda out: (_write(out), (out / "report.md").write_text("edited")),
            "files changed since: report.md",
        ),
        (lambda out: _write(out, command="leaderboard"), "output of `narrative-infill leaderboard`"),
        (lambda out: (_write(out), (out / MARKER).write_text("{")), f"no readable {MARKER}"),
    ],
)
def test_a_folder_it_did_not_write_or_that_was_changed_is_left_alone(tmp_path, prepare, message):
    out = tmp_path / "out"
    out.mkdir()
    prepare(out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(OutputFolderError, match=message):
        _write(out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert _listing(tmp_path) == ["out", *(f"out/{name}" for name in _listing(out))]


@pytest.mark.parametrize(
    ("output", "relation"),
    [("logs", "is"), ("logs/report", "sits inside"), (".", "contains"), ("link", "is")],
)
def test_an_output_that_is_holds_or_sits_inside_an_input_is_refused(tmp_path, output, relation):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.eval").write_text("log")
    (tmp_path / "link").symlink_to(logs)
    target = tmp_path / output
    with pytest.raises(OutputFolderError, match=f"{relation} the input"):
        _write(target, inputs=[logs])
    assert _listing(logs) == ["a.eval"]


def test_an_empty_folder_may_be_used(tmp_path):
    (tmp_path / "out").mkdir()
    _write(tmp_path / "out")
    assert (tmp_path / "out" / "report.md").exists()


@pytest.mark.parametrize(("mask", "folder_mode", "file_mode"), [(0o022, 0o755, 0o644), (0o027, 0o750, 0o640)])
def test_outputs_take_the_umask(tmp_path, mask, folder_mode, file_mode):
    with umask(mask):
        _write(tmp_path / "out")
        with atomic_file(tmp_path / "submission.json") as partial:
            partial.write_text("{}")
    assert (tmp_path / "out").stat().st_mode & 0o777 == folder_mode
    assert (tmp_path / "out" / "report.md").stat().st_mode & 0o777 == file_mode
    assert (tmp_path / "submission.json").stat().st_mode & 0o777 == file_mode
