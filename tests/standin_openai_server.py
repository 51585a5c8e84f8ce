"""A stand-in vLLM server that answers at once (not a test module): ``/v1/models`` with a
``max_model_len``, ``/tokenize`` with the messages (one token per word, plus the template's
overhead), and ``/v1/chat/completions`` with a fixed tagged answer and its usage.

The tests use it to see what a request carried (``--requests FILE``: one JSON line per chat
request); ``benchmarks/vllm_overhead.py`` uses it to measure the harness's own ceiling, the
samples/s Inspect and this package reach when the engine costs nothing.
``python tests/standin_openai_server.py --host 127.0.0.1 --port P [--max-model-len N] [--api-key K]``;
it also stands in for the llama.cpp server that ``narrative-infill serve`` starts (its options are
ignored, the key is read from the environment).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TEMPLATE_TOKENS = 12  # what a chat template adds around the messages, roughly SmolLM2's
ANSWER = "<answer>She walked home and fed the cat.</answer>"
REFUSAL = "stand-in: this server refuses every chat request"


def prompt_tokens(messages: list[dict]) -> int:
    return TEMPLATE_TOKENS + sum(len(str(message.get("content", "")).split()) for message in messages)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real server does
    settings: argparse.Namespace
    lock = threading.Lock()
    chat_requests = 0
    #: replies drawn at random (seeded), from ``--answers``; none: the fixed ``ANSWER``
    answers: list[str] = []
    random = random.Random(0)

    def log_message(self, format, *args):  # quiet: one line per request would swamp the benchmark
        pass

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # a held request whose client is gone
            self.close_connection = True

    def _authorised(self) -> bool:
        key = self.settings.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._reply(401, {"error": "bad key"})
        return False

    def do_GET(self):
        if not self._authorised():
            return
        if self.path.rstrip("/") == "/v1/models":
            card = {"id": self.settings.served_model_name, "object": "model"}
            self._reply(
                200, {"object": "list", "data": [{**card, "max_model_len": self.settings.max_model_len}]}
            )
        else:
            self._reply(404, {"error": self.path})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self._authorised():
            return
        if self.path == "/tokenize":
            count = prompt_tokens(request.get("messages", [])) if "messages" in request else 0
            self._reply(200, {"count": count, "max_model_len": self.settings.max_model_len, "tokens": []})
        elif self.path.rstrip("/") == "/v1/chat/completions":
            self._hold()
            self._record(request)
            if self.settings.chat_status != 200:  # a server that refuses every request
                self._reply(
                    self.settings.chat_status, {"error": {"message": REFUSAL, "type": "BadRequestError"}}
                )
            else:
                self._reply(200, self._completion(request))
        else:
            self._reply(404, {"error": self.path})

    def _hold(self) -> None:
        """Past the first ``--hold-after`` chat requests, each waits until ``--release`` exists: a
        run stopped mid-way with exactly that many answers, however loaded the machine is."""
        with self.lock:
            Handler.chat_requests += 1
            held = self.settings.hold_after is not None and Handler.chat_requests > self.settings.hold_after
        while held and not os.path.exists(self.settings.release):
            time.sleep(0.1)

    def _record(self, request: dict) -> None:
        if self.settings.requests:
            with self.lock, open(self.settings.requests, "a") as handle:
                handle.write(json.dumps({"max_tokens": request.get("max_tokens")}) + "\n")

    def _completion(self, request: dict) -> dict:
        answer = self.random.choice(self.answers) if self.answers else ANSWER
        words = len(answer.split())
        return {
            "id": f"standin-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self.settings.served_model_name),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens(request.get("messages", [])),
                "completion_tokens": words,
                "total_tokens": prompt_tokens(request.get("messages", [])) + words,
            },
        }


class _Server(ThreadingHTTPServer):
    # A real server's backlog (uvicorn's is 2048), not socketserver's 5: 32 clients connecting at
    # once on a busy machine were reset.
    request_queue_size = 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--served-model-name", default="smollm2")
    # The key in the environment, as `narrative-infill serve` hands it to the server it starts.
    parser.add_argument("--api-key", default=os.environ.get("NARRATIVE_INFILL_SERVER_API_KEY"))
    parser.add_argument("--chat-status", type=int, default=200, help="answer chat requests with this status")
    parser.add_argument("--requests", help="append each chat request's max_tokens here (JSON lines)")
    parser.add_argument("--hold-after", type=int, help="hold every chat request after this many")
    parser.add_argument("--release", help="held requests are answered once this file exists")
    parser.add_argument("--answers", help="a JSON list of replies, each drawn at random (seed 0) per request")
    Handler.settings, _ = parser.parse_known_args()  # a llama.cpp server's other options are ignored
    if Handler.settings.answers:
        with open(Handler.settings.answers, encoding="utf-8") as handle:
            Handler.answers = json.load(handle)
    server = _Server((Handler.settings.host, Handler.settings.port), Handler)
    print(f"stand-in: listening on {Handler.settings.host}:{Handler.settings.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
