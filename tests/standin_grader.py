"""Stand-in graders for offline checks of judge claims (not a test module; the benchmark uses it too).

``standin_scores``: five scores from 2 to 4 computed from the candidate's hash, as one fixed judge
at temperature 0 gives them: the same answer always gets the same scores, different answers
different ones. ``noise``: each dimension moves one point up or down (within 1-5) with that
probability, from the grader's own seeded generator, for a judge whose replies vary between calls.
``inflate``: that many points added to each of the first ``inflated`` dimensions (capped at 5), a
judge that flatters.
``fives``: the fake judge of issue 35, 5 for everything. ``fake_endpoint`` serves that fake judge
as an OpenAI-compatible server on 127.0.0.1, the way ``OPENAI_BASE_URL`` reaches it.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import mock_output
from inspect_ai.model import Model, get_model

KEYS = (
    "Fluency",
    "Context_Faithfulness",
    "Bidirectional_Coherence",
    "Narrative_Consistency",
    "Informativeness",
)
OPEN, CLOSE = "<candidate_infill>\n", "\n</candidate_infill>"


def candidate_of(prompt: str) -> str:
    """The candidate inside the paper judge's block (the whole prompt if there is none)."""
    start = prompt.rfind(OPEN)
    return prompt[start + len(OPEN) : prompt.find(CLOSE, start)] if start >= 0 else prompt


def standin_scores(candidate: str) -> list[int]:
    digest = hashlib.sha256(candidate.encode()).digest()
    return [2 + digest[i] % 3 for i in range(len(KEYS))]


def reply(scores: list[int]) -> str:
    return json.dumps(dict(zip(KEYS, scores)))


def standin_grader(
    name: str = "standin",
    noise: float = 0.0,
    seed: int = 0,
    inflate: int = 0,
    inflated: int = len(KEYS),
    fives: bool = False,
) -> Model:
    """The stand-in judge as a mockllm model (a new one each call: its noise starts at ``seed``)."""
    rng = random.Random(seed)

    def outputs(messages, tools, tool_choice, config):
        if fives:
            return mock_output(reply([5] * len(KEYS)))
        scores = standin_scores(candidate_of(messages[-1].text))
        scores = [s + (rng.choice((-1, 1)) if rng.random() < noise else 0) for s in scores]
        scores = [s + (inflate if i < inflated else 0) for i, s in enumerate(scores)]
        return mock_output(reply([min(5, max(1, s)) for s in scores]))

    return get_model(f"mockllm/{name}", custom_outputs=outputs, memoize=False)


@contextmanager
def openai_server(answer: Callable[[dict], tuple[str, str]]) -> Iterator[tuple[str, list[dict]]]:
    """An OpenAI-compatible chat server on 127.0.0.1 answering each request body with
    ``answer(body)`` = (content, finish reason), system fingerprint ``fp_standin``; yields its base
    URL and the request bodies it received."""
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            content, finish = answer(body)
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
            payload = json.dumps(
                {
                    "id": f"chatcmpl-{len(requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "system_fingerprint": "fp_standin",
                    "choices": [choice],
                    "usage": {"prompt_tokens": 1400, "completion_tokens": 40, "total_tokens": 1440},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", requests
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def fake_endpoint() -> Iterator[str]:
    """The fake judge of issue 35 as a server: five 5s for every request; yields its base URL."""
    with openai_server(lambda body: (reply([5] * len(KEYS)), "stop")) as (url, _):
        yield url
