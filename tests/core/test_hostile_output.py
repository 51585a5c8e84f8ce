"""Hostile model output (issue 35, findings 5, 7, 8): one sample's bytes are its own, invisible
answers are empty answers, and what one answer may cost is bounded, the rest recorded."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import SHARED, require_shared

from narrative_infill.data.text import is_invisible, valid_unicode
from narrative_infill.extraction import MAX_TEXT_CHARS, ExtractionStatus, extract_answer, extract_published
from narrative_infill.scorers.answer import input_limits, read_answer
from narrative_infill.scorers.metrics.batching import DynamicBatcher
from narrative_infill.scorers.metrics.pairs import MAX_ANSWER_SENTENCES, bounded_answer, sentences

PROBLEM = "Maya saved her coins. ______ She rode her bike to the shop."


def test_lone_surrogates_become_replacement_characters_and_are_counted():
    assert valid_unicode("She bought \ud800 a telescope.") == ("She bought \ufffd a telescope.", 1)
    assert valid_unicode("\udc00\ud800 and \ufffd") == ("\ufffd\ufffd and \ufffd", 2)
    assert valid_unicode("a \ud83d\ude00 pair") == ("a \U0001f600 pair", 0)  # a pair is one character
    assert valid_unicode("plain text") == ("plain text", 0)


def test_the_scorers_read_valid_unicode_and_record_what_was_replaced():
    answer = read_answer("ours", "<ANSWER>She bought \ud800 a telescope.</ANSWER>", PROBLEM)
    assert answer.text == "She bought \ufffd a telescope." and answer.status == ExtractionStatus.TAGGED
    assert answer.text.encode("utf-8")  # what a tokenizer accepts
    assert input_limits(answer) == {"response_replaced_chars": 1}
    assert input_limits(read_answer("ours", "<ANSWER>Fine.</ANSWER>", PROBLEM)) == {}


@pytest.mark.parametrize(
    "invisible",
    ["\u200b", "\x00", "\ufeff", "\u00ad", "\ue000", "\u200b \u2060\n\u200d", "\x07\x1b"],
    ids=["zero-width-space", "nul", "bom", "soft-hyphen", "private-use", "mixed", "controls"],
)
@pytest.mark.parametrize("rule", ["ours", "published"])
def test_an_answer_of_invisible_characters_only_is_no_answer(invisible, rule):
    """Before: <ANSWER>\\u200b</ANSWER> was a tagged answer (Sem-F1 0.065, the judge saw the character)."""
    assert is_invisible(invisible)
    answer = read_answer(rule, f"<ANSWER>{invisible}</ANSWER>", PROBLEM)
    assert answer.text == "" and answer.status == ExtractionStatus.NO_ANSWER
    assert answer.steps[-1] == "invisible_characters_only"


@pytest.mark.parametrize(
    "blank",
    ["\u0301\u0301", "\ufe0f", "\u034f", "\u3164", "\u115f\u1160", "\uffa0", "\u2800\u2800", "\u200b\u0301"],
    ids=[
        "combining-marks",
        "variation-selector",
        "grapheme-joiner",
        "hangul-filler",
        "choseong-jungseong",
        "halfwidth-filler",
        "braille-blank",
        "zero-width-and-mark",
    ],
)
def test_an_answer_of_marks_or_blank_letters_only_is_no_answer(blank):
    """Failed before: combining marks, variation selectors and the blank "letters" (Hangul fillers,
    the blank Braille pattern) show nothing, yet each was a tagged answer."""
    assert is_invisible(blank)
    answer = read_answer("ours", f"<ANSWER>{blank}</ANSWER>", PROBLEM)
    assert answer.text == "" and answer.steps[-1] == "invisible_characters_only"


def test_visible_text_with_invisible_characters_stays_an_answer():
    assert not is_invisible("a\u200b") and not is_invisible("\u0301é") and not is_invisible("e\u0301")
    assert read_answer("ours", "<ANSWER>She\u00adwent home.</ANSWER>", PROBLEM).text == "She\u00adwent home."


def test_extraction_reads_at_most_the_limit_after_a_reasoning_trace_and_records_the_rest():
    long_answer = "<ANSWER>" + "word " * (MAX_TEXT_CHARS // 5 + 100)
    answer = extract_answer(long_answer, PROBLEM)
    assert answer.truncated_chars == len(long_answer) - MAX_TEXT_CHARS
    assert "response_truncated" in answer.steps
    assert input_limits(answer) == {"response_truncated_chars": answer.truncated_chars}
    # A trace longer than the limit is dropped first: the answer after it is read whole.
    reasoning = "<think>" + "Let me think about the story. " * 2000 + "</think><ANSWER>She went.</ANSWER>"
    answer = extract_answer(reasoning, PROBLEM)
    assert answer.text == "She went." and answer.truncated_chars == 0


def test_the_metrics_read_at_most_the_character_and_sentence_limits():
    assert bounded_answer("Short answer.") == "Short answer."
    long_sentence = "word " * 10_000
    assert bounded_answer(long_sentence) == long_sentence[:MAX_TEXT_CHARS]
    many = "".join(f"Tom ran {i} miles. " for i in range(MAX_ANSWER_SENTENCES + 100))
    bounded = bounded_answer(many)
    assert sentences(bounded) == sentences(many)[:MAX_ANSWER_SENTENCES]
    assert many.startswith(bounded) and len(bounded) < len(many)


@pytest.mark.shared
def test_no_real_output_or_answer_reaches_a_limit():
    """The limits are chosen above everything real: of the 9,800 real outputs none is cut by the
    extraction, and no answer (the paper's rules or the published rule's whole response) by the metrics."""
    require_shared()
    with open(SHARED / "data" / "extraction" / "responses.jsonl") as lines:
        rows = [json.loads(line) for line in lines]
    assert len(rows) == 9800
    assert max(len(row["response"]) for row in rows) < MAX_TEXT_CHARS
    for row in rows:
        published = extract_published(row["response"]).text
        assert bounded_answer(published) == published, row["id"]
    assert max(len(sentences(row["gold_answer"])) for row in rows) <= 3


def test_a_pair_that_fails_fails_its_own_sample_and_never_its_batch_mates():
    """Before: the batcher handed the batch's one exception to every request in it."""
    scored_batches = []

    def score_batch(requests):
        scored_batches.append(list(requests))
        if "bad" in requests:
            raise TypeError("cannot tokenize the bad request")
        return [request.upper() for request in requests]

    batcher = DynamicBatcher(score_batch, min_batch=3, max_wait_s=3600.0)

    async def main():
        return await asyncio.gather(
            *(batcher.submit(request) for request in ("good", "bad", "fine")), return_exceptions=True
        )

    good, bad, fine = asyncio.run(main())
    assert (good, fine) == ("GOOD", "FINE")
    assert isinstance(bad, TypeError) and "bad request" in str(bad)
    assert scored_batches[0] == ["good", "bad", "fine"]  # scored together first, then one by one
    assert scored_batches[1:] == [["good"], ["bad"], ["fine"]]


@pytest.mark.heavy  # scores with the real embedding backbone
def test_a_lone_surrogate_in_one_output_leaves_the_eval_and_its_batch_mates_scored():
    """Finding 5, as reproduced: six demo samples with mockllm, output 3 holding a lone surrogate.
    Before: that sample and its batch-mates errored (the tokenizer's TypeError) and the eval ended
    in error. Output 5 is invisible, output 6 longer than the extraction reads."""
    from helpers import mock_model
    from inspect_ai import eval

    from narrative_infill.tasks import infill_task

    long_response = "<ANSWER>" + "She rode on and on " * 2500 + "</ANSWER>"
    outputs = [
        "<ANSWER>She saved her coins.</ANSWER>",
        "<ANSWER>He rode home.</ANSWER>",
        "<ANSWER>She bought \ud800 a telescope.</ANSWER>",
        "<ANSWER>They laughed.</ANSWER>",
        "<ANSWER>\u200b</ANSWER>",
        long_response,
    ]
    replies = iter(outputs)
    log = eval(
        infill_task("l2", data="demo", n=1, judge=False),
        model=mock_model(lambda messages, config: next(replies)),
        display="none",
        limit=6,
    )[0]
    assert log.status == "success"
    assert len(log.samples) == 6 and all(sample.error is None for sample in log.samples)

    samples = {
        output: [s for s in log.samples if s.output.completion[:16] == output[:16]][0] for output in outputs
    }
    scores = {output: sample.scores["metrics"] for output, sample in samples.items()}
    # Replaced as the output arrived: the log, the scorers and any rescoring read the same text.
    hostile = samples[outputs[2]]
    assert hostile.output.completion == "<ANSWER>She bought \ufffd a telescope.</ANSWER>"
    assert hostile.metadata["output_replaced_chars"] == 1
    assert scores[outputs[2]].answer == "She bought \ufffd a telescope."
    for innocent in (outputs[0], outputs[1], outputs[3]):
        assert scores[innocent].value["atavg"] > 0
        assert "output_replaced_chars" not in samples[innocent].metadata
    invisible = scores[outputs[4]]
    assert invisible.answer == "" and invisible.metadata["extraction_status"] == "no_answer"
    assert invisible.metadata["zero_reasons"]["semf1"] == "empty answer"
    long = scores[long_response]
    assert long.metadata["response_truncated_chars"] == len(long_response) - MAX_TEXT_CHARS


@pytest.mark.heavy  # scores with the real embedding backbone
def test_the_metrics_record_what_they_did_not_read():
    """Before: a 200 KB answer was scored whole (84 s, 979 MB in the issue), nothing recorded."""
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    long_answer = "She rode on and on " * 2500  # one sentence, past the character limit
    short, long = score_pairs(
        ["She rode home.", long_answer], ["She rode home."] * 2, resolve_backbones("minilm")
    )
    assert short.truncated_chars == 0
    assert long.truncated_chars == len(long_answer.strip()) - MAX_TEXT_CHARS
    assert all(0.0 <= long.values[name] <= 1.0 for name in long.values)
