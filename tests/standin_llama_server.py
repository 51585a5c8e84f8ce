"""A stand-in for the llama.cpp server (not a test module): takes the same arguments, answers
``/v1/models`` for the right API key, and dies with SIGILL on the first completion, as a
llama.cpp built for another CPU does on its first AMX instruction. With STANDIN_DIE_AT_START set
it dies before answering anything. With STANDIN_ANSWERS=N it answers N chat completions (a fixed
tagged answer) and is killed (SIGKILL) by the next, as a server that dies mid-run; with
STANDIN_ANSWERS=all it answers every one."""

import argparse
import json
import os
import signal
from http.server import BaseHTTPRequestHandler, HTTPServer

KEY = os.environ["NARRATIVE_INFILL_SERVER_API_KEY"]
ANSWERS = os.environ.get("STANDIN_ANSWERS")
REPLY = "<ANSWER>They walked home together.</ANSWER>"
answered = 0
if os.environ.get("STANDIN_KEY_FILE"):  # for a test that looks for the key where it must not be
    with open(os.environ["STANDIN_KEY_FILE"], "w") as handle:
        handle.write(KEY)


def die() -> None:
    print("stand-in: executing tileloadd", flush=True)
    os.kill(os.getpid(), signal.SIGILL)


class Handler(BaseHTTPRequestHandler):
    def _authorised(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {KEY}":
            return True
        self.send_response(401)
        self.end_headers()
        return False

    def do_GET(self):
        if self.path == "/v1/models" and self._authorised():
            body = json.dumps({"object": "list", "data": [{"id": "smollm2", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def do_POST(self):
        global answered
        if not self._authorised():
            return
        if ANSWERS is None:
            die()
        if ANSWERS != "all" and answered >= int(ANSWERS):
            print(f"stand-in: killed after {answered} answers", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answered += 1
        body = json.dumps(
            {
                "id": f"standin-{answered}",
                "object": "chat.completion",
                "created": 0,
                "model": "smollm2",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args, _ = parser.parse_known_args()
    print(f"stand-in: listening on {args.host}:{args.port}", flush=True)
    if os.environ.get("STANDIN_DIE_AT_START"):
        die()
    HTTPServer((args.host, args.port), Handler).serve_forever()
