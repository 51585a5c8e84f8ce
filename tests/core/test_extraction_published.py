"""``extraction=published``: the authors' released rule, exactly (REFERENCE §4.1), as an option of
both scorers and the tasks, and part of the metrics signature."""

from __future__ import annotations

import pytest
from inspect_ai import eval

from narrative_infill.errors import NarrativeInfillError, OptionError
from narrative_infill.extraction import ExtractionStatus, extract_published, extract_with

PROBLEM = "Sam overslept. ______ He was late for class."


@pytest.mark.parametrize(
    ("response", "text", "status"),
    [
        ("<ANSWER> He missed the bus. </ANSWER>", "He missed the bus.", ExtractionStatus.TAGGED),
        # the first span of several, non-greedy
        ("<ANSWER>one</ANSWER> then <ANSWER>two</ANSWER>", "one", ExtractionStatus.TAGGED),
        # any case, spanning lines, inner whitespace stripped but inner newlines kept
        ("Sure.\n<answer>\n He ran.\nHe fell.\n</Answer>", "He ran.\nHe fell.", ExtractionStatus.TAGGED),
        # no closing tag: the whole response, tag and all
        ("  <ANSWER> He missed the bus.  ", "<ANSWER> He missed the bus.", ExtractionStatus.WHOLE_RESPONSE),
        # misspelled or spaced tags are not tags to the published rule
        ("<ANSWR>He ran.</ANSWR>", "<ANSWR>He ran.</ANSWR>", ExtractionStatus.WHOLE_RESPONSE),
        ("< ANSWER >He ran.</ ANSWER >", "< ANSWER >He ran.</ ANSWER >", ExtractionStatus.WHOLE_RESPONSE),
        # no </think> handling: a tag inside the reasoning trace is the answer
        ("<think>maybe <ANSWER>x</ANSWER></think><ANSWER>y</ANSWER>", "x", ExtractionStatus.TAGGED),
        # an empty span is an empty answer; an empty response too
        ("<ANSWER>   </ANSWER> He ran.", "", ExtractionStatus.TAGGED),
        ("", "", ExtractionStatus.WHOLE_RESPONSE),
        ("Answer: He missed the bus.", "Answer: He missed the bus.", ExtractionStatus.WHOLE_RESPONSE),
        # REFERENCE 4.1: "if there is no tag the whole reasoning trace becomes the answer"
        (
            "<think>\nHmm.\n</think>\nHe ran.",
            "<think>\nHmm.\n</think>\nHe ran.",
            ExtractionStatus.WHOLE_RESPONSE,
        ),
        # nested or unclosed-then-closed tags: the first opening to the first closing, inner tags kept
        ("<ANSWER><ANSWER>x</ANSWER></ANSWER>", "<ANSWER>x", ExtractionStatus.TAGGED),
        ("<ANSWER>a <ANSWER>b</ANSWER>", "a <ANSWER>b", ExtractionStatus.TAGGED),
        # tabs and newlines around the span are whitespace to \s and to strip()
        ("<ANSWER>\t\n He ran.\t</ANSWER>", "He ran.", ExtractionStatus.TAGGED),
    ],
)
def test_the_published_rule(response, text, status):
    extraction = extract_published(response)
    assert (extraction.text, extraction.status) == (text, status)
    assert extract_with("published", response, PROBLEM) == extraction


def test_ours_stays_the_default_and_differs():
    response = "<think>maybe <ANSWER>x</ANSWER></think>Answer: He missed the bus."
    assert extract_with("ours", response, PROBLEM).text == "He missed the bus."
    assert extract_with("published", response, PROBLEM).text == "x"


def test_an_unknown_extraction_is_refused_when_the_scorer_is_built():
    from narrative_infill.scorers.judge.scorer import judge
    from narrative_infill.scorers.metrics import metrics

    for build in (metrics, judge):
        with pytest.raises(NarrativeInfillError, match="extraction must be one of") as raised:
            build(extraction="publshed")
        assert isinstance(raised.value.__cause__, OptionError)
    with pytest.raises(OptionError):
        extract_with("theirs", "x", PROBLEM)


@pytest.mark.heavy
def test_the_task_arg_scores_the_published_answer_under_its_own_signature():
    from helpers import mock_model

    from narrative_infill.tasks import infill_task

    response = "<think>maybe <ANSWER>a guess</ANSWER></think>Answer: She saved her coins."
    logs = {
        rule: eval(
            infill_task("l2", data="demo", n=1, extraction=rule),
            model=mock_model(lambda m, c: response),
            display="none",
            limit=2,
        )[0]
        for rule in ("ours", "published")
    }
    for rule, log in logs.items():
        assert log.status == "success"
        for sample in log.samples:
            score = sample.scores["metrics"]
            assert score.metadata["metrics_signature"].endswith(f" | extraction={rule}")
            assert score.answer == ("a guess" if rule == "published" else "She saved her coins.")


def test_the_published_rule_reads_the_reasoning_inspect_moved_out_of_the_text():
    """Inspect parses a ``<think>`` block out of an OpenAI-compatible response (vLLM) into a
    reasoning part; the published code read the raw text, so a tag inside the reasoning was
    its answer. ``completion`` alone lost it: the published answer was the text after it."""
    import asyncio
    from types import SimpleNamespace

    from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ContentText, ModelOutput

    from narrative_infill.scorers.answer import extracted

    message = ChatMessageAssistant(
        content=[ContentReasoning(reasoning="maybe <ANSWER>x</ANSWER>"), ContentText(text="Answer: y")]
    )
    state = SimpleNamespace(output=ModelOutput.from_message(message), input_text=PROBLEM)
    assert asyncio.run(extracted(state, "published")).text == "x"
    assert asyncio.run(extracted(state, "ours")).text == "y"
    untagged = ChatMessageAssistant(content=[ContentReasoning(reasoning="hmm"), ContentText(text="He ran.")])
    state = SimpleNamespace(output=ModelOutput.from_message(untagged), input_text=PROBLEM)
    assert asyncio.run(extracted(state, "published")).text == "<think>hmm</think>He ran."
