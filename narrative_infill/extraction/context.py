"""Recover an infill from a response that restates the story around it.

Models often answer with the whole narrative, the blank filled in, sometimes with the
context slightly edited (a pronoun for a name, a comma for a full stop, a word inserted).
We align the response's words with the problem's left and right context, mark what is a
restatement of the context, and keep the new text the model put in the gap.

Written here because no kept library recovers a span from a paraphrased restatement;
difflib (stdlib) does the word alignment.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass
from difflib import SequenceMatcher

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+")
_BLANK = re.compile(r"_{3,}")
_BOUNDARY = re.compile(r"[.!?;]|\n")
_CLOSING_PUNCTUATION = re.compile(r"[^\w\s]*")
#: The end of a sentence: its run of terminators (and closing quotes or brackets) before a space
#: or the end. A match starts only at the first terminator of a run (the lookbehind): without
#: it, a run of N dots not followed by a space was re-scanned from each of its N positions,
#: quadratic in N. A run that fails from its first terminator fails from every later one, so
#: the matches are the same. (No atomic groups: they need Python 3.11.)
SENTENCE_END = re.compile(r"(?<![.!?])[.!?]+[\"'”’)\]]*(?=\s|$)")

#: A context sentence counts as restated when the response repeats at least this share of
#: its words, in order, in runs of two or more words.
MIN_SENTENCE_COVERAGE = 0.75
#: A short run glued to the context on both sides (", but", ", which led to him being")
#: merges two context sentences instead of filling the blank.
MAX_MERGE_WORDS = 6
#: A connective that leads into a restated context sentence ("As a result, the oven was cold")
#: after new text is dropped; a longer clause ("His work paid off, and he was signed") is kept.
MAX_LEAD_IN_WORDS = 3
#: New words glued to the end of the sentence after the blank that make it the model's
#: infill; a word or two ("... more cereal.", "... in 1985.") is an edit of the context.
MIN_EXTENSION_WORDS = 3


@dataclass(frozen=True)
class _Words:
    norm: list[str]
    spans: list[tuple[int, int]]
    sentence: list[int]  # index of the sentence each word is in


def _words(text: str) -> _Words:
    norm, spans, sentence = [], [], []
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    current = 0
    for match in _WORD.finditer(text):
        while current < len(ends) and ends[current] <= match.start():
            current += 1
        norm.append(match.group().lower().replace("’", "'"))
        spans.append(match.span())
        sentence.append(current)
    return _Words(norm, spans, sentence)


def split_problem(problem: str) -> tuple[str, str] | None:
    """The problem's text left and right of its (first) blank; None when it has no blank."""
    match = _BLANK.search(problem)
    if not match:
        return None
    return problem[: match.start()], problem[match.end() :]


def _restated_positions(
    text: _Words, context: _Words, from_end: bool
) -> tuple[dict[int, int], int | None, bool]:
    """Response word positions that restate whole context sentences (mapped to the context
    sentence each restates), the context index where the first restated run starts, and
    whether the context's last sentence is restated.

    ``from_end`` aligns against the last repetition of the context (the right context is
    restated after the infill, so its last copy is the one that closes the story).
    """
    if not context.norm or not text.norm:
        return {}, None, False
    size = len(text.norm)
    a = text.norm[::-1] if from_end else text.norm
    b = context.norm[::-1] if from_end else context.norm
    blocks = []
    for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        if block.size >= 2 or (block.size == 1 and len(b) == 1):
            for offset in range(block.size):
                i, j = block.a + offset, block.b + offset
                if from_end:
                    i, j = size - 1 - i, len(b) - 1 - j
                blocks.append((i, j))
    matched_per_sentence: dict[int, int] = {}
    for _, j in blocks:
        matched_per_sentence[context.sentence[j]] = matched_per_sentence.get(context.sentence[j], 0) + 1
    sentence_sizes: dict[int, int] = {}
    for sentence in context.sentence:
        sentence_sizes[sentence] = sentence_sizes.get(sentence, 0) + 1
    positions_per_sentence: dict[int, list[int]] = {}
    for i, j in blocks:
        positions_per_sentence.setdefault(context.sentence[j], []).append(i)
    restated = {
        s
        for s, count in matched_per_sentence.items()
        if count >= MIN_SENTENCE_COVERAGE * sentence_sizes[s]
        # its words must be repeated together, not picked from all over the response
        and max(positions_per_sentence[s]) - min(positions_per_sentence[s]) < 1.5 * sentence_sizes[s] + 3
    }
    pairs = sorted((i, j) for i, j in blocks if context.sentence[j] in restated)
    return (
        {i: context.sentence[j] for i, j in pairs},
        (pairs[0][1] if pairs else None),
        context.sentence[-1] in restated,
    )


def _absorb_paraphrased_start(
    text: _Words, covered: dict[int, int], right: list[str], first_index: int | None
) -> None:
    """The right context's first words, reworded ("He hurried" for "Mira hurried"), belong to it."""
    if not covered or not first_index or first_index > 2:
        return
    start = min(covered)
    for position in range(max(0, start - first_index - 1), start):
        if text.norm[position] in right[:first_index]:
            covered.update(dict.fromkeys(range(position, start), 0))
            return
    if first_index == 1 and start > 0:
        covered[start - 1] = 0


@dataclass(frozen=True)
class Restatement:
    """The new text of a restated response, or why there is none."""

    text: str
    restated: bool
    #: The only new text extends the sentence right after the blank ("I was sitting on the
    #: couch beside him, sipping a drink."): the model wrote its infill into that sentence.
    extends_next_sentence: bool = False


def _glued(text: str, start: int, end: int) -> bool:
    """Whether the characters between two words hold no sentence boundary."""
    return not _BOUNDARY.search(text[start:end])


def _drop_glued_start(text: str, start: int, end: int) -> int:
    """Skip the fragment that continues a context sentence (", in 1985.") at a run's start."""
    boundary = _BOUNDARY.search(text, start, end)
    return boundary.end() if boundary else end


def _drop_glued_end(text: str, start: int, end: int) -> int:
    """Cut the fragment that leads into a context sentence ("Since Mira loved...") at a run's end."""
    ends = [boundary.end() for boundary in _BOUNDARY.finditer(text, start, end)]
    return ends[-1] if ends else start


def _sentence_start(text: str, position: int) -> int:
    """Where the sentence holding ``position`` starts."""
    return _drop_glued_end(text, 0, position)


def _uncovered_runs(length: int, covered) -> list[tuple[int, int]]:
    """The runs of word positions below ``length`` that no restated context covers, as (first, last)."""
    runs: list[tuple[int, int]] = []
    for position in range(length):
        if position in covered:
            continue
        if runs and runs[-1][1] == position - 1:
            runs[-1] = (runs[-1][0], position)
        else:
            runs.append((position, position))
    return runs


def _end_before_lead_in(response: str, start: int, end: int, opens_response: bool) -> int:
    """Where a run glued to a restated right-context sentence ends once its lead-in into that
    sentence is dropped: the whole glued sentence part where the run opens the response, else
    only a lead-in of at most ``MAX_LEAD_IN_WORDS`` words."""
    lead_in_start = _drop_glued_end(response, start, end)
    if opens_response or (
        start < lead_in_start and len(_WORD.findall(response, lead_in_start, end)) <= MAX_LEAD_IN_WORDS
    ):
        return lead_in_start
    return end


def recover_infill(response: str, problem: str) -> Restatement:
    """Keep the response text that is not a restatement of the problem's context.

    Returns ``restated=False`` (and the response unchanged) when the response restates no
    context sentence.
    """
    sides = split_problem(problem)
    if sides is None:
        return Restatement(response, False)
    words = _words(response)
    left_covered, _, _ = _restated_positions(words, _words(sides[0]), from_end=False)
    right_context = _words(sides[1])
    right_covered, first_right, story_end_restated = _restated_positions(words, right_context, from_end=True)
    _absorb_paraphrased_start(words, right_covered, right_context.norm, first_right)
    covered = left_covered.keys() | right_covered.keys()
    if not covered:
        return Restatement(response, False)

    kept: list[str] = []
    extension = None  # a kept run that extends the sentence after the blank, from that sentence's start
    for first, last in _uncovered_runs(len(words.norm), covered):
        start, end = words.spans[first][0], words.spans[last][1]
        after = words.spans[last + 1][0] if last + 1 < len(words.norm) else len(response)
        # Take the punctuation that closes the run's last word (".", "!", ",").
        closing = _CLOSING_PUNCTUATION.match(response, end, after)  # always matches, maybe empty
        end = closing.end() if closing else end
        before_side = _side(first - 1, left_covered, right_covered)
        after_side = _side(last + 1, left_covered, right_covered)
        glued_left = before_side is not None and _glued(
            response, words.spans[first - 1][1], words.spans[first][0]
        )
        glued_right = after_side is not None and _glued(response, words.spans[last][1], after)
        if glued_left and glued_right:
            same_context = before_side == after_side
            if same_context or last - first + 1 <= MAX_MERGE_WORDS:
                continue  # an edit inside a context sentence, or a merge of two of them
        if glued_left and before_side == "right" and not glued_right:
            # Text glued to the end of a restated right-context sentence. Text glued to the left
            # context already stands where the blank is, so it needs no such care.
            fragment_end = _drop_glued_start(response, start, end)
            if (
                fragment_end >= end
                and right_covered[first - 1] == 0
                and right_covered.get(last + 1) != 0
                and last - first + 1 >= MIN_EXTENSION_WORDS
                and not (after_side is None and left_covered)
            ):
                extension = (len(kept), response[_sentence_start(response, start) : end].strip())
            elif after_side is None:
                start = fragment_end  # the restated story's ending, extended: an edit
        if glued_right and left_covered:
            end = _end_before_lead_in(response, start, end, opens_response=before_side is None)
        piece = response[start:end].strip()
        if re.search(r"\w", piece):
            kept.append(piece)
    new_text = " ".join(kept)
    if extension and extension[0] == 0 and len(kept) <= 1:
        return Restatement(extension[1], True, extends_next_sentence=True)
    if not left_covered and new_text:
        # Without the story's beginning restated, the annotators kept a repeated right-context
        # sentence as part of the infill, except where it closes the response.
        return _context_edges_only(response, words, right_covered, story_end_restated)
    return Restatement(new_text, True)


def _context_edges_only(
    response: str, words: _Words, right_covered: dict[int, int], story_end_restated: bool
) -> Restatement:
    """Drop right-context sentences that open the response, and a restatement of the story's
    ending glued to the new text ("As a result, the oven was cold after that [at last].")."""
    start, end = 0, len(response)
    last = len(words.norm) - 1
    closing = last
    while (
        closing > 0
        and last - closing < MAX_MERGE_WORDS
        and closing not in right_covered
        and _glued(response, words.spans[closing - 1][1], words.spans[closing][0])
    ):
        closing -= 1  # a short fragment glued to the restated ending ("... at my reaction.") belongs to it
    if story_end_restated and closing > 0 and closing in right_covered:
        first = closing
        while first - 1 in right_covered:
            first -= 1
        if first > 0 and _glued(response, words.spans[first - 1][1], words.spans[first][0]):
            end = words.spans[first][0]
    if 0 in right_covered:
        stop = 0
        while stop + 1 in right_covered:
            stop += 1
        if stop < last and not _glued(response, words.spans[stop][1], words.spans[stop + 1][0]):
            start = words.spans[stop + 1][0]
    if (start, end) == (0, len(response)):
        return Restatement(response, False)
    return Restatement(response[start:end].strip(), True)


def _side(position: int, left: Container[int], right: Container[int]) -> str | None:
    if position in left:
        return "left"
    if position in right:
        return "right"
    return None
