"""How often the board shows a spurious order on boards of truly equal entries (the board's own code).

Each simulated board holds ``--entries`` entries of one model: every instance's QAvg is a story
effect shared by all entries (some stories are harder for everyone), a story effect of each entry's
own (sd ``--own-story``: an entry that misreads a story misfills all its blanks, which is what makes
clustering matter to paired differences) and each entry's own noise (sd 1 each, ``--per-narrative``
instances per narrative). ``ranking.rank`` orders the board; a
board "shows a spurious order" when any entry gets a rank above 1. Printed per narrative count:
the share of such boards (with its binomial standard error), the mean number of spurious "ranked
below" relations per board and the mean worst rank; beside them, for contrast, the share of
boards where some pair's unadjusted p is below 0.05 (the rule before Holm).
Usage: python benchmarks/board_null_ranks.py [--boards 1000] [--entries 20] [--narratives 10 50]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from narrative_infill.platform.analysis.submission.ranking import INSTANCES, compare_entries, rank


def equal_board(
    rng: np.random.Generator, entries: int, narratives: int, per_narrative: int, own_story: float
) -> list[dict]:
    """One board of ``entries`` truly equal entries (rows as ``ranking.rank`` reads them)."""
    story = np.repeat(rng.normal(3.0, 1.0, narratives), per_narrative)
    rows = []
    for e in range(entries):
        own = np.repeat(rng.normal(0.0, own_story, narratives), per_narrative)
        values = story + own + rng.normal(0.0, 1.0, narratives * per_narrative)
        instances = {
            ("l1", f"rocstories-{i // per_narrative}-n1-i{i % per_narrative}"): [float(v)]
            for i, v in enumerate(values)
        }
        mean = float(values.mean())
        rows.append(
            {
                "model": f"m{e}",
                "baseline": False,
                "track": "demo",
                "group": "g",
                "qavg": (mean, mean, mean),
                "atavg": None,
                INSTANCES: {"qavg": instances},
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--narratives", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--per-narrative", type=int, default=3)
    parser.add_argument("--own-story", type=float, default=1.0, help="sd of each entry's own story effect")
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args()
    for narratives in args.narratives:
        rng, started = np.random.default_rng(args.seed), time.perf_counter()
        spurious = relations = worst = unadjusted = 0
        for _ in range(args.boards):
            rows = equal_board(rng, args.entries, narratives, args.per_narrative, args.own_story)
            rank(rows)
            ranks = [row["rank"] for row in rows]
            spurious += max(ranks) > 1
            relations += sum(r - 1 for r in ranks)
            worst += max(ranks)
            unadjusted += any(
                compare_entries(a[INSTANCES]["qavg"], b[INSTANCES]["qavg"]).p_value < 0.05
                for i, a in enumerate(rows)
                for b in rows[i + 1 :]
            )
        share = spurious / args.boards
        print(
            f"{args.entries} equal entries, {narratives} narratives x {args.per_narrative}, own story sd "
            f"{args.own_story:g}: "
            f"{spurious}/{args.boards} boards with a spurious order ({share:.3f} +- "
            f"{math.sqrt(share * (1 - share) / args.boards):.3f}), {relations / args.boards:.3f} spurious "
            f"relations and mean worst rank {worst / args.boards:.2f} per board; unadjusted p < 0.05 on "
            f"some pair: {unadjusted}/{args.boards} ({time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
