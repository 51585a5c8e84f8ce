"""A demo log for the Every Eval Ever export: l2 on 6 demo instances, a mock model under test and a mock
grader that fails one judgement (so one sample's judge values are NaN). Used by tests/platform/test_export_eee.py
and by .ci/every-eval-ever (``python tests/every_eval_ever_demo.py LOG_DIR``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import VALID_VERDICT, mock_model  # noqa: E402

LIMIT = 6


def write_demo_log(log_dir: str):
    """The log, and the id of the sample whose judgement failed."""
    from inspect_ai import eval

    from narrative_infill.data.dataset import infill_dataset

    failed = list(infill_dataset("demo", n=1))[0]

    def grade(messages, config):
        return "I cannot score this." if failed.input in messages[-1].text else VALID_VERDICT

    [log] = eval(
        "narrative_infill/l2",
        task_args={"data": "demo", "n": 1},
        model=mock_model(lambda m, c: "<ANSWER>They walked home together.</ANSWER>"),
        model_roles={"grader": mock_model(grade)},
        log_dir=log_dir,
        limit=LIMIT,
        display="none",
    )
    assert log.status == "success", log.error
    return log, failed.id


if __name__ == "__main__":
    print(write_demo_log(sys.argv[1])[0].location)
