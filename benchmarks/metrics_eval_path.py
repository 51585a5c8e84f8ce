"""What metric scoring adds to an ``inspect eval``: the metrics scorer against a no-op scorer.

A scripted model answers real prompts (responses from ../shared/data/extraction/responses.jsonl)
at a steady rate: each call takes ``--latency`` seconds (default 1) with ``rate x latency`` calls
in flight (``--max-connections``), so generation alone takes ``n / rate`` seconds. The same eval
runs with the ``narrative_infill/metrics`` scorer (A: extraction, the batcher, the five metrics)
and with a scorer that does nothing (B), alternating A B A B A B in one process, at each rate
(default 50/s, and 10/s, the order of a real GPU model). ``--max-samples`` is passed as
``--slots`` x max_connections (default 2: what the README tells users to pass; 1 is Inspect's
default, where a sample being scored holds a slot that generation could use). Prints each round,
each rate's median ratio with its spread, the load average, peak RSS, and last
``ratio=<the worse of the rates' median A/B>`` (target <= 1.15).
Usage: python benchmarks/metrics_eval_path.py [--rates 50,10] [--seconds 20] [--slots 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_throughput import forget_cached_work, load_rows  # the same rows
from side_by_side import alternate, load_average, peak_rss_mb, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rates", default="50,10", help="samples per second the model returns, comma-separated"
    )
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="generation time of one side (n = rate x seconds)"
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds one model call takes")
    parser.add_argument(
        "--slots", type=float, default=2.0, help="max_samples as a multiple of max_connections"
    )
    parser.add_argument("--rounds", type=int, default=3, help="A B rounds per rate (at least 3)")
    args = parser.parse_args()  # fmt: skip

    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import generate

    from narrative_infill.scorers.metrics import metrics
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    @scorer(metrics=[mean()])
    def no_op():
        async def score(state, target):
            return Score(value=0)

        return score

    print(f"load average at start: {load_average()}")
    score_pairs(["Warm up."], ["Warm up the models."], resolve_backbones("auto"))  # models loaded first
    medians = []
    for rate in (float(r) for r in args.rates.split(",")):
        rows = load_rows(int(rate * args.seconds))
        responses = {row["problem"] + f"\x00{i}": row["response"] for i, row in enumerate(rows)}

        async def steady(input, tools, tool_choice, config, responses=responses):
            await asyncio.sleep(args.latency)
            output = ModelOutput.from_content("mockllm/model", responses[input[-1].text])
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return output

        samples = [
            Sample(id=str(i), input=row["problem"] + f"\x00{i}", target=row["gold_answer"])
            for i, row in enumerate(rows)
        ]
        connections = round(rate * args.latency)
        max_samples = round(connections * args.slots)

        def run(
            task_scorer, samples=samples, steady=steady, connections=connections, max_samples=max_samples
        ):
            model = get_model("mockllm/model", custom_outputs=steady, memoize=False)
            [log] = eval(Task(dataset=samples, solver=generate(), scorer=task_scorer), model=model,
                         display="none", max_connections=connections, max_samples=max_samples,
                         log_dir="/tmp/metrics-eval-path-logs")  # fmt: skip
            assert log.status == "success", log.error

        def with_metrics():
            forget_cached_work()
            run(metrics())

        print(f"rate {rate:.0f}/s: {len(rows)} samples (generation alone {len(rows) / rate:.0f} s), "
              f"max_connections={connections} max_samples={max_samples}")  # fmt: skip
        times = alternate(with_metrics, lambda: run(no_op()), args.rounds)
        median, line = summary(times, label=f"rate {rate:.0f}/s: ")
        print(line)
        medians.append(median)
    print("A: inspect eval with the metrics scorer; B: the same eval with a no-op scorer (target <= 1.15)")
    print(f"load at end: {load_average()}  peak RSS {peak_rss_mb():.0f} MB")
    print(f"ratio={max(medians):.3f}")


if __name__ == "__main__":
    main()
