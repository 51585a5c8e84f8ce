"""Grid-shaped metric scoring: the same golds scored again and again, cache warm vs bare calls.

In the paper's grid every gold span is scored 180 times. The 9,800 real responses in
../shared/data/extraction/responses.jsonl repeat 30 problems the same way. Scores N of their
extracted answers against the golds twice, side by side in one process, on the same backbones:
 (a) the package's ``score_pairs`` with the golds' embeddings already in its cache (as from the
     second setting of a grid on), in batches of 1,024 pairs as the scorer flushes them;
 (b) bare batched library calls (BERTScorer.score, SentenceTransformer.encode, rouge-score,
     sacrebleu, NLTK METEOR), which embed every gold every time.
Prints both times, the cache's hit rate and last ``ratio=<(a)/(b)>`` (target <= 0.7).
Usage: python benchmarks/metrics_grid.py [--n 2000 | --all]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import bare_path, load_rows  # noqa: E402  (the same bare calls and rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--all", action="store_true", help="all 9,800 responses")
    args = parser.parse_args()

    from narrative_infill.extraction import extract_answer
    from narrative_infill.scorers.metrics.cache import embedding_cache
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    rows = load_rows(None if args.all else args.n)
    pairs = [(extract_answer(r["response"], r["problem"]).text, r["gold_answer"]) for r in rows]
    backbones = resolve_backbones("auto")
    golds = sorted({gold for _, gold in pairs})
    score_pairs(golds, golds, backbones)  # loads the models and warms the golds' cache (a first setting)
    caches = [embedding_cache(kind, backbones.signature()) for kind in ("bertscore", "semf1")]
    before = [(c.hits, c.misses) for c in caches]

    started = time.perf_counter()
    for start in range(0, len(pairs), 1024):
        chunk = pairs[start : start + 1024]
        score_pairs([p for p, _ in chunk], [g for _, g in chunk], backbones)
    cached_seconds = time.perf_counter() - started
    hits = sum(c.hits - b[0] for c, b in zip(caches, before))
    lookups = hits + sum(c.misses - b[1] for c, b in zip(caches, before))
    bare_seconds, _ = bare_path(pairs, backbones)

    print(f"pairs={len(pairs)} distinct golds={len(golds)}")
    print(
        f"(a) score_pairs, golds' cache warm: {cached_seconds:.1f} s  {len(pairs) / cached_seconds:.1f} pairs/s  cache hit rate {hits / max(lookups, 1):.1%}"
    )
    print(f"(b) bare batched library calls: {bare_seconds:.1f} s  {len(pairs) / bare_seconds:.1f} pairs/s")
    print(f"ratio={cached_seconds / bare_seconds:.3f}")


if __name__ == "__main__":
    main()
