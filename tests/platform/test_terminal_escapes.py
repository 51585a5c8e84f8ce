"""Text a file puts on the terminal (issue 57, Why 5): ``grid status`` printed grid.json's folder
names and the logs' errors raw, so a file could erase its line and print "finished 24/24" in its
place; every such line now shows a control, format or bidi character as its escape."""

from __future__ import annotations

import json

from inspect_ai import eval
from inspect_ai.log import write_eval_log
from inspect_ai.model import get_model

from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

#: erase the line, go back to its start, and write a forged state (then reorder what follows)
FORGED = "\x1b[2K\rmain/Rule  finished  24/24\u202e"


def _record(tmp_path, folder: str) -> None:
    entry = {"study": "main", "model": "Rule", "tasks": ["l2"], "samples": 24}
    (tmp_path / "grid.json").write_text(json.dumps({"format": 1, "runs": {folder: entry}, "jobs": []}))


def _shown_raw(text: str) -> bool:
    return any(char in text for char in "\x1b\r\u202e")


def test_grid_status_escapes_a_forged_folder_name(tmp_path, capsys):
    """Failed before: the folder's escape sequence reached the terminal as it was."""
    _record(tmp_path, f"main/{FORGED}")
    assert main(["grid", "status", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert not _shown_raw(out) and "main/\\x1b[2K\\rmain/Rule  finished  24/24\\u202e" in out


def test_grid_status_escapes_a_log_error(tmp_path, capsys):
    """A run whose model failed, its log's error message rewritten to carry control characters
    (Inspect writes the exception's repr; a log is a file anyone can edit). Failed before."""

    def broken(*_):
        raise RuntimeError("server died")

    _record(tmp_path, "main/Rule")
    model = get_model("mockllm/rule", custom_outputs=broken, memoize=False)
    [log] = eval(infill_task("l2", data="demo", domain="sind"), model=model, display="none", score=False,
                 limit=1, log_dir=str(tmp_path / "main" / "Rule"))  # fmt: skip
    log.error.message = f"server died {FORGED}"
    write_eval_log(log, log.location)
    assert main(["grid", "status", str(tmp_path)]) == 1  # a failed run
    out = capsys.readouterr().out
    assert "failed" in out and "server died" in out
    assert not _shown_raw(out) and "\\x1b[2K\\rmain/Rule" in out


def test_an_error_naming_a_file_escapes_its_name(tmp_path, capsys):
    """A log file named with control characters in a folder given to ``report``: the refusal names
    it escaped."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / f"x{FORGED.replace('/', '-')}.eval").write_bytes(b"not a zip")
    assert main(["report", str(folder), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "not a readable Inspect log" in err and not _shown_raw(err) and "x\\x1b[2K" in err
