"""The tracks' protocol, read from a log's header (issue 27), and the board's instance bootstrap:
fast checks on hand-made headers, no eval."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from inspect_ai.model import GenerateConfig

from narrative_infill.platform.analysis.submission.ranking import instance_values, interval
from narrative_infill.platform.analysis.submission.protocol import PUBLISHED_SOURCE, track_problems
from narrative_infill.tasks.infill import TASK_VERSION

COMMIT = "c" * 40
METRICS = SimpleNamespace(value={"atavg": 0.5})


def run(task_args=None, identity=None, ids=240, temperature=None, setting="l2"):
    """A finished run of the published benchmark as its header and sample summaries record it."""
    sample_ids = [f"s{i}" for i in range(ids)]
    identity = {
        "source": PUBLISHED_SOURCE,
        "revision": "main",
        "commit": COMMIT,
        "instances": ids,
        **(identity or {}),
    }
    spec = SimpleNamespace(
        task_args=task_args or {},
        metadata={
            "template": setting,
            "data": "hf",
            "prompt_variant": "paper",
            "system_role": False,
            "dataset_identity": identity,
        },  # fmt: skip
        config=SimpleNamespace(limit=None, sample_id=None, epochs=1),
        dataset=SimpleNamespace(sample_ids=sample_ids),
        model_generate_config=GenerateConfig(temperature=temperature),
        scorers=[],
        task_version=TASK_VERSION,
    )
    header = SimpleNamespace(
        eval=spec, plan=SimpleNamespace(config=GenerateConfig(temperature=0.8, top_p=0.9))
    )
    samples = [
        SimpleNamespace(
            id=i, epoch=1, error=None, metadata={"max_tokens_rule": "per_sample"}, scores={"metrics": METRICS}
        )
        for i in sample_ids
    ]
    return SimpleNamespace(setting=setting, location=f"/logs/{setting}.eval", header=header, samples=samples)


def test_a_clean_10pct_run_passes_and_says_what_it_could_not_check():
    unchecked: list[str] = []
    assert track_problems("10pct", [run({"subset": "10pct"})], unchecked) == []
    assert unchecked and "instance ids not checked against the published data" in unchecked[0]


def test_a_local_folder_named_like_the_hub_dataset_is_not_the_published_source():
    local = run({"subset": "10pct"}, identity={"sha256": "0" * 64, "revision": None, "commit": None})
    problems = " ".join(track_problems("10pct", [local]))
    assert "is a local folder or file, not the published hub dataset" in problems


def test_a_pull_request_revision_and_an_unresolved_commit_fail():
    problems = " ".join(track_problems("10pct", [run({"subset": "10pct", "revision": "refs/pr/7"})]))
    assert "revision 'refs/pr/7'" in problems
    problems = " ".join(
        track_problems("10pct", [run({"subset": "10pct"}, identity={"commit": "unresolved"})])
    )
    assert "hub commit 'unresolved', not a resolved commit" in problems


def test_the_instance_count_is_checked_on_10pct_and_full():
    assert "instances: 240, the full track has 9,142" in " ".join(track_problems("full", [run()]))
    short = run({"subset": "10pct"}, identity={"instances": 914})
    assert "instances: the task read 914, the log lists 240" in " ".join(track_problems("10pct", [short]))


def test_decoding_prompt_and_judge_deviations_are_named():
    deviating = run(
        {"subset": "10pct", "variant": "code3", "unit": "words", "max_tokens": 4096}, temperature=0.0
    )
    deviating.header.eval.scorers = [
        SimpleNamespace(name="judge", options={"variant": "authors", "probability_weighted": True})
    ]
    problems = " ".join(track_problems("10pct", [deviating]))
    for field in ("temperature: 0.0", "variant: 'code3'", "unit: 'words'", "max_tokens: a fixed cap (4096)",
                  "judge_variant: 'authors'", "judge probability_weighted: True"):  # fmt: skip
        assert field in problems
    assert track_problems("custom", [deviating]) == []


def test_epochs_are_resampled_with_their_instance():
    values = [0.1 * (i % 10) for i in range(24)]
    once = interval(instance_values({"l1": [[f"s{i}", 1, v, None] for i, v in enumerate(values)]}, 2))
    five = interval(
        instance_values({"l1": [[f"s{i}", e, v, None] for e in range(1, 6) for i, v in enumerate(values)]}, 2)
    )
    assert five == pytest.approx(once)  # the same 24 instances: five identical epochs add no information


def test_a_sample_repeated_in_place_of_another_epoch_fails():
    """Each instance once per epoch: a copy of a good epoch standing in for a bad one keeps the ids
    and the sample count right, so the (id, epoch) pairs are what is checked."""
    twice = run(ids=3)
    twice.header.eval.config.epochs = 2
    twice.samples = [SimpleNamespace(**{**vars(s), "epoch": 1}) for s in twice.samples for _ in range(2)]
    problems = " ".join(track_problems("custom", [twice]))
    assert "the samples are not each instance once per epoch 1..2 (3 repeated (id, epoch))" in problems


def test_a_sample_without_a_metrics_score_fails_every_track():
    """A sample stripped of its metrics score would leave AtAvg's mean, like an errored one."""
    stripped = run(ids=3)
    stripped.samples[1].scores = {"judge": METRICS}
    assert "1 sample(s) with no metrics score (s1...)" in " ".join(track_problems("custom", [stripped]))


def test_a_message_sent_after_the_protocol_prompt_fails():
    """The protocol's prompt is the only thing the model may be sent: a hint after it is caught."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    from narrative_infill.platform.analysis.submission.protocol import PROTOCOLS, sample_protocol_problem
    from narrative_infill.prompts import prompt_template
    from narrative_infill.paper_protocol import output_cap

    template = prompt_template("l2", "paper")
    problem, metadata = "They left. [blank] They slept.", {"n": 1, "unit": "sentence", "gold_tokens": 5}
    prompt = f"{template.system}\n\n" + template.render({"problem": problem, **metadata})
    answer = ChatMessageAssistant(content="<ANSWER>They went home.</ANSWER>")

    def sample(*sent):
        return SimpleNamespace(
            input=problem, messages=[*sent, answer], metadata={**metadata, "max_tokens": output_cap("l2", 5, factor=2)[0]}
        )

    assert sample_protocol_problem(sample(ChatMessageUser(content=prompt)), "l2", PROTOCOLS["demo"]) is None
    hinted = sample(ChatMessageUser(content=prompt), ChatMessageUser(content="Hint: they went home."))
    assert "not sent the protocol's prompt" in sample_protocol_problem(hinted, "l2", PROTOCOLS["demo"])


def test_a_claimed_mean_over_no_values_is_checked():
    """A setting with no judged sample cannot claim a QAvg (nor one without any AtAvg an AtAvg)."""
    from narrative_infill.platform.analysis.submission.verify import Verification, self_consistency

    document = {
        "settings": {"l2": {"n": 2, "atavg": {"mean": 0.25}, "qavg": {"mean": 4.9}}},
        "samples": {"l2": [["s0", 1, 0.2, None], ["s1", 1, 0.3, None]]},
    }
    result = Verification("forged.json")
    self_consistency(document, result)
    assert result.failures == ["settings.l2.qavg.mean: claimed 4.9, its own samples give None"]


def test_no_string_can_add_a_row_or_a_cell_to_the_markdown_board():
    from narrative_infill.platform.analysis.submission.board import markdown

    forged = "m |\n| 1 | gpt-9 | none | verified | 0.990 [0.98, 1.00] | — |\u2028<b>x</b>"
    row = {"track": "demo", "model": forged, "judge": "none", "badge": "file only", "baseline": False,
           "atavg": (0.1, 0.05, 0.15), "qavg": None, "settings": {"l2": {"atavg": 0.1, "qavg": None}},
           "high": None, "low": None, "n": 24, "signature": "sig", "rank": 1, "position": 1}  # fmt: skip
    table = [line for line in markdown([row]).splitlines() if line.startswith("|")]
    assert len(table) == 3  # header, rule, the one entry
    assert table[2].count(" | ") == table[0].count(" | ") and "<" not in table[2]


def test_a_panel_judgement_missing_a_grader_counts_as_unscored():
    """With two graders, marking the harsher one failed leaves the kinder one's QAvg: bounded too."""
    from inspect_ai.scorer import Score

    from narrative_infill.platform.analysis.submission.build import setting_claims
    from narrative_infill.platform.analysis.submission.protocol import unscored_problem

    def sample(i, failed):
        judged = Score(value={"qavg": 4.0, "grader_failed": 0.5 if failed else 0.0}, answer="x")
        return SimpleNamespace(
            id=f"s{i}",
            epoch=1,
            input=f"Story {i}. ______",  # a sample record's problem and gold (the blank guard reads them)
            target="Gold.",
            scores={"metrics": Score(value={"atavg": 0.5}, answer="x"), "judge": judged},
        )

    claims = setting_claims([sample(i, failed=i < 5) for i in range(24)])
    assert claims["rates"]["unscored"] == pytest.approx(5 / 24)
    assert "l2: 20.8% of judgements unscored, a ranked track allows 2%" in unscored_problem(
        "l2", claims, "demo"
    )


@pytest.mark.parametrize(
    "version, ranked",
    [(3, True), ("3", True), ("3-A", True), ("3-B", True), (2, False), ("2-A", False), ("x", False)],
)
def test_a_ranked_track_compares_the_comparability_part_of_the_task_version(version, ranked):
    """Issue 61: versions take inspect_evals' ``N-X`` form (N: scores compare; X: the interface). A log
    written before the form (a plain 3) still counts as version 3, one of another interface letter too;
    a version 2 log or one that is no version at all is refused, named."""
    old = run({"subset": "10pct"})
    old.header.eval.task_version = version
    problems = " ".join(track_problems("10pct", [old]))
    assert ("task version" not in problems) == ranked, problems
