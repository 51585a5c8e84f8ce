"""``narrative-infill compare A B``: paired on shared instances, clustered by narrative, refusing
runs that are not comparable."""

import json

import pytest
from helpers import mock_model
from inspect_ai import Task, eval
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log
from inspect_ai.scorer import Score, scorer
from inspect_ai.solver import generate

from narrative_infill.platform.analysis.compare import NotComparableError, compare_runs
from narrative_infill.platform.cli import main
from narrative_infill.data.dataset import infill_dataset
from narrative_infill.paper_protocol import DIMENSIONS


def judged_run(
    folder, level, judge_models="grader=mockllm/grader", limit=None, epochs=1, answer="They went home."
):
    """A demo run whose stand-in judge scores fluency ``level`` (+1 on every other instance) and 4
    on every other dimension, recording ``judge_models`` as the real judge does."""

    @scorer(metrics=[], name="judge")
    def stand_in_judge():
        async def score(state, target):
            fluency = level + int(state.sample_id[-1]) % 2
            dimensions = {d: 4.0 for d in DIMENSIONS} | {"fluency": float(fluency)}
            qavg = sum(dimensions.values()) / len(dimensions)
            return Score(value={"qavg": qavg, **dimensions}, metadata={"judge_models": judge_models})

        return score

    task = Task(dataset=infill_dataset("demo"), solver=generate(), scorer=stand_in_judge(), name="demo_run")
    model = mock_model(lambda m, c: f"<ANSWER>{answer}</ANSWER>")
    [log] = eval(task, model=model, display="none", log_dir=str(folder), limit=limit, epochs=epochs)
    assert log.status == "success", log.error
    return str(folder)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    a = judged_run(root / "a", 4)
    b = judged_run(root / "b", 2, limit=18)  # B scored 18 of the 24
    other_judge = judged_run(root / "c", 4, judge_models="grader=mockllm/other")
    return a, b, other_judge


def test_compare_pairs_the_shared_instances_and_finds_the_difference(runs):
    a, b, _ = runs
    result = compare_runs([a], [b])
    assert result["shared_instances"] == 18 and result["a"]["instances"] == 24
    rows = {row["quantity"]: row for row in result["rows"]}
    assert list(rows)[0] == "qavg" and "fluency" in rows  # no metrics scorer in these runs: no AtAvg row
    fluency = rows["fluency"]
    assert fluency["difference"] == pytest.approx(fluency["a"] - fluency["b"]) and fluency[
        "difference"
    ] == pytest.approx(2)
    assert fluency["low"] > 0 and fluency["p_value"] < 0.05 and fluency["n"] == 18
    assert fluency["clusters"] == result["shared_narratives"] < 18  # narratives, not instances
    coherence = rows["bidirectional_coherence"]  # 4 on both sides everywhere: no difference at all
    assert coherence["difference"] == 0 and coherence["p_value"] == 1


def test_samples_pair_on_metadata_fields_when_asked(runs):
    a, b, _ = runs
    fields = ("dataset", "ref_id", "n", "unit_idx")  # what the demo's sample ids are made of
    assert compare_runs([a], [b], pair_on=fields)["shared_instances"] == 18
    with pytest.raises(NotComparableError, match="without the metadata field.s. problem_id"):
        compare_runs([a], [b], pair_on=("problem_id",))


def test_the_command_prints_the_paired_table_and_writes_json(runs, tmp_path, capsys):
    a, b, _ = runs
    assert main(["compare", a, b]) == 0
    printed = capsys.readouterr().out
    assert "shared: 18 instances of" in printed and "| fluency |" in printed and "| 18 |" in printed
    assert main(["compare", a, b, "--format", "json", "-o", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["shared_instances"] == 18


def test_runs_judged_by_different_graders_are_refused_naming_the_field(runs, capsys):
    a, _, other_judge = runs
    with pytest.raises(NotComparableError, match="differ in their judges"):
        compare_runs([a], [other_judge])
    assert main(["compare", a, other_judge]) == 1
    assert "differ in their judges" in capsys.readouterr().err


def test_a_side_holding_two_runs_is_refused(runs, tmp_path):
    a, _, _ = runs
    twice = judged_run(tmp_path / "twice", 4, limit=2, epochs=2)  # another run: its epochs differ
    logs = [info.name for folder in (a, twice) for info in list_eval_logs(folder)]
    with pytest.raises(NotComparableError, match="holds 2 runs"):
        compare_runs(logs, [a])


def relabelled(folder, into, model=None, **metadata):
    """A copy of ``folder``'s one log in ``into``, its model renamed and ``metadata`` set on every sample."""
    [info] = list_eval_logs(folder)
    log = read_eval_log(info.name)
    log.eval.model = model or log.eval.model
    for sample in log.samples:
        sample.metadata = {**sample.metadata, **metadata}
    into.mkdir()
    write_eval_log(log, str(into / "run.eval"))
    return str(into)


def test_the_interval_is_the_p_values_inference_and_few_narratives_are_cautioned(runs):
    a, b, _ = runs
    result = compare_runs([a], [b])
    assert result["shared_narratives"] < 50 and "fewer than 50" in result["caveats"][0]
    for row in result["rows"]:  # the t interval excludes 0 exactly when p < 0.05
        assert (row["low"] > 0 or row["high"] < 0) == (row["p_value"] < 0.05), row


def test_runs_sharing_too_few_instances_are_refused_with_a_non_zero_exit(runs, tmp_path, capsys):
    a, _, _ = runs
    two = judged_run(tmp_path / "two", 2, limit=2)  # the demo's first two instances: one narrative
    with pytest.raises(NotComparableError, match="share 2 instances of 1 narratives, too few"):
        compare_runs([a], [two])
    assert main(["compare", a, two]) == 1 and "too few to compare" in capsys.readouterr().err


def test_pair_on_fields_that_split_the_runs_are_named(runs, tmp_path, capsys):
    a, b, _ = runs
    hot = relabelled(a, tmp_path / "hot", temperature=0.7)
    cold = relabelled(b, tmp_path / "cold", temperature=0.6)
    fields = "dataset,ref_id,n,unit_idx,temperature"
    assert main(["compare", hot, cold, "--pair-on", fields]) == 1
    err = capsys.readouterr().err
    assert "share 0 instances" in err and "no value of temperature (temperature: A 0.7, B 0.6)" in err


def test_a_baseline_side_and_unequal_epochs_are_said(runs, tmp_path, capsys):
    a, _, _ = runs
    twice = judged_run(tmp_path / "twice", 4, limit=12, epochs=2, answer="")  # the empty rule's answer
    baseline = relabelled(twice, tmp_path / "baseline", model="baseline/empty")
    caveats = compare_runs([a], [baseline])["caveats"]
    assert any("B is a null baseline (baseline/empty)" in said for said in caveats)
    assert any("A ran 1 epoch(s), B 2" in said for said in caveats)
    assert main(["compare", a, baseline]) == 0
    assert "caution: B is a null baseline" in capsys.readouterr().err


def each_sample_its_own_narrative(folder, into):
    """A copy of ``folder``'s one log in ``into`` whose samples each name a narrative of their own."""
    [info] = list_eval_logs(folder)
    log = read_eval_log(info.name)
    for sample in log.samples:
        sample.metadata = {**sample.metadata, "narrative": f"alone-{sample.id}"}
    into.mkdir()
    write_eval_log(log, str(into / "run.eval"))
    return str(into)


def test_the_clusters_are_the_same_whichever_run_is_a(runs, tmp_path):
    """Each instance's narrative came from A alone: a log naming every sample a narrative of its own
    gave 24 clusters as A and 8 as B (and a smaller p as A). Narratives are joined wherever one
    instance's samples, on either side, name more than one."""
    a, b, _ = runs
    split = each_sample_its_own_narrative(a, tmp_path / "split")
    expected = compare_runs([a], [b])["shared_narratives"]
    assert compare_runs([split], [b])["shared_narratives"] == expected
    assert compare_runs([b], [split])["shared_narratives"] == expected


def test_pair_on_fields_that_pool_several_narratives_join_their_clusters(runs, tmp_path):
    """``--pair-on n,unit_idx`` makes an "instance" of samples of several narratives; its cluster
    was the first of them, so the 19 such instances counted as 8 independent narratives, where the
    narratives they pool fall into 3 clusters. ``n`` alone pools them all: refused, as too few
    narratives or, where the sides' pooled golds differ, as instances on different golds."""
    a, _, _ = runs
    copy = relabelled(a, tmp_path / "copy", model="mockllm/copy")
    result = compare_runs([a], [copy], pair_on=("n", "unit_idx"))
    assert (result["shared_instances"], result["shared_narratives"]) == (19, 3)
    assert {row["clusters"] for row in result["rows"]} == {3}
    with pytest.raises(NotComparableError, match="(too few to compare|on different golds).*paired on n"):
        compare_runs([a], [copy], pair_on=("n",))


def test_sample_ids_naming_different_instances_in_the_two_runs_are_refused(runs, tmp_path):
    """Imported rows without an id are numbered by file and row (``gen-5``): two runs imported from
    files of one name, rows in another order, paired "gen-5" with "gen-5", two different problems,
    without a word. A shared instance must have the same gold on both sides."""
    a, b, _ = runs
    [info] = list_eval_logs(b)
    log = read_eval_log(info.name)
    ids = [sample.id for sample in log.samples]
    for sample, other in zip(log.samples, ids[1:] + ids[:1]):  # every id moved to another instance
        sample.id = other
    (tmp_path / "shuffled").mkdir()
    write_eval_log(log, str(tmp_path / "shuffled" / "run.eval"))
    with pytest.raises(NotComparableError, match="different golds.*--pair-on"):
        compare_runs([a], [str(tmp_path / "shuffled")])


def test_a_score_both_sides_have_on_too_few_narratives_is_said_not_dropped(runs, tmp_path):
    """A quantity whose shared scored instances span one narrative has no test; its row vanished
    from the table without a word."""
    a, b, _ = runs
    [info] = list_eval_logs(a)
    log = read_eval_log(info.name)
    first = log.samples[0].metadata["narrative"]
    for sample in log.samples:
        if sample.metadata["narrative"] != first:
            sample.scores["judge"].value = {**sample.scores["judge"].value, "fluency": None}
    (tmp_path / "few").mkdir()
    write_eval_log(log, str(tmp_path / "few" / "run.eval"))
    result = compare_runs([str(tmp_path / "few")], [b])
    assert "fluency" not in {row["quantity"] for row in result["rows"]}
    assert any(said.startswith("not compared: fluency") for said in result["caveats"])


def test_p_is_printed_below_a_thousandth_as_such_and_never_rounded_across_the_level(runs, capsys):
    """Issue 61: p printed to three decimals read "0.000", and 0.0496 read "0.050" beside an interval
    that excludes 0."""
    from narrative_infill.platform.analysis.stats import p_text

    a, b, _ = runs
    assert main(["compare", a, b]) == 0
    [fluency] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| fluency |")]
    assert "| < 0.001 |" in fluency and "0.000 |" not in fluency
    assert [p_text(p) for p in (0.0496, 0.04996, 0.05, 0.0504, 0.2, 0.0009, 0.001)] == [
        "0.0496", "0.04996", "0.050", "0.050", "0.200", "< 0.001", "0.001"
    ]  # fmt: skip


def test_runs_of_different_problems_are_not_advised_to_pair_without_the_problem(runs, tmp_path, capsys):
    """Issue 61: sides sharing no ``problem_id`` were told to leave it out of --pair-on, which pairs
    answers to different problems. A field naming the instance is said to split the problems."""
    a, b, _ = runs
    one = relabelled(a, tmp_path / "one", problem_id="p1", template_id="fitb_l2")
    other = relabelled(b, tmp_path / "other", problem_id="p2", template_id="fitb_l2")
    assert main(["compare", one, other, "--pair-on", "problem_id,template_id"]) == 1
    err = capsys.readouterr().err
    assert "no value of problem_id (problem_id: A p1, B p2)" in err
    assert "out of --pair-on" not in err and "scored different instances" in err
