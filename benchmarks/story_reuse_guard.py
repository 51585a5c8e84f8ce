"""The order-free guard (``story_reuse``, issue 45) on the authors' 9,800 real outputs and on the
trivial rules that rearrange the story's words.

Reads ../shared/data/extraction/responses.jsonl (30 ROCStories problems, 20 models, L0-L4),
extracts each response with ``ours`` (the default) and ``published``, and prints:
* the distribution of ``story_reuse`` over the answered outputs (share above each cut), and the
  flagged answers' content-word counts;
* the share of each model's answers above ``STORY_REUSE_THRESHOLD`` (false positives: every real
  answer is a model's attempt), under both extractions;
* each trivial rule's answers (built below from each problem; ``n`` = the gold's sentence count):
  the share flagged, raw and after each extraction (sent tagged, as every level's prompt but L0's
  asks; bare at L0), and the lowest value;
* the cost per answer (``story_reuse`` on all 9,800 ``ours`` answers, after a warm-up).

The rules are the issue's table (and a few of the same kind); they are built here, not in the
package: the package's null rules are ``data.baselines``. Deterministic (scrambling is seeded).

With ``--atavg`` it prints instead each rule's AtAvg on the packaged MiniLM backbones (one answer
per problem, raw and through ``ours``), to see whether what the guard lets through pays; with
``--sensitivity``, the real outputs and the rules flagged at other cuts and short-answer floors.

Usage: nice python benchmarks/story_reuse_guard.py [--n 9800] [--atavg | --sensitivity]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import fmean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import load_rows
from side_by_side import load_average

EXTRACTIONS = ("ours", "published")
CUTS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
SEED = 45


def _neighbours(problem: str) -> tuple[str, str]:
    """The sentence before the blank and the one after it ("" where the story has none)."""
    from narrative_infill.data.baselines import blank_sides
    from narrative_infill.data.text import split_sentences

    before, after = blank_sides(problem)
    left = split_sentences(before, "prose")[-1:] if before else []
    right = split_sentences(after, "prose")[:1] if after else []
    return " ".join(left), " ".join(right)


def _story_words(problem: str) -> list[str]:
    from narrative_infill.data.baselines import context_answer

    return context_answer(problem).split()


def _swap_pairs(words: list[str]) -> list[str]:
    words = list(words)
    for i in range(0, len(words) - 1, 2):
        words[i], words[i + 1] = words[i + 1], words[i]
    return words


def _function_words() -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS)


def _replace_function_words(text: str, replace: Callable[[str], str]) -> str:
    stops = set(_function_words())
    return " ".join(replace(w) if w.lower().strip(".,!?") in stops else w for w in text.split())


def _rotate(word: str) -> str:
    """The next function word in sorted order: every function word becomes another one."""
    words = _function_words()
    return words[(words.index(word.lower().strip(".,!?")) + 1) % len(words)]


def _interleave(left: str, right: str) -> str:
    a, b = left.split(), right.split()
    mixed = [w for pair in zip(a, b) for w in pair]
    return " ".join(mixed + a[len(b) :] + b[len(a) :])


def _scrambled(problem: str) -> str:
    words = _story_words(problem)
    random.Random(f"{SEED}:{problem}").shuffle(words)
    return " ".join(words)


def _inflected(word: str) -> str:
    """A content word as its stem plus "s" ("jumped" -> "jumps"); function words kept."""
    from nltk.stem.snowball import SnowballStemmer

    bare = word.lower().strip(".,!?")
    return word if bare in set(_function_words()) else SnowballStemmer("english").stem(bare) + "s"


def _both(problem: str) -> str:
    return " ".join(part for part in _neighbours(problem) if part)


#: Each rule: the problem -> the answer. The issue's table first, then inventions of the same kind.
RULES: dict[str, Callable[[str], str]] = {
    "story, adjacent words swapped": lambda p: " ".join(_swap_pairs(_story_words(p))),
    "neighbours swapped": lambda p: " ".join(reversed([s for s in _neighbours(p) if s])),
    "story's distinct words sorted": lambda p: " ".join(sorted({w.lower() for w in _story_words(p)})),
    "neighbours, every third word dropped": lambda p: " ".join(
        w for i, w in enumerate(_both(p).split()) if i % 3 != 2
    ),
    "neighbours, function words rotated": lambda p: _replace_function_words(_both(p), _rotate),
    "neighbours, function words -> 'the'": lambda p: _replace_function_words(_both(p), lambda w: "the"),
    "neighbours interleaved": lambda p: _interleave(*_neighbours(p)),
    "story scrambled": _scrambled,
    "story, every third word 'um'": lambda p: " ".join(
        "um" if i % 3 == 2 else w for i, w in enumerate(_story_words(p))
    ),
    "story, each word doubled": lambda p: " ".join(f"{w} {w}" for w in _story_words(p)),
    "story scrambled, zero-width space in each word": lambda p: " ".join(
        w[:1] + "\u200b" + w[1:] for w in _scrambled(p).split()
    ),
    "story scrambled, content words inflected": lambda p: " ".join(map(_inflected, _scrambled(p).split())),
    # Disguises measured so the page can say how far the guard reaches (misspellings: read since the
    # attack pass; inflections that change a stem: still a limit):
    "story scrambled, one letter doubled in each word": lambda p: " ".join(
        w[:2] + w[1:] if len(w) > 3 else w for w in _scrambled(p).split()
    ),
    "story scrambled, three words of its own added": lambda p: f"{_scrambled(p)} purple galaxy violin",
}


def _extracted(extraction: str, row: dict, answer: str) -> str:
    from narrative_infill.extraction import extract_with
    from narrative_infill.solvers.baseline_model import answer_format

    prompt = row["prompt_text"] if not row["template_name"].endswith("l0") else ""
    return extract_with(extraction, answer_format(prompt, answer), row["problem"]).text


def real_figures(rows: list[dict]) -> None:
    """Distribution, flagged answers' lengths and per-model flagged shares on the real outputs."""
    from narrative_infill.copy_guards import STORY_REUSE_THRESHOLD, is_copied, is_story_reuse
    from narrative_infill.extraction import extract_with
    from narrative_infill.scorers.metrics.copying import context_copy
    from narrative_infill.scorers.metrics.reuse import content_stems, story_reuse

    for extraction in EXTRACTIONS:
        answers = [extract_with(extraction, r["response"], r["problem"]).text for r in rows]
        values = [story_reuse(a, r["problem"]) for a, r in zip(answers, rows)]
        answered = [v for v, a in zip(values, answers) if a.strip()]
        print(f"\n## story_reuse on the real outputs, extraction={extraction}: ", end="")
        print(f"{len(answered)} answered of {len(rows)}")
        print("  " + "  ".join(f">{cut:g}: {fmean(v > cut for v in answered):.4f}" for cut in CUTS))
        print(f"  mean {fmean(answered):.3f}")
        flagged = [a for v, a in zip(values, answers) if is_story_reuse(v)]
        sizes = [len(content_stems(a)) for a in flagged]
        median = sorted(sizes)[len(sizes) // 2] if sizes else 0
        print(f"  flagged (> {STORY_REUSE_THRESHOLD:g}): {len(flagged)}; ", end="")
        print(f"content words: min {min(sizes, default=0)}, median {median}")
        for answer in flagged[:5]:
            print(f"    e.g. {answer[:110]!r}")
        copied = [bool(is_copied(context_copy(a, r["problem"]))) for a, r in zip(answers, rows)]
        shares: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        for row, value, copy in zip(rows, values, copied):
            shares[row["model"]].append(
                (bool(is_story_reuse(value)), bool(is_story_reuse(value)) and not copy)
            )
        print(
            f"  each model's outputs flagged (story_reuse > {STORY_REUSE_THRESHOLD:g}); of them, not ", end=""
        )
        print("copies (context_copy at most its threshold): the guard's own flags")
        for model, flags in sorted(shares.items(), key=lambda item: -sum(f for f, _ in item[1])):
            count, own = sum(f for f, _ in flags), sum(o for _, o in flags)
            print(f"    {count / len(flags):.4f} ({count}/{len(flags)}), ", end="")
            print(f"not copies {own / len(flags):.4f} ({own})  {model}")


def rule_figures(rows: list[dict]) -> None:
    """Each rule's answers, raw and through each extraction, over every response's problem."""
    from narrative_infill.copy_guards import is_story_reuse
    from narrative_infill.scorers.metrics.reuse import story_reuse

    print("\n## trivial rules: share flagged (lowest story_reuse) over each response's instance")
    print("| rule | raw | ours | published |")
    print("|---|---|---|---|")
    for name, rule in RULES.items():
        raw = {p: rule(p) for p in {r["problem"] for r in rows}}
        cells = []
        for way in ("raw", *EXTRACTIONS):
            answers = [
                raw[r["problem"]] if way == "raw" else _extracted(way, r, raw[r["problem"]]) for r in rows
            ]
            values = [story_reuse(a, r["problem"]) for a, r in zip(answers, rows) if a.strip()]
            share = fmean(bool(is_story_reuse(v)) for v in values) if values else float("nan")
            cells.append(f"{share:.3f} ({min(values, default=float('nan')):.2f}; {len(values)} answered)")
        print(f"| {name} | " + " | ".join(cells) + " |")


def atavg_figures(rows: list[dict]) -> None:
    """Each rule's AtAvg (packaged MiniLM backbones), raw and through ``ours``, one answer per problem
    (the mean over the problems, not weighted by responses): whether what the guard misses pays."""
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    problems = {r["problem"]: r for r in rows}
    pairs = []
    for name, rule in RULES.items():
        for problem, row in problems.items():
            for way in ("raw", "ours"):
                answer = rule(problem) if way == "raw" else _extracted("ours", row, rule(problem))
                pairs.append((name, way, answer, row["gold_answer"]))
    results = score_pairs([p[2] for p in pairs], [p[3] for p in pairs], resolve_backbones("minilm"))
    means: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (name, way, _, _), result in zip(pairs, results):
        means[(name, way)].append(result.values["atavg"])
    print(f"\n## AtAvg (MiniLM) of each rule over the {len(problems)} problems: raw | ours")
    for name in RULES:
        print(f"  {fmean(means[(name, 'raw')]):.3f} | {fmean(means[(name, 'ours')]):.3f}  {name}")


def sensitivity(rows: list[dict]) -> None:
    """Other thresholds and short-answer floors: the real outputs flagged (``ours``) against each
    rule's answers flagged (``ours``, one per problem)."""
    import narrative_infill.scorers.metrics.reuse as reuse
    from narrative_infill.extraction import extract_with

    answers = [(extract_with("ours", r["response"], r["problem"]).text, r["problem"]) for r in rows]
    problems = {r["problem"]: r for r in rows}
    ruled = []  # per rule, its answered instances (the swapped neighbours extract to nothing)
    for rule in RULES.values():
        pairs = [(_extracted("ours", r, rule(p)), p) for p, r in problems.items()]
        ruled.append([(a, p) for a, p in pairs if a.strip()])
    print("\n## sensitivity (ours): floor, cut: real outputs flagged | each rule's answers flagged, in order")
    for floor in (5, 8):
        reuse.STORY_REUSE_MIN_WORDS = floor  # this run only: the package's floor is the constant
        for cut in (0.75, 0.8, 0.85, 0.9):
            real = fmean(reuse.story_reuse(a, p) > cut for a, p in answers)
            shares = [fmean(reuse.story_reuse(a, p) > cut for a, p in pairs) for pairs in ruled if pairs]
            print(f"  {floor} {cut:g}: {real:.4f} | " + " ".join(f"{share:.2f}" for share in shares))


def cost(rows: list[dict]) -> None:
    from narrative_infill.extraction import extract_with
    from narrative_infill.scorers.metrics.reuse import story_reuse

    answers = [extract_with("ours", r["response"], r["problem"]).text for r in rows]
    story_reuse(answers[0], rows[0]["problem"])  # warm-up: the stemmer and stop list load once
    started = time.perf_counter()
    for answer, row in zip(answers, rows):
        story_reuse(answer, row["problem"])
    elapsed = time.perf_counter() - started
    print(f"\n## cost: {len(rows)} answers in {elapsed:.2f} s: {elapsed / len(rows) * 1e6:.0f} us per answer")
    for name, hostile in (
        ("one 32,768-letter word", "a" * 32768),
        ("5,000 distinct words", " ".join(f"w{i}" for i in range(5000))),
    ):
        started = time.perf_counter()
        story_reuse(hostile, rows[0]["problem"])
        print(f"  hostile answer, {name}: {time.perf_counter() - started:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="responses (default: all)")
    parser.add_argument("--atavg", action="store_true", help="only each rule's AtAvg (MiniLM scoring)")
    parser.add_argument("--sensitivity", action="store_true", help="only other cuts and short-answer floors")
    args = parser.parse_args()
    print(f"load average at start: {load_average()}")
    rows = load_rows(args.n)
    print(f"{len(rows)} responses, {len({r['problem'] for r in rows})} problems")
    if args.atavg or args.sensitivity:
        (atavg_figures if args.atavg else sensitivity)(rows)
        return
    cost(rows)
    real_figures(rows)
    rule_figures(rows)
    print(f"\nload average at end: {load_average()}")


if __name__ == "__main__":
    main()
