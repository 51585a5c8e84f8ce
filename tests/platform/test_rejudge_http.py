"""``verify --rejudge`` against graders reached over HTTP (the stand-in judges of standin_grader.py
served on 127.0.0.1 through Inspect's ``openai-api/standin/<judge>``), not only mockllm, which
never suspends: the command docs/judge.md shows runs at K = 8 and 50, K below the smallest that
can fail is refused, and at K = 20 an honest entry passes while a judge inflating 45% of the
answers by a point fails. The draws are seeded where the outcome depends on them."""

from __future__ import annotations

import json

import pytest
from helpers import varied_answers_model
from inspect_ai import eval
from standin_grader import OPEN, judge_server, prompt_text

from narrative_infill.platform.analysis.submission.build import read_settings
from narrative_infill.platform.analysis.submission.rejudge import MIN_K, RejudgeError, rejudge
from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

EPOCHS = 3  # 72 judged samples, so K = 50 draws without running out
INFLATER = "openai-api/standin/inflate-0.45-1"
#: Issue 57's partial inflater: 2 points on every dimension (capped at 5) for about 30% of the answers.
PARTIAL = "openai-api/standin/inflate-0.3-2"
HONEST = "openai-api/standin/honest"
CAUGHT = "re-judge: the claimed QAvg is higher than openai-api/standin/honest gives"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The stand-in judge server, reachable as ``openai-api/standin/...``, for the whole module;
    yields a folder with an honest entry and two partial inflaters' (all demo track)."""
    root = tmp_path_factory.mktemp("rejudge-http")
    with judge_server() as (url, requests), pytest.MonkeyPatch.context() as env:
        env.setenv("STANDIN_BASE_URL", url)
        env.setenv("STANDIN_API_KEY", "test")
        env.setenv("OPENAI_BASE_URL", url)  # openai/honest: Inspect's openai provider, chat completions
        env.setenv("OPENAI_API_KEY", "test")
        env.setenv("INSPECT_CACHE_DIR", str(root / "cache"))
        for name, grader in (("honest", HONEST), ("inflater", INFLATER), ("partial", PARTIAL)):
            task = infill_task("l2", data="demo", backbone="minilm", judge=True)
            [log] = eval(
                task,
                model=varied_answers_model(),
                model_roles={"grader": grader},
                epochs=EPOCHS,
                log_dir=str(root / name),
                display="none",
            )
            assert log.status == "success", log.error
            entry = str(root / f"{name}.json")
            assert main(["submit", str(root / name), "-o", entry, "--track", "demo"]) == 0
        yield root, requests


def verify_command(root, name: str, k: int) -> list[str]:
    return ["verify", str(root / f"{name}.json"), "--logs", str(root / name), "--rejudge", str(k)]


@pytest.mark.parametrize(("grader", "k"), [(HONEST, 8), (HONEST, 50), ("openai/honest", 8)])
def test_rejudge_runs_with_a_grader_reached_over_http(served, grader, k, capsys):
    """Failed before: ``IndexError: pop from an empty deque`` (the log was read inside the grader's
    running event loop, which Inspect re-enters) at any K that suspended."""
    root, requests = served
    before = len(requests)
    assert main([*verify_command(root, "honest", k), "--grader", grader]) == 0
    out = capsys.readouterr().out
    assert f"re-judge consistent: {k} samples re-judged with {grader}" in out
    assert "claimed QAvg" in out and "p = 1 (fails below 0.01)" in out
    judged = [body for body in requests[before:] if OPEN in prompt_text(body)]  # not the provider's probes
    assert len(judged) == k  # one grader call per drawn sample, none from a cache


def test_a_k_that_can_never_fail_is_refused(served, capsys):
    """Failed before: ``--rejudge 1`` ran and passed (p = 1 whatever the judge)."""
    root, _ = served
    assert MIN_K == 8
    assert main([*verify_command(root, "inflater", 1), "--grader", HONEST]) != 0
    err = capsys.readouterr().err
    assert "--rejudge 1 can never fail" in err and "re-judge at least 8" in err
    document = json.loads((root / "inflater.json").read_text(encoding="utf-8"))
    with pytest.raises(RejudgeError, match="re-judge at least 8"):
        rejudge(document, read_settings([str(root / "inflater")]), HONEST, MIN_K - 1)


def test_rejudge_20_passes_the_honest_entry_and_fails_a_partial_inflater(served):
    """Failed before: the rank test saw only how many answers were inflated, so a judge inflating
    45% of them passed most checks at K = 8-20. Seeds 0-9 fix the draws, so each outcome is
    determined: the honest entry passes all ten (d = 0 on every answer, p = 1), the inflater fails
    all ten (each inflated answer sits a point above its re-judge; seed 4, which draws few of them,
    passed the sign-flip test alone; the power over random draws is what
    benchmarks/rejudge_power.py measures)."""
    root, _ = served
    entries = {
        name: (
            json.loads((root / f"{name}.json").read_text(encoding="utf-8")),
            read_settings([str(root / name)]),
        )
        for name in ("honest", "inflater")
    }
    claimed = {name: document["settings"]["l2"]["qavg"]["mean"] for name, (document, _) in entries.items()}
    assert claimed["inflater"] - claimed["honest"] > 0.5  # the inflation the check has to see
    caught = []
    for seed in range(10):
        honest = rejudge(*entries["honest"], HONEST, 20, seed=seed)
        assert not honest.failures and honest.p_value == 1.0, honest.checks
        inflater = rejudge(*entries["inflater"], HONEST, 20, seed=seed)
        caught += [seed for failure in inflater.failures if failure.startswith(CAUGHT)]
    assert caught == list(range(10))


def test_a_different_honest_model_that_is_not_harsher_passes_the_honest_entry(served):
    """The stand-in ``other`` judge disagrees with ``honest`` by a point on about 30% of the
    dimensions, as often up as down: at K = 20 with seeds 0-9 its re-judge passes the honest entry
    each time (the rate against a harsher model is measured in benchmarks/rejudge_power.py)."""
    root, _ = served
    document = json.loads((root / "honest.json").read_text(encoding="utf-8"))
    runs = read_settings([str(root / "honest")])
    results = [rejudge(document, runs, "openai-api/standin/other", 20, seed=seed) for seed in range(10)]
    assert [r.failures for r in results] == [[]] * 10
    assert {round(r.submitted - r.fresh, 1) for r in results} <= {-0.1, 0.0, 0.1}  # they differ, a little
    assert any(r.submitted != r.fresh for r in results)


def test_rejudge_20_catches_a_judge_inflating_30_percent_of_the_answers_by_two_points(served):
    """Failed before (issue 57): its six or so inflated answers of twenty, each 1.2-2.0 QAvg above
    the re-judge, gave the sign-flip test p >= 2^-6 = 0.0156 however large they were, and the entry
    passed. Seeds 0-9 fix the draws; the honest temperature-0 judge's entry passes each (d = 0)."""
    root, _ = served
    document = json.loads((root / "partial.json").read_text(encoding="utf-8"))
    runs = read_settings([str(root / "partial")])
    results = [rejudge(document, runs, HONEST, 20, seed=seed) for seed in range(10)]
    caught = [
        seed for seed, result in enumerate(results) if any(f.startswith(CAUGHT) for f in result.failures)
    ]
    assert caught == list(range(10)), [r.checks for r in results]
    assert all(r.submitted - r.fresh > 0.2 for r in results)  # the gap the check has to see
    honest = json.loads((root / "honest.json").read_text(encoding="utf-8"))
    honest_runs = read_settings([str(root / "honest")])
    for seed in range(10):
        result = rejudge(honest, honest_runs, HONEST, 20, seed=seed)
        assert not result.failures and result.p_value == 1.0, result.checks
