"""Answer extraction: from a raw model response to the infill text that gets scored.

The rules follow what the paper's annotators did (Appendix A.1, Table 9), in this order:

1. drop a reasoning trace up to its last ``</think>``; an unclosed trace, a runaway output
   cut off mid-sentence, a loop or a refusal holds no answer;
2. take the content of ``<ANSWER>`` tags (several pairs, one side only, misspelled or any case);
3. else the text after an answer label (``Answer:``, ``The missing sentence is:``), the last
   one when there are several, or the first content block after a preamble, and the first
   item of a list of options;
4. inside that, the ``**bold**`` or quoted text when the rest restates the story;
5. remove what restates the problem's context (``context.recover_infill``);
6. strip markdown, HTML tags, wrapping quotes and leftover blanks.

No rule depends on particular texts, problems or models. Every rule is linear in its input,
shown on hostile shapes at 16, 64 and 256 KB by tests/core/test_linear_time.py: no nested
quantifiers, no two runs of the same characters around an optional part, no pattern retried
from every position of a run it cannot match. Past a reasoning trace at most ``MAX_TEXT_CHARS``
characters are read (docs/extraction-limits.md).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from enum import Enum

from .context import recover_infill
from .examples import drop_prompt_examples
from .marks import BOLD, LIST_MARKER, clean, leading_quote, marked_span, new_part_of_marked
from .repair import bold_is_emphasis, complete_cut_sentence, is_dangling

# "ANSWER" (or "Final answer:") alone on its line, the answer on the lines below.
_LONE_LABEL = re.compile(
    r"^[ \t>#*_\-]{0,8}(?:the |final |correct )?answers?[ \t*_]{0,4}:?[ \t*_]*$", re.IGNORECASE | re.MULTILINE
)


class ExtractionStatus(str, Enum):
    """The rule that decided the extraction."""

    TAGGED = "tagged"
    PREFIXED = "prefixed"
    LIST_ITEM = "list_item"
    LINE = "line"
    BOLD = "bold"
    QUOTED = "quoted"
    RESTATED_PROBLEM = "restated_problem"
    AFTER_THINK = "after_think"
    WHOLE_RESPONSE = "whole_response"
    NO_ANSWER = "no_answer"


@dataclass(frozen=True)
class Extraction:
    text: str
    status: ExtractionStatus
    steps: tuple[str, ...] = field(default_factory=tuple)
    #: characters of the response past ``MAX_TEXT_CHARS`` (after a reasoning trace) left unread
    truncated_chars: int = 0
    #: characters of the response replaced to make it valid Unicode (lone surrogates), where it was read
    replaced_chars: int = 0


#: The most characters of one model text that extraction reads (after a reasoning trace is
#: dropped) and that the metrics score. One answer's cost is bounded by it: every rule is
#: linear in its input (tests/core/test_linear_time.py), and no real output comes near it: of the
#: 9,800 real responses in ../shared/data/extraction the longest is 21,453 characters, the
#: longest answer extracted from them 1,518 (the published rule: the whole response, 21,453);
#: gold spans are 1-3 sentences, at most 191 characters. See docs/extraction-limits.md.
MAX_TEXT_CHARS = 32_768


#: Without a closing ``</think>``, output this long that stops mid-sentence is a reasoning
#: trace cut off by the token limit, not an infill.
RUNAWAY_WORDS = 800
#: A sentence of at least LOOP_MIN_WORDS words repeated this often is a decoding loop.
LOOP_REPEATS = 4
LOOP_MIN_WORDS = 4

_THINK_OPEN = re.compile(r"<\s*think\s*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"<\s*/\s*think\s*>", re.IGNORECASE)
# A tag whose name is "answer" give or take two letters (<ANSWR>, <ANNWER>, < /answer >).
# The spaces after the slash belong to the optional part: with "<\s*(/?)\s*" two runs of
# spaces met around an empty slash, and "<" followed by N spaces split them N ways.
_TAG = re.compile(r"<\s*(?:(/)\s*)?([A-Za-z]{4,8})\s*>")
# "Answer:", "**The missing sentences are:**", "The answer is:" at the start of a line.
# Bounded quantifiers keep this linear on runs of "*" or spaces: at most 9 x 80 x 5 tries per
# line start. (No possessive quantifiers: they need Python 3.11.)
_LABEL_LINE = re.compile(
    r"^[ \t>#*_\-]{0,8}(?P<label>[^\n:*]{1,80})[*_ \t]{0,4}:[*_ \t]*(?P<rest>[^\n]*)$", re.MULTILINE
)
# "The missing sentences are: ...", "Completed text: ..." with the answer on the same line.
_ANSWER_LABEL = re.compile(
    r"^\W*(?:the |your |my |a )?(?:missing|correct|completed?|final|filled[- ]in)\s+"
    r"(?:text|sentences?|words?|phrase|part|answer|infill|content|span)\b",
    re.IGNORECASE,
)
_PREAMBLE_WORDS = re.compile(
    r"\b(?:here|answer|missing|blank|complet\w*|fill\w*|infill|sentences?|text|story|narrative|words?|"
    r"phrase|options?|possib\w*|versions?|read|be|is|are|suggest\w*|try)\b",
    re.IGNORECASE,
)
# "The missing sentence is "X"" written as running text, without a colon.
_IS_QUOTED = re.compile(
    r"\b(?:answer|word|words|text|sentence|sentences|phrase|blank)\s+"
    r"(?:is|are|reads?|(?:would|should|could|can|will) be(?: filled(?: in)? with)?|(?:is )?filled(?: in)? "
    r"with)\s+"
    r"[\"“]([^\"”\n]{1,2000})[\"”]",
    re.IGNORECASE,
)
_BLOCK_SPLIT = re.compile(r"\n[ \t]*\n")
_RULE_LINE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,})\s*$")
_REFUSAL = re.compile(
    r"^\W*(?:i(?:'m| am)? (?:sorry|unable|not able)|i can(?:'t|not| not)|as an ai)\b[^.\n]{0,120}"
    r"\b(?:help|assist|provide|fulfil+|complete|answer|fill|do that|comply)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_TERMINAL = re.compile(r"[.!?\"'”)\]*>]\s*$")


def _is_answer_tag(name: str) -> bool:
    """Tag names within two edits of "answer" (ANSWR, ANNWER, ANWSER)."""
    name = name.lower()
    return name == "answer" or SequenceMatcher(None, name, "answer").ratio() >= 0.8


def _from_tags(text: str, problem: str) -> tuple[str, str] | None:
    """Content of answer tags: from the first opening to the last closing tag, tags removed.

    A lone closing tag keeps what precedes it, a lone opening tag what follows it. Of several
    tagged pieces, one that only restates the story ("<ANSWER>[the next sentence]</ANSWER>")
    is dropped.
    """
    tags = [m for m in _TAG.finditer(text) if _is_answer_tag(m.group(2))]
    if not tags:
        return None
    opens = [m for m in tags if not m.group(1)]
    closes = [m for m in tags if m.group(1)]
    if opens and closes and closes[-1].start() > opens[0].end():
        inner = text[opens[0].end() : closes[-1].start()]
        step = "answer_tags" if len(tags) == 2 else "answer_tags_joined"
    elif opens:
        inner, step = text[opens[0].end() :], "answer_tag_open_only"
    else:
        inner, step = text[: closes[0].start()], "answer_tag_close_only"
    pieces = [p.strip() for p in _TAG.split(inner)[::3] if p.strip()] if len(tags) > 2 else []
    if len(pieces) > 1:
        recovered = [recover_infill(piece, problem) for piece in pieces]
        new = [
            piece
            for piece, r in zip(pieces, recovered)
            if not r.restated or (r.text and not r.extends_next_sentence)
        ]
        if new and len(new) < len(pieces):
            return " ".join(new), step + ",drop_restated_piece"
    inner = _TAG.sub(lambda m: " " if _is_answer_tag(m.group(2)) else m.group(), inner)
    return inner.strip(), step


def _label_kind(label: str) -> str | None:
    """'answer' for an answer label, 'preamble' for a lead-in, None for other colons."""
    label = BOLD.sub(lambda m: m.group(1) or m.group(2), label).strip(" *_\"'")
    words = label.split()
    if not words or len(words) > 25:
        return None
    if re.fullmatch(r"(?:final |correct |the )*answers?", label, re.IGNORECASE) or re.search(
        r"\banswer\b", label, re.IGNORECASE
    ):
        return "answer"
    if _PREAMBLE_WORDS.search(label):
        return "preamble"
    return None


def _after_answer_label(text: str) -> tuple[str, str] | None:
    """Text after the last ``Answer:`` line (same line, else the next block)."""
    found = None
    for match in _LABEL_LINE.finditer(text):
        if _label_kind(match.group("label")) == "answer" or (
            _ANSWER_LABEL.search(match.group("label")) and match.group("rest").strip("*_ \t")
        ):
            found = match
    if found is None:
        lone = list(_LONE_LABEL.finditer(text))
        rest = text[lone[-1].end() :].strip() if lone else ""
        return (rest, "after_answer_label_line") if rest else None
    rest = found.group("rest").strip()
    if not rest.strip("*_ \t"):
        rest = text[found.end() :].strip()
    return rest, "after_answer_label"


def _is_preamble(block: str) -> bool:
    """A lead-in ending in a colon ("Here are three options:", "**Option 1 (Simple):**")."""
    line = block.strip()
    if "\n" in line:
        return False
    if re.fullmatch(r"(\*\*|__)[^\n]{1,120}:\s*\1", line):
        return True  # a bold heading
    line = line.rstrip("*_ \t")
    if not line.endswith(":"):
        return False
    lead_in = re.split(r"(?<=[.!?])\s+", line[:-1])[-1]
    return _label_kind(lead_in) is not None


def _first_content_block(text: str) -> tuple[str, list[str]]:
    """Skip preambles and rules; of a list, keep the first item."""
    steps: list[str] = []
    blocks = [b for b in _BLOCK_SPLIT.split(text) if b.strip() and not _RULE_LINE.match(b)]
    if not blocks:
        return "", steps
    index = 0
    while index < len(blocks) - 1 and _is_preamble(blocks[index]):
        index += 1
        steps.append("skip_preamble")
    block = blocks[index]
    lines = [line for line in block.splitlines() if line.strip() and not _RULE_LINE.match(line)]
    if lines and _is_preamble(lines[0]) and len(lines) > 1:
        lines, steps = lines[1:], steps + ["skip_preamble"]
    if lines and LIST_MARKER.match(lines[0]):
        steps.append("first_list_item")
        return LIST_MARKER.sub("", lines[0], count=1).strip(), steps
    if len(blocks) > 1:
        steps.append("first_block")
    return "\n".join(lines).strip(), steps


def _is_loop(text: str) -> bool:
    counts = Counter(
        " ".join(s.lower().split()) for s in _SENTENCE.findall(text) if len(s.split()) >= LOOP_MIN_WORDS
    )
    return bool(counts) and counts.most_common(1)[0][1] >= LOOP_REPEATS


class _NoAnswer(Exception):
    """A stage found that the response holds no answer; ``steps`` say why."""

    def __init__(self, *steps: str):
        super().__init__(steps[-1])
        self.steps = steps


@dataclass
class _Draft:
    """The extraction in progress, handed from stage to stage: the text left, the rule that
    decides its status so far, the steps taken, and what later stages must know."""

    text: str
    status: ExtractionStatus = ExtractionStatus.WHOLE_RESPONSE
    steps: list[str] = field(default_factory=list)
    #: a ``</think>`` closed a reasoning trace, which was dropped
    after_think: bool = False
    #: the answer came from ``<ANSWER>`` tags: no later rule may look for another inside it
    tagged: bool = False
    #: the most characters the rules read after a reasoning trace; the rest is counted, not read
    max_chars: int | None = MAX_TEXT_CHARS
    truncated_chars: int = 0


def _drop_trace(draft: _Draft, problem: str) -> None:
    """Stage 1: drop a reasoning trace and echoed prompt examples; an unclosed trace, an empty
    response, a loop or a runaway output cut off mid-sentence holds no answer."""
    closes = list(_THINK_CLOSE.finditer(draft.text))
    if closes:
        draft.text, draft.after_think = draft.text[closes[-1].end() :], True
        draft.status = ExtractionStatus.AFTER_THINK
        draft.steps.append("drop_think_trace")
    elif _THINK_OPEN.search(draft.text):
        raise _NoAnswer("unclosed_think_trace")
    if draft.max_chars is not None and len(draft.text) > draft.max_chars:
        draft.truncated_chars = len(draft.text) - draft.max_chars
        draft.text = draft.text[: draft.max_chars]
        draft.steps.append("response_truncated")
    draft.text, echoed = drop_prompt_examples(draft.text)
    if echoed:
        draft.steps.append("drop_prompt_examples")
    if not draft.text.strip():
        raise _NoAnswer("empty_response")
    if _is_loop(draft.text) and not draft.after_think:
        raise _NoAnswer("repetition_loop")


def _locate_answer(draft: _Draft, problem: str) -> None:
    """Stage 2: the content of answer tags, else the text after an answer label. A long output
    cut off mid-sentence holds no answer, unless it tagged or labelled one."""
    runaway = (
        not draft.after_think
        and len(draft.text.split()) >= RUNAWAY_WORDS
        and not _TERMINAL.search(draft.text)
    )
    tagged = _from_tags(draft.text, problem)
    labelled = None if tagged else _after_answer_label(draft.text)
    if tagged:
        draft.text, step = tagged
        draft.status, draft.tagged = ExtractionStatus.TAGGED, True
        draft.steps.extend(step.split(","))
    elif labelled:
        draft.text, step = labelled
        draft.status = ExtractionStatus.PREFIXED
        draft.steps.append(step)
    elif runaway:
        raise _NoAnswer("runaway_output")


def _first_block(draft: _Draft, problem: str) -> None:
    """Stage 3: the first content block after a preamble, the first item of a list of options."""
    draft.text, block_steps = _first_content_block(draft.text)
    if block_steps:
        draft.steps.extend(block_steps)
        if "first_list_item" in block_steps:
            draft.status = ExtractionStatus.LIST_ITEM
        elif draft.status in (ExtractionStatus.AFTER_THINK, ExtractionStatus.WHOLE_RESPONSE):
            draft.status = ExtractionStatus.LINE


def _marked_answer(draft: _Draft, problem: str) -> None:
    """Stage 4: the quoted or bold answer inside text that otherwise restates the story."""
    is_quoted = None if draft.tagged else _IS_QUOTED.search(draft.text)
    if is_quoted:
        draft.text, draft.status = is_quoted.group(1), ExtractionStatus.QUOTED
        draft.steps.append("quoted_after_is")
    elif (marked := marked_span(draft.text)) is not None and not bold_is_emphasis(draft.text, problem):
        new_part = new_part_of_marked(draft.text, marked[0], problem)
        if new_part is None:
            raise _NoAnswer(marked[1], "marked_text_restates_context")
        draft.text, draft.status = new_part, ExtractionStatus.BOLD
        draft.steps.append(marked[1])
    elif (quoted := leading_quote(draft.text)) is not None:
        draft.text, draft.status = quoted, ExtractionStatus.QUOTED
        draft.steps.append("leading_quote")


def _remove_restated(draft: _Draft, problem: str) -> None:
    """Stage 5: clean the text and remove what restates the problem's context."""
    draft.text = clean(draft.text)
    restatement = recover_infill(draft.text, problem)
    if restatement.restated and restatement.text != draft.text:
        draft.steps.append("remove_restated_context")
        draft.status = ExtractionStatus.RESTATED_PROBLEM
        original, draft.text = draft.text, clean(restatement.text)
        if not restatement.extends_next_sentence and is_dangling(draft.text, original):
            completed = complete_cut_sentence(draft.text, original)
            if completed:
                draft.text = clean(completed)
                draft.steps.append("complete_cut_sentence")
        if not draft.text:
            raise _NoAnswer("restated_context_only")


def _check_left(draft: _Draft, problem: str) -> None:
    """Stage 6: what is left must be an answer: not empty, not a refusal, not a loop."""
    if not draft.text:
        raise _NoAnswer("nothing_left")
    if _REFUSAL.search(draft.text):
        raise _NoAnswer("refusal")
    if _is_loop(draft.text):
        raise _NoAnswer("repetition_loop")


_STAGES = (_drop_trace, _locate_answer, _first_block, _marked_answer, _remove_restated, _check_left)


def extract_answer(response: str, problem: str, max_chars: int | None = MAX_TEXT_CHARS) -> Extraction:
    """Extract the infill from ``response`` to the blank in ``problem``: the stages in order
    (module docstring), each handing the draft on or deciding that there is no answer.

    Past a reasoning trace only the first ``max_chars`` characters are read (None: all, for
    the linear-time tests); how many were not is ``truncated_chars``, with the step
    ``response_truncated``."""
    draft = _Draft(response or "", max_chars=max_chars)
    try:
        for stage in _STAGES:
            stage(draft, problem)
    except _NoAnswer as stop:
        steps = tuple(draft.steps) + stop.steps
        return Extraction("", ExtractionStatus.NO_ANSWER, steps, draft.truncated_chars)
    text = " ".join(draft.text.split())
    return Extraction(text, draft.status, tuple(draft.steps), draft.truncated_chars)
