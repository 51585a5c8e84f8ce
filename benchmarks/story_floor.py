"""The paper's 20 models against the story-reading floor (issue 58), and the blank guard's false positives.

Reads ../shared/data/extraction/responses.jsonl (30 ROCStories problems from 10 stories, 20 models,
L0-L4) and extracts each response with the package's default extraction. At each level asked:

* every null rule (``data.baselines.NULL_RULES``) answers each problem (``n`` = the gold's sentence
  count), sent as the provider sends it (tagged, bare at L0) and extracted; its AtAvg (packaged
  MiniLM backbones), its copy and story-reuse shares and its blank-guard share are printed. The
  fluency guard is not read here (it needs the local model): the floor is taken over the rules the
  copy and story-reuse guards keep, as the report and board take it where fluency reads them fluent;
* the floor is the best kept rule's mean; each model's per-problem AtAvg (mean over its responses to
  the problem) is compared with the floor rule's, paired by problem and clustered by story
  (``analysis.floor.floor_test``): the point difference and whether it is significant one-sided at
  ``CONFIDENCE`` (10 narratives: the test holds its level only roughly);
* with ``--attacks``, the held-out attack rules of tests/attack_rules.py (never used to set a
  threshold) are scored and marked beside the null rules.

Then, on all outputs (every level; no scoring), the blank guard per model: the share of its
(run, story) units flagged and the number of its runs (model, level, template, system prompt,
temperature) over the entry limit.

Usage: nice python benchmarks/story_floor.py [--levels fitb_l0 fitb_l2 fitb_l4] [--attacks] [--n N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from statistics import fmean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import load_rows
from side_by_side import load_average

TESTS = Path(__file__).resolve().parent.parent / "tests"


def _story(row: dict) -> str:
    from narrative_infill.data.narrative import narrative_of_text

    return narrative_of_text(row["problem"], row["gold_answer"])


def _rules(attacks: bool, problems: list[dict]) -> dict:
    """Rule name -> function of a problem row giving its answer."""
    from narrative_infill.data.baselines import NULL_RULES, baseline_answer
    from narrative_infill.scorers.metrics.pairs import sentences

    rules = {
        rule: (
            lambda row, r=rule: baseline_answer(
                r, row["problem"], max(1, len(sentences(row["gold_answer"]))), str
            )
        )
        for rule in NULL_RULES
    }
    if attacks:
        sys.path.insert(0, str(TESTS))
        from attack_rules import attack_rules

        golds = [row["gold_answer"] for row in problems]
        rules |= {name: (lambda row, f=f: f(row["problem"])) for name, f in attack_rules(golds).items()}
    return rules


def _sent(level: str, answer: str, problem: str) -> str:
    from narrative_infill.extraction import DEFAULT_EXTRACTION, extract_with

    return extract_with(
        DEFAULT_EXTRACTION, answer if level == "fitb_l0" else f"<ANSWER>{answer}</ANSWER>", problem
    ).text


def _blank_share(rows: list[dict], answers: list[str]) -> float:
    from narrative_infill.platform.analysis.blank_guard import ignored_share

    return ignored_share((_story(r), r["problem"], r["gold_answer"], a) for r, a in zip(rows, answers))


def level_table(level: str, rows: list[dict], attacks: bool) -> dict[str, tuple[float, bool]]:
    """Print the rules and the models against the floor at ``level``; model -> (difference, significant)."""
    from narrative_infill.copy_guards import is_copied, is_story_reuse
    from narrative_infill.extraction import DEFAULT_EXTRACTION, extract_with
    from narrative_infill.number_rules import CONFIDENCE
    from narrative_infill.platform.analysis.floor import floor_of, floor_test, is_above, one_sided_p
    from narrative_infill.scorers.metrics.copying import context_copy
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs
    from narrative_infill.scorers.metrics.reuse import story_reuse

    mine = [r for r in rows if r["template_name"] == level]
    problems = list({r["problem"]: r for r in mine}.values())
    rules = _rules(attacks, problems)
    answers = {rule: [_sent(level, f(row), row["problem"]) for row in problems] for rule, f in rules.items()}
    model_answers = [extract_with(DEFAULT_EXTRACTION, r["response"], r["problem"]).text for r in mine]
    pairs = sorted(
        {(a, p["gold_answer"]) for rule in answers for a, p in zip(answers[rule], problems)}
        | {(a, r["gold_answer"]) for a, r in zip(model_answers, mine)}
    )
    scored = score_pairs([a for a, _ in pairs], [g for _, g in pairs], resolve_backbones("minilm"))
    atavg = {pair: result.values["atavg"] for pair, result in zip(pairs, scored)}
    clusters = [_story(p) for p in problems]
    figures, per_rule = {}, {}
    print(f"\n## {level}: {len(problems)} problems, {len(mine)} responses (MiniLM, default extraction)")
    print("| rule | AtAvg | copied % | story reuse % | blank ignored % |")
    for rule, said in answers.items():
        values = [atavg[(a, p["gold_answer"])] for a, p in zip(said, problems)]
        copied = fmean(bool(is_copied(context_copy(a, p["problem"]))) for a, p in zip(said, problems))
        reused = fmean(bool(is_story_reuse(story_reuse(a, p["problem"]))) for a, p in zip(said, problems))
        blank = _blank_share(problems, said)
        per_rule[rule] = values
        if not rule.startswith("attack:"):
            figures[rule] = (fmean(values), copied, reused)
        print(f"| {rule} | {fmean(values):.3f} | {copied:.0%} | {reused:.0%} | {blank:.0%} |")
    floor = floor_of(figures)
    assert floor is not None
    print(f"floor at {level}: baseline/{floor[0]} {floor[1]:.3f}")
    by_model: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for answer, row in zip(model_answers, mine):
        by_model[row["model"]][row["problem"]].append(atavg[(answer, row["gold_answer"])])
    results = {}
    print(f"| model | AtAvg | minus floor | one-sided p | above at {CONFIDENCE:.0%} |")
    for model, answered in sorted(by_model.items()):
        # a model's problems: the floor rule paired on the same ones
        shared = [i for i, p in enumerate(problems) if answered.get(p["problem"])]
        values = [fmean(answered[problems[i]["problem"]]) for i in shared]
        floor_values = [per_rule[floor[0]][i] for i in shared]
        test = floor_test(values, floor_values, [clusters[i] for i in shared])
        if test is None:  # one story: nothing to test on (only at smoke sizes)
            continue
        above = is_above(test)
        results[model] = (test.difference, above)
        verdict = "yes" if above else "no"
        print(
            f"| {model} | {fmean(values):.3f} | {test.difference:+.3f} | {one_sided_p(test):.3f} | {verdict} |"
            + (f" ({len(shared)} problems)" if len(shared) < len(problems) else "")
        )
    for rule, values in per_rule.items():
        test = floor_test(values, per_rule[floor[0]], clusters)
        if test is None:
            continue
        print(f"rule {rule}: minus floor {test.difference:+.3f}, above: {'yes' if is_above(test) else 'no'}")
    return results


def blank_false_positives(rows: list[dict]) -> None:
    """The blank guard on every real output: per model, flagged (run, story) share and runs over the limit."""
    from narrative_infill.copy_guards import COPIED_SHARE_LIMIT
    from narrative_infill.extraction import DEFAULT_EXTRACTION, extract_with
    from narrative_infill.platform.analysis.blank_guard import story_ignores_blank

    runs: dict[tuple, dict[str, tuple[list, set]]] = defaultdict(lambda: defaultdict(lambda: ([], set())))
    for row in rows:
        run = (row["model"], row["template_name"], row["template_id"], row["sys_id"], row["temperature"])
        said, problems = runs[run][_story(row)]
        said.append(
            (extract_with(DEFAULT_EXTRACTION, row["response"], row["problem"]).text, row["gold_answer"])
        )
        problems.add(row["problem"])
    stories: dict[str, list[bool]] = defaultdict(list)
    over: dict[str, list[bool]] = defaultdict(list)
    for run, by_story in runs.items():
        flags = [f for f in (story_ignores_blank(s, p) for s, p in by_story.values()) if f is not None]
        stories[run[0]] += flags
        over[run[0]].append(bool(flags) and sum(flags) / len(flags) > COPIED_SHARE_LIMIT)
    every = [f for flags in stories.values() for f in flags]
    print(
        f"\n## blank guard on {len(rows)} real outputs, {len(runs)} runs: {fmean(every):.2%} of (run, story) units flagged"
    )
    print("| model | stories compared | flagged % | runs over the entry limit |")
    for model in sorted(stories, key=lambda m: -fmean(stories[m] or [0])):
        flags = stories[model]
        print(
            f"| {model} | {len(flags)} | {fmean(flags or [0]):.1%} | {sum(over[model])} of {len(over[model])} ({fmean(over[model]):.1%}) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", nargs="+", default=["fitb_l0", "fitb_l2", "fitb_l4"])
    parser.add_argument("--attacks", action="store_true", help="score tests/attack_rules.py's rules too")
    parser.add_argument("--n", type=int, default=None, help="responses read (default: all)")
    parser.add_argument("--guard-only", action="store_true", help="only the blank guard's false positives")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"load average at start: {load_average()}")
    rows = load_rows(args.n)
    if not args.guard_only:
        table = {level: level_table(level, rows, args.attacks) for level in args.levels}
        print("\n## the 20 models against the story-reading floor: AtAvg minus floor (* significant)")
        print("| model | " + " | ".join(args.levels) + " |")
        for model in sorted({m for t in table.values() for m in t}):
            cells = [
                f"{t[model][0]:+.3f}{'*' if t[model][1] else ''}" if model in t else ""
                for t in table.values()
            ]
            print(f"| {model} | " + " | ".join(cells) + " |")
    blank_false_positives(rows)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; load average at end: {load_average()}")


if __name__ == "__main__":
    main()
