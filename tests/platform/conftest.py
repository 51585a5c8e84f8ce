"""Fixtures the platform's tests share: two scripted models' judged demo logs and their demo-track
submissions (``logs``, ``submissions``), one model's imported generations scored by hand
(``honest``), and the stand-in llama.cpp server as ``serve``'s server command (``standin``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import VALID_VERDICT, mock_output
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model
from inspect_ai.scorer import Score
from submission_runs import ANSWERS, HONEST_ATAVG

from narrative_infill.paper_protocol import DIMENSIONS
from narrative_infill.platform.analysis.importer import import_generations
from narrative_infill.platform.cli import main
from narrative_infill.platform.local.server import SERVER_COMMAND_VARIABLE
from narrative_infill.scorers.metrics.pairs import METRIC_NAMES
from narrative_infill.tasks import infill_task

STANDIN = Path(__file__).parents[1] / "standin_llama_server.py"


@pytest.fixture(scope="session")  # session: several modules read them
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    grader = get_model(
        "mockllm/grader", custom_outputs=lambda m, t, c, g: mock_output(VALID_VERDICT), memoize=False
    )
    for name, answer in ANSWERS.items():
        model = get_model(
            f"mockllm/{name}",
            custom_outputs=lambda m, t, c, g, a=answer: mock_output(f"<ANSWER>{a(m)}</ANSWER>"),
            memoize=False,
        )
        for setting in ("l1", "l2"):
            eval(infill_task(setting, data="demo", backbone="minilm", judge=True), model=model, model_roles={"grader": grader},
                 log_dir=str(root / name), display="none")  # fmt: skip
    return root


@pytest.fixture(scope="session")
def submissions(logs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    for name in ANSWERS:
        assert (
            main(
                [
                    "submit",
                    str(logs / name),
                    "-o",
                    str(folder / f"{name}.json"),
                    "--track",
                    "demo",
                    "--submitter",
                    "tests",
                ]
            )
            == 0
        )
    return folder


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    """One model's imported generations on l1 and l2, scored: AtAvg 0.147 and QAvg 3.0 everywhere."""
    root = tmp_path_factory.mktemp("summaries")
    source, folder = root / "generations.jsonl", root / "logs"
    rows = [
        {
            "id": i,
            "model": "org/m1",
            "template_name": name,
            "template_id": 0,
            "problem": f"Story {i} begins. ______ It ends.",
            "gold_answer": "The middle happened.",
            "response": f"<ANSWER>Answer {i}.</ANSWER>",
            "prompt_text": f"Story {i} begins. ______ It ends.",
        }
        for i in range(4)
        for name in ("fitb_l1", "fitb_l2")
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for location in import_generations([str(source)], str(folder)):
        log = read_eval_log(location)
        for sample in log.samples or []:
            metrics = {name: HONEST_ATAVG for name in METRIC_NAMES} | {
                "atavg": HONEST_ATAVG,
                "truncated": 0.0,
            }
            judged = {d: 3 for d in DIMENSIONS} | {"qavg": 3.0, "grader_failed": 0.0}
            sample.scores = {
                "metrics": Score(value=metrics, answer=f"Answer {sample.id}."),
                "judge": Score(value=judged, answer=f"Answer {sample.id}."),
            }
        write_eval_log(log, location)
    return folder


@pytest.fixture
def standin(monkeypatch, tmp_path):
    """The stand-in as the server command, and a model file for it to be given."""
    monkeypatch.setenv(SERVER_COMMAND_VARIABLE, f"{sys.executable} {STANDIN}")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    return model
