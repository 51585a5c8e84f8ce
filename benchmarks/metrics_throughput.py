"""Automatic-metric throughput: the project's Inspect scoring path against bare library calls.

Scores N real responses from ../shared/data/extraction/responses.jsonl against their gold
spans twice, in one process, on the same backbones:
 (a) through Inspect: an .eval log of the N samples is rescored with the
     ``narrative_infill/metrics`` scorer (``inspect_ai.score``), answer extraction included;
 (b) with bare batched library calls on the same extracted pairs: BERTScorer.score,
     SentenceTransformer.encode, rouge-score, sacrebleu, NLTK METEOR.
Models are loaded before either timing starts. (a) embeds each distinct sentence once for
Sem-F1; (b) makes the plain library call, which embeds every occurrence. The shared file
holds 30 problems, so gold sentences repeat far more than in a benchmark run. Prints both times, pairs per second, peak
RSS, each metric's share of (b), and last ``ratio=<(a)/(b)>`` (target <= 1.0).

Usage: python benchmarks/metrics_throughput.py [--n 2000 | --all] [--backbone auto|paper|minilm]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

RESPONSES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction" / "responses.jsonl"


def load_rows(n: int | None) -> list[dict]:
    with RESPONSES.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return rows if n is None else rows[:n]


def eval_log_of(rows: list[dict]):
    """An .eval log holding the stored responses as model outputs (mockllm replays them)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import generate

    responses = {str(i): row["response"] for i, row in enumerate(rows)}

    def replay(input, tools, tool_choice, config):
        key = input[-1].text.split("\x00")[0]
        output = ModelOutput.from_content("mockllm/model", responses[key])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    @scorer(metrics=[mean()])
    def placeholder_free():  # the log must exist before it is rescored; this scorer records nothing
        async def score(state, target: Target) -> Score:
            return Score(value=0)

        return score

    samples = [
        Sample(id=str(i), input=f"{i}\x00", target=row["gold_answer"], metadata={"problem": row["problem"]})
        for i, row in enumerate(rows)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=placeholder_free())
    model = get_model("mockllm/model", custom_outputs=replay)
    [log] = eval(
        task,
        model=model,
        display="none",
        max_connections=64,
        log_dir=str(Path("/tmp") / "metrics-bench-logs"),
    )
    # The scorer reads the problem as the sample input, as in the real tasks.
    for sample, row in zip(log.samples, rows):
        sample.input = row["problem"]
    return log


def inspect_path(log, backbone: str) -> tuple[float, list[tuple[int, float]]]:
    """Seconds for (a), and the (size, seconds) of each batch the scorer computed."""
    from inspect_ai import score

    import narrative_infill.scorers.metrics.pairs as auto_metrics
    from narrative_infill.scorers.metrics import metrics

    batches: list[tuple[int, float]] = []
    score_pairs = auto_metrics.score_pairs

    def timed_score_pairs(predictions, references, *args, **kwargs):
        start = time.perf_counter()
        results = score_pairs(predictions, references, *args, **kwargs)
        batches.append((len(predictions), time.perf_counter() - start))
        return results

    auto_metrics.score_pairs = timed_score_pairs  # the scorer binds it when first created, below
    try:
        start = time.perf_counter()
        scored = score(log, metrics(backbone=backbone), action="overwrite", display="none")
        elapsed = time.perf_counter() - start
    finally:
        auto_metrics.score_pairs = score_pairs
    assert all("metrics" in s.scores for s in scored.samples)
    return elapsed, batches


def bare_path(pairs: list[tuple[str, str]], backbones) -> tuple[float, dict[str, float]]:
    import numpy as np
    from bert_score import BERTScorer
    from nltk import sent_tokenize, word_tokenize
    from nltk.translate.meteor_score import single_meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import CHRF
    from sentence_transformers import SentenceTransformer

    bert = BERTScorer(model_type=backbones.bertscore_model, num_layers=backbones.bertscore_layer, lang="en")
    sentence_model = SentenceTransformer(backbones.semf1_model)
    rouge, chrf = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False), CHRF()
    single_meteor_score(word_tokenize("warm up"), word_tokenize("warm up"))  # loads WordNet
    filled = [(p, r) for p, r in pairs if p.strip()]
    preds, refs = [p for p, _ in filled], [r for _, r in filled]

    shares: dict[str, float] = {}
    start = time.perf_counter()
    bert.score(preds, refs, batch_size=64)
    shares["bertscore"] = time.perf_counter() - start

    t = time.perf_counter()
    pred_sents, ref_sents = [sent_tokenize(p) for p in preds], [sent_tokenize(r) for r in refs]
    flat = [s for group in pred_sents + ref_sents for s in group]
    vectors = sentence_model.encode(flat, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    offset = 0
    groups = []
    for group in pred_sents + ref_sents:
        groups.append(vectors[offset : offset + len(group)])
        offset += len(group)
    for pv, rv in zip(groups[: len(preds)], groups[len(preds) :]):
        cosine = pv @ rv.T
        p, r = cosine.max(axis=1).mean(), cosine.max(axis=0).mean()
        _ = 2 * p * r / (p + r + 1e-8)
    shares["semf1"] = time.perf_counter() - t

    t = time.perf_counter()
    for p, r in filled:
        rouge.score(r, p)
    shares["rouge1"] = time.perf_counter() - t
    t = time.perf_counter()
    for p, r in filled:
        chrf.sentence_score(p, [r])
    shares["chrf"] = time.perf_counter() - t
    t = time.perf_counter()
    for p, r in filled:
        single_meteor_score(word_tokenize(r), word_tokenize(p), alpha=0.9, beta=3, gamma=0.5)
    shares["meteor"] = time.perf_counter() - t
    _ = np  # numpy is the cosine backend above
    return time.perf_counter() - start, shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="responses to score (default 2000)")
    parser.add_argument("--all", action="store_true", help="score all 9,800 responses")
    parser.add_argument("--backbone", default="auto", choices=("auto", "paper", "minilm"))
    args = parser.parse_args()

    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs
    from narrative_infill.extraction import extract_answer

    rows = load_rows(None if args.all else args.n)
    pairs = [(extract_answer(r["response"], r["problem"]).text, r["gold_answer"]) for r in rows]
    backbones = resolve_backbones(args.backbone)
    score_pairs(["Warm up."], ["Warm up the models."], backbones)  # load (a)'s models before timing
    log = eval_log_of(rows)

    inspect_seconds, batches = inspect_path(log, args.backbone)
    bare_seconds, shares = bare_path(pairs, backbones)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    n = len(pairs)
    print(
        f"pairs={n} (with an answer: {sum(1 for p, _ in pairs if p.strip())})  backbones: {backbones.bertscore_model} L{backbones.bertscore_layer} / {backbones.semf1_model}"
    )
    print(f"(a) inspect scoring path: {inspect_seconds:.1f} s  {n / inspect_seconds:.1f} pairs/s")
    print(
        f"    of which metric computation: {sum(t for _, t in batches):.1f} s in {len(batches)} batches "
        f"of {[size for size, _ in batches]} pairs; the rest is Inspect's per-sample scoring and waiting"
    )
    print(f"(b) bare batched library calls: {bare_seconds:.1f} s  {n / bare_seconds:.1f} pairs/s")
    print(f"peak RSS: {peak_rss_mb:.0f} MB")
    print(
        "share of (b) by metric: "
        + "  ".join(f"{k}={v / bare_seconds:.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
    )
    print(f"ratio={inspect_seconds / bare_seconds:.3f}")


if __name__ == "__main__":
    main()
