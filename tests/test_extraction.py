"""First extraction rules: answer tags, reasoning traces, whole response, nothing."""

from narrative_infill.extraction import ExtractionStatus, extract_answer

PROBLEM = "Ann woke up. ______ It was late."


def test_tagged_answer_is_taken_case_insensitively_across_lines():
    result = extract_answer("Sure!\n<answer>\n She ran to the bus.\n</ANSWER> Hope this helps.", PROBLEM)
    assert result.text == "She ran to the bus."
    assert result.status is ExtractionStatus.TAGGED and result.steps == ("answer_tags",)


def test_reasoning_trace_is_dropped_before_looking_for_tags():
    response = "<think>Maybe <ANSWER>wrong</ANSWER>?</think>\n<ANSWER>She ran.</ANSWER>"
    result = extract_answer(response, PROBLEM)
    assert result.text == "She ran." and result.steps == ("drop_think_trace", "answer_tags")
    plain = extract_answer("<think>hmm</think>  She ran. ", PROBLEM)
    assert plain.text == "She ran." and plain.status is ExtractionStatus.AFTER_THINK


def test_unclosed_trace_and_empty_output_hold_no_answer():
    assert extract_answer("<think>I keep thinking and never stop", PROBLEM).status is ExtractionStatus.NO_ANSWER
    empty = extract_answer("   \n", PROBLEM)
    assert empty.text == "" and empty.status is ExtractionStatus.NO_ANSWER


def test_untagged_response_falls_back_to_the_stripped_text():
    result = extract_answer("  She ran to the bus.\n", PROBLEM)
    assert result.text == "She ran to the bus." and result.status is ExtractionStatus.WHOLE_RESPONSE
    assert extract_answer("<ANSWER> </ANSWER> She ran.", PROBLEM).status is ExtractionStatus.WHOLE_RESPONSE
