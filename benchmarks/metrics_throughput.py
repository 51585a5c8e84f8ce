"""Automatic-metric throughput: the project's Inspect scoring path against bare library calls.

Scores N real responses from ../shared/data/extraction/responses.jsonl against their gold
spans both ways, alternating A B A B A B in one process (``side_by_side.py``), on the same backbones:
 (a) through Inspect: an .eval log of the N samples is rescored with the
     ``narrative_infill/metrics`` scorer (``inspect_ai.score``), answer extraction included;
 (b) with bare batched library calls on the same extracted pairs: BERTScorer.score,
     SentenceTransformer.encode, rouge-score, sacrebleu, NLTK METEOR.
Models are loaded before either timing starts. (a) embeds each distinct sentence once for
Sem-F1; (b) makes the plain library call, which embeds every occurrence. The shared file
holds 30 problems, so gold sentences repeat far more than in a benchmark run; (a)'s golds'
cache and extraction cache are emptied before each of its rounds. Prints each round, each metric's share of (b), the
load average, peak RSS, and last ``ratio=<median (a)/(b)>`` (target <= 0.9).

Usage: python benchmarks/metrics_throughput.py [--n 2000 | --all] [--backbone auto|paper|minilm] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import alternate, load_average, peak_rss_mb, summary

RESPONSES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction" / "responses.jsonl"


def load_rows(n: int | None) -> list[dict]:
    with RESPONSES.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return rows if n is None else rows[:n]


def eval_log_of(rows: list[dict]) -> str:
    """The location of an .eval log holding the stored responses as model outputs (mockllm replays them)."""
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
    return log.location


def read_log(location: str, rows: list[dict]):
    """The log as ``inspect score`` reads it, with the problem as each sample's input (as in the real
    tasks, whose scorers read it from there)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(location)
    for sample, row in zip(log.samples, rows):
        sample.input = row["problem"]
    return log


def time_score_pairs() -> list[tuple[int, float]]:
    """Record the (size, seconds) of every batch ``score_pairs`` computes from now on; call before the
    scorer is first created (it binds ``score_pairs`` then)."""
    import narrative_infill.scorers.metrics.pairs as auto_metrics

    batches: list[tuple[int, float]] = []
    score_pairs = auto_metrics.score_pairs

    def timed_score_pairs(predictions, references, *args, **kwargs):
        start = time.perf_counter()
        results = score_pairs(predictions, references, *args, **kwargs)
        batches.append((len(predictions), time.perf_counter() - start))
        return results

    auto_metrics.score_pairs = timed_score_pairs
    return batches


def inspect_path(log, backbone: str) -> None:
    """(a): the log rescored by the metrics scorer through ``inspect_ai.score``."""
    from inspect_ai import score

    from narrative_infill.scorers.metrics import metrics

    scored = score(log, metrics(backbone=backbone), action="overwrite", display="none", copy=False)
    assert all("metrics" in s.scores for s in scored.samples)


class BareLibraries:
    """(b): the plain batched library calls, their models loaded once (before any timing)."""

    def __init__(self, backbones):
        from bert_score import BERTScorer
        from nltk import word_tokenize
        from nltk.translate.meteor_score import single_meteor_score
        from rouge_score import rouge_scorer
        from sacrebleu.metrics import CHRF
        from sentence_transformers import SentenceTransformer

        self.bert = BERTScorer(
            model_type=backbones.bertscore_model, num_layers=backbones.bertscore_layer, lang="en"
        )
        self.sentence_model = SentenceTransformer(backbones.semf1_model)
        self.rouge, self.chrf = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False), CHRF()
        single_meteor_score(word_tokenize("warm up"), word_tokenize("warm up"))  # loads WordNet

    def score(self, pairs: list[tuple[str, str]]) -> dict[str, float]:
        """Scores every pair with an answer; returns each metric's seconds."""
        from nltk import sent_tokenize, word_tokenize
        from nltk.translate.meteor_score import single_meteor_score

        filled = [(p, r) for p, r in pairs if p.strip()]
        preds, refs = [p for p, _ in filled], [r for _, r in filled]
        shares: dict[str, float] = {}
        start = time.perf_counter()
        self.bert.score(preds, refs, batch_size=64)
        shares["bertscore"] = time.perf_counter() - start

        t = time.perf_counter()
        pred_sents, ref_sents = [sent_tokenize(p) for p in preds], [sent_tokenize(r) for r in refs]
        flat = [s for group in pred_sents + ref_sents for s in group]
        vectors = self.sentence_model.encode(
            flat, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        )
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
            self.rouge.score(r, p)
        shares["rouge1"] = time.perf_counter() - t
        t = time.perf_counter()
        for p, r in filled:
            self.chrf.sentence_score(p, [r])
        shares["chrf"] = time.perf_counter() - t
        t = time.perf_counter()
        for p, r in filled:
            single_meteor_score(word_tokenize(r), word_tokenize(p), alpha=0.9, beta=3, gamma=0.5)
        shares["meteor"] = time.perf_counter() - t
        return shares


def forget_cached_work() -> None:
    """Empty the process's golds' embedding caches and the scorers' extraction cache, so each round
    of (a) starts cold."""
    from narrative_infill.scorers import answer
    from narrative_infill.scorers.metrics import cache

    cache._caches.clear()
    answer.read_answer.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="responses to score (default 2000)")
    parser.add_argument("--all", action="store_true", help="score all 9,800 responses")
    parser.add_argument("--backbone", default="auto", choices=("auto", "paper", "minilm"))
    parser.add_argument("--rounds", type=int, default=3, help="A B rounds (at least 3)")
    args = parser.parse_args()

    from narrative_infill.extraction import extract_answer
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    print(f"load average at start: {load_average()}")
    rows = load_rows(None if args.all else args.n)
    pairs = [(extract_answer(r["response"], r["problem"]).text, r["gold_answer"]) for r in rows]
    backbones = resolve_backbones(args.backbone)
    score_pairs(["Warm up."], ["Warm up the models."], backbones)  # load (a)'s models before timing
    bare = BareLibraries(backbones)
    location = eval_log_of(rows)
    batches = time_score_pairs()
    shares: dict[str, float] = {}
    log = []  # the log A rescores next, read afresh each round (scoring writes into it)

    def prepare_a():
        forget_cached_work()
        batches.clear()
        log[:] = [read_log(location, rows)]

    def side_a():
        inspect_path(log.pop(), args.backbone)

    times = alternate(side_a, lambda: shares.update(bare.score(pairs)), args.rounds, prepare_a)
    n = len(pairs)
    median, line = summary(times)
    print(
        f"pairs={n} (with an answer: {sum(1 for p, _ in pairs if p.strip())})  backbones: "
        f"{backbones.bertscore_model} L{backbones.bertscore_layer} / {backbones.semf1_model}"
    )
    print("A: inspect scoring path (inspect_ai.score with narrative_infill/metrics, golds' cache cold)")
    print(
        f"   last round's metric computation: {sum(t for _, t in batches):.1f} s in {len(batches)} batches "
        f"of {[size for size, _ in batches]} pairs; the rest is Inspect's per-sample scoring and waiting"
    )
    print("B: bare batched library calls; last round by metric: " + "  ".join(
        f"{k}={v / sum(shares.values()):.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1])
    ))  # fmt: skip
    print(line + f"  (target <= 0.9)  load at end: {load_average()}  peak RSS {peak_rss_mb():.0f} MB")
    print(f"ratio={median:.3f}")


if __name__ == "__main__":
    main()
