"""``export eee`` on input that is not a log: an error naming the file, and nothing written."""

import pytest

from narrative_infill.analysis.export.eee import ExportError, export_eee
from narrative_infill.cli import main


@pytest.mark.parametrize(
    "name, content",
    [("notes.eval", "hello"), ("other.json", '{"a": 1}'), ("broken.json", "{not json")],
)
def test_a_file_that_is_not_a_log_is_named_and_nothing_is_written(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(ExportError, match=f"{name}: not a readable Inspect log"):
        export_eee([str(path)], out, "t")
    assert not out.exists()


def test_the_command_says_it_in_one_line(tmp_path, capsys):
    path = tmp_path / "notes.eval"
    path.write_text("hello", encoding="utf-8")
    assert main(["export", "eee", str(path), "-o", str(tmp_path / "out"), "--organization", "t"]) == 1
    assert "notes.eval: not a readable Inspect log" in capsys.readouterr().err
