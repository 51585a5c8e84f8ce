"""A judge score is evidence only as far as the verifier rebuilds it (issue 44's attack pass): a
log whose QAvg was raised by editing derived fields alone (an ``expected_scores`` added to an
unweighted grader's verdict, an errored sample's scores, the grader's reply or model copied into the
score while the transcript's grader calls say otherwise) is refused by ``verify`` and ``submit``,
and ``--rejudge`` that got too few usable verdicts to fail says so instead of "consistent"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import VALID_VERDICT, mock_output
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model
from submission_runs import each_sample, forged_logs

from narrative_infill.platform.analysis.submission.build import build_submission, write_submission
from narrative_infill.platform.analysis.submission.rejudge import RejudgeError
from narrative_infill.platform.analysis.submission.verify import verify
from narrative_infill.platform.cli import main
from narrative_infill.scorers.judge.rubric import DIMENSIONS
from narrative_infill.scorers.metrics.pairs import METRIC_NAMES
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

FIVES = json.dumps(dict.fromkeys(json.loads(VALID_VERDICT), 5))


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> Path:
    """One demo setting answered by a scripted model and judged (QAvg 3.8 everywhere) by a mock grader."""
    folder = tmp_path_factory.mktemp("judged") / "logs"
    grader = get_model("mockllm/grader", custom_outputs=lambda *_: mock_output(VALID_VERDICT), memoize=False)
    model = get_model(
        "mockllm/alpha",
        custom_outputs=lambda *_: mock_output("<ANSWER>They went home.</ANSWER>"),
        memoize=False,
    )
    task = infill_task("l1", data="demo", backbone="minilm", judge=True)
    eval(task, model=model, model_roles={"grader": grader}, log_dir=str(folder), display="none")
    return folder


def _inflate(judged_score) -> None:
    judged_score.value.update({**dict.fromkeys(DIMENSIONS, 5.0), "qavg": 5.0})


def _verdict(sample) -> dict:
    return sample.scores["judge"].metadata["judges"]["grader"]


def _submitted(folder: Path, out: Path) -> Path:
    """A submission built straight from the logs, as a forger would (past ``submit``'s recheck)."""
    write_submission(build_submission([str(folder)], "demo"), out)
    return out


def _refused(folder: Path, tmp_path: Path, capsys, expected: str) -> None:
    """``verify`` fails naming ``expected``, and ``submit`` refuses the logs."""
    path = _submitted(folder, tmp_path / "forged.json")
    assert main(["verify", str(path), "--logs", str(folder)]) == 1
    assert expected in capsys.readouterr().out
    assert main(["submit", str(folder), "-o", str(tmp_path / "again.json"), "--track", "demo"]) == 1
    assert expected in capsys.readouterr().err


def test_expected_scores_do_not_excuse_an_unweighted_grader_s_values(judged, tmp_path, capsys):
    """Failed before: a verdict holding ``expected_scores`` was exempt from 'values are the parsed
    reply', on a run that never asked for weighting: QAvg 3.8 -> 5.0 was 'verified'."""

    def edit(sample):
        _verdict(sample)["expected_scores"] = dict.fromkeys(DIMENSIONS, 5.0)
        _verdict(sample)["values"] = dict.fromkeys(DIMENSIONS, 5.0)
        _inflate(sample.scores["judge"])

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, "grader grader's values")


def test_an_errored_sample_s_scores_are_rechecked(judged, tmp_path):
    """Failed before: a sample marked errored was skipped by the recheck, yet its (forged) metrics
    counted in the claims ('verified' on the custom track)."""
    from inspect_ai._util.error import EvalError

    def edit(sample):
        if sample.id.startswith("rocstories"):
            sample.error = EvalError(message="x", traceback="", traceback_ansi="")
            sample.scores["metrics"].value.update(dict.fromkeys((*METRIC_NAMES, "atavg"), 0.9))

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    path = tmp_path / "forged.json"
    write_submission(build_submission([str(folder)], "custom"), path)
    result = verify(path, folder)
    assert not result.passed
    assert any("re-scored metrics differ from the logged ones" in f for f in result.failures), result.failures


def test_a_grader_reply_edited_in_the_score_alone_is_refused(judged, tmp_path, capsys):
    """Failed before: the reply re-parsed was the score's own copy (``judges.grader.raw``); the
    grader's call in the transcript, which ``inspect view`` shows, still said 3.8."""

    def edit(sample):
        verdict = _verdict(sample)
        verdict.update(raw=[FIVES], scores=dict.fromkeys(DIMENSIONS, 5), values=dict.fromkeys(DIMENSIONS, 5))
        _inflate(sample.scores["judge"])

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, "not the replies of its grader calls in the transcript")


def test_a_grader_model_renamed_in_the_score_alone_is_refused(judged, tmp_path, capsys):
    """Failed before: a mock grader renamed gpt-4.1-mini at the official endpoint in the score,
    its verdict and the header was 'verified'; the transcript's grader calls named mockllm/grader."""
    from inspect_ai.model import ModelConfig

    official = "https://api.openai.com/v1"

    def edit(sample):
        verdict = _verdict(sample)
        verdict.update(model="openai/gpt-4.1-mini", endpoint=official, response_model="gpt-4.1-mini")
        sample.scores["judge"].metadata.update(
            judge_models="grader=openai/gpt-4.1-mini",
            judge_endpoints=f"grader={official}",
            judge_served_by="grader=gpt-4.1-mini (None)",
        )

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    for path in folder.glob("*.eval"):
        log = read_eval_log(str(path))
        log.eval.model_roles["grader"] = ModelConfig(model="openai/gpt-4.1-mini")
        write_eval_log(log, str(path))
    _refused(folder, tmp_path, capsys, "not the replies of its grader calls in the transcript")


def test_a_rejudge_with_too_few_usable_verdicts_to_fail_is_not_consistent(judged, tmp_path):
    """Failed before: 3 usable verdicts of 8 gave p = 0.125 at best and 're-judge consistent' for a
    claimed QAvg of 5.0 against 3.8 re-judged; 1 usable verdict ended in scipy's ValueError."""
    folder = forged_logs(judged, tmp_path / "logs", each_sample(lambda sample: None))
    path = _submitted(folder, tmp_path / "honest.json")
    for usable in (1, 3):
        calls: list[int] = []

        def reply(*_, usable=usable, calls=calls):
            calls.append(1)
            return mock_output(FIVES if len(calls) <= usable else "I cannot judge this.")

        grader = get_model("mockllm/grader", custom_outputs=reply, memoize=False)
        with pytest.raises(RejudgeError, match=f"{usable} usable verdict"):
            verify(path, folder, rejudge=8, grader=grader)


def test_an_output_replaced_by_the_gold_while_the_transcript_keeps_the_model_s_is_refused(judged, tmp_path):
    """Failed before (issue 57): the answer was re-extracted from the edited output, never compared
    with the generating call in the transcript ('verified' at AtAvg 1.0)."""
    from narrative_infill.platform.analysis.submission.recompute import answer_derived
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    backbones = resolve_backbones("minilm")

    def edit(sample):
        gold = str(sample.target)
        sample.output.completion = sample.output.choices[0].message.content = f"<ANSWER>{gold}</ANSWER>"
        [fresh] = score_pairs([gold], [gold], backbones)
        metrics = sample.scores["metrics"]
        metrics.value.update({k: v for k, v in fresh.values.items() if k in metrics.value})
        story = sample.input if isinstance(sample.input, str) else ""
        metrics.value.update({key: rule(gold, story) for key, (rule, _) in answer_derived().items()})
        for key in ("metrics", "judge"):
            sample.scores[key].answer = gold

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    path = _submitted(folder, tmp_path / "forged.json")
    result = verify(path, folder)
    assert any("the output is not what its generating model call wrote" in f for f in result.failures)


def test_a_grader_failure_share_that_is_not_its_verdicts_is_refused(judged, tmp_path):
    """Failed before: ``grader_failed`` (what makes a panel's mean over the graders left count as
    unscored, so that failing the harsh grader is not free) was never rebuilt from the verdicts."""

    def edit(sample):
        sample.scores["judge"].value["grader_failed"] = 0.5

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    path = tmp_path / "forged.json"
    write_submission(build_submission([str(folder)], "custom"), path)  # a ranked track refuses 100%
    result = verify(path, folder)
    assert any("grader_failed 0.5, its graders give 0.0" in f for f in result.failures), result.failures
