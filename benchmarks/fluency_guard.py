"""The fluency check (``order_gain``, ``analysis.fluency``; issue 45) on real answers and on word
salad built from the story.

Reads ../shared/data/extraction/responses.jsonl (the authors' 9,800 outputs: 30 ROCStories
problems, 20 models, L0-L4), takes a seeded sample of ``--per-model`` outputs of each model,
extracts each with ``ours`` (the default: the answer as the guards see it), and prints:
* per model, the share of its sampled answers under ``FLUENCY_THRESHOLD`` (false positives: every
  real answer is a model's attempt), and the sample's lowest gains with their answers;
* per attack (``tests/word_salad.py``: the thinned-and-padded story, other keep rates and paddings,
  function-word glue, fluent text before or around the salad, and the package's order-free null
  rules) on the first ``--problems`` demo problems: the share flagged and the highest gain;
* the cost per answer read (two passes of SmolLM2-135M on this machine's cores).

The threshold was set (under ``order_gain/2``, and kept for ``order_gain/3``'s windows) on the attacks
and the first 60 answers of the seeded 200-output sample the shared test reads (``--held-out`` prints
the 20 models' figures on a sample that excludes those 200: held out). Deterministic (sampling and
shuffles seeded). The cost is per output, read or not (answers under eight words are not read).

``--all`` reads every one of the 9,800 outputs instead of a sample (the closing figures of issue 45:
per-model false-positive shares; the 60 rows the threshold was set on are among them).

Usage: nice python benchmarks/fluency_guard.py [--per-model 20 | --all] [--problems 10] [--held-out]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))
from metrics_throughput import load_rows  # noqa: E402
from word_salad import demo_problems, salad_variants  # noqa: E402

SEED = 45
#: The shared test's sample (``tests/platform/test_fluency_guard_reads_word_salad.py``): in-sample rows.
TEST_SAMPLE = 200


def _sample(rows: list[dict], per_model: int | None, held_out: bool) -> list[dict]:
    """``per_model`` seeded outputs of each model (every output where None), the test's 200 left out
    when ``held_out``."""
    excluded = set(random.Random(SEED).sample(range(len(rows)), TEST_SAMPLE)) if held_out else set()
    by_model = defaultdict(list)
    for index, row in enumerate(rows):
        if index not in excluded:
            by_model[row["model"]].append(row)
    chance = random.Random(SEED)
    return [
        row
        for model in sorted(by_model)
        for row in (by_model[model] if per_model is None else chance.sample(by_model[model], per_model))
    ]


def real_answers(read, per_model: int | None, held_out: bool) -> None:
    from narrative_infill.extraction import extract_with
    from narrative_infill.platform.analysis.fluency import FLUENCY_THRESHOLD, UNREAD_WHOLE, is_not_fluent

    rows = _sample(load_rows(None), per_model, held_out)
    gains = defaultdict(list)
    started = time.perf_counter()
    for row in rows:
        answer = extract_with("ours", row["response"], row["problem"]).text
        gains[row["model"]].append((read(answer), answer))
    cost = (time.perf_counter() - started) / len(rows)
    label = "held out (excludes the test's 200)" if held_out else "includes rows the threshold was set on"
    size = "every output of each model" if per_model is None else f"{per_model} per model, seeded"
    print(f"real answers: {size}, extraction=ours; {label}")
    print(f"{'model':<48} flagged  read  lowest gains (nats/word)")
    flagged_all = read_all = 0
    for model, read_gains in gains.items():
        known = sorted(gain for gain, _ in read_gains if gain is not None)
        flagged = sum(bool(is_not_fluent(gain)) for gain, _ in read_gains)
        flagged_all, read_all = flagged_all + flagged, read_all + len(known)
        lowest = [round(g, 2) for g in known[:3]]
        print(f"{model:<48} {flagged / len(read_gains):6.1%} {len(known):5d}  {lowest}")
    share = flagged_all / len(rows)
    unread = sum(gain == UNREAD_WHOLE for read_gains in gains.values() for gain, _ in read_gains)
    print(f"all: {flagged_all} of {len(rows)} flagged ({share:.1%}); {read_all} long enough to read")
    print(f"longer than the check reads (not fluent: UNREAD_WHOLE): {unread}")
    for model, read_gains in gains.items():
        for gain, answer in read_gains:
            if gain is not None and gain < FLUENCY_THRESHOLD + 1:
                print(f"  near the threshold: {gain:.2f} {model}: {answer[:90]!r}")
    print(f"cost per real answer: {cost * 1000:.0f} ms (short ones are not read)")


def attacks(read, problems: int) -> None:
    from narrative_infill.platform.analysis.fluency import is_not_fluent

    chosen = demo_problems()[:problems]
    print(f"\nattacks on the first {problems} problems of the packaged demo set")
    for name, build in salad_variants(demo_problems()).items():
        gains = [read(build(problem)) for problem in chosen]
        flagged = sum(bool(is_not_fluent(gain)) for gain in gains)
        highest = max((g for g in gains if g is not None), default=float("nan"))
        print(f"{name:<44} flagged {flagged / len(gains):6.1%}  highest gain {highest:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-model", type=int, default=20)
    parser.add_argument("--all", action="store_true", help="every shared output, not a sample")
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--held-out", action="store_true")
    args = parser.parse_args()
    from narrative_infill.platform.analysis.fluency import fluency_reader

    started = time.perf_counter()
    read = fluency_reader()
    print(f"model loaded in {time.perf_counter() - started:.1f} s")
    if args.problems:
        attacks(read, args.problems)
    real_answers(read, None if args.all else args.per_model, args.held_out)


if __name__ == "__main__":
    main()
