"""The prompt's own text, which models echo: its few-shot examples and its instructions.

The level-4 prompts (every variant) show "The quick brown ______ jumped over the lazy dog"
with the answers "fox" and "brown fox"; every prompt has instruction lines ("The blank area is
missing 2 sentence(s)."). Lines that restate an example problem or an instruction, and
answers equal to an example answer, are removed before the answer is looked for.
"""

from __future__ import annotations

import re
from functools import cache

from ..paper_protocol import PARADIGMS, TELER_LEVELS
from ..prompts import prompt_template, variants

_EXAMPLE = re.compile(r"problem: \"([^\"]+)\"\s*\nAnswer: (?:<ANSWER>|\")([^<\"]+)(?:</ANSWER>|\")")


def _words(text: str) -> list[str]:
    # A slot ({{problem}}) holds no brace and starts at the first brace of a run: a run of N braces,
    # or "{{a" repeated N times, without a closing pair was otherwise scanned from each of its N
    # starts to the end of the text (quadratic: "{{a" * 21,000 took 2.2 s).
    return re.findall(r"[a-z]+", re.sub(r"(?<!\{)\{\{[^{}]*\}\}", " ", text.lower()))


@cache
def instruction_lines() -> dict[tuple[str, ...], int]:
    """First four words -> word count of every instruction line of every prompt template."""
    lines: dict[tuple[str, ...], int] = {}
    for level in (*TELER_LEVELS, *PARADIGMS):
        for variant in variants(level):
            template = prompt_template(level, variant)
            for line in (template.user + "\n" + template.system).split("\n"):
                words = _words(line)
                if (
                    "{{problem}}" not in line
                    and "Example" not in line
                    and len(words) >= 4
                    and words[0] != "answer"
                ):
                    lines[tuple(words[:4])] = max(lines.get(tuple(words[:4]), 0), len(words))
    return lines


def _echoes_instruction(line: str) -> bool:
    """The whole line is a prompt instruction, its slots filled ("The blank area is missing 2
    sentence(s)."): the same opening words, at most three words longer."""
    words = _words(re.sub(r"^\W*(?:[-*•]|\d+[.)])?\s*", "", line))
    length = instruction_lines().get(tuple(words[:4]))
    return length is not None and len(words) <= length + 3


@cache
def prompt_examples() -> tuple[tuple[re.Pattern, ...], frozenset[str]]:
    """(patterns matching an example problem, its blank as written, filled or dropped; example answers)."""
    problems, answers = set(), set()
    for level in TELER_LEVELS:
        for variant in variants(level):
            for problem, answer in _EXAMPLE.findall(prompt_template(level, variant).user):
                problems.add(problem)
                answers.add(answer.strip().lower())
    patterns = {}
    for problem in sorted(problems):
        before, _, after = re.split(r"(_{3,})", problem, maxsplit=1)
        # The blank as written, or filled with up to three words. The spaces before the blank
        # belong to the optional part: two runs of spaces around an empty option split a run of
        # N spaces N ways ("The quick brown" and N spaces took seconds at 20 KB).
        source = (
            re.escape(before.strip())
            + r"(?:\s*(?:_{3,}|[\w'-]+(?:\s+[\w'-]+){0,2}))?\s*"
            + re.escape(after.strip())
        )
        patterns[source] = re.compile(source, re.IGNORECASE)
    return tuple(patterns.values()), frozenset(answers)


def is_example_answer(text: str) -> bool:
    return text.strip(" \t\n\"'“”.*").lower() in prompt_examples()[1]


def drop_prompt_examples(text: str) -> tuple[str, bool]:
    """``text`` without the lines that restate an example problem (and the example answer line
    that follows one) or hold only an example answer; whether anything was dropped."""
    patterns, _ = prompt_examples()
    kept, dropped, skip_answer = [], False, False
    for line in text.split("\n"):
        if not line.strip():  # nothing to drop, and it does not end an example (a flood of newlines)
            kept.append(line)
            continue
        plain = re.sub(r"[*_\"“”]+", "", line)
        if _echoes_instruction(plain):
            dropped = True
            continue
        line_for_examples = plain
        bare = re.sub(
            r"^\W*answer\s*:?",
            "",
            re.sub(r"</?\s*answer\s*>", " ", line, flags=re.IGNORECASE).strip(),
            flags=re.IGNORECASE,
        ).strip()
        if any(p.search(line_for_examples) for p in patterns):
            dropped, skip_answer = True, True
            continue
        if bare and is_example_answer(bare) and (skip_answer or re.search(r"answer", line, re.IGNORECASE)):
            dropped = True
            continue
        skip_answer = False
        kept.append(line)
    return ("\n".join(kept) if dropped else text), dropped
