"""Parity of the shared forward pass: the package's BERTScore and Sem-F1 against separate library calls.

With one encoder for both metrics (the MiniLM fallback), ``score_pairs`` reads the Sem-F1 vector
of every one-sentence text off BERTScore's forward pass instead of encoding it again. This scores
the extracted answers of N responses of ../shared/data/extraction/responses.jsonl (default: all
9,800) against their golds with ``score_pairs`` (flushes of 1,024 pairs, as the scorer sends them)
and separately with the libraries: ``BERTScorer.score`` pair by pair (batch size 1, so no padding
enters a pair's match) and ``SentenceTransformer.encode`` of every distinct sentence followed by
the authors' Sem-F1 formula. Prints the largest difference of each metric, how many sentences
the shared pass embedded, and last ``max_abs_diff=<largest>``; exits 1 if it is above 1e-6.
Usage: python benchmarks/metrics_parity.py [--n N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import load_rows
from side_by_side import load_average, peak_rss_mb

TOLERANCE = 1e-6
CHUNK = 1024


def separate_bertscore(scorer, predictions: list[str], references: list[str]) -> list[float]:
    scores: list[float] = []
    for start in range(0, len(predictions), CHUNK):  # chunks bound the library's embedding dict
        chunk = slice(start, start + CHUNK)
        scores += scorer.score(predictions[chunk], references[chunk], batch_size=1)[2].tolist()
    return scores


def separate_semf1(model, pred_sentences: list[list[str]], ref_sentences: list[list[str]]) -> list[float]:
    distinct = list(dict.fromkeys(s for group in pred_sentences + ref_sentences for s in group))
    vectors = dict(zip(distinct, model.encode(distinct, batch_size=64, normalize_embeddings=True)))
    scores = []
    for pred, ref in zip(pred_sentences, ref_sentences):
        if not pred or not ref:  # the definition's zero for a side without sentences
            scores.append(0.0)
            continue
        cosine = np.stack([vectors[s] for s in pred]) @ np.stack([vectors[s] for s in ref]).T
        precision, recall = cosine.max(axis=1).mean(), cosine.max(axis=0).mean()
        scores.append(float(2 * precision * recall / (precision + recall + 1e-8)))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="responses (default: all)")
    args = parser.parse_args()

    from bert_score import BERTScorer
    from sentence_transformers import SentenceTransformer

    from narrative_infill.extraction import extract_answer
    from narrative_infill.scorers.metrics.embedding import _sentence_model
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs, sentences

    started = time.perf_counter()
    rows = load_rows(args.n)
    pairs = [
        (extract_answer(r["response"], r["problem"]).text.strip(), r["gold_answer"].strip()) for r in rows
    ]
    pairs = [(p, g) for p, g in pairs if p]
    backbones = resolve_backbones("minilm")
    package_model = _sentence_model(backbones.semf1_model)
    encoded = []
    original_encode = package_model.encode
    package_model.encode = lambda texts, **kw: encoded.extend(texts) or original_encode(texts, **kw)
    package = []
    for start in range(0, len(pairs), CHUNK):
        chunk = pairs[start : start + CHUNK]
        package += score_pairs([p for p, _ in chunk], [g for _, g in chunk], backbones)
    package_model.encode = original_encode

    predictions, references = [p for p, _ in pairs], [g for _, g in pairs]
    pred_sentences, ref_sentences = [sentences(p) for p in predictions], [sentences(g) for g in references]
    scorer = BERTScorer(model_type=backbones.bertscore_model, num_layers=backbones.bertscore_layer, lang="en")
    expected = {
        "bertscore": separate_bertscore(scorer, predictions, references),
        "semf1": separate_semf1(SentenceTransformer(backbones.semf1_model), pred_sentences, ref_sentences),
    }
    distinct = len({s for group in pred_sentences + ref_sentences for s in group})
    print(f"pairs={len(pairs)} with an answer, of {len(rows)} responses; {distinct} distinct sentences")
    print(
        f"the package's sentence model embedded {len(encoded)} sentences; the rest came from the shared pass"
    )
    worst = 0.0
    for metric, values in expected.items():
        diff = np.abs(np.array([r.values[metric] for r in package]) - np.array(values))
        print(f"{metric}: max |package - separate| = {diff.max():.2e}  (mean {diff.mean():.2e})")
        worst = max(worst, float(diff.max()))
    print(f"{time.perf_counter() - started:.0f} s  load {load_average()}  peak RSS {peak_rss_mb():.0f} MB")
    print(f"max_abs_diff={worst:.2e}")
    sys.exit(0 if worst <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
