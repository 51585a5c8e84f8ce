"""A judge's dimensions belong to its prompt variant: a rubric with other dimensions (a toy
variant here) reaches the report, the submission's claims and the export without any global
list of dimensions in the way; and AtAvg is the mean of its own components, not of every
reported metric. Judge-only logs: no embedding model."""

from __future__ import annotations

import json

import pytest
from helpers import mock_model
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, mean, scorer
from inspect_ai.solver import generate

import narrative_infill.scorers.metrics.pairs as pairs
from narrative_infill.platform.analysis.export.every_eval_ever import export_eee
from narrative_infill.platform.analysis.report.load import load_samples
from narrative_infill.platform.analysis.report.tables import build_report
from narrative_infill.platform.analysis.submission.build import setting_claims
from narrative_infill.errors import OptionError
from narrative_infill.paper_protocol import DIMENSIONS
from narrative_infill.scorers.judge.prompt import paper_prompt
from narrative_infill.scorers.judge.rubric import (
    JUDGE_VARIANTS,
    JudgeVariant,
    dimensions_of,
    frame_dimensions,
)
from narrative_infill.scorers.metrics.pairs import ATAVG_COMPONENTS

TOY = ("wit", "brevity")


@scorer(metrics={"qavg": [mean()], "wit": [mean()], "brevity": [mean()]}, name="judge")
def toy_judge():
    """Judge-shaped scores of the toy rubric, as the judge scorer writes them (value and metadata)."""

    async def score(state, target):
        wit = 4.0 if "0" in state.input_text else 2.0
        return Score(
            value={"qavg": (wit + 3.0) / 2, "wit": wit, "brevity": 3.0},
            answer=state.output.completion,
            metadata={"judge_variant": "toy", "judge_models": "grader=mockllm/model"},
        )

    return score


@pytest.fixture
def toy_log(tmp_path, monkeypatch):
    monkeypatch.setitem(JUDGE_VARIANTS, "toy", JudgeVariant("toy", TOY, paper_prompt))
    samples = [Sample(input=f"Ann went out {i}. ____ Home.", target="x", id=f"s{i}") for i in range(2)]
    task = Task(
        dataset=samples, solver=generate(), scorer=toy_judge(), name="l2", metadata={"template": "l2"}
    )
    [log] = eval(
        task,
        model=mock_model(lambda m, c: "<ANSWER>They met Bob.</ANSWER>"),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def test_a_toy_rubric_flows_to_the_report_the_claims_and_the_export(toy_log, tmp_path):
    frame = load_samples([toy_log.location]).frame
    assert frame_dimensions(frame) == TOY
    breakdown = build_report(frame).tables["table10_11_breakdown"]
    assert {"wit", "brevity"} <= set(breakdown.columns) and not set(DIMENSIONS) & set(breakdown.columns)
    assert breakdown.loc[("l2", "mockllm/model"), "wit"] == pytest.approx(3.0)

    from inspect_ai.log import read_eval_log_sample_summaries

    claims = setting_claims(read_eval_log_sample_summaries(toy_log.location))
    assert list(claims["dimensions"]) == list(TOY)

    export_eee([toy_log.location], tmp_path / "out", "t")
    [aggregate] = (tmp_path / "out" / "data").rglob("*.json")
    results = json.loads(aggregate.read_text(encoding="utf-8"))["evaluation_results"]
    wit = next(r for r in results if r["evaluation_result_id"] == "l2/judge/wit")
    assert wit["metric_config"]["metric_name"] == "Wit" and wit["metric_config"]["max_score"] == 5.0


def test_a_frame_without_judge_scores_has_the_default_variants_dimensions():
    """An unjudged log's ``judge_variant`` is missing (pandas' NA): the report once read it as a variant."""
    import pandas as pd

    unjudged = pd.DataFrame({"judge_variant": pd.Series([None, None], dtype="string")})
    assert frame_dimensions(unjudged) == frame_dimensions(pd.DataFrame()) == DIMENSIONS


def test_an_unknown_variant_is_named():
    with pytest.raises(OptionError, match="unknown judge prompt variant 'nobody'"):
        dimensions_of("nobody")
    assert dimensions_of(None) == dimensions_of("paper") == DIMENSIONS


def test_reporting_another_metric_leaves_atavg_unchanged(monkeypatch):
    """AtAvg was the mean over METRIC_NAMES: a sixth reported metric would have moved the paper's
    headline number. It is the mean of ATAVG_COMPONENTS, named apart."""
    five = dict(zip(ATAVG_COMPONENTS, (0.9, 0.5, 0.4, 0.3, 0.7)))
    before = pairs.atavg(five)
    monkeypatch.setattr(pairs, "METRIC_NAMES", (*ATAVG_COMPONENTS, "extra"))
    assert pairs.atavg({**five, "extra": 0.0}) == before == pytest.approx(0.56)


def test_a_toy_rubric_s_verdict_is_parsed_and_its_reply_shape_asked_for():
    """Failed before: the parser and the reply schema knew only the paper's five dimensions, so a
    variant with others could reach the report but never get a verdict read."""
    from narrative_infill.scorers.judge.parse import JudgementError, parse_judgement
    from narrative_infill.scorers.judge.schema import reply_constraint, reply_schema

    judgement = parse_judgement('{"Wit": 4, "Brevity": 2}', dimensions=TOY)
    assert judgement.scores == {"wit": 4, "brevity": 2}
    assert parse_judgement("Wit: 5\nBrevity: 1", dimensions=TOY).scores == {"wit": 5, "brevity": 1}
    with pytest.raises(JudgementError, match="missing dimension"):
        parse_judgement('{"Wit": 4, "Fluency": 2}', dimensions=TOY)  # another rubric's key is not this one's
    with pytest.raises(JudgementError, match="twice"):
        parse_judgement('{"Wit": 4, "wit": 5, "Brevity": 2}', dimensions=TOY)
    _, shape = reply_constraint("openai/gpt-4.1-mini", "on", reply_schema(TOY))
    schema = shape.response_schema.json_schema
    assert schema.required == ["Wit", "Brevity"] and set(schema.properties) == {"Wit", "Brevity"}
    # the paper's five stay the default
    assert parse_judgement(
        '{"Fluency": 4, "Context_Faithfulness": 3, "Bidirectional_Coherence": 4, '
        '"Narrative_Consistency": 5, "Informativeness": 3}'
    ).scores == dict(zip(DIMENSIONS, (4, 3, 4, 5, 3)))
