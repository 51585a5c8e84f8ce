"""``report`` re-scores every log as ``verify`` does (issue 57, Why 5): a log whose records,
summaries and header all claim AtAvg 0.45 (true about 0.1) entered Table 3 without a mark, and so did
the forged record of an eval-retry layout (an errored record, then a forged one). Each such run is
now marked in report.md's tables, and its failure named in the notes and on the terminal; an honest
log is not marked."""

from __future__ import annotations

import json
import shutil
import warnings
import zipfile
from pathlib import Path

import pytest
from helpers import mock_output
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model

from narrative_infill.platform.analysis.report.recheck import RECHECK_MARK
from narrative_infill.platform.cli import main
from narrative_infill.scorers.metrics.pairs import METRIC_NAMES
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

FORGED = 0.45
KEYS = (*METRIC_NAMES, "atavg")


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """One honest l2 run of the demo set's SIND rows, scored with MiniLM."""
    folder = tmp_path_factory.mktemp("scored") / "logs"
    model = get_model(
        "mockllm/honest",
        custom_outputs=lambda *_: mock_output("<ANSWER>They went home.</ANSWER>"),
        memoize=False,
    )
    eval(infill_task("l2", data="demo", domain="sind", backbone="minilm"), model=model, log_dir=str(folder),
         display="none")  # fmt: skip
    return folder


def _report(folder: Path, out: Path, capsys) -> tuple[str, str]:
    assert main(["report", str(folder), "-o", str(out)]) == 0
    return (out / "report.md").read_text(encoding="utf-8"), capsys.readouterr().out


def _table3(text: str) -> str:
    return text.split("## table3_model_by_level", 1)[1].split("\n## ", 1)[0]


def test_an_honest_log_is_not_marked(scored, tmp_path, capsys):
    text, out = _report(scored, tmp_path / "report", capsys)
    assert RECHECK_MARK not in text and RECHECK_MARK not in out


def test_forged_scores_in_records_summaries_and_header_are_marked_in_table_3(scored, tmp_path, capsys):
    """Failed before: Table 3 showed 0.45 unmarked and nothing said the scores were not the answers'."""
    folder = shutil.copytree(scored, tmp_path / "logs")
    for path in folder.glob("*.eval"):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            sample.scores["metrics"].value.update(dict.fromkeys(KEYS, FORGED))
        for score in log.results.scores:
            if score.scorer == "metrics" and score.name in KEYS:
                for metric in score.metrics.values():
                    metric.value = FORGED
        write_eval_log(log, str(path))
    text, out = _report(folder, tmp_path / "report", capsys)
    assert f"0.45 {RECHECK_MARK}" in _table3(text)
    note = f"{RECHECK_MARK} mockllm/honest / l2 ("
    assert note in text and note in out and "re-scored metrics differ from the logged ones" in out


def test_the_forged_retry_of_an_eval_retry_layout_is_marked(scored, tmp_path, capsys):
    """The layout ``inspect eval-retry`` writes (an errored record of a sample, then its retry under
    the same name), with the retry's scores forged, and its summary forged to match."""
    folder = shutil.copytree(scored, tmp_path / "logs")
    [path] = folder.glob("*.eval")
    with zipfile.ZipFile(path) as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    first = next(name for name, _ in members if name.startswith("samples/"))
    record = json.loads(dict(members)[first])
    failed = {
        **record,
        "error": {"message": "server died", "traceback": "", "traceback_ansi": ""},
        "scores": {},
    }
    record["scores"]["metrics"]["value"].update(dict.fromkeys(KEYS, FORGED))
    summaries = json.loads(dict(members)["summaries.json"])
    for summary in summaries:
        if (str(summary["id"]), summary["epoch"]) == (str(record["id"]), record["epoch"]):
            summary["scores"]["metrics"]["value"] = record["scores"]["metrics"]["value"]
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name": Inspect's own layout
        archive.writestr(first, json.dumps(failed))
        for name, data in members:
            if name == first:
                data = json.dumps(record).encode()
            archive.writestr(name, json.dumps(summaries) if name == "summaries.json" else data)
    text, out = _report(folder, tmp_path / "report", capsys)
    assert RECHECK_MARK in _table3(text)
    assert (
        f"{RECHECK_MARK} mockllm/honest / l2 (" in out
        and "re-scored metrics differ from the logged ones in 1 sample(s)" in out
    )
