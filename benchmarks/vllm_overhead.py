"""What Inspect and this package cost on top of a vLLM server: output tokens/s through ``eval``
against a plain concurrent client, on the same server, with the same prompts.

A: ``narrative_infill/l2`` on the demo set through Inspect's ``eval()`` (what ``inspect eval``
runs), metrics on (the package's scorer: extraction and the five metrics), temperature 0,
``--max-connections N`` (and ``--max-samples 2N``, as docs/vllm.md advises). B: the very prompts
of A's first log with each sample's own ``max_tokens``, sent by an ``openai`` async client, N at
a time. Both sides alternate (A B A B A B, at least three rounds) in one process, so a burst of
load on this shared machine hits both; each round's ratio is A's output tokens/s over B's; the
median and spread are printed, and last ``ratio=<median>`` (target >= 0.9).

``--server vllm`` (default) starts the real engine on the packaged SmolLM2 (docs/vllm.md) and
stops it after; ``--server standin`` uses ``tests/standin_openai_server.py``, which answers at
once, so A's samples/s there is the harness's own ceiling (what a fast GPU engine would meet).
Usage: python benchmarks/vllm_overhead.py [--server vllm|standin] [--rounds 3] [--max-connections 8]
[--epochs N] [--start-timeout S]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import MIN_ROUNDS, load_average, peak_rss_mb

REPO = Path(__file__).resolve().parents[1]
STANDIN = REPO / "tests" / "standin_openai_server.py"


@contextlib.contextmanager
def vllm_server(start_timeout: float):
    from narrative_infill.platform.local.vllm_engine import VllmServer

    server = VllmServer(port=free_port(), startup_timeout=start_timeout)
    started = time.perf_counter()
    with server:
        print(f"vLLM server ready in {time.perf_counter() - started:.0f} s at {server.base_url}", flush=True)
        yield server.base_url, server.api_key


@contextlib.contextmanager
def standin_server(start_timeout: float, options: list[str] | None = None):
    """The stand-in on a free port (``options``: more of its options, e.g. ``--answers FILE``)."""
    port, key = free_port(), "standin-key"
    command = [sys.executable, str(STANDIN), "--port", str(port), f"--api-key={key}", *(options or [])]
    process = subprocess.Popen(command)
    try:
        deadline = time.monotonic() + start_timeout
        while not port_open(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the stand-in server did not start")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1", key
    finally:
        process.terminate()
        process.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def through_inspect(base_url: str, api_key: str, connections: int, log_dir: str, epochs: int):
    """(output tokens, samples, seconds, the log) of one l2 demo eval, metrics on."""
    from inspect_ai import eval
    from inspect_ai.model import get_model

    model = get_model("vllm/smollm2", base_url=base_url, api_key=api_key, memoize=False)
    started = time.perf_counter()
    [log] = eval(
        "narrative_infill/l2",
        model=model,
        task_args={"data": "demo"},
        epochs=epochs,
        temperature=0.0,
        max_connections=connections,
        max_samples=2 * connections,
        log_dir=log_dir,
        display="none",
    )
    seconds = time.perf_counter() - started
    if log.status != "success" or any(sample.error for sample in log.samples):
        raise SystemExit(f"the Inspect side failed: {log.error}")
    tokens = sum(sample.output.usage.output_tokens for sample in log.samples)
    return tokens, len(log.samples), seconds, log


async def _plain(base_url: str, api_key: str, requests: list[tuple[str, int]], connections: int):
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=600)
    gate = asyncio.Semaphore(connections)

    async def one(prompt: str, max_tokens: int) -> int:
        async with gate:
            reply = await client.chat.completions.create(
                model="smollm2",
                messages=[{"role": "user", "content": prompt}],
                max_tokens=max_tokens,
                temperature=0.0,
            )
            return reply.usage.completion_tokens if reply.usage else 0

    try:
        return sum(await asyncio.gather(*(one(prompt, cap) for prompt, cap in requests)))
    finally:
        await client.close()


def through_plain_client(base_url: str, api_key: str, requests: list[tuple[str, int]], connections: int):
    """(output tokens, samples, seconds) of the same requests from a plain concurrent client."""
    started = time.perf_counter()
    tokens = asyncio.run(_plain(base_url, api_key, requests, connections))
    return tokens, len(requests), time.perf_counter() - started


def measure(base_url: str, api_key: str, rounds: int, connections: int, epochs: int) -> list[float]:
    """Each round's ratio of output tokens/s, A (Inspect) over B (plain client)."""
    ratios, requests = [], []
    with tempfile.TemporaryDirectory() as logs:
        for round_number in range(1, rounds + 1):
            a_tokens, a_samples, a_seconds, log = through_inspect(
                base_url, api_key, connections, logs, epochs
            )
            if not requests:  # B sends exactly A's prompts, each with its own cap
                requests = [(s.messages[0].text, s.metadata["max_tokens"]) for s in log.samples]
            b_tokens, b_samples, b_seconds = through_plain_client(base_url, api_key, requests, connections)
            ratio = (a_tokens / a_seconds) / (b_tokens / b_seconds)
            ratios.append(ratio)
            print(
                f"  round {round_number}: A {a_samples} samples {a_tokens} tokens {a_seconds:.1f} s "
                f"({a_tokens / a_seconds:.1f} tok/s, {a_samples / a_seconds:.1f} samples/s)  "
                f"B {b_samples} samples {b_tokens} tokens {b_seconds:.1f} s "
                f"({b_tokens / b_seconds:.1f} tok/s, {b_samples / b_seconds:.1f} samples/s)  "
                f"A/B {ratio:.3f}  (load {load_average()}, "
                f"peak RSS {peak_rss_mb():.0f} MB)",
                flush=True,
            )
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=["vllm", "standin"], default="vllm")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--max-connections", type=int, default=8)
    parser.add_argument("--epochs", type=int, help="repeat the 24 samples (default: 1; stand-in: 10)")
    parser.add_argument(
        "--start-timeout", type=float, default=1800.0, help="seconds the engine may take to start"
    )
    args = parser.parse_args()
    if args.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS}")
    epochs = args.epochs or (10 if args.server == "standin" else 1)
    print(
        f"server {args.server}, max_connections {args.max_connections}, epochs {epochs}, "
        f"load {load_average()}"
    )
    with (vllm_server if args.server == "vllm" else standin_server)(args.start_timeout) as (
        base_url,
        api_key,
    ):
        ratios = sorted(measure(base_url, api_key, args.rounds, args.max_connections, epochs))
    median = statistics.median(ratios)
    print(f"median ratio {median:.3f} (spread {ratios[0]:.3f}-{ratios[-1]:.3f} over {len(ratios)} rounds)")
    print(f"ratio={median:.3f}")


if __name__ == "__main__":
    main()
