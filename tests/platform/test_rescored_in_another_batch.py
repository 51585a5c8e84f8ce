"""Issue 57, item 1: an honest entry is verified whatever batch its answers are re-scored in.

The eval scores each answer in whatever batch Inspect's samples form; ``submit`` and ``verify``
re-score them together (all, or ``--sample K``). BERTScore and Sem-F1 move by about 1e-6 between
batches, so with the arithmetic tolerance an honest entry was refused at random (``semf1
0.6044993485678626 -> 0.6045``). Here the eval scores every answer alone (one sample at a time)
and every re-scoring batches them, so the batch compositions always differ; a metric forged just
above the re-scoring tolerance is still refused, both numbers shown in full."""

from __future__ import annotations

import re
import shutil
from statistics import fmean

import pytest
from helpers import mock_output
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model
from submission_runs import ANSWERS, resubmitted, small_demo_run

from narrative_infill.number_rules import RESCORED_TOLERANCE
from narrative_infill.platform.cli import main
from narrative_infill.scorers.metrics.pairs import METRIC_NAMES
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # scored with the packaged MiniLM


def _answers(respond):
    return lambda messages: f"<ANSWER>{respond(messages)}</ANSWER>"


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """The scripted alpha's l2 demo run with every answer scored alone (``max_samples=1``: each
    sample is scored before the next one starts, so every batch is one pair)."""
    folder = tmp_path_factory.mktemp("alone") / "logs"
    respond = _answers(ANSWERS["alpha"])
    model = get_model(
        "mockllm/alpha", custom_outputs=lambda m, t, c, g: mock_output(respond(m)), memoize=False
    )
    eval(infill_task("l2", data="demo", backbone="minilm"), model=model, log_dir=str(folder), display="none",
         max_samples=1)  # fmt: skip
    return folder


def test_an_honest_entry_scored_alone_is_verified_when_rescored_together(alone, tmp_path, capsys):
    """Failed before: ``re-scored metrics differ from the logged ones``, the eval's one-pair batches
    against the re-scoring's batch of 24 (the issue's semf1 ... -> 0.6045 on wikipedia-1-n2-i10)."""
    out = tmp_path / "alpha.json"
    assert main(["submit", str(alone), "-o", str(out), "--track", "demo"]) == 0, capsys.readouterr().err
    for sample in (None, 5, 12, 23):
        options = [] if sample is None else ["--sample", str(sample)]
        assert main(["verify", str(out), "--logs", str(alone), *options]) == 0, capsys.readouterr().out
    assert f"re-scored here from the re-extracted answers (within {RESCORED_TOLERANCE:g})" in (
        capsys.readouterr().out
    )


def test_an_honest_entry_scored_together_is_verified_when_rescored_in_small_batches(tmp_path, capsys):
    """The other way round: the eval's batches as Inspect forms them, every ``--sample K`` re-scoring
    a different subset together."""
    logs = tmp_path / "logs"
    small_demo_run(logs, _answers(ANSWERS["beta"]), name="beta")
    out = tmp_path / "beta.json"
    assert main(["submit", str(logs), "-o", str(out), "--track", "custom", "--sample", "1"]) == 0
    for sample in (1, 2, 3):
        assert main(["verify", str(out), "--logs", str(logs), "--sample", str(sample)]) == 0, (
            capsys.readouterr().out
        )


def _forge(source, target, delta: float):
    """One sample's Sem-F1 (and AtAvg with it) moved by ``delta`` in its record, its summary and the
    header's means: every figure consistent, only the re-scoring can see it."""
    shutil.copytree(source, target)
    [path] = target.glob("*.eval")
    log = read_eval_log(str(path))
    values = log.samples[0].scores["metrics"].value
    values["semf1"] += delta
    values["atavg"] += delta / len(METRIC_NAMES)
    for score in log.results.scores:
        if score.scorer == "metrics" and score.name in ("semf1", "atavg"):
            score.metrics["mean"].value = fmean(s.scores["metrics"].value[score.name] for s in log.samples)
    write_eval_log(log, str(path))
    return target, values["semf1"]


def test_a_metric_forged_just_above_the_tolerance_is_refused_with_both_numbers_in_full(
    alone, tmp_path, capsys
):
    forged, claimed = _forge(alone, tmp_path / "forged", 2 * RESCORED_TOLERANCE)
    path = resubmitted(forged, tmp_path / "forged.json")
    assert main(["verify", str(path), "--logs", str(forged)]) == 1
    out = capsys.readouterr().out
    assert "re-scored metrics differ from the logged ones in 1 sample(s)" in out
    [(logged, fresh)] = re.findall(r"semf1 (\S+) -> (\S+?)[,;\n]", out)
    assert float(logged) == claimed and logged == repr(claimed)  # in full, not rounded
    assert abs(float(logged) - float(fresh)) > RESCORED_TOLERANCE
    assert len(fresh.split(".")[1]) > 6  # the fresh value in full too
