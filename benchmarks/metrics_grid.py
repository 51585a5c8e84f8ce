"""Grid-shaped metric scoring: the same golds scored again and again, cache warm vs bare calls.

In the paper's grid every gold span is scored 180 times. The 9,800 real responses in
../shared/data/extraction/responses.jsonl repeat 30 problems the same way. Scores N of their
extracted answers against the golds both ways, alternating A B A B A B in one process, on the same backbones:
 (a) the package's ``score_pairs`` with the golds' embeddings already in its cache (as from the
     second setting of a grid on), in batches of 1,024 pairs as the scorer flushes them;
 (b) bare batched library calls (BERTScorer.score, SentenceTransformer.encode, rouge-score,
     sacrebleu, NLTK METEOR), which embed every gold every time.
Prints each round, the cache's hit rate, load average, peak RSS and last ``ratio=<median (a)/(b)>``
(target <= 0.6).
Usage: python benchmarks/metrics_grid.py [--n 2000 | --all] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import BareLibraries, load_rows  # the same bare calls and rows
from side_by_side import alternate, load_average, peak_rss_mb, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--all", action="store_true", help="all 9,800 responses")
    parser.add_argument("--rounds", type=int, default=3, help="A B rounds (at least 3)")
    args = parser.parse_args()

    from narrative_infill.extraction import extract_answer
    from narrative_infill.scorers.metrics.cache import embedding_cache
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    print(f"load average at start: {load_average()}")
    rows = load_rows(None if args.all else args.n)
    pairs = [(extract_answer(r["response"], r["problem"]).text, r["gold_answer"]) for r in rows]
    backbones = resolve_backbones("auto")
    golds = sorted({gold for _, gold in pairs})
    score_pairs(golds, golds, backbones)  # loads the models and warms the golds' cache (a first setting)
    bare = BareLibraries(backbones)
    caches = [embedding_cache(kind, backbones.signature()) for kind in ("bertscore", "semf1")]
    before = [(c.hits, c.misses) for c in caches]

    def cached_golds():
        for start in range(0, len(pairs), 1024):
            chunk = pairs[start : start + 1024]
            score_pairs([p for p, _ in chunk], [g for _, g in chunk], backbones)

    times = alternate(cached_golds, lambda: bare.score(pairs), args.rounds)
    hits = sum(c.hits - b[0] for c, b in zip(caches, before))
    lookups = hits + sum(c.misses - b[1] for c, b in zip(caches, before))
    median, line = summary(times)
    print(f"pairs={len(pairs)} distinct golds={len(golds)}")
    print(f"A: score_pairs in flushes of 1,024, golds' cache warm (hit rate {hits / max(lookups, 1):.1%})")
    print("B: bare batched library calls")
    print(line + f"  (target <= 0.6)  load at end: {load_average()}  peak RSS {peak_rss_mb():.0f} MB")
    print(f"ratio={median:.3f}")


if __name__ == "__main__":
    main()
