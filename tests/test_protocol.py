"""The tracks' protocol, read from a log's header (issue 27), and the board's instance bootstrap:
fast checks on hand-made headers, no eval."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from inspect_ai.model import GenerateConfig

from narrative_infill.analysis.submission.board import bootstrap, by_instance
from narrative_infill.analysis.submission.protocol import PUBLISHED_SOURCE, track_problems

COMMIT = "c" * 40


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
    )
    header = SimpleNamespace(
        eval=spec, plan=SimpleNamespace(config=GenerateConfig(temperature=0.8, top_p=0.9))
    )
    samples = [
        SimpleNamespace(id=i, epoch=1, error=None, metadata={"max_tokens_rule": "per_sample"})
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
    once = bootstrap([by_instance([[f"s{i}", 1, v, None] for i, v in enumerate(values)], 2)])
    five = bootstrap(
        [by_instance([[f"s{i}", e, v, None] for e in range(1, 6) for i, v in enumerate(values)], 2)]
    )
    assert five == pytest.approx(once)  # the same 24 instances: five identical epochs add no information
