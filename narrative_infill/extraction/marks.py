"""Marks around an answer: bold, italic and quoted spans, wrapping quotes, markdown and HTML.

A model often marks its infill inside a line that restates the story ("... **He missed the
bus.** ..."); these helpers find the marked span, keep its new part, and clean the text.
"""

from __future__ import annotations

import re

from .context import recover_infill

HTML_TAG = re.compile(r"</?\s*(?:b|i|u|em|strong|br|span|p|mark|s)\s*/?>", re.IGNORECASE)
LEADING_ANSWER_WORD = re.compile(r"^\W{0,3}answer\b[^\w\"'“]*", re.IGNORECASE)
LIST_MARKER = re.compile(r"^[ \t]*(?:[-*•+]|\d{1,2}[.)]|\(?[a-zA-Z][.)])[ \t]+")
BOLD = re.compile(r"\*\*([^*\n]+?)\*\*|__([^_\n]+?)__")
ITALIC = re.compile(r"(?<![*\w])\*([^*\n]+?)\*(?![*\w])")
QUOTE_PAIRS = {'"': '"', "“": "”", "'": "'", "‘": "’", "«": "»", "<": ">"}


def marked_span(text: str) -> tuple[str, str] | None:
    """Bold (or italic) text set off in a longer line: the model marking its infill."""
    for pattern, step in ((BOLD, "bold_span"), (ITALIC, "italic_span")):
        spans = [
            m for m in pattern.finditer(text) if not (m.group(1) or m.group(2) or "").rstrip().endswith(":")
        ]
        if not spans:
            continue
        # Join bold runs separated only by spaces or punctuation ("**a**, **b**").
        start, end = spans[0].start(), spans[0].end()
        for span in spans[1:]:
            if re.fullmatch(r"[\s,;.]*", text[end : span.start()]):
                end = span.end()
            else:
                break
        outside = (text[:start] + text[end:]).strip(" \t\n*_.,;:!?\"'")
        if not outside:
            return None
        return pattern.sub(lambda m: m.group(1) or m.group(2), text[start:end]).strip(), step
    return None


def words_of(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def new_part_of_marked(line: str, marked: str, problem: str) -> str | None:
    """The part of the marked text that is new, or None when it is part of the story.

    The whole line is aligned against the problem. Nothing new left ("pets. **She** had a
    great time": the context's "They", reworded), new text unrelated to the marked text, or
    only a short lead-in ("**And then, he was signed ...**") mean the marking is context.
    When the marked text also copies a context sentence, only its new part is kept.
    """
    recovered = recover_infill(clean(line), problem)
    if not recovered.restated:
        return marked
    new, marked_words = words_of(recovered.text), words_of(marked)
    if not new:
        return None
    if marked_words in new:
        return marked
    if new not in marked_words or len(new.split()) < 4:
        return None
    return recovered.text


def unquote(text: str) -> str:
    """Remove quotes (or angle brackets) that wrap the whole text, keeping a final . or ,."""
    stripped = text.strip()
    trailing = ""
    if stripped[-1:] in ".," and len(stripped) > 2 and stripped[-2] in "\"”'’>":
        stripped, trailing = stripped[:-1], stripped[-1]
    close = QUOTE_PAIRS.get(stripped[:1])
    if not close or len(stripped) < 2 or stripped[-1] != close or close in stripped[1:-1]:
        return stripped + trailing
    return stripped[1:-1].strip()


def leading_quote(text: str) -> str | None:
    """A quoted answer followed by an explanation: '"However" So the complete sentence...'."""
    match = re.match(r"\s*[\"“]([^\"”\n]{1,2000})[\"”]", text)
    if match and text[match.end() :].strip():
        return match.group(1).strip()
    return None


def clean(text: str) -> str:
    """The answer without markdown, HTML tags, list markers, a leading "Answer", wrapping quotes."""
    text = HTML_TAG.sub(" ", text)
    text = BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    text = ITALIC.sub(r"\1", text)
    text = re.sub(r"_{3,}", " ", text)
    text = LIST_MARKER.sub("", text, count=1)
    text = LEADING_ANSWER_WORD.sub("", text)
    text = unquote(text.strip(" \t\n*#"))
    return text.strip(" \t\n*#")
