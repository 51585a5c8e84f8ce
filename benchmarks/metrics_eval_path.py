"""Metric scoring on the ``inspect eval`` path: samples finish over time, scored as they come.

A scripted model answers N real prompts (responses from ../shared/data/extraction/responses.jsonl)
at a steady rate (default 50 samples/s: each call takes 1 s, 50 in flight), while the
``narrative_infill/metrics`` scorer scores each finished sample (extraction, the batcher's
bounded wait, the five metrics). Compared side by side, in one process, with bare batched
library calls on the same extracted pairs (as in metrics_throughput.py). Prints pairs/s of
both, the same eval with a no-op scorer (what Inspect and the model's rate cost alone), and
last ``ratio=<eval wall time / bare scoring time>`` (target <= 1.5).
Usage: python benchmarks/metrics_eval_path.py [--n 1000] [--rate 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import bare_path, load_rows  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument(
        "--rate", type=float, default=50.0, help="samples per second the scripted model returns"
    )
    args = parser.parse_args()

    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from narrative_infill.extraction import extract_answer
    from narrative_infill.scorers.metrics import metrics
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    rows = load_rows(args.n)
    responses = {row["problem"] + f"\x00{i}": row["response"] for i, row in enumerate(rows)}

    async def steady(input, tools, tool_choice, config):
        await asyncio.sleep(1.0)  # with `rate` calls in flight: `rate` samples per second
        output = ModelOutput.from_content("mockllm/model", responses[input[-1].text])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    samples = [
        Sample(id=str(i), input=row["problem"] + f"\x00{i}", target=row["gold_answer"])
        for i, row in enumerate(rows)
    ]
    backbones = resolve_backbones("auto")
    score_pairs(["Warm up."], ["Warm up the models."], backbones)  # models loaded before either timing
    task = Task(dataset=samples, solver=generate(), scorer=metrics())
    model = get_model("mockllm/model", custom_outputs=steady)
    started = time.perf_counter()
    [log] = eval(
        task,
        model=model,
        display="none",
        max_connections=int(args.rate),
        max_samples=int(args.rate),
        log_dir="/tmp/metrics-eval-path-logs",
    )
    eval_seconds = time.perf_counter() - started
    assert log.status == "success", log.error

    from inspect_ai.scorer import Score, mean, scorer

    @scorer(metrics=[mean()])
    def no_op():
        async def score(state, target):
            return Score(value=0)

        return score

    started = time.perf_counter()
    eval(Task(dataset=samples, solver=generate(), scorer=no_op()), model=get_model("mockllm/model", custom_outputs=steady, memoize=False),
         display="none", max_connections=int(args.rate), max_samples=int(args.rate), log_dir="/tmp/metrics-eval-path-logs")  # fmt: skip
    floor_seconds = time.perf_counter() - started

    pairs = [
        (extract_answer(r["response"], r["problem"] + f"\x00{i}").text, r["gold_answer"])
        for i, r in enumerate(rows)
    ]
    bare_seconds, _ = bare_path(pairs, backbones)
    generation_floor = len(rows) / args.rate
    print(f"samples={len(rows)} model rate={args.rate:.0f}/s (generation alone: {generation_floor:.0f} s)")
    print(
        f"(a) inspect eval, scored as samples finish: {eval_seconds:.1f} s  {len(rows) / eval_seconds:.1f} pairs/s"
    )
    print(
        f"(b) bare batched library calls on the same pairs: {bare_seconds:.1f} s  {len(rows) / bare_seconds:.1f} pairs/s"
    )
    print(
        f"(c) the same eval with a scorer that does nothing: {floor_seconds:.1f} s (Inspect and the model's rate alone)"
    )
    print(
        f"scoring's added time over (c), against (b): added_ratio={(eval_seconds - floor_seconds) / bare_seconds:.3f}"
    )
    print(f"ratio={eval_seconds / bare_seconds:.3f}")


if __name__ == "__main__":
    main()
