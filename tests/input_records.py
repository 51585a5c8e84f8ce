"""Well-formed inputs that tests edit into damaged, hostile or forged ones: a benchmark record, a
generation row, and two models' generations of the baseline-import tests."""

from __future__ import annotations

BENCHMARK_RECORD = {
    "dataset": "roc",
    "ref_id": 7,
    "source_text": "Ann woke up. <eos> She ran to the bus. <eos> It was late. <eos> She waited. <eos> It came.",
    "problem": "Ann woke up. ______ It was late. She waited. It came.",
    "gold_answer": "She ran to the bus.",
    "unit": "sentence(s)",
    "n": 1,
    "unit_idx": 1,
}

GENERATION_ROW = {
    "model": "m1",
    "template_name": "fitb_l2",
    "problem": "Ann woke up. ______ It was late.",
    "gold_answer": "She ran to the bus.",
    "response": "<ANSWER>She ran.</ANSWER>",
}

STORY = "Ann found a lost dog. ______ She put up posters around town. The owner called her that evening."

OTHER = "Ben wanted a bike. He saved his money. ______ He rode it to school every day."

TAGGED = "\n\nFill in the blank with 1 sentence(s) in the format '<ANSWER> your answer </ANSWER>.\n"


def row(model, template, problem, gold, response, **extra):
    prompt = problem + (TAGGED if template != "fitb_l0" else "\n\nFill in the blank.")
    return {"model": model, "template_name": template, "template_id": 0, "problem": problem,
            "gold_answer": gold, "prompt_text": prompt, "response": response, **extra}  # fmt: skip


def rows():
    """Two models answering the same two L2 instances, and one L0 instance."""
    gold_a, gold_b = "She took it home and fed it.", "He bought one at the shop."
    return [
        row("m/good", "fitb_l2", STORY, gold_a, f"<ANSWER>{gold_a}</ANSWER>"),
        row("m/good", "fitb_l2", OTHER, gold_b, "<ANSWER>He bought a red bike at the shop.</ANSWER>"),
        row("m/weak", "fitb_l2", STORY, gold_a, "<ANSWER>Nothing.</ANSWER>"),
        row("m/weak", "fitb_l2", OTHER, gold_b, "<ANSWER>Nothing.</ANSWER>"),
        row("m/good", "fitb_l0", STORY, gold_a, gold_a),
    ]
