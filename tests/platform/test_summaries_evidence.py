"""Summaries are not evidence (issue 35, finding 6): a log whose ``summaries.json`` was rewritten on its
own (AtAvg 1.0, while the sample records, and ``inspect view``, say 0.147) is refused by ``report``
and ``submit``, naming the log; they used to print and claim 1.0."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from submission_runs import HONEST_ATAVG

from narrative_infill.platform.analysis.submission.build import build_submission
from narrative_infill.platform.cli import main


def rewrite_member(folder: Path, edit) -> None:
    """Rewrite each log's zip member by member: ``edit(name, data)`` returns the new bytes, or None to
    leave the member out (what a hand edit of the zip does, past Inspect's API)."""
    for path in sorted(folder.glob("**/*.eval")):
        with zipfile.ZipFile(path) as archive:
            members = [(info.filename, archive.read(info)) for info in archive.infolist()]
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in members:
                if (new := edit(name, data)) is not None:
                    archive.writestr(name, new)


def inflate(name: str, data: bytes) -> bytes:
    """summaries.json only: every AtAvg 1.0."""
    if name != "summaries.json":
        return data
    summaries = json.loads(data)
    for summary in summaries:
        summary["scores"]["metrics"]["value"]["atavg"] = 1.0
    return json.dumps(summaries).encode()


def edited(honest: Path, tmp_path: Path, edit) -> Path:
    folder = shutil.copytree(honest, tmp_path / "logs")
    rewrite_member(folder, edit)
    return folder


def test_report_and_submit_read_honest_logs(honest, tmp_path):
    assert main(["report", str(honest), "-o", str(tmp_path / "report")]) == 0
    assert "0.147" in (tmp_path / "report" / "report.md").read_text()
    # the scores here are set by hand, not scored: `submit`'s recheck would refuse them; the
    # claims themselves are what is tested (tests/platform/test_recompute_never_trust.py: the recheck)
    claims = build_submission([str(honest)], "custom")["settings"]
    assert {s: c["atavg"]["mean"] for s, c in claims.items()} == pytest.approx({"l1": HONEST_ATAVG, "l2": HONEST_ATAVG})


def test_report_refuses_summaries_rewritten_on_their_own(honest, tmp_path, capsys):
    forged = edited(honest, tmp_path, inflate)
    assert main(["report", str(forged), "-o", str(tmp_path / "report")]) == 1
    error = capsys.readouterr().err
    assert "disagree with its sample records (what `inspect view` shows) in 4 sample(s)" in error, error
    assert ".eval: its sample summaries (summaries.json" in error and "sample 0 epoch 1: scores" in error
    assert not (tmp_path / "report").exists()


def test_submit_refuses_summaries_rewritten_on_their_own(honest, tmp_path, capsys):
    forged = edited(honest, tmp_path, inflate)
    out = tmp_path / "forged.json"
    assert main(["submit", str(forged), "-o", str(out), "--track", "custom"]) == 1
    assert "disagree with its sample records" in capsys.readouterr().err
    assert not out.exists()


def test_a_record_without_its_summary_is_refused(honest, tmp_path, capsys):
    """A sample the summaries leave out would leave the report without a word."""

    def drop_one(name: str, data: bytes) -> bytes:
        return json.dumps(json.loads(data)[1:]).encode() if name == "summaries.json" else data

    forged = edited(honest, tmp_path, drop_one)
    assert main(["report", str(forged), "-o", str(tmp_path / "report")]) == 1
    assert ": a record without a summary" in capsys.readouterr().err
