"""The null baselines against the authors' 20 models, per TELeR level, on their 9,800 real outputs.

Reads ../shared/data/extraction/responses.jsonl (30 ROCStories problems, 20 models, levels
L0-L4), extracts each response with the package's extraction (``ours`` and ``published``),
and answers every response's problem with each baseline rule (``data.baselines``; ``n`` = the
gold's sentence count, NLTK Punkt). Baseline answers are put through the same extraction as
the models' responses, in the format the provider sends (tagged, as every level's prompt but
L0's asks; bare at L0), and also scored raw (the rule's text itself, as the issue measured).
Every distinct (answer, gold) pair is scored once with ``score_pairs`` on the packaged MiniLM
backbones. A baseline's value at a level is its mean over the level's responses (each
response's problem, so the same instances and weights as the models).

Prints, per extraction and level: the 20 models' AtAvg range, each baseline's AtAvg and its
rank among the 21 (1 = highest), the models at or below the context baseline; then
``context_copy`` on the real outputs (its distribution) and on the baselines, and the share of
each model's answers above ``CONTEXT_COPY_THRESHOLD``.

Usage: nice python benchmarks/baselines_table.py [--backbone minilm] [--copy-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from statistics import fmean

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import load_rows
from side_by_side import load_average, peak_rss_mb

RULES = ("empty", "neighbour", "context")
EXTRACTIONS = ("ours", "published")
CUTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def level_of(row: dict) -> str:
    return row["template_name"].removeprefix("fitb_").upper()


def baseline_answers(rows: list[dict]) -> dict[tuple[str, str], str]:
    """(rule, problem) -> the rule's answer, ``n`` being the gold's sentence count."""
    from narrative_infill.data.baselines import baseline_answer
    from narrative_infill.scorers.metrics.pairs import sentences

    answers = {}
    for row in {r["problem"]: r for r in rows}.values():
        n = max(1, len(sentences(row["gold_answer"])))
        for rule in RULES:
            answers[(rule, row["problem"])] = baseline_answer(rule, row["problem"], n, gold=lambda: "")
    return answers


def answers_per_way(rows: list[dict], rules: dict) -> dict[str, list[str]]:
    """Per way ("model|ours", "context|published", "context|raw"...), one answer per response."""
    from narrative_infill.extraction import extract_with
    from narrative_infill.solvers.baseline_model import answer_format

    ways: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        problem, prompt = row["problem"], row["prompt_text"]
        for extraction in EXTRACTIONS:
            ways[f"model|{extraction}"].append(extract_with(extraction, row["response"], problem).text)
            for rule in RULES:
                sent = answer_format(prompt if level_of(row) != "L0" else "", rules[(rule, problem)])
                ways[f"{rule}|{extraction}"].append(extract_with(extraction, sent, problem).text)
        for rule in RULES:
            ways[f"{rule}|raw"].append(rules[(rule, problem)])
    return ways


def score_all(rows: list[dict], ways: dict[str, list[str]], backbone: str) -> dict[str, list[float]]:
    """AtAvg of every answer of every way, each distinct (answer, gold) pair scored once."""
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    golds = [row["gold_answer"] for row in rows]
    distinct = sorted({(a, g) for answers in ways.values() for a, g in zip(answers, golds)})
    started = time.perf_counter()
    results = score_pairs([a for a, _ in distinct], [g for _, g in distinct], resolve_backbones(backbone))
    print(f"scored {len(distinct)} distinct pairs in {time.perf_counter() - started:.0f} s")
    atavg = {pair: result.values["atavg"] for pair, result in zip(distinct, results)}
    return {way: [atavg[(a, g)] for a, g in zip(answers, golds)] for way, answers in ways.items()}


def level_table(rows: list[dict], scores: dict[str, list[float]], extraction: str) -> None:
    """Per level: the models' range, each baseline's AtAvg and rank, the models below context."""
    print(f"\n## extraction={extraction} (baselines through the same extraction; raw: the rule's text)")
    print(
        "| level | 20 models' AtAvg | " + " | ".join(f"{r} ({k})" for r in RULES for k in (extraction, "raw"))
    )
    for level in sorted({level_of(r) for r in rows}):
        index = [i for i, r in enumerate(rows) if level_of(r) == level]
        per_model: dict[str, list[float]] = defaultdict(list)
        for i in index:
            per_model[rows[i]["model"]].append(scores[f"model|{extraction}"][i])
        means = {model: fmean(values) for model, values in per_model.items()}
        cells = []
        for rule in RULES:
            for way in (f"{rule}|{extraction}", f"{rule}|raw"):
                value = fmean(scores[way][i] for i in index)
                rank = 1 + sum(m > value for m in means.values())
                cells.append(f"{value:.3f}: {rank} of {len(means) + 1}")
        print(f"| {level} | {min(means.values()):.3f}..{max(means.values()):.3f} | " + " | ".join(cells))
        for way in (f"context|{extraction}", "context|raw"):
            value = fmean(scores[way][i] for i in index)
            below = sorted(model for model, mean in means.items() if mean <= value)
            print(f"    {level} at or below {way} ({value:.3f}): {len(below)}: {', '.join(below) or 'none'}")


def copy_figures(rows: list[dict], ways: dict[str, list[str]]) -> None:
    """context_copy on the real outputs (distribution, per model share) and on the baselines."""
    from narrative_infill.copy_guards import CONTEXT_COPY_THRESHOLD, is_copied
    from narrative_infill.scorers.metrics.copying import context_copy

    problems = [row["problem"] for row in rows]
    for extraction in EXTRACTIONS:
        copies = [context_copy(a, p) for a, p in zip(ways[f"model|{extraction}"], problems)]
        answered = [c for c, a in zip(copies, ways[f"model|{extraction}"]) if a.strip()]
        print(f"\n## context_copy, extraction={extraction}: {len(answered)} answered of {len(copies)}")
        print("cut: share of answered outputs with context_copy > cut")
        print("  " + "  ".join(f">{cut:.1f}: {fmean(c > cut for c in answered):.3f}" for cut in CUTS[:-1]))
        print("  =1.0: " + f"{fmean(c >= 1.0 for c in answered):.3f}")
        for way in (f"{rule}|{form}" for rule in RULES[1:] for form in (extraction, "raw")):
            values = [context_copy(a, p) for a, p in zip(ways[way], problems) if a.strip()]
            low = min(values) if values else float("nan")
            print(f"  baseline {way}: answered {len(values)}, context_copy min {low:.3f}")
        shares: dict[str, list[bool]] = defaultdict(list)
        for row, value, answer in zip(rows, copies, ways[f"model|{extraction}"]):
            shares[row["model"]].append(bool(is_copied(value)) if answer.strip() else False)
        print(f"  share of each model's answers with context_copy > {CONTEXT_COPY_THRESHOLD:g}:")
        for model, flags in sorted(shares.items(), key=lambda item: -fmean(item[1])):
            print(f"    {fmean(flags):.3f}  {model}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="minilm", help="auto, paper or minilm (default)")
    parser.add_argument("--n", type=int, default=None, help="responses (default: all)")
    parser.add_argument("--copy-only", action="store_true", help="only the context_copy figures (no scoring)")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"load average at start: {load_average()}")
    rows = load_rows(args.n)
    ways = answers_per_way(rows, baseline_answers(rows))
    print(f"{len(rows)} responses, {len({r['problem'] for r in rows})} problems; extracted")
    if not args.copy_only:
        scores = score_all(rows, ways, args.backbone)
        for extraction in EXTRACTIONS:
            level_table(rows, scores, extraction)
    copy_figures(rows, ways)
    print(
        f"\ntotal {time.perf_counter() - started:.0f} s; peak RSS {peak_rss_mb():.0f} MB; "
        f"load average at end: {load_average()}"
    )


if __name__ == "__main__":
    main()
