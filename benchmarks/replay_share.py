"""How many answers honest entries share word for word: the board's replay rule measured on real outputs.

The board marks two entries as one run when ``replay.REPLAY_SHARE`` or more of one's non-empty
answers are, letter for letter (``replay.folded_answer``), an answer of the other to the same instance
(``replay.replayed_share``). This measures that share between honest entries built from
../shared/data/extraction/responses.jsonl (20 models; each answers every (level, problem) about four
times, under other prompt templates, system prompts and temperatures 0.3 and 0.6): an entry is one
model's k-th answer to every instance, each answer extracted as the scorer extracts it. Two entries of
one model are the nearest thing to two honest runs of it (at a lower temperature than the protocol's
0.8, so they share more); two models' entries are two honest entrants. Prints the largest share and
the share of pairs at or above the threshold for each kind, and a replay (an entry against itself in
another order) for scale; last ``honest_max=<largest honest share>``. Exits 1 if an honest pair is
at or above ``REPLAY_SHARE``.
Usage: python benchmarks/replay_share.py [--models 20] [--responses FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from itertools import combinations
from pathlib import Path

RESPONSES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "extraction" / "responses.jsonl"


def entries(path: Path, models: int) -> dict[tuple[str, int], dict]:
    """(model, k) -> that entry's answers (``replay.Answers``): the model's k-th answer, by template
    id, system prompt and temperature, to every (level, problem)."""
    from narrative_infill.extraction import extract_answer
    from narrative_infill.platform.analysis.submission.replay import folded_answer

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = sorted({row["model"] for row in rows})[:models]
    grouped = defaultdict(list)
    for row in rows:
        if row["model"] in kept:
            grouped[(row["model"], row["template_name"], str(row["problem_id"]))].append(row)
    out: dict[tuple[str, int], dict] = defaultdict(dict)
    for (model, level, problem), answers in grouped.items():
        answers.sort(key=lambda row: (row["template_id"], row["sys_id"], row["temperature"], row["id"]))
        for k, row in enumerate(answers):
            if letters := folded_answer(extract_answer(row["response"], row["problem"]).text):
                out[(model, k)][(level, problem)] = {letters}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--responses", type=Path, default=RESPONSES)
    args = parser.parse_args()

    from narrative_infill.platform.analysis.submission.replay import REPLAY_SHARE, replayed_share

    if not args.responses.is_file():
        sys.exit(f"{args.responses}: the real outputs are not here (../shared)")
    found = entries(args.responses, args.models)
    print(f"data: {len(found)} entries of {len({m for m, _ in found})} models from {args.responses}")
    kinds: dict[str, list[float]] = {"one model, two runs": [], "two models": []}
    for a, b in combinations(sorted(found), 2):
        share = max(replayed_share(found[a], found[b]), replayed_share(found[b], found[a]))
        kinds["one model, two runs" if a[0] == b[0] else "two models"].append(share)
    for kind, shares in kinds.items():
        shares.sort()
        above = sum(share >= REPLAY_SHARE for share in shares)
        print(
            f"{kind}: {len(shares)} pairs, largest share {shares[-1]:.3f}, "
            f"median {shares[len(shares) // 2]:.3f}, {above} at or above {REPLAY_SHARE:g}"
        )
    entry = sorted(found)[0]
    shuffled = dict(random.Random(0).sample(sorted(found[entry].items()), len(found[entry])))
    replayed = replayed_share(shuffled, found[entry])
    print(f"a replay of {entry[0]} (its answers in another order): share {replayed:.3f}")
    honest_max = max(max(shares) for shares in kinds.values())
    print(f"honest_max={honest_max:.3f} (REPLAY_SHARE {REPLAY_SHARE:g})")
    sys.exit(0 if honest_max < REPLAY_SHARE else 1)


if __name__ == "__main__":
    main()
