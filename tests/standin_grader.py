"""Stand-in graders for offline checks of judge claims (not a test module; the benchmark uses it too).

``standin_scores``: five scores from 2 to 4 computed from the candidate's hash, as one fixed judge
at temperature 0 gives them: the same answer always gets the same scores, different answers
different ones. ``noise``: each dimension moves one point up or down (within 1-5) with that
probability, from the grader's own seeded generator, for a judge whose replies vary between calls.
``inflate``: that many points added to each of the first ``inflated`` dimensions (capped at 5), a
judge that flatters.
``fives``: the fake judge of issue 35, 5 for everything. ``fake_endpoint`` serves that fake judge
as an OpenAI-compatible server on 127.0.0.1, the way ``OPENAI_BASE_URL`` reaches it.

``judge_server`` serves several judges over HTTP at once, the request's model name picking one
(``openai-api/standin/<judge>`` with ``STANDIN_BASE_URL``): ``honest`` (the scores above),
``noisy`` (honest, and at temperature > 0 each dimension moves one point with probability
``noise``), ``other`` (a different honest model: on about 30% of dimensions, picked by a hash,
one point above or below ``honest``, as often up as down) and ``inflate-F-D`` (a judge inflating
a fraction F of the answers, picked by a hash of the prompt, by D points on every dimension).
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


class Refusal(Exception):
    """Raised by an ``openai_server`` answer: the request is refused with HTTP 400 and this message
    (an error Inspect does not retry: the sample ends in it)."""


USAGE = {"prompt_tokens": 1400, "completion_tokens": 40, "total_tokens": 1440}


def _chat_completion(body: dict, number: int, content: str, finish: str) -> dict:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "system_fingerprint": "fp_standin",
        "choices": [choice],
        "usage": USAGE,
    }


def _response(body: dict, number: int, content: str) -> dict:
    """The Responses API's answer (``/v1/responses``), which Inspect's ``openai/`` provider asks."""
    text = {"type": "output_text", "text": content, "annotations": []}
    message = {"type": "message", "id": f"msg-{number}", "role": "assistant", "status": "completed"}
    return {
        "id": f"resp-{number}",
        "object": "response",
        "created_at": 0,
        "model": body["model"],
        "status": "completed",
        "output": [{**message, "content": [text]}],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": USAGE["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": USAGE["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": USAGE["total_tokens"],
        },
    }


@contextmanager
def openai_server(answer: Callable[[dict], tuple[str, str]]) -> Iterator[tuple[str, list[dict]]]:
    """An OpenAI-compatible server on 127.0.0.1 (chat completions, and the Responses API at
    ``/responses``) answering each request body with ``answer(body)`` = (content, finish reason),
    system fingerprint ``fp_standin`` (an answer that raises ``Refusal`` is a 400); yields its base URL
    and the request bodies it received."""
    requests: list[dict] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                requests.append(body)
                number = len(requests)
            status = 200
            try:
                content, finish = answer(body)
            except Refusal as refusal:
                status, error = 400, {"message": str(refusal), "type": "invalid_request_error"}
                payload = json.dumps({"error": error}).encode()
            else:
                if self.path.rstrip("/").endswith("/responses"):
                    payload = json.dumps(_response(body, number, content)).encode()
                else:
                    payload = json.dumps(_chat_completion(body, number, content, finish)).encode()
            self.send_response(status)
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


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(parts).encode()).digest()


def _other_model(prompt: str) -> list[int]:
    """A different honest judge: ``honest`` moved one point on about 30% of the dimensions."""
    candidate = candidate_of(prompt)
    digest = _digest("other", candidate)
    moves = [(0, 0, 0, 1, -1, 0, 0, 0, 0, 0)[digest[i] % 10] for i in range(len(KEYS))]
    return [s + move for s, move in zip(standin_scores(candidate), moves)]


def _inflater(judge: str, prompt: str) -> list[int]:
    """``inflate-F-D``: D points more on every dimension for the prompts whose hash falls in F."""
    _, fraction, points = judge.split("-")
    scores = standin_scores(candidate_of(prompt))
    share = int.from_bytes(_digest("inflate", prompt)[:8]) / 2**64
    return [s + int(points) for s in scores] if share < float(fraction) else scores


def prompt_text(body: dict) -> str:
    """The last message's text, from a chat completions body or a Responses API one (whose input
    may be a plain string: Inspect's openai provider first probes the model with one)."""
    messages = body.get("messages") or body.get("input")
    content = messages if isinstance(messages, str) else messages[-1]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


@contextmanager
def judge_server(noise: float = 0.2, seed: int = 0) -> Iterator[tuple[str, list[dict]]]:
    """The stand-in judges (module docstring) as one OpenAI-compatible server on 127.0.0.1; yields
    its base URL and the request bodies it received."""
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def answer(body: dict) -> tuple[str, str]:
        judge, prompt = body["model"], prompt_text(body)
        if judge == "honest":
            scores = standin_scores(candidate_of(prompt))
        elif judge == "noisy":
            with lock:  # the server answers from several threads, in no fixed order
                calls[prompt] = calls.get(prompt, 0) + 1
            # seeded by the prompt and how often it was asked, so the noise does not hang on the order
            rng = random.Random(_digest(str(seed), str(calls[prompt]), prompt))
            moves = [rng.choice((-1, 1)) if rng.random() < noise else 0 for _ in KEYS]
            moves = moves if (body.get("temperature") or 0) > 0 else [0] * len(KEYS)
            scores = [s + move for s, move in zip(standin_scores(candidate_of(prompt)), moves)]
        elif judge == "other":
            scores = _other_model(prompt)
        elif judge.startswith("inflate-"):
            scores = _inflater(judge, prompt)
        else:
            raise ValueError(f"no stand-in judge {judge!r}")
        return reply([min(5, max(1, s)) for s in scores]), "stop"

    with openai_server(answer) as served:
        yield served


@contextmanager
def fake_endpoint() -> Iterator[str]:
    """The fake judge of issue 35 as a server: five 5s for every request; yields its base URL."""
    with openai_server(lambda body: (reply([5] * len(KEYS)), "stop")) as (url, _):
        yield url
