"""Measure extraction against hand-labelled responses (the paper's Appendix A.1 protocol).

A labelled JSONL row has ``response``, ``problem`` and ``expected`` (the annotator's extraction,
empty when the response holds no valid answer); ``n`` and ``model`` are used when present.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from ..data.jsonl import iter_jsonl
from ..extraction import Extraction, extract_answer
from ..scorers.metrics.lexical import rouge1_f1


class LabelledFileError(ValueError):
    """A labelled row is unusable; the message names the file, line and field."""


@dataclass(frozen=True)
class Judged:
    line: int
    model: str
    expected: str
    extraction: Extraction
    rouge1: float

    @property
    def perfect(self) -> bool:
        return collapse_space(self.extraction.text) == collapse_space(self.expected)


def collapse_space(text: str) -> str:
    return " ".join(text.split())


def extraction_rouge1(got: str, expected: str) -> float:
    """ROUGE-1 F1, with the protocol's rule for empty labels: both empty is 1, one empty is 0."""
    if not expected.strip() or not got.strip():
        return float(not expected.strip() and not got.strip())
    return rouge1_f1(got, expected)


def read_labelled(path: Path) -> list[dict]:
    rows = []
    for line_no, row in iter_jsonl(path, LabelledFileError):
        for field in ("response", "problem", "expected"):
            if not isinstance(row.get(field), str):
                raise LabelledFileError(f"{path}:{line_no}: field {field!r} must be a string, got {row.get(field)!r}")
        n = row.get("n")
        if n is not None and not isinstance(n, int):
            raise LabelledFileError(f"{path}:{line_no}: field 'n' must be an integer, got {n!r}")
        rows.append({**row, "_line": line_no})
    return rows


def judge_rows(rows: list[dict]) -> list[Judged]:
    judged = []
    for row in rows:
        extraction = extract_answer(row["response"], row["problem"], row.get("n"))
        judged.append(
            Judged(
                line=row["_line"],
                model=str(row.get("model", "")),
                expected=row["expected"],
                extraction=extraction,
                rouge1=extraction_rouge1(extraction.text, row["expected"]),
            )
        )
    return judged


def summary(judged: list[Judged]) -> dict[str, float]:
    return {
        "n": len(judged),
        "pmr": fmean(j.perfect for j in judged),
        "rouge1": fmean(j.rouge1 for j in judged),
        "failure": fmean(j.rouge1 == 0 for j in judged),
    }


def report(judged: list[Judged], errors: bool = False) -> str:
    if not judged:
        return "n=0 (no labelled rows)"
    lines = ["n={n}  PMR={pmr:.3f}  ROUGE-1={rouge1:.3f}  failure={failure:.3f}".format(**summary(judged))]
    for title, key in (("status", lambda j: j.extraction.status.value), ("model", lambda j: j.model or "(none)")):
        groups: dict[str, list[Judged]] = defaultdict(list)
        for item in judged:
            groups[key(item)].append(item)
        width = max(len(name) for name in groups)
        lines.append(f"\nby {title}:")
        for name, items in sorted(groups.items()):
            figures = summary(items)
            lines.append(
                f"  {name:<{width}}  n={figures['n']:<4} PMR={figures['pmr']:.3f}  "
                f"ROUGE-1={figures['rouge1']:.3f}  failure={figures['failure']:.3f}"
            )
    if errors:
        mismatches = [j for j in judged if not j.perfect]
        lines.append(f"\nmismatches ({len(mismatches)}):")
        for item in mismatches:
            lines.append(
                f"--- line {item.line}  model={item.model}  status={item.extraction.status.value}  "
                f"steps={','.join(item.extraction.steps)}  ROUGE-1={item.rouge1:.3f}\n"
                f"expected: {item.expected!r}\ngot:      {item.extraction.text!r}"
            )
    return "\n".join(lines)
