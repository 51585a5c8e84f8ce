"""Error bars clustered by source narrative, and the paper's breakdowns, in the log itself."""

import json
import logging

import numpy as np
import pytest
from inspect_ai import Task, eval
from inspect_ai.model import get_model
from inspect_ai.scorer import SampleScore, Score
from inspect_ai.solver import generate

from narrative_infill.platform.analysis.importer import import_generations
from narrative_infill.data.dataset import infill_dataset
from narrative_infill.data.narrative import (
    NARRATIVE,
    length_bucket,
    narrative_key,
    narrative_of,
    narrative_of_id,
    record_narrative,
)
from narrative_infill.scorers import error_bars
from narrative_infill.scorers.judge import judge

from helpers import mock_model, mock_output

REPLY = (
    '{"Fluency": %d, "Context_Faithfulness": 3, "Bidirectional_Coherence": 4, '
    '"Narrative_Consistency": 5, "Informativeness": 3}'
)


@pytest.fixture(scope="module")
def judged_demo_log():
    """The demo set (24 instances of 8 narratives) judged by a mock grader whose fluency is one
    narrative's own: samples of a narrative agree, so the clustered error differs from the naive one
    by design. Each sample's value follows from its prompt, not from the order in which Inspect's
    concurrent scoring reaches the grader (a cycle of replies did, and the test failed by chance)."""
    samples = list(infill_dataset("demo"))
    narratives = sorted({s.metadata[NARRATIVE] for s in samples})
    fluency_of = {s.input: [1, 5, 2, 4, 3, 5, 1, 4][narratives.index(s.metadata[NARRATIVE])] for s in samples}

    def reply(messages, tools, tool_choice, config):
        prompt = "\n".join(message.text for message in messages)
        [fluency] = {value for problem, value in fluency_of.items() if problem in prompt}
        return mock_output(REPLY % fluency)

    grader = get_model("mockllm/grader", custom_outputs=reply, memoize=False)
    task = Task(dataset=infill_dataset("demo"), solver=generate(), scorer=judge())
    [log] = eval(
        task,
        model=mock_model(lambda m, c: "<ANSWER>They went home.</ANSWER>"),
        model_roles={"grader": grader},
        display="none",
    )
    assert log.status == "success", log.error
    return log


def clustered_stderr_by_hand(values, clusters):
    """The CR1 clustered standard error of the mean: sqrt(G/(G-1) * sum_g (sum_i in g (x_i - mean))^2) / n."""
    values, clusters = np.asarray(values, dtype=float), np.asarray(clusters)
    deviations = values - values.mean()
    sums = np.array([deviations[clusters == g].sum() for g in np.unique(clusters)])
    groups = len(sums)
    return np.sqrt(groups / (groups - 1) * (sums**2).sum()) / len(values)


def test_every_demo_sample_names_its_narrative_and_narratives_hold_several_instances():
    samples = list(infill_dataset("demo"))
    keys = [s.metadata[NARRATIVE] for s in samples]
    assert all(
        key == narrative_key(s.metadata["dataset"], s.metadata["ref_id"]) for key, s in zip(keys, samples)
    )
    assert all(str(s.id).startswith(key + "-") for key, s in zip(keys, samples))
    assert len(set(keys)) < len(keys)  # several maskings per story: the reason to cluster


def test_the_log_reports_stderr_clustered_by_narrative_and_a_95_interval(judged_demo_log):
    log = judged_demo_log
    [qavg] = [s for s in log.results.scores if s.name == "qavg"]
    [fluency] = [s for s in log.results.scores if s.name == "fluency"]
    clusters = [s.metadata[NARRATIVE] for s in log.samples]
    values = [s.scores["judge"].value["fluency"] for s in log.samples]
    assert fluency.metrics["stderr"].value == pytest.approx(clustered_stderr_by_hand(values, clusters))
    naive = np.std(values, ddof=1) / np.sqrt(len(values))
    assert fluency.metrics["stderr"].value != pytest.approx(naive, rel=0.05)
    definitions = {d.name: d.options for d in log.eval.scorers[0].metrics["qavg"]}
    assert definitions["inspect_ai/stderr"] == {"cluster": NARRATIVE}
    assert definitions["inspect_ai/ci"] == {"level": 0.95, "cluster": NARRATIVE}
    low, high = qavg.metrics["ci_lower"].value, qavg.metrics["ci_upper"].value
    assert low < qavg.metrics["mean"].value < high
    assert qavg.metrics["narrative_infill/narratives"].value == len(
        set(clusters)
    )  # the G behind the interval


def test_the_headline_key_carries_table_7_and_8_breakdowns_under_the_reports_names(judged_demo_log):
    log = judged_demo_log
    [qavg] = [s for s in log.results.scores if s.name == "qavg"]
    groups = {m.name: m.value for m in qavg.metrics.values() if m.group == "breakdowns"}
    samples = log.samples
    expected = {}
    for sample in samples:
        m = sample.metadata
        for label in (m["domain"], m["position"], f"n={m['n']}", length_bucket(m["narrative_sentences"])):
            expected.setdefault(label, []).append(sample.scores["judge"].value["qavg"])
    assert groups == pytest.approx({label: np.mean(v) for label, v in expected.items()})
    assert {"opening", "middle", "closing", "n=1", "n=2", "n=3", "rocstories"} <= set(groups)
    [fluency] = [s for s in log.results.scores if s.name == "fluency"]
    assert set(fluency.metrics) == {"mean", "stderr"}  # breakdowns for the headline keys only


def sample_score(value, sample_id, metadata):
    return SampleScore(score=Score(value=value), sample_id=sample_id, sample_metadata=metadata)


def test_samples_without_the_field_get_the_narrative_their_fields_or_id_name():
    scores = [
        sample_score(1.0, "rocstories-7-n1-i1", {}),
        sample_score(3.0, "rocstories-7-n2-i3", {}),
        sample_score(2.0, "x", {"dataset": "roc", "ref_id": 9}),
        sample_score(5.0, "y", {"dataset": "rocstories", "ref_id": "9"}),
    ]
    completed = error_bars.with_narratives(scores)
    assert [s.sample_metadata[NARRATIVE] for s in completed] == ["rocstories-7"] * 2 + ["rocstories-9"] * 2
    by_hand = clustered_stderr_by_hand([1, 3, 2, 5], ["a", "a", "b", "b"])
    assert error_bars.narrative_stderr()(scores) == pytest.approx(by_hand)


def test_samples_naming_no_narrative_are_their_own_clusters_with_a_warning(caplog):
    error_bars._warn_own_clusters.cache_clear()
    scores = [sample_score(float(v), f"row{v}", {}) for v in (1, 4, 2, 8)]
    with caplog.at_level(logging.WARNING):
        value = error_bars.narrative_stderr()(scores)
    assert value == pytest.approx(np.std([1, 4, 2, 8], ddof=1) / 2)  # own clusters: the naive stderr
    assert "4 of 4 scored samples name no source narrative" in caplog.text


def test_every_masking_of_one_story_rebuilds_one_narrative():
    one = record_narrative({}, "Ann woke. ______ She slept.", "She ate.")
    two = record_narrative({}, "Ann woke. She ate. ______", "She  slept.")
    other = record_narrative({}, "Bob woke. ______ He slept.", "He ate.")
    assert one == two != other
    assert record_narrative({"dataset": "roc", "ref_id": "3"}, "a ______", "b") == "rocstories-3"
    assert narrative_of_id("wikipedia-12-3-n3-i10") == "wikipedia-12-3" and narrative_of_id("17") is None
    assert narrative_of({}, "17") == "own:17"


def test_imported_generations_carry_the_narrative_their_problem_and_gold_rebuild(tmp_path):
    rows = [
        {
            "model": "m",
            "template_name": "fitb_l1",
            "problem": "Ann woke. ______ She slept.",
            "gold_answer": "She ate.",
            "response": "She ate.",
        },
        {
            "model": "m",
            "template_name": "fitb_l1",
            "problem": "Ann woke. She ate. ______",
            "gold_answer": "She slept.",
            "response": "x",
        },
        {
            "model": "m",
            "template_name": "fitb_l1",
            "problem": "______ He slept.",
            "gold_answer": "Bob woke.",
            "response": "x",
        },
    ]
    source = tmp_path / "gen.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    [location] = import_generations([str(source)], str(tmp_path / "logs"))
    from inspect_ai.log import read_eval_log

    keys = [s.metadata[NARRATIVE] for s in read_eval_log(location).samples]
    assert keys[0] == keys[1] != keys[2]


def test_the_reports_and_compares_path_warns_of_samples_that_are_their_own_cluster(caplog):
    import pandas as pd

    from narrative_infill.platform.analysis.report import run_labels

    run_labels._warn_own_clusters.cache_clear()
    frame = pd.DataFrame({"id": ["rocstories-1-n1-i2", "17", "18"]})
    with caplog.at_level(logging.WARNING):
        keys = run_labels.sample_narratives(frame)
    assert list(keys) == ["rocstories-1", "own:17", "own:18"]
    assert "2 of 3 samples name no source narrative" in caplog.text
