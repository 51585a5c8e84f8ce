"""The null baselines: their rules, the context-copy measure, and ``--model baseline/<rule>``."""

from __future__ import annotations

import pytest
from inspect_ai import eval

from narrative_infill.platform.analysis.floor import (
    ABOVE,
    BLANK_RULE,
    COPY_RULE,
    FLUENCY_RULE,
    FLUENCY_UNAVAILABLE_RULE,
    NOT_ABOVE,
    REUSE_RULE,
    UNKNOWN_RULE,
    floor_mark,
    one_sided_p,
    floor_of,
    floor_test,
    guard_reason,
)
from narrative_infill.copy_guards import CONTEXT_COPY_THRESHOLD, is_copied
from narrative_infill.data.baselines import (
    FUNCTION_WORD_SWAPS,
    ORDER_FREE,
    BaselineError,
    baseline_answer,
    context_answer,
    neighbour_answer,
)
from narrative_infill.data.dataset import load_benchmark
from narrative_infill.scorers.metrics.copying import context_copy
from narrative_infill.solvers.baseline_model import answer_format

MIDDLE = "Ann woke up early. She made some tea. ______ Then she left for work. The bus was late."
OPENING = "______ She made some tea. Then she left for work."
CLOSING = "Ann woke up early. She made some tea. ______"


def _no_gold():
    raise AssertionError("a baseline other than gold read the gold")


def test_neighbour_takes_the_n_sentences_before_the_blank_else_after_it():
    assert neighbour_answer(MIDDLE, 1) == "She made some tea."
    assert neighbour_answer(MIDDLE, 2) == "Ann woke up early. She made some tea."
    assert neighbour_answer(MIDDLE, 3) == "Ann woke up early. She made some tea."  # fewer when fewer exist
    assert neighbour_answer(OPENING, 1) == "She made some tea."
    assert neighbour_answer(OPENING, 2) == "She made some tea. Then she left for work."
    assert neighbour_answer(CLOSING, 1) == "She made some tea."


def test_context_is_the_story_without_its_blank():
    assert (
        context_answer(MIDDLE)
        == "Ann woke up early. She made some tea. Then she left for work. The bus was late."
    )
    assert context_answer(CLOSING) == "Ann woke up early. She made some tea."


def test_only_the_gold_rule_reads_the_gold():
    for rule in ("empty", "neighbour", "context"):
        baseline_answer(rule, MIDDLE, 1, gold=_no_gold)  # would raise if it read the gold
    assert baseline_answer("gold", MIDDLE, 1, gold=lambda: "She missed her alarm.") == "She missed her alarm."
    assert baseline_answer("empty", MIDDLE, 1, gold=_no_gold) == ""


@pytest.mark.parametrize(
    "rule, problem, n, message",
    [("median", MIDDLE, 1, "unknown baseline"), ("context", "No blank here.", 1, "no blank"),
     ("neighbour", MIDDLE, 0, "n must be")],
)  # fmt: skip
def test_a_baseline_it_cannot_answer_is_an_error_naming_why(rule, problem, n, message):
    with pytest.raises(BaselineError, match=message):
        baseline_answer(rule, problem, n, gold=_no_gold)


def test_context_copy_counts_words_in_copied_runs_of_three():
    assert context_copy("She made some tea.", MIDDLE) == 1.0
    assert context_copy(context_answer(MIDDLE), MIDDLE) == 1.0
    assert context_copy("", MIDDLE) == 0.0
    # an original sentence reusing the story's name and words: no run of three copied
    assert context_copy("Ann spilled the tea on her new shirt.", MIDDLE) == 0.0
    # half copied, half its own: the copied run's share of the words
    assert context_copy("She made some tea and burned her toast badly.", MIDDLE) == pytest.approx(4 / 9)
    # words shared across the blank's two sides do not join into a run the story never had
    assert context_copy("tea", MIDDLE) == 1.0 and context_copy("coffee", MIDDLE) == 0.0


def test_the_copy_rule_separates_a_copy_from_an_answer():
    assert is_copied(context_copy("She made some tea. Then she left.", MIDDLE))
    assert not is_copied(context_copy("She made some tea and burned her toast badly.", MIDDLE))
    assert 0 < CONTEXT_COPY_THRESHOLD < 1


def test_the_answer_follows_the_prompts_format():
    assert (
        answer_format("Surround your answer with the tags <ANSWER> and </ANSWER>.", "x")
        == "<ANSWER>x</ANSWER>"
    )
    assert answer_format("A story with a ______ blank.", "x") == "x"


@pytest.mark.heavy  # scores with the packaged MiniLM backbones
def test_baseline_context_runs_like_a_model_and_its_answers_are_the_stories(tmp_path):
    """``inspect eval narrative_infill/l2 --model baseline/context -T data=demo``: 24 samples whose
    outputs are the stories, kept whole by the published extraction and scored as copies."""
    [log] = eval(
        "narrative_infill/l2",
        model="baseline/context",
        task_args={"data": "demo", "backbone": "minilm", "extraction": "published"},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success" and log.results.completed_samples == 24
    stories = {i.sample_id: context_answer(i.problem) for i in load_benchmark("demo").instances}
    for sample in log.samples:
        assert sample.output.completion == f"<ANSWER>{stories[sample.id]}</ANSWER>"
        assert sample.scores["metrics"].answer == stories[sample.id]
        assert sample.scores["metrics"].value["context_copy"] == 1.0
    assert log.stats.model_usage["baseline/context"].output_tokens > 0
    [copy] = [score for score in log.results.scores if score.name == "context_copy"]
    assert copy.metrics["narrative_infill/copied_share"].value == 1.0


@pytest.mark.parametrize("rule", ORDER_FREE)
def test_an_order_free_rule_reads_only_the_problem_and_answers_the_same_every_time(rule):
    answer = baseline_answer(rule, MIDDLE, 1, gold=_no_gold)
    assert answer and answer == baseline_answer(rule, MIDDLE, 2, gold=_no_gold)  # n unused, seeded
    story_words = {w.strip(".").casefold() for w in context_answer(MIDDLE).split()}
    own = {w.strip(".").casefold() for w in answer.split()} - story_words
    assert own <= set(FUNCTION_WORD_SWAPS.values()), own  # the story's words, bar swapped function words


def test_the_order_free_rules_break_the_order_of_the_story_or_its_neighbours():
    assert baseline_answer("sorted-story-words", MIDDLE, 1, gold=_no_gold).startswith(
        "ann bus early for late"
    )
    assert (
        baseline_answer("swapped-neighbours", MIDDLE, 1, gold=_no_gold)
        == "Then she left for work. She made some tea."
    )
    assert baseline_answer("story-adjacent-words-swapped", MIDDLE, 1, gold=_no_gold).startswith(
        "woke Ann early. up"
    )
    assert (
        baseline_answer("neighbours-every-third-word-dropped", MIDDLE, 1, gold=_no_gold)
        == "She made tea. Then left for"
    )
    assert baseline_answer("neighbours-function-words-replaced", MIDDLE, 1, gold=_no_gold) == (
        "He made some tea. Then he left to work."
    )
    assert baseline_answer("neighbours-words-interleaved", MIDDLE, 1, gold=_no_gold) == (
        "She Then made she some left tea. for work."
    )
    scrambled = baseline_answer("scrambled-story", MIDDLE, 1, gold=_no_gold)
    assert sorted(scrambled.split()) == sorted(context_answer(MIDDLE).split()) != scrambled.split()


@pytest.mark.parametrize("rule", ["sorted-story-words", "neighbours-words-interleaved"])
def test_an_order_free_rule_runs_like_a_model(tmp_path, rule):
    [log] = eval("narrative_infill/l2", model=f"baseline/{rule}", task_args={"data": "demo"}, limit=2,
                 score=False, log_dir=str(tmp_path), display="none")  # fmt: skip
    problems = {i.sample_id: i.problem for i in load_benchmark("demo").instances}
    assert log.status == "success" and len(log.samples) == 2
    for sample in log.samples:
        expected = baseline_answer(rule, problems[sample.id], 1, gold=_no_gold)
        assert sample.output.completion == f"<ANSWER>{expected}</ANSWER>"


def test_the_floor_is_the_best_null_rule_no_guard_flags():
    figures = {"empty": (0.0, 0.0, 0.0), "neighbour": (0.12, 0.0, 0.2), "sorted-story-words": (0.3, 0.0, 1.0),
               "context": (0.35, 1.0, 1.0), "unscored": (0.05, None, None)}  # fmt: skip
    assert floor_of(figures) == ("neighbour", 0.12)  # the flagged two score more, and are caught
    assert floor_of({"context": (0.35, 1.0, 1.0)}) is None


def test_above_the_floor_means_a_significant_paired_difference_not_a_higher_mean():
    stories = [f"rocstories-{i // 3}" for i in range(30)]
    floor = [0.2 + 0.01 * (i % 7) for i in range(30)]
    barely = [value + (0.02 if i % 2 else -0.015) for i, value in enumerate(floor)]  # higher mean, noisy
    assert sum(barely) > sum(floor)
    test = floor_test(barely, floor, stories)
    assert floor_mark(test, ("neighbour", 0.23)).startswith(f"{NOT_ABOVE} (baseline/neighbour 0.230; difference")
    assert floor_mark(floor_test(floor, floor, stories), ("neighbour", 0.23)).startswith(NOT_ABOVE)
    assert floor_mark(None, ("neighbour", 0.23)).endswith("one narrative: no test)")
    assert floor_mark(None, None) == f"{ABOVE} (every null rule flagged: no floor)"


def test_the_floor_decision_states_its_uncertainty_either_way():
    """Issue 61: "above the floor" was printed bare, and "NOT ABOVE" with p to three decimals; both
    now give the difference, its one-sided 95% lower bound (above 0 exactly when p < 0.05) and p."""
    stories = [f"rocstories-{i // 3}" for i in range(30)]
    floor = [0.2 + 0.01 * (i % 7) for i in range(30)]
    clearly = [value + 0.05 + 0.001 * (i % 3) for i, value in enumerate(floor)]
    barely = [value + (0.02 if i % 2 else -0.015) for i, value in enumerate(floor)]
    above = floor_mark(floor_test(clearly, floor, stories), ("neighbour", 0.23))
    assert above.startswith(f"{ABOVE} (baseline/neighbour 0.230; difference +0.051, 95% lower bound +0.05")
    assert above.endswith("one-sided p < 0.001; the best kept rule on these instances)"), above
    test = floor_test(barely, floor, stories)
    below = floor_mark(test, ("neighbour", 0.23))
    assert f"one-sided p {one_sided_p(test):.3f}" in below and "95% lower bound -0.0" in below, below


def test_an_entry_over_a_guard_or_with_a_share_unknown_has_its_reason():
    assert guard_reason(0.0, 0.1, 0.1, 0.1) is None
    assert guard_reason(0.3, 0.0, 0.0, 0.0) == COPY_RULE and guard_reason(0.0, 0.3, 0.0, 0.0) == REUSE_RULE
    assert guard_reason(0.0, 0.0, 0.3, 0.0) == FLUENCY_RULE
    assert guard_reason(0.0, 0.0, 0.0, 0.5) == BLANK_RULE
    assert guard_reason(0.0, None, 0.0, 0.0) == UNKNOWN_RULE.format("story_reuse")
    assert guard_reason(0.0, 0.0, 0.0, None) == UNKNOWN_RULE.format("blank")
    assert guard_reason(float("nan"), 0.0, 0.0, 0.0) == UNKNOWN_RULE.format("context_copy")
    assert guard_reason(0.0, 0.0, None, 0.0) == FLUENCY_UNAVAILABLE_RULE  # never ranked unread
