"""Extraction rules, one behaviour per test, plus properties that hold for any input."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narrative_infill.extraction import ExtractionStatus, extract_answer


PROBLEM = "Mira loved to bake bread. ______ Mira hurried to the market and bought more flour."


def extract(response: str, problem: str = PROBLEM):
    return extract_answer(response, problem)


def test_tagged_answer_is_taken_case_insensitively_across_lines():
    result = extract("Sure!\n<answer>\n He was out of flour.\n</ANSWER> Hope this helps.")
    assert result.text == "He was out of flour." and result.status is ExtractionStatus.TAGGED


def test_misspelled_unbalanced_and_several_tags():
    assert extract("<ANNWER>He was out of flour.</ANNWER>").text == "He was out of flour."
    assert extract("ANSWER: He was out of flour. </ANSWER>").text == "He was out of flour."
    assert extract("<ANSWER> He was out of flour.").text == "He was out of flour."
    several = extract("<ANSWER>He kneaded the dough.</ANSWER>\n<ANSWER>The fridge was empty.</ANSWER>")
    assert several.text == "He kneaded the dough. The fridge was empty."


def test_a_tagged_piece_that_only_restates_the_story_is_dropped():
    response = "<ANSWER>He kneaded the dough.</ANSWER> <ANSWER>Mira hurried to the market and bought more flour.</ANSWER>"
    assert extract(response).text == "He kneaded the dough."


def test_reasoning_trace_is_dropped_and_an_unclosed_one_holds_no_answer():
    result = extract("<think>Maybe <ANSWER>wrong</ANSWER>?</think>\n<ANSWER>He was out of flour.</ANSWER>")
    assert result.text == "He was out of flour." and result.steps[0] == "drop_think_trace"
    assert (
        extract("Okay, so the blank...</think>\n\nHe was out of flour.").status is ExtractionStatus.AFTER_THINK
    )
    assert extract("<think>I keep thinking and never stop").status is ExtractionStatus.NO_ANSWER


def test_runaway_and_looping_outputs_hold_no_answer():
    runaway = "Okay, so I need to think about the blank " * 150 + "and then"
    assert extract(runaway).steps[-1] == "runaway_output"
    loop = "Wait, that is two sentences. " * 6
    assert extract(loop).steps[-1] == "repetition_loop"


def test_restated_story_keeps_only_the_new_text():
    response = "Mira loved to bake bread. One morning the jar was empty. Mira hurried to the market and bought more flour."
    result = extract(response)
    assert (
        result.text == "One morning the jar was empty."
        and result.status is ExtractionStatus.RESTATED_PROBLEM
    )


def test_a_connective_leading_into_the_restated_context_is_dropped():
    response = "Mira loved to bake bread. The jar was empty. So, Mira hurried to the market and bought more flour."
    assert extract(response).text == "The jar was empty."
    clause = "Mira loved to bake bread. The jar was empty, and with nothing left to knead Mira hurried to the market and bought more flour."
    assert extract(clause).text == "The jar was empty, and with nothing left to knead"


def test_restatement_tolerates_case_punctuation_and_a_reworded_edge():
    response = (
        "WALKER LOVED TO EAT CEREAL!  **The flour was gone.** He hurried to the market, and bought more flour"
    )
    assert extract(response).text == "The flour was gone."
    assert extract(
        "Mira loved to bake bread. The flour was gone. He hurried to the market and bought more flour."
    ).text == ("The flour was gone.")


def test_a_response_that_only_restates_or_merges_the_context_holds_no_answer():
    assert (
        extract("Mira loved to bake bread. Mira hurried to the market and bought more flour.").text == ""
    )
    merged = extract("Mira loved to bake bread, so he hurried to the market and bought more flour.")
    assert merged.status is ExtractionStatus.NO_ANSWER


def test_an_extended_next_sentence_is_the_infill_but_an_extended_ending_is_an_edit():
    # The model wrote its infill into the sentence after the blank: that whole sentence is its answer.
    alone = extract("Mira hurried to the market and bought more flour because the jar was empty.")
    assert alone.text == "Mira hurried to the market and bought more flour because the jar was empty."
    restated = extract(
        "Mira loved to bake bread. Mira hurried to the market and bought more flour, sighing loudly."
    )
    assert restated.text == ""  # a fully restated story whose closing sentence grows is no answer
    assert (
        extract("Mira hurried to the market and bought more bread.").text == ""
    )  # a changed word is an edit
    problem = "Mira loved to bake bread. ______ Mira hurried to the market. He bought more flour."
    middle = "Mira loved to bake bread. Mira hurried to the market, worried about the empty jar. He bought more flour."
    assert extract(middle, problem).text == "Mira hurried to the market, worried about the empty jar."
    pieces = "<ANSWER>The jar was empty.</ANSWER> <ANSWER>Mira hurried to the market and bought more flour at noon today.</ANSWER>"
    assert extract(pieces).text == "The jar was empty."


def test_answer_labels_preambles_and_explanations():
    assert extract("Answer: He was out of flour.").text == "He was out of flour."
    assert extract('The missing sentence is: "He was out of flour."').text == "He was out of flour."
    labelled = extract("Here is my reasoning.\n\nAnswer: He was out of flour.\n\nThis explains the trip.")
    assert labelled.text == "He was out of flour." and labelled.status is ExtractionStatus.PREFIXED
    first_line = extract("He was out of flour.\n\nExplanation: the next sentence needs a reason.")
    assert first_line.text == "He was out of flour." and first_line.status is ExtractionStatus.LINE


def test_first_item_of_a_list_of_options():
    response = "Here are a few options:\n\n**Option 1:**\n\n* He was out of flour.\n* The jar was empty."
    result = extract(response)
    assert result.text == "He was out of flour." and result.status is ExtractionStatus.LIST_ITEM


def test_bold_and_quoted_answers():
    assert (
        extract("Mira loved to bake bread. **He was out of flour.** And so on.").status
        is ExtractionStatus.BOLD
    )
    quoted = extract('"He was out of flour."\n\nSo the full story would read well.')
    assert quoted.text == "He was out of flour."
    assert extract("<b>He was out of flour.</b>").text == "He was out of flour."


def test_bold_text_that_is_part_of_the_story_is_no_answer():
    reworded = extract("Mira loved to bake bread. **He** hurried to the market and bought more flour.")
    assert reworded.text == "" and reworded.steps[-1] == "marked_text_restates_context"
    lead_in = extract(
        "Mira loved to bake bread. **And so, Mira hurried to the market and bought more flour.**"
    )
    assert lead_in.status is ExtractionStatus.NO_ANSWER
    new_then_copy = extract(
        "Mira loved to bake bread. **The jar was empty.** **Mira hurried to the market and bought more flour.**"
    )
    assert new_then_copy.text == "The jar was empty."


def test_refusals_hold_no_answer():
    assert extract("I'm sorry, but I can't help with completing this text.").steps[-1] == "refusal"


def test_problem_without_a_blank_still_extracts():
    assert extract("<ANSWER>Fine.</ANSWER>", problem="No blank here.").text == "Fine."


_WORDS = re.compile(r"\w+")


def _words_come_from(text: str, response: str) -> bool:
    return all(word in response for word in _WORDS.findall(text))


adversarial = st.one_of(
    st.text(max_size=400),
    st.text(alphabet="<>/*_\"':.\n ANSWERthink-1.", max_size=600),
    st.lists(
        st.sampled_from(
            [
                "<ANSWER>",
                "</ANSWER>",
                "</think>",
                "<think>",
                "**",
                "\n\n",
                "Answer:",
                "1. ",
                '"',
                "Mira loved to bake bread.",
                " milk ",
                "______",
                "Here are options:",
            ]
        ),
        max_size=60,
    ).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(response=adversarial, problem=st.one_of(st.just(PROBLEM), st.text(max_size=200)))
def test_never_raises_and_only_returns_words_of_the_response(response, problem):
    result = extract_answer(response, problem)
    assert isinstance(result.text, str) and isinstance(result.status, ExtractionStatus)
    assert result.text == "" or _words_come_from(result.text, response)
    assert (result.text == "") == (result.status is ExtractionStatus.NO_ANSWER)


def test_huge_and_pathological_inputs_are_handled():
    for response in ("<" * 200_000, "*" * 200_000, "a " * 100_000 + ".", "**x" * 50_000, '"' * 100_000, ""):
        result = extract_answer(response, PROBLEM)
        assert result.text == "" or _words_come_from(result.text, response)


@pytest.mark.parametrize("ending", ["<ANSWER>He bought a bike.</ANSWER>", "Answer: He bought a bike"])
def test_a_long_response_that_ends_in_a_clean_answer_keeps_it(ending):
    """The runaway check (800+ words, no final punctuation) must not discard a tagged or labelled answer."""
    problem = "Tom wanted to ride to school. ______ He rode it every day."
    rambling = " ".join(f"thought{i} about the story and its possible endings" for i in range(120))
    extraction = extract_answer(f"{rambling}\n\n{ending}", problem)
    assert extraction.text == "He bought a bike."[: len(extraction.text)] and extraction.text.startswith(
        "He bought a bike"
    )
    assert extraction.status in (ExtractionStatus.TAGGED, ExtractionStatus.PREFIXED)


def test_a_long_response_cut_off_mid_sentence_is_still_no_answer():
    problem = "Tom wanted to ride to school. ______ He rode it every day."
    rambling = " ".join(f"thought{i} about the story and its possible endings" for i in range(120))
    assert extract_answer(rambling + " and then", problem).status is ExtractionStatus.NO_ANSWER


# Issue shapes, second pass: each example written for these tests (none is a labelled row).
@pytest.mark.parametrize(
    ("problem", "response", "expected"),
    [
        (  # 1. a new sentence that runs into the context: kept whole, never ending in ", and"
            "Ana was a swimmer. ______ She won a medal at the state finals.",
            "<ANSWER> Ana trained every morning before school. Her hard work paid off, and she won a medal at the state finals. </ANSWER>",
            "Ana trained every morning before school. Her hard work paid off, and she won a medal at the state finals.",
        ),
        (  # 1. a short word glued to the front of the next context sentence
            "Tom sat by the fire. ______ The dog barked at the door.",
            "Tom heard a strange noise outside. Suddenly The dog barked at the door.",
            "Tom heard a strange noise outside. Suddenly The dog barked at the door.",
        ),
        (  # 2. a cut inside a sentence: the sentence with new words is kept whole, not stitched
            "Mia loved her garden. ______ She had been growing tomatoes all summer.",
            "<ANSWER>One morning she found the plants wilted. However, to her surprise, She had been growing tomatoes all summer.</ANSWER>",
            "One morning she found the plants wilted. However, to her surprise, She had been growing tomatoes all summer.",
        ),
        (  # 3. a tagged span is kept whole, even when it closes with the next context sentence:
            # the held-out annotations keep it (issue 30), and no dev row labels it otherwise
            "Sam overslept. ______ He was late for class.",
            "<ANSWER>He missed the bus. He walked to school in the rain. He was late for class.</ANSWER>",
            "He missed the bus. He walked to school in the rain. He was late for class.",
        ),
        (  # 4. the prompt's own example, echoed before the model's infill
            "Lena opened the box. ______ She smiled at the gift.",
            "Example: The quick brown ______ jumped over the lazy dog. Answer: fox\n\nInside was a silver necklace from her grandmother.",
            "Inside was a silver necklace from her grandmother.",
        ),
        (  # 4. an example answer in tags next to the model's own
            "Lena opened the box. ______ She smiled at the gift.",
            "<ANSWER>brown fox</ANSWER>\n\n<ANSWER>Inside was a silver necklace.</ANSWER>",
            "Inside was a silver necklace.",
        ),
        (  # 5. bold for emphasis inside longer new sentences
            "I went out for a run. ______ I went home to change.",
            "Despite the rain, **I** kept running. **However**, by noon I was soaked.",
            "Despite the rain, I kept running. However, by noon I was soaked.",
        ),
        (  # 5. bold over a whole inserted sentence stays the answer
            "I went out for a run. ______ I went home to change.",
            "I went out for a run. **It started to pour halfway through.** I went home to change.",
            "It started to pour halfway through.",
        ),
        (  # 6. a label phrase followed by a quote, then an explanation
            "The family came home. ______ They searched the whole street.",
            'The blank should be filled with "Their dog ran away." This fits because it explains the search.',
            "Their dog ran away.",
        ),
        (  # 7. an answer label alone on its line, the answer (with the story around it) below
            "The family came home. ______ They searched the whole street.",
            "ANSWER\n\nThe family came home. Their dog had run away. They searched the whole street.",
            "Their dog had run away.",
        ),
    ],
)
def test_second_pass_shapes(problem, response, expected):
    assert extract_answer(response, problem).text == expected


def test_an_echoed_prompt_instruction_is_not_the_answer():
    problem = "Lena opened the box. ______ She smiled at the gift."
    assert (
        extract_answer(
            "The blank area is missing 1 sentence(s).\nInside was a silver necklace.", problem
        ).text
        == "Inside was a silver necklace."
    )


def test_a_cut_sentence_is_completed_only_from_a_closed_sentence():
    from narrative_infill.extraction.repair import complete_cut_sentence

    original = "He missed the bus. His luck ran out, and he was late for class."
    assert complete_cut_sentence("He missed the bus. His luck ran out, and", original) == original
    assert (
        complete_cut_sentence("He missed the bus. His luck ran out, and", original[:-16]) is None
    )  # the response itself stops there
    assert (
        complete_cut_sentence("Because he was late,", "Because he was late, he ran.") is None
    )  # a lone subordinate lead-in stays
