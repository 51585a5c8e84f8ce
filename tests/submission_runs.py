"""What the report and submission tests share: the scripted models' answers behind the judged demo
logs (the ``logs`` and ``submissions`` fixtures of tests/platform/conftest.py), the AtAvg of the
``honest`` imported logs, the metric keys a forger rewrites, a careful forger's re-submission, a copy
of a submission standing for another run, and a small demo run of a scripted model."""

from __future__ import annotations

import hashlib
import json

from helpers import mock_output
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.platform.analysis.submission.build import (
    build_submission,
    content_hash,
    write_submission,
)
from narrative_infill.tasks import infill_task

ANSWERS = {
    # alpha clears the floor (generic-sentence, 0.126 on the demo set) with a generic answer of its own: 0.176
    "alpha": "They all went to the park with their friends and had a wonderful time together that day.",
    "beta": "The kids spent the afternoon splashing at the lake.",
}

#: AtAvg of every sample of the ``honest`` logs (their scores are written by hand)
HONEST_ATAVG = 0.147

METRICS = ("atavg", "bertscore", "rouge1", "meteor", "chrf", "semf1")


def resubmitted(log_dir, out, track="demo"):
    """A submission of ``log_dir`` with everything recomputed, as a careful forger would make it."""
    write_submission(build_submission([str(log_dir)], track), out)
    return out


def copy_submission(submissions, folder, name, edit):
    """A copy of alpha's submission standing for another run: its logs get identities of their own
    (the board refuses one log submitted twice)."""
    document = json.loads((submissions / "alpha.json").read_text())
    for entry in document["provenance"]["logs"]:
        entry["eval_id"] = f"{name}-{entry['eval_id']}"
        entry["sha256"] = hashlib.sha256(f"{name}-{entry['sha256']}".encode()).hexdigest()
    edit(document)
    document["sha256"] = content_hash(document)
    (folder / name).write_text(json.dumps(document))
    return document


def small_demo_run(log_dir, respond, name="model", **eval_args):
    """One l2 eval of the demo set's SIND rows by ``mockllm/<name>``, answering ``respond(messages)``."""
    task = infill_task("l2", data="demo", domain="sind", backbone="minilm")
    model = get_model(
        f"mockllm/{name}", custom_outputs=lambda m, t, c, g: mock_output(respond(m)), memoize=False
    )
    return eval(task, model=model, log_dir=str(log_dir), display="none", **eval_args)[0]
