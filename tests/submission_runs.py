"""What the report and submission tests share: the scripted models' answers behind the judged demo
logs (the ``logs`` and ``submissions`` fixtures of tests/platform/conftest.py), the AtAvg of the
``honest`` imported logs, the metric keys a forger rewrites, a careful forger's re-submission, a copy
of a submission standing for another run, and a small demo run of a scripted model."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from statistics import fmean

from helpers import mock_output
from inspect_ai import eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import get_model
from word_salad import DEMO

from narrative_infill.platform.analysis.submission.build import (
    build_submission,
    content_hash,
    write_submission,
)
from narrative_infill.tasks import infill_task

DEMO_ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]


def _gold_words(messages) -> list[str]:
    """The gold's words of the demo instance whose problem the prompt holds (the longest: two demo
    problems are parts of others)."""
    prompt = messages[-1].text
    held = [row for row in DEMO_ROWS if row["problem"] in prompt]
    return max(held, key=lambda row: len(row["problem"]))["gold_answer"].split()


def first_half_of_the_gold(messages) -> str:
    """A scripted model that knows half of each answer: above the floor (no fixed text tried scored
    more than 0.199 on the demo set, ``generic-paragraph``), under the gold-copy warning (ROUGE-1 0.8)."""
    words = _gold_words(messages)
    return " ".join(words[: max(1, len(words) // 2)])


def second_half_of_the_gold(messages) -> str:
    words = _gold_words(messages)
    return " ".join(words[len(words) // 2 :])


#: The scripted entries' answers to each prompt. Fixed answers no longer clear the floor on the demo
#: set (``generic-paragraph`` 0.199); these answer each instance, as a model does.
ANSWERS = {"alpha": first_half_of_the_gold, "beta": second_half_of_the_gold}

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


def forged_logs(source: Path, target: Path, edit) -> Path:
    """The logs with ``edit(log)`` applied, summaries (rewritten by Inspect) and the header's means
    made to agree with the records: a forger who keeps the log consistent with itself."""
    shutil.copytree(source, target)
    for path in target.glob("*.eval"):
        log = read_eval_log(str(path))
        edit(log)
        _agreeing_header(log)
        write_eval_log(log, str(path))
    return target


def each_sample(edit):
    """A log edit applying ``edit(sample)`` to every record."""
    return lambda log: [edit(sample) for sample in log.samples or []]


def _agreeing_header(log: EvalLog) -> None:
    for score in log.results.scores if log.results else []:
        values = [
            s.scores[score.scorer].value.get(score.name)
            for s in log.samples or []
            if score.scorer in (s.scores or {})
        ]
        present = [v for v in values if v is not None and v == v]
        if present and "mean" in score.metrics:
            score.metrics["mean"].value = fmean(present)
