"""Prompt texts: the paper's Appendix B by default, the published code's variants exactly."""

import ast
import csv
import json
import re
from pathlib import Path

import pytest
from helpers import APPENDIX_B, REFERENCE_MD, mock_model
from inspect_ai import eval

from narrative_infill.data.records import BLANK
from narrative_infill.errors import OptionError
from narrative_infill.paper_protocol import PARADIGMS, TELER_LEVELS
from narrative_infill.prompts import fill_slots, prompt_template, variants
from narrative_infill.tasks import infill_task

SYSTEM = "There is content that is missing from the given text. Fill in the blank."
TAGS = "Surround your answer with the tags <ANSWER> and </ANSWER>."

# The paper's wording, typed from Appendix B, with the authors' layout; {P} is the problem,
# {n} the span length, and the unit slot holds the record's "sentence(s)".
PAPER_EXPECTED = {
    "l0": "{P}",
    "l1": "{P}\n\nGuess the missing {n} sentence(s) and make sure your answer begins with <ANSWER> and ends with </ANSWER>.",
    "l2": "{P}\n\nThe blank area is missing at sentence(s). Fill in the blank with {n} sentences. "
    + TAGS
    + "\n\nAnswer:",
    "l3": "{P}\n\n* Fill in the blank with {n} sentences.\n* The blank area is missing at sentence(s).\n* "
    + TAGS
    + "\n\nAnswer:",
    "l4": 'Example of a 1-word problem: "The quick brown _____ jumped over the lazy dog"\nAnswer: <ANSWER>fox</ANSWER>\n\n'
    'Example of a 2-word problem: "The quick _____ jumped over the lazy dog"\nAnswer: <ANSWER>brown fox</ANSWER>\n\n'
    "* The blank area is missing {n} sentences at position sentence(s).\n* Tell me the missing text.\n"
    "* Your response should follow the given examples.\n* " + TAGS + "\n\n{P}\nAnswer:",
    "abductive": "Definition: Abductive reasoning involves inferring the most plausible explanation for incomplete "
    "information. The model should select the text that best explains the surrounding narrative context.\n\n{P}\n\n"
    "The blank area is missing at sentence(s) of {n} sentences. Use abductive reasoning to infer the most plausible "
    "missing text. Before generating, infer the most likely event that explains the missing part of the story given "
    "the surrounding context. " + TAGS + "\n\nAnswer:",
    "causal": "Definition: Causal reasoning focuses on understanding cause-and-effect relationships. The model should "
    "infer the missing text by considering events or conditions that logically lead to the surrounding narrative.\n\n"
    "{P}\n\nThe blank area is missing at sentence(s) of {n} sentences. Use causal inference to determine the missing "
    "text. First, identify the causal relationships in the surrounding narrative and then generate a sentence that "
    "maintains this logic. " + TAGS + "\n\nAnswer:",
    "cot": "Definition: Chain-of-thought reasoning encourages the model to reason step by step before arriving at the "
    "final answer, improving logical consistency and contextual understanding.\n\n{P}\n\nThe blank area is missing at "
    "sentence(s) of {n} sentences. Fill in the blank by utilizing chain-of-thought reasoning. First, reason "
    "step-by-step about what likely happened in the story, then generate the missing text. "
    + TAGS
    + "\n\nAnswer:",
    "counterfactual": "Definition: Counterfactual reasoning considers alternative possibilities by asking what could "
    "have happened under different circumstances. The model should evaluate plausible alternatives and choose the text "
    "that best fits the narrative context.\n\n{P}\n\nThe blank area is missing at sentence(s) of {n} sentences. "
    + TAGS
    + " Use counterfactual thinking to fill in the blank. Consider possible alternative events consistent with "
    "the story and generate the most plausible missing part.\n\nAnswer:",
}


@pytest.fixture(scope="module")
def roc_row_csv(tmp_path_factory):
    """A ROC row with n=3 from the bundled demo set (written for this project: no ../shared needed)."""
    import narrative_infill.data

    demo = Path(narrative_infill.data.__file__).with_name("demo.jsonl").read_text(encoding="utf-8")
    rows = [{k: str(v) for k, v in json.loads(line).items()} for line in demo.splitlines()]
    row = next(r for r in rows if r["dataset"] == "roc" and r["n"] == "3")
    path = tmp_path_factory.mktemp("row") / "row.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    return path, row


def _sent_messages(task, **eval_args):
    sent = []

    def respond(messages, config):
        sent.append(messages)
        return "<ANSWER>x</ANSWER>"

    log = eval(task, model=mock_model(respond), display="none", **eval_args)[0]
    assert log.status == "success", log.error
    return sent


@pytest.mark.heavy
@pytest.mark.parametrize("name", TELER_LEVELS + PARADIGMS)
def test_rendered_prompt_on_a_row_is_the_papers(name, roc_row_csv):
    path, row = roc_row_csv
    [messages] = _sent_messages(infill_task(name, data=str(path)))
    expected = PAPER_EXPECTED[name].replace("{P}", row["problem"]).replace("{n}", row["n"])
    assert len(messages) == 1 and messages[0].role == "user"
    assert messages[0].text == f"{SYSTEM}\n\n{expected}"


@pytest.mark.heavy
def test_system_role_option_sends_a_system_message(roc_row_csv):
    path, row = roc_row_csv
    [messages] = _sent_messages(infill_task("l2", data=str(path), system_role=True))
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].text == SYSTEM
    assert messages[1].text.startswith(row["problem"] + "\n\nThe blank area is missing at sentence(s).")


@pytest.mark.heavy
def test_unit_option_overrides_the_slot(roc_row_csv):
    path, _ = roc_row_csv
    [messages] = _sent_messages(infill_task("l2", data=str(path), unit="the opening"))
    assert "The blank area is missing at the opening. Fill in the blank with 3 sentences." in messages[0].text


def _flat(text: str) -> str:
    """The web copy's flattening: bullets and line breaks gone, spaces before punctuation removed."""
    text = text.replace("•", " ").replace("\n* ", " ")
    text = re.sub(r"\s+([.,])", r"\1", text)
    return " ".join(text.split())


def _appendix_sections() -> dict[str, str]:
    text = APPENDIX_B.read_text(encoding="utf-8")
    table15 = text.split("## Table 15")[1].split("## Table 16")[0].split("\n\n", 1)[1]
    table16 = text.split("## Table 16")[1].split("\n\n", 1)[1]
    sections = {"system": table15.split("System Message")[1].split("Prompt Level 0")[0]}
    for level in range(5):
        after = table15.split(f"Prompt Level {level}")[1]
        sections[f"l{level}"] = after.split(f"Prompt Level {level + 1}")[0] if level < 4 else after
    headings = {
        "abductive": "Instruction with Abductive Reasoning Guidance",
        "causal": "Instruction with Causal Reasoning guidance",
        "cot": "Instruction with Chain-of-Thought Reasoning",
        "counterfactual": "Instruction with Counterfactual Thinking",
    }
    order = list(headings)
    for i, name in enumerate(order):
        after = table16.split(headings[name])[1]
        sections[name] = after.split(headings[order[i + 1]])[0] if i + 1 < len(order) else after
    return {name: _flat(body) for name, body in sections.items()}


@pytest.mark.shared
@pytest.mark.parametrize("name", TELER_LEVELS + PARADIGMS)
def test_paper_templates_match_appendix_b_word_for_word(name):
    template = prompt_template(name).user
    if name == "l1":  # the web copy dropped the braces of these two slots
        template = template.replace("{{n}} {{unit}}", "n unit")
    assert _flat(template) == _appendix_sections()[name]


@pytest.mark.shared
def test_paper_system_message_matches_appendix_b():
    assert _flat(prompt_template("l0").system) == _appendix_sections()["system"]


def _reference_parsed_strings() -> dict[str, dict[int, str]]:
    """The published code's prompt strings as REFERENCE.md prints them (Python reprs)."""
    text = REFERENCE_MD.read_text(encoding="utf-8")
    parsed: dict[str, dict[int, str]] = {}
    block = text.split("== fitb_system")[1].split("```")[0]
    current = "fitb_system"
    for line in ("== fitb_system" + block).splitlines():
        if line.startswith("== "):
            current = line[3:].strip()
            parsed[current] = {}
        elif re.match(r"^\d+ ", line):
            index, literal = line.split(" ", 1)
            parsed[current][int(index)] = ast.literal_eval(literal)
    paradigm_block = text.split("Parsed strings (4 templates")[1].split("```")[1]
    parsed["paradigms"] = {
        int(line.split(" ", 1)[0]): ast.literal_eval(line.split(" ", 1)[1])
        for line in paradigm_block.splitlines()
        if re.match(r"^\d+ ", line)
    }
    return parsed


@pytest.mark.shared
def test_code_variants_are_the_published_strings_exactly():
    reference = _reference_parsed_strings()
    assert prompt_template("l2", "code0").system == reference["fitb_system"][0]
    for level in TELER_LEVELS:
        code = sorted(v for v in variants(level) if v.startswith("code"))
        assert [prompt_template(level, v).user for v in code] == [
            reference[f"fitb_{level}"][i] for i in sorted(reference[f"fitb_{level}"])
        ]
    paradigm_ids = {"abductive": 0, "causal": 1, "counterfactual": 2, "cot": 3}
    for paradigm, index in paradigm_ids.items():
        assert prompt_template(paradigm, "code").user == reference["paradigms"][index]


@pytest.mark.shared
def test_code_variant_renders_like_the_authors_example():
    """REFERENCE.md's rendered example (a ROC row, n=3, paradigm 0), read from ../shared: the
    benchmark row's text stays there, not in this repo."""
    text = REFERENCE_MD.read_text(encoding="utf-8")
    pattern = r'^Rendered example \(ROC row `ref_id=\d+`, n=3, paradigm 0\):\n`("[^`]+")`'
    [example] = re.findall(pattern, text, re.M)
    expected = ast.literal_eval(example)
    problem = expected.split("\n\n", 1)[0]
    slots = {"problem": problem, "n": 3, "unit": "sentence(s)"}
    rendered = prompt_template("abductive", "code").render(slots)
    assert BLANK in problem and rendered == expected


def test_unknown_slots_stay_and_unknown_variants_fail():
    assert fill_slots("{{problem}} {{ other }}", {"problem": "P"}) == "P {{ other }}"
    with pytest.raises(OptionError, match="no prompt variant 'code7'.*paper, code0"):
        prompt_template("l2", "code7")
    with pytest.raises(OptionError, match="unknown task"):
        prompt_template("l9")
