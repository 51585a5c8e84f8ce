"""What the submission tests share: the scripted models' answers behind the judged demo logs (the
``logs`` and ``submissions`` fixtures of tests/platform/conftest.py), the AtAvg of the ``honest``
imported logs, the metric keys a forger rewrites, and a careful forger's re-submission."""

from __future__ import annotations

from narrative_infill.platform.analysis.submission.build import build_submission, write_submission

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
