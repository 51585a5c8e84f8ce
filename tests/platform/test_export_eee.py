"""Every Eval Ever export: per-sample values are the log's, NaN is absent with its reason, the
judge and the task's arguments are recorded. (EEE's own validator runs on this export in CI:
.ci/every-eval-ever, on Python 3.12.)"""

import json
import math

import pytest
from every_eval_ever_demo import LIMIT, write_demo_log
from helpers import VALID_VERDICT, mock_model
from inspect_ai import eval, score
from inspect_ai.log import write_eval_log

from narrative_infill.platform.analysis.export.every_eval_ever import ExportError, export_eee
from narrative_infill.platform.analysis.report.load import newest_score_key
from narrative_infill.scorers.judge import judge

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)


def _strict(text: str):
    def refuse(constant):
        raise AssertionError(f"{constant} in an export: JSON has no NaN")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("eee")
    log, failed_id = write_demo_log(str(root / "logs"))
    written = export_eee([log.location], root / "out", "narrative_infill tests")
    aggregate_path = next(p for p in written if p.suffix == ".json")
    samples_path = next(p for p in written if p.suffix == ".jsonl")
    aggregate = _strict(aggregate_path.read_text(encoding="utf-8"))
    records = [_strict(line) for line in samples_path.read_text(encoding="utf-8").splitlines()]
    return log, failed_id, aggregate, records, root


def test_per_sample_values_are_the_logs(exported):
    log, _, _, records, _ = exported
    samples = {str(s.id): s for s in log.samples}
    assert len({r["sample_id"] for r in records}) == LIMIT
    for record in records:
        setting, scorer, key = record["evaluation_result_id"].split("/")
        score = samples[record["sample_id"]].scores[
            newest_score_key(samples[record["sample_id"]].scores, scorer)
        ]
        assert setting == "l2" and record["evaluation"]["score"] == score.value[key]
        assert record["answer_attribution"][0]["extracted_value"] == score.answer
    by_result = {}
    for record in records:
        by_result.setdefault(record["evaluation_result_id"], []).append(record)
    assert len(by_result["l2/metrics/rouge1"]) == LIMIT and len(by_result["l2/judge/qavg"]) == LIMIT - 1


def test_a_failed_judgement_is_absent_with_its_reason_not_a_number(exported):
    log, failed_id, aggregate, records, _ = exported
    failed = next(s for s in log.samples if s.id == failed_id)
    assert math.isnan(failed.scores["judge"].value["qavg"])  # the log holds NaN
    assert not [
        r for r in records if r["sample_id"] == failed_id and "/judge/qavg" in r["evaluation_result_id"]
    ]
    [qavg] = [r for r in aggregate["evaluation_results"] if r["evaluation_result_id"] == "l2/judge/qavg"]
    absent = json.loads(qavg["score_details"]["details"]["absent_samples"])
    assert list(absent) == [f"{failed_id}@1"] and "no scores" in absent[f"{failed_id}@1"]
    assert qavg["score_details"]["uncertainty"]["num_samples"] == LIMIT - 1


def test_each_key_has_bounds_and_direction_and_the_judge_is_recorded(exported):
    _, _, aggregate, _, _ = exported
    results = {r["evaluation_result_id"]: r for r in aggregate["evaluation_results"]}
    lower_better = {k for k, r in results.items() if r["metric_config"]["lower_is_better"]}
    assert lower_better == {
        "l2/metrics/truncated",
        "l2/metrics/context_copy",
        "l2/metrics/context_copy/copied_share",
        "l2/metrics/story_reuse",
        "l2/metrics/story_reuse/reused_share",
        "l2/judge/grader_failed",
        "l2/judge/qavg/low_share",
    }
    assert all(r["metric_config"]["min_score"] < r["metric_config"]["max_score"] for r in results.values())
    qavg = results["l2/judge/qavg"]["metric_config"]
    assert (qavg["min_score"], qavg["max_score"]) == (1.0, 5.0)
    scoring = qavg["llm_scoring"]
    assert [j["model_info"]["id"] for j in scoring["judges"]] == ["mockllm/model"]
    assert scoring["additional_details"]["judge_variant"] == "paper" and "Fluency" in scoring["input_prompt"]
    assert "llm_scoring" not in results["l2/metrics/rouge1"]["metric_config"]
    details = results["l2/metrics/rouge1"]["generation_config"]["additional_details"]
    assert (
        details["task_arg.n"] == "1"
        and details["task_arg.data"] == "demo"
        and details["prompt_variant"] == "paper"
    )
    assert results["l2/judge/qavg/high_share"]["score_details"]["score"] == 0.0  # 3.8 is not above 4
    copied = results["l2/metrics/context_copy/copied_share"]["metric_config"]
    assert (
        copied["metric_id"] == "narrative_infill.context_copy.copied_share" and "0.8" in copied["metric_name"]
    )
    reused = results["l2/metrics/story_reuse/reused_share"]["metric_config"]
    assert (
        reused["metric_id"] == "narrative_infill.story_reuse.reused_share" and "0.8" in reused["metric_name"]
    )


def test_a_judge_that_never_ran_is_absent_with_the_reason(tmp_path):
    [log] = eval(
        "narrative_infill/l2",
        task_args={"data": "demo", "n": 1},
        model=mock_model(lambda m, c: "x"),
        limit=1,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    [aggregate_path, _] = sorted(export_eee([log.location], tmp_path / "out", "t"), key=lambda p: p.suffix)
    aggregate = _strict(aggregate_path.read_text(encoding="utf-8"))
    assert not [r for r in aggregate["evaluation_results"] if "/judge/" in r["evaluation_result_id"]]
    absent = json.loads(aggregate["source_metadata"]["additional_details"]["absent_results"])
    assert "grader" in absent["l2/judge"] and "inspect score LOG" in absent["l2/judge"]
    # Judged later, as the warning says (the header then lists the judge's keys twice): exported.
    rescored = score(log, judge(), model_roles={"grader": mock_model(lambda m, c: VALID_VERDICT)}, action="append")
    write_eval_log(rescored, log.location)
    [aggregate_path, _] = sorted(export_eee([log.location], tmp_path / "again", "t"), key=lambda p: p.suffix)
    results = {
        r["evaluation_result_id"]: r for r in _strict(aggregate_path.read_text())["evaluation_results"]
    }
    assert results["l2/judge/qavg"]["score_details"]["score"] == 3.8


def test_bad_logs_are_refused_before_anything_is_written(exported, tmp_path):
    log, _, _, _, root = exported
    broken = log.model_copy(deep=True)
    broken.samples[0].scores["metrics"].value["novel_key"] = 0.5
    location = str(tmp_path / "broken.eval")
    write_eval_log(broken, location)
    out = tmp_path / "out"
    with pytest.raises(ExportError, match="metrics.novel_key has no known bounds"):
        export_eee([log.location, location], out, "t")
    assert not out.exists()
    keep = out / "notes.txt"
    keep.parent.mkdir()
    keep.write_text("mine")
    export_eee([log.location], out, "t")
    assert keep.read_text() == "mine" and len(list((out / "data").rglob("*.json*"))) == 2
