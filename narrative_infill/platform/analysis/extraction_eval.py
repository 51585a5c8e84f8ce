"""Measure extraction against hand-labelled responses (the paper's Appendix A.1 protocol).

A labelled JSONL row has ``response``, ``problem`` and ``expected`` (the annotator's extraction,
empty when the response holds no valid answer); ``model`` is used when present (an ``n``, if
any, must be an integer; the extraction does not need it).

With ``gold_answer`` in the rows, the report adds the figure that matters downstream: a cheap
metric (ROUGE-1, chrF) of the extracted text and of the annotators' text against the gold,
the mean per-model difference, and the Kendall tau between the two model rankings.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from ...data.jsonl import iter_jsonl
from ...errors import NarrativeInfillError
from ...extraction import Extraction, extract_answer
from ...scorers.metrics.lexical import chrf, rouge1_f1

#: Metrics of the downstream comparison: cheap, and the two that move most with extraction.
DOWNSTREAM_METRICS = {"rouge1": rouge1_f1, "chrf": chrf}


class LabelledFileError(NarrativeInfillError, ValueError):
    """A labelled row is unusable; the message names the file, line and field."""


@dataclass(frozen=True)
class Judged:
    line: int
    model: str
    expected: str
    extraction: Extraction
    rouge1: float
    gold: str | None = None

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
                raise LabelledFileError(
                    f"{path}:{line_no}: field {field!r} must be a string, got {row.get(field)!r}"
                )
        if row.get("gold_answer") is not None and not isinstance(row["gold_answer"], str):
            raise LabelledFileError(
                f"{path}:{line_no}: field 'gold_answer' must be a string, got {row['gold_answer']!r}"
            )
        n = row.get("n")
        if n is not None and not isinstance(n, int):
            raise LabelledFileError(f"{path}:{line_no}: field 'n' must be an integer, got {n!r}")
        rows.append({**row, "_line": line_no})
    if not rows:
        raise LabelledFileError(f"{path}: no labelled rows")
    return rows


def judge_rows(rows: list[dict]) -> list[Judged]:
    judged = []
    for row in rows:
        extraction = extract_answer(row["response"], row["problem"])
        judged.append(
            Judged(
                line=row["_line"],
                model=str(row.get("model", "")),
                expected=row["expected"],
                extraction=extraction,
                rouge1=extraction_rouge1(extraction.text, row["expected"]),
                gold=row.get("gold_answer"),
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


def _against_gold(metric, text: str, gold: str) -> float:
    """The metric as the scorer computes it: an empty answer scores 0."""
    return metric(text, gold) if text.strip() else 0.0


def downstream(judged: list[Judged]) -> dict[str, dict[str, float]] | None:
    """Per metric: the mean over models of (extracted - annotated) mean score against the gold,
    its mean absolute value, and Kendall's tau between the two model rankings; None without
    gold answers or with fewer than two models."""
    from scipy.stats import kendalltau

    rows = [j for j in judged if j.gold]
    models = sorted({j.model for j in rows})
    if len(models) < 2:
        return None
    figures = {}
    for name, metric in DOWNSTREAM_METRICS.items():
        ours, theirs = [], []
        for model in models:
            items = [j for j in rows if j.model == model]
            ours.append(fmean(_against_gold(metric, j.extraction.text, j.gold or "") for j in items))
            theirs.append(fmean(_against_gold(metric, j.expected, j.gold or "") for j in items))
        differences = [a - b for a, b in zip(ours, theirs)]
        figures[name] = {
            "models": len(models),
            "mean_difference": fmean(differences),
            "mean_abs_difference": fmean(abs(d) for d in differences),
            "kendall_tau": float(kendalltau(ours, theirs).statistic),
        }
    return figures


def report(judged: list[Judged], errors: bool = False) -> str:
    if not judged:
        return "n=0 (no labelled rows)"
    lines = ["n={n}  PMR={pmr:.3f}  ROUGE-1={rouge1:.3f}  failure={failure:.3f}".format(**summary(judged))]
    for title, key in (
        ("status", lambda j: j.extraction.status.value),
        ("model", lambda j: j.model or "(none)"),
    ):
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
    against_gold = downstream(judged)
    if against_gold:
        lines.append(
            "\ndownstream (each metric against gold_answer, on the extracted vs the annotated text, per "
            "model):"
        )
        for name, values in against_gold.items():
            lines.append(
                f"  {name:<7} models={values['models']}  mean difference={values['mean_difference']:+.4f}  "
                f"mean |difference|={values['mean_abs_difference']:.4f}  Kendall tau of the "
                f"rankings={values['kendall_tau']:.3f}"
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
