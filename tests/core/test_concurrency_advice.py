"""The docs' concurrency advice (docs/reproducing.md, docs/scoring.md) against the installed Inspect:
without ``--max-connections`` its adaptive connection control runs, starting at the level the docs
quote; ``--max-connections N`` switches it off and holds N requests in flight."""

import argparse
import threading
import time
from http.server import ThreadingHTTPServer

import pytest
from helpers import REPO
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import generate
from inspect_ai.util import AdaptiveConcurrency
from standin_openai_server import Handler

SAMPLES = 30


class CountingHandler(Handler):
    """The stand-in server, counting chat requests in flight. Until ``release_at`` are in flight at
    once, each waits (up to ``hold`` seconds): the peak then shows the most the client allows,
    however slowly it starts its requests, with no timing in the assertion."""

    in_flight = peak = 0
    release_at = 0
    hold = 0.0
    released = threading.Event()
    counter = threading.Lock()

    def do_POST(self):
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return super().do_POST()
        cls = type(self)
        with cls.counter:
            cls.in_flight += 1
            cls.peak = max(cls.peak, cls.in_flight)
            if cls.in_flight >= cls.release_at:
                cls.released.set()
        cls.released.wait(cls.hold)
        try:
            super().do_POST()
        finally:
            with cls.counter:
                cls.in_flight -= 1


@pytest.fixture
def counting_server():
    """Starts the counting stand-in in this process; yields a runner returning (peak, log)."""
    CountingHandler.settings = argparse.Namespace(
        api_key="key",
        max_model_len=4096,
        served_model_name="standin",
        chat_status=200,
        requests=None,
        hold_after=None,
        release=None,
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), CountingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"

    def run(release_at: int, hold: float, tmp_path, **config):
        CountingHandler.in_flight = CountingHandler.peak = 0
        CountingHandler.release_at, CountingHandler.hold = release_at, hold
        CountingHandler.released = threading.Event()
        model = get_model(f"vllm/standin-{time.monotonic_ns()}", base_url=url, api_key="key", memoize=False)
        task = Task(dataset=[Sample(input=f"Say {i}.") for i in range(SAMPLES)], solver=generate())
        [log] = eval(task, model=model, log_dir=str(tmp_path), display="none", max_retries=0, **config)
        assert log.status == "success", log.error
        return CountingHandler.peak, log

    yield run
    server.shutdown()
    server.server_close()


def test_without_max_connections_adaptive_control_runs_from_its_documented_start(counting_server, tmp_path):
    start = AdaptiveConcurrency().start
    assert (AdaptiveConcurrency().min, start, AdaptiveConcurrency().max) == (10, 20, 100)  # as the docs say
    peak, _ = counting_server(release_at=start, hold=30.0, tmp_path=tmp_path)
    assert peak >= start  # static, it would hold the provider's default (10 for vLLM) instead


def test_max_connections_switches_adaptive_control_off(counting_server, tmp_path):
    peak, log = counting_server(release_at=SAMPLES, hold=0.2, tmp_path=tmp_path, max_connections=4)
    assert peak == 4
    assert log.stats.connection_limit_history == []  # no controller ran


def test_the_docs_say_so():
    reproducing = " ".join((REPO / "docs" / "reproducing.md").read_text(encoding="utf-8").split())
    assert "switches adaptive control off" in reproducing
    assert "starts at 20 requests in flight" in reproducing and "up to 100" in reproducing
