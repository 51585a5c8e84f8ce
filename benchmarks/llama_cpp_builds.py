"""Generation speed of llama-cpp-python builds side by side: SmolLM2 on the 24 demo prompts as
``narrative_infill/l2`` sends them (system text leading the user turn), greedy, the same cap.

Each build is a folder holding a ``llama_cpp`` package (``pip install --no-deps --target DIR
WHEEL``). Builds run in alternation (A, B, A, B, ...), each round in a fresh process that loads
the model and warms up untimed, so a drift in the machine's load hits both alike.

    python benchmarks/llama_cpp_builds.py portable=/tmp/site-portable native=/tmp/site-native --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Run in the child with the build's folder first on sys.path: prompts in on stdin, figures out.
WORKER = """
import json, sys, time
import llama_cpp
job = json.load(sys.stdin)
model = llama_cpp.Llama(model_path=job["model"], n_ctx=2048, n_threads=job["threads"], verbose=False, seed=0)
def generate(text):
    return model.create_chat_completion([{"role": "user", "content": text}], max_tokens=job["max_tokens"],
                                        temperature=0.0, seed=0)
generate(job["prompts"][0])  # warm-up, untimed
prompt_tokens = completion_tokens = 0
started = time.perf_counter()
for text in job["prompts"]:
    usage = generate(text)["usage"]
    prompt_tokens += usage["prompt_tokens"]
    completion_tokens += usage["completion_tokens"]
seconds = time.perf_counter() - started
print(json.dumps({"library": llama_cpp.__file__, "seconds": seconds, "prompt_tokens": prompt_tokens,
                  "completion_tokens": completion_tokens}))
"""


def demo_prompts() -> list[str]:
    """The user turns ``narrative_infill/l2`` sends for the demo set (its default settings)."""
    sys.path.insert(0, str(REPO))
    from narrative_infill.data.dataset import infill_dataset
    from narrative_infill.prompts import prompt_template

    template = prompt_template("l2")
    prompts = []
    for sample in infill_dataset(data="demo"):
        slots = {"problem": sample.input, "n": sample.metadata["n"], "unit": sample.metadata["unit"]}
        prompts.append(f"{template.system}\n\n{template.render(slots)}")
    return prompts


def run_build(folder: Path, job: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"build in {folder} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["library"].startswith(str(folder)):
        raise SystemExit(f"{folder}: imported {result['library']} instead")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs=2, metavar="NAME=DIR", help="two builds: a name and its folder")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two builds")
    parser.add_argument("--max-tokens", type=int, default=96, help="cap per prompt (greedy decoding)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--prompts", type=int, default=None, help="the first N demo prompts (default: all 24)"
    )
    args = parser.parse_args()
    from narrative_infill.platform.local.server import default_gguf

    builds = dict(pair.split("=", 1) for pair in args.builds)
    job = {"model": str(default_gguf()), "prompts": demo_prompts()[: args.prompts], "max_tokens": args.max_tokens,
           "threads": args.threads}  # fmt: skip
    print(
        f"{len(job['prompts'])} demo prompts, l2, greedy, max_tokens {args.max_tokens}, {args.threads} threads"
    )
    rates: dict[str, list[float]] = {name: [] for name in builds}
    for round_ in range(1, args.rounds + 1):
        for name, folder in builds.items():
            result = run_build(Path(folder).resolve(), job)
            # Prompt and completion tokens together: the builds' greedy outputs differ slightly in
            # length (different float kernels), and prompt processing is most of an eval's work.
            rate = (result["prompt_tokens"] + result["completion_tokens"]) / result["seconds"]
            rates[name].append(rate)
            print(f"round {round_} {name:>10}: {result['prompt_tokens']} prompt + {result['completion_tokens']} "
                  f"completion tokens in {result['seconds']:.1f} s = {rate:.1f} tokens/s "
                  f"({result['completion_tokens'] / result['seconds']:.2f} completion tokens/s)", flush=True)  # fmt: skip
    (first, first_rates), (second, second_rates) = rates.items()
    ratios = [a / b for a, b in zip(first_rates, second_rates)]
    print(f"median tokens/s (prompt + completion): {first} {statistics.median(first_rates):.1f}, "
          f"{second} {statistics.median(second_rates):.1f}; {first}/{second} per round "
          f"{', '.join(f'{r:.3f}' for r in ratios)} (median {statistics.median(ratios):.3f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
