"""The order-free story guard (issue 45): ``story_reuse`` flags the story's words in any order, through
Unicode disguises, function-word swaps and inflections, and flags few real answers."""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from pathlib import Path
from statistics import fmean

import pytest

from narrative_infill.copy_guards import STORY_REUSE_THRESHOLD, is_story_reuse
from narrative_infill.data.records import BLANK
from narrative_infill.extraction import extract_with
from narrative_infill.scorers.metrics.reuse import STORY_REUSE_MIN_WORDS, content_stems, story_reuse

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "narrative_infill" / "data" / "demo.jsonl"
PROBLEM = "Maya saved her coins for months. ______ That night she watched the rings of Saturn."


def _guard_benchmark():
    """``benchmarks/story_reuse_guard.py``: the trivial rules are built there, once."""
    path = ROOT / "benchmarks" / "story_reuse_guard.py"
    spec = importlib.util.spec_from_file_location("story_reuse_guard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RULES = _guard_benchmark().RULES
#: The guard's stated limits (docs/baselines.md): the rules it flags only in part.
LIMITS = ("story scrambled, content words inflected",)
#: The issue's table and rules of the same kind.
FLAGGED_RULES = [name for name in RULES if name not in LIMITS]


def _problems() -> list[str]:
    return [json.loads(line)["problem"] for line in DEMO.read_text(encoding="utf-8").splitlines()]


def _story_words(answer: str, problem: str) -> int:
    return len(content_stems(answer) & content_stems(problem.replace(BLANK, " ")))


@pytest.mark.parametrize("rule", FLAGGED_RULES)
def test_each_rule_that_rearranges_the_story_is_flagged(rule):
    """Every answer of the rule with at least STORY_REUSE_MIN_WORDS story words is flagged, raw and
    after the default extraction (a shorter one is too little text to win AtAvg by reuse)."""
    for problem in _problems():
        raw = RULES[rule](problem)
        for answer in (raw, extract_with("ours", f"<ANSWER>{raw}</ANSWER>", problem).text):
            if _story_words(answer, problem) >= STORY_REUSE_MIN_WORDS:
                assert is_story_reuse(story_reuse(answer, problem)), (rule, answer[:80])


def test_the_rules_that_rearrange_the_whole_story_are_flagged_on_every_instance():
    for rule in ("story, adjacent words swapped", "story's distinct words sorted", "story scrambled"):
        assert all(story_reuse(RULES[rule](p), p) == 1.0 for p in _problems()), rule


def _each_word(text: str, change) -> str:
    return " ".join(change(word) for word in text.split())


HOMOGLYPHS = str.maketrans({"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441", "p": "\u0440"})
DISGUISES = {
    "zero-width space in each word": lambda t: _each_word(t, lambda w: w[:1] + "\u200b" + w[1:]),
    "soft hyphen in each word": lambda t: _each_word(t, lambda w: w[:2] + "\u00ad" + w[2:]),
    "Cyrillic look-alike letters": lambda t: t.translate(HOMOGLYPHS),
    "full-width letters": lambda t: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in t),
    "accents": lambda t: _each_word(t, lambda w: w[:1] + "\u0301" + w[1:]),
    "upper case": str.upper,
}


@pytest.mark.parametrize("disguise", DISGUISES)
def test_a_scrambled_story_disguised_by_characters_is_still_flagged(disguise):
    scrambled = RULES["story scrambled"]
    for problem in _problems():
        assert story_reuse(DISGUISES[disguise](scrambled(problem)), problem) == 1.0, disguise


def test_function_words_swapped_and_words_inflected_are_still_the_story():
    """Stop words carry no content and stems join inflections, so neither changes the reading."""
    assert story_reuse("months coins Maya saved her watched rings Saturn night", PROBLEM) == 1.0
    assert story_reuse("a months of coins by Maya to saved an watched at rings Saturn", PROBLEM) == 1.0
    assert story_reuse("month coin Maya saving watches ring Saturn's nights", PROBLEM) == 1.0


def test_a_filler_word_repeated_counts_once():
    padded = "months um coins um Maya um saved um rings um Saturn um"
    assert story_reuse(padded, PROBLEM) == pytest.approx(6 / 7)
    assert is_story_reuse(story_reuse(padded, PROBLEM))


def test_the_whole_story_padded_with_words_of_its_own_is_still_flagged():
    """Every content word of the story is there: the smaller set (the story's) is all shared."""
    padded = f"{RULES['story scrambled'](PROBLEM)} purple galaxy violin quietly forgot seven lanterns"
    assert story_reuse(padded, PROBLEM) == 1.0


def test_answers_that_reuse_names_and_nouns_with_words_of_their_own_are_not_flagged():
    for answer in (
        "Maya rode her bike to the hobby shop and bought a small telescope.",
        "She finally had enough coins to buy a telescope from the store.",
        "Mаyа bought а telescope with the coins she saved.",  # Cyrillic а: the names still read alike
    ):
        assert not is_story_reuse(story_reuse(answer, PROBLEM)), answer


def test_a_short_answer_is_read_over_at_least_five_content_words():
    """ "Maya saved." is all story words but too little text to be flagged: 2 of at least 5."""
    assert story_reuse("Maya saved.", PROBLEM) == pytest.approx(2 / STORY_REUSE_MIN_WORDS)
    assert not is_story_reuse(story_reuse("Maya saved her coins.", PROBLEM))
    assert story_reuse("", PROBLEM) == 0.0 and story_reuse("and then it was the", PROBLEM) == 0.0


@pytest.mark.shared
@pytest.mark.slow  # extracts the 9,800 real outputs (about half a minute on 2 cores)
def test_the_guard_flags_few_of_the_twenty_real_models_answers():
    """Measured (in-sample: the threshold was chosen on this data; docs/baselines.md), under the
    default extraction: 3.4% of all outputs flagged, at most 8.6% of one model's (2.7% and 7.3% before
    misspellings and synonyms were read as the story's). (Under
    ``published`` whole reasoning traces and restated stories are the answers, and hold the story's
    every content word: the page states those shares; that extraction is not ranked.)"""
    path = ROOT.parent / "shared" / "data" / "extraction" / "responses.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) == 9800
    flags: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        answer = extract_with("ours", row["response"], row["problem"]).text
        flags[row["model"]].append(bool(is_story_reuse(story_reuse(answer, row["problem"]))))
    shares = {model: fmean(f) for model, f in flags.items()}
    assert len(shares) == 20 and fmean(shares.values()) <= 0.035, shares
    assert max(shares.values()) <= 0.087, (STORY_REUSE_THRESHOLD, shares)


def _scrambler(messages, tools, tool_choice, config):
    """The story around the blank, its words scrambled: what the guard is for."""
    from helpers import mock_output

    problem = messages[-1].text.split("\n\n")[1]  # a paper-variant L2 prompt led by the system text
    return mock_output(f"<ANSWER>{RULES['story scrambled'](problem)}</ANSWER>")


@pytest.mark.heavy  # the log is scored with a real embedding backbone
def test_a_forged_story_reuse_fails_verification(tmp_path, capsys):
    """The share rests on each sample's story_reuse: verify recomputes it from the logged answer."""
    from inspect_ai import eval
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import get_model

    from narrative_infill.platform.analysis.submission.build import build_submission, write_submission
    from narrative_infill.platform.cli import main
    from narrative_infill.tasks import infill_task

    logs = tmp_path / "logs"
    model = get_model("mockllm/scrambler", custom_outputs=_scrambler, memoize=False)
    task = infill_task("l2", data="demo", backbone="minilm", judge=False)
    [log] = eval(task, model=model, log_dir=str(logs), display="none")
    values = [sample.scores["metrics"].value["story_reuse"] for sample in log.samples]
    assert values and all(value == 1.0 for value in values)  # every scrambled story is flagged
    for path in logs.glob("*.eval"):
        log = read_eval_log(str(path))
        for sample in log.samples:
            sample.scores["metrics"].value["story_reuse"] = 0.0
        write_eval_log(log, str(path))
    write_submission(build_submission([str(logs)], "demo"), tmp_path / "forged.json")
    assert main(["verify", str(tmp_path / "forged.json"), "--logs", str(logs)]) == 1
    assert (
        f"story_reuse is not the story share of the answer in {len(values)} sample(s)"
        in capsys.readouterr().out
    )
