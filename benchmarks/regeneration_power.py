"""The re-generation check on the local SmolLM2 demo: its false-alarm rate and its power.

Runs ``narrative_infill/l2`` on the demo set against a real llama-cpp-python server (SmolLM2),
submits it (track demo), then makes a forgery of the same logs: every answer replaced by the gold
span, every metric re-scored so the logs agree with themselves, the submission's hash recomputed.
Then runs ``verify --regenerate K`` on the honest submission ``--honest`` times and on the forged
one ``--forged`` times (each draws its own seed) and prints how many of each failed. With
``--seed S`` the generations are seeded (the logs record it, so the re-generation reuses it): an
honest submission is then reproduced exactly and can never raise a false alarm, which is how
tests/core/test_regeneration_local.py runs it; without it, this measures the false-alarm rate.
Usage: python benchmarks/regeneration_power.py [--k 12] [--honest 10] [--forged 3] [--seed S] [--keep DIR]
[--max-tokens N] [--port P]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path


def honest_logs(log_dir: Path, seed: int | None = None, max_tokens: int | None = None) -> None:
    from inspect_ai import eval as inspect_eval

    seeded = {} if seed is None else {"seed": seed}
    capped = {} if max_tokens is None else {"max_tokens": max_tokens}
    (log,) = inspect_eval(
        "narrative_infill/l2",
        model="llama-cpp-python/smollm2",
        task_args={"data": "demo", "backbone": "minilm"},
        max_retries=2,
        timeout=120,
        log_dir=str(log_dir),
        display="none",
        **seeded,
        **capped,
    )
    assert log.status == "success", log.error


def forge_gold(source: Path, target: Path) -> None:
    """The same logs with each answer replaced by its gold span (in the output, the generating call,
    its raw response and the solver's state event) and re-scored, the header's means too:
    consistent with themselves in everything a file check can see."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from narrative_infill.platform.analysis.submission.recompute import answer_derived
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    shutil.copytree(source, target)
    backbones = resolve_backbones("minilm")
    for path in target.glob("*.eval"):
        log = read_eval_log(str(path))
        golds = [str(sample.target) for sample in log.samples]
        scores = score_pairs(golds, golds, backbones)
        for sample, gold, fresh in zip(log.samples, golds, scores):
            reply, made = f"<ANSWER>{gold}</ANSWER>", sample.output.completion
            sample.output.choices[0].message.content = reply
            sample.output.choices[0].stop_reason = "stop"
            sample.output.completion = reply  # a stored field, not derived from the choice
            if sample.messages and sample.messages[-1].role == "assistant":
                sample.messages[-1].content = reply
            for event in sample.events:  # the generating call and the solver's state event too
                if event.event == "model" and event.role is None:
                    event.output = sample.output.model_copy(deep=True)
                    if event.call is not None:  # the provider's raw response, as the API sent it
                        raw = json.dumps(event.call.response).replace(
                            json.dumps(made)[1:-1], json.dumps(reply)[1:-1]
                        )
                        event.call.response = json.loads(raw)
                for change in event.changes if event.event == "state" else []:
                    if change.path == "/output/completion":
                        change.value = reply
                    elif change.path == "/output" and isinstance(change.value, dict):
                        change.value["completion"] = reply
            for key, text in (sample.attachments or {}).items():  # the long texts those refer to
                sample.attachments[key] = text.replace(made, reply)
            for score in sample.scores.values():
                score.answer = gold
            # every value the verifier rebuilds from the answer and the story (context_copy, story_reuse)
            derived = {
                key: rebuild(gold, str(sample.input)) for key, (rebuild, _) in answer_derived().items()
            }
            sample.scores["metrics"].value.update(fresh.values, truncated=0.0, **derived)
        for result in log.results.scores if log.results else []:  # verify refuses an edited header
            if result.scorer == "metrics" and "mean" in result.metrics:
                values = [sample.scores["metrics"].value[result.name] for sample in log.samples]
                result.metrics["mean"].value = sum(values) / len(values)
        write_eval_log(log, str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=12, help="instances re-generated per check")
    parser.add_argument("--honest", type=int, default=10, help="checks of the honest submission")
    parser.add_argument("--forged", type=int, default=3, help="checks of the forged submission")
    parser.add_argument("--seed", type=int, help="seed the generations (the re-generation reuses it)")
    parser.add_argument("--keep", type=Path, help="keep the logs and submissions here")
    parser.add_argument("--max-tokens", type=int, help="cap each answer (smoke size; the logs record it)")
    parser.add_argument("--port", type=int, help="the local server's port (default: the package's)")
    args = parser.parse_args()

    from narrative_infill.platform.analysis.submission.build import build_submission, write_submission
    from narrative_infill.platform.analysis.submission.verify import verify
    from narrative_infill.platform.local.server import LocalModelServer

    # a capped run (the smoke size) is off the demo track's protocol: the custom track takes it
    track = "demo" if args.max_tokens is None else "custom"
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="regeneration-power-"))
    with LocalModelServer(**({} if args.port is None else {"port": args.port})) as server:
        os.environ.update(server.environment())
        started = time.perf_counter()
        honest_logs(scratch / "honest", args.seed, args.max_tokens)
        forge_gold(scratch / "honest", scratch / "forged")
        for name in ("honest", "forged"):
            write_submission(build_submission([str(scratch / name)], track), scratch / f"{name}.json")
        print(f"logs and submissions in {time.perf_counter() - started:.0f} s ({scratch})", flush=True)
        outcomes = {}
        for name, repeats in (("honest", args.honest), ("forged", args.forged)):
            failed = 0
            for _ in range(repeats):
                started = time.perf_counter()
                result = verify(scratch / f"{name}.json", scratch / name, regenerate=args.k)
                lines = [line for line in result.lines() if "re-generat" in line]
                failed += any(line.startswith("FAILED") for line in lines)
                print(
                    f"{name}: {lines[0] if lines else result.lines()[-1]} "
                    f"({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
            outcomes[name] = (failed, repeats)
    print(
        f"k={args.k} false_alarms={outcomes['honest'][0]}/{outcomes['honest'][1]} "
        f"detected={outcomes['forged'][0]}/{outcomes['forged'][1]}"
    )


if __name__ == "__main__":
    main()
