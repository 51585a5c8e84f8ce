"""``narrative-infill verify``: check a submission file, and with its logs recompute every claim.

Without logs only the file itself is checked (schema, self-hash, claims against its own sample
values): a file-only entry. With ``--logs`` the track's protocol is checked against the logs'
headers, every claim is recomputed from the logs named in it, and every sample from its raw
outputs (``recompute``). The verdict says "verified" only when everything was recomputed;
"consistent with its logs" when every figure was recomputed but some check was not possible here
(named); "not verified: cannot re-score here" when the metrics could not be re-scored on this
machine (exit status ``NOT_VERIFIED_EXIT``). The result is also written beside the submission
(``<file>.verification.json``) for people to read; the leaderboard never trusts it. Hard failures
exit 1; soft findings are warnings. The fluency share and the metrics re-scoring of a large entry
read draws sized for their error rates (``sampling``), said "sampled"; a verdict this machine
reached on the same content is recalled (``cache``), never recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from ....copy_guards import CONTAMINATION_ROUGE, is_near_verbatim
from ....number_rules import SAME_NUMBER_TOLERANCE, none_if_nan, same_number
from .build import (
    ATAVG_COLUMN,
    QAVG_COLUMN,
    content_hash,
    entry_claims,
    file_sha256,
    log_provenance,
    read_settings,
    sample_scores,
    samples_digest,
    scored_with,
    submission_rows,
)
from .cache import recalled, remember
from .judges import header_problems as header_judge_problems
from .protocol import PROTOCOLS, track_problems, unscored_problem
from .recompute import header_problems, recheck_runs
from .regenerate import Retest
from .sampling import fluency_as_claimed, fluency_line
from .schema import load_document, row_problems, schema_problems

__all__ = ["Verification", "load_document", "row_problems", "schema_problems", "store", "verify"]

#: Soft-finding thresholds: an empty-extraction rate and a near-verbatim share (ROUGE-1 at or above
#: ``CONTAMINATION_ROUGE``) above these are flagged.
EMPTY_RATE_WARNING = 0.2
CONTAMINATION_WARNING = 0.05
#: ``verify``'s exit status when nothing failed but the metrics could not be re-scored here (1: failures)
NOT_VERIFIED_EXIT = 3
NOT_VERIFIED = "not verified: cannot re-score here"


@dataclass
class Verification:
    submission: str
    sha256: str | None = None
    logs_checked: bool = False
    checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: what could not be recomputed here (backbones absent, data out of reach, a sample of metrics)
    unchecked: list[str] = field(default_factory=list)
    #: ``--rejudge`` ran and found the claimed QAvg consistent with the verifier's grader
    rejudged: bool = False
    #: why the logs' metrics could not be re-scored here (backbones absent, other libraries)
    cannot_rescore: str | None = None
    #: what a draw sized for its error rates decided (``sampling``), said in the verdict
    sampled: list[str] = field(default_factory=list)

    @property
    def fully_verified(self) -> bool:
        return self.passed and self.logs_checked and not self.unchecked and not self.cannot_rescore

    @property
    def rescored(self) -> bool:
        """Whether every figure was recomputed from the logs, the metrics re-scored here included."""
        return self.passed and self.logs_checked and not self.cannot_rescore

    @property
    def passed(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        return (
            [f"ok: {c}" for c in self.checks]
            + ([f"{NOT_VERIFIED}: metrics: {self.cannot_rescore}"] if self.cannot_rescore else [])
            + [f"sampled: {s}" for s in self.sampled]
            + [f"not checked: {u}" for u in self.unchecked]
            + [f"warning: {w}" for w in self.warnings]
            + [f"FAILED: {f}" for f in self.failures]
        )

    def verdict(self) -> str:
        if not self.passed:
            return f"{len(self.failures)} failure(s)"
        if not self.logs_checked:
            return "file checks passed, file only (pass --logs DIR to recompute every claim from the logs)"
        if self.cannot_rescore:
            return "; ".join([f"{NOT_VERIFIED} (metrics: {self.cannot_rescore})", *self.unchecked])
        drawn = "".join(f"; sampled: {s}" for s in self.sampled)
        if self.unchecked:
            return "consistent with its logs; " + "; ".join(self.unchecked) + drawn
        return "verified: every claim and every sample recomputed from its logs' raw outputs" + drawn

    def record(self) -> dict[str, Any]:
        """What ``store`` writes beside the submission, for people to read."""
        return {
            "submission_sha256": self.sha256,
            "verified": self.fully_verified,
            "cannot_rescore": self.cannot_rescore,
            "rejudged": self.rejudged,
            "verdict": self.verdict(),
            "checks": self.checks,
            "failures": self.failures,
            "unchecked": self.unchecked,
            "sampled": self.sampled,
            "warnings": self.warnings,
        }


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return same_number(a, b)
    return a == b


def _differences(claimed: Any, actual: Any, where: str) -> list[str]:
    if isinstance(claimed, dict) and isinstance(actual, dict):
        keys = sorted(set(claimed) | set(actual))
        return [d for k in keys for d in _differences(claimed.get(k), actual.get(k), f"{where}.{k}")]
    return [] if _close(claimed, actual) else [f"{where}: claimed {claimed!r}, the data gives {actual!r}"]


def self_consistency(document: dict[str, Any], result: Verification) -> None:
    """The claimed means against the file's own per-sample values."""
    for setting, rows in document["samples"].items():
        claims = document["settings"][setting]
        if claims["n"] != len(rows):
            result.failures.append(
                f"settings.{setting}.n: claimed {claims['n']}, the file lists {len(rows)} samples"
            )
        for index, key in ((ATAVG_COLUMN, "atavg"), (QAVG_COLUMN, "qavg")):
            values = [row[index] for row in rows if row[index] is not None]
            claimed = (claims.get(key) or {}).get("mean")
            actual = fmean(values) if values else None  # a mean claimed over no values is checked too
            if not _close(claimed, actual):
                result.failures.append(
                    f"settings.{setting}.{key}.mean: claimed {claimed!r}, its own samples give {actual!r}"
                )
    result.checks.append("claims agree with the file's own sample values")


def locate_logs(document: dict[str, Any], logs_dir: Path) -> tuple[list[str], list[str]]:
    """(the logs the submission names, found under ``logs_dir`` by name and SHA-256; what is missing
    or changed). Of several copies of one name (a backup, a stale edit), the one with the recorded
    hash is the submitted log."""
    found: dict[str, list[Path]] = {}
    for path in sorted(Path(logs_dir).rglob("*.eval")):
        found.setdefault(path.name, []).append(path)
    locations, problems = [], []
    for entry in document["provenance"]["logs"]:
        named = found.get(entry.get("file"), [])
        same = [path for path in named if file_sha256(str(path)) == entry.get("sha256")]
        if same:
            locations.append(str(same[0]))
        elif named:
            problems.append(f"log {entry.get('file')} has changed since submission (SHA-256 differs)")
        else:
            problems.append(
                f"log {entry.get('file')} (setting {entry.get('setting')}) is missing from {logs_dir}"
            )
    return locations, problems


def _find_logs(document: dict[str, Any], logs_dir: Path, result: Verification) -> list[str] | None:
    locations, problems = locate_logs(document, logs_dir)
    result.failures += problems
    if problems:
        return None
    result.checks.append(f"all {len(locations)} logs present, SHA-256 equal to the submission's")
    return locations


def _model_problems(claimed: dict[str, Any], runs: list) -> list[str]:
    """Where the file's model differs from the logs': its name, and in every run its endpoint and
    arguments (one setting served elsewhere under the same name is another model)."""
    problems = []
    models = {r.header.eval.model for r in runs}
    if models != {claimed["id"]}:
        problems.append(f"model: the logs are of {sorted(models)}, the file claims {claimed['id']!r}")
    for run in runs:
        spec = run.header.eval
        for key, recorded in (("base_url", spec.model_base_url), ("args", spec.model_args or {})):
            if claimed.get(key) != recorded:
                problems.append(
                    f"model.{key}: the file claims {claimed.get(key)!r:.200}, the {run.setting} "
                    f"log records {recorded!r:.200}"
                )
    return problems


def _check_logs(
    document: dict[str, Any], locations: list[str], result: Verification, sample: int | None
) -> None:
    runs = read_settings(locations)
    problems = track_problems(document["track"], runs, result.unchecked)
    result.failures += [f"track {document['track']}: {p}" for p in problems]
    result.failures += _model_problems(document["model"], runs)
    result.failures += header_judge_problems(runs)
    signatures, judges = scored_with(runs)
    for what, values in (("metric signature", signatures), ("judge", judges)):
        if len(values) > 1:
            result.failures.append(f"{what}: the logs mix {sorted(values)}")
    for key, recorded in log_provenance(runs).items():
        if not _close(document["provenance"].get(key), recorded):
            result.failures.append(
                f"provenance.{key}: the file claims {document['provenance'].get(key)!r:.200}, the logs "
                f"record {recorded!r:.200}"
            )
    if {r.setting for r in runs} != set(document["settings"]):
        result.failures.append(
            f"settings: the logs hold {sorted(r.setting for r in runs)}, the file "
            f"{sorted(document['settings'])}"
        )
    high_inclusive = bool(document["provenance"].get("high_inclusive"))
    digest = samples_digest({r.setting: r.samples for r in runs})
    claims = entry_claims(runs, high_inclusive, digest)
    result.failures += [
        f"track {document['track']}: {p}"
        for p in (unscored_problem(s, c, document["track"]) for s, c in claims.items())
        if p
    ]
    for run in runs:
        if run.setting in document["settings"]:
            where = f"settings.{run.setting}"
            claims[run.setting] = fluency_as_claimed(
                document["settings"][run.setting], claims[run.setting], where, result
            )
            result.failures += _differences(document["settings"][run.setting], claims[run.setting], where)
            if not _close_rows(submission_rows(run.samples), document["samples"].get(run.setting, [])):
                result.failures.append(f"samples.{run.setting}: per-sample values differ from the logs")
    if digest != document["provenance"]["samples_digest"]:
        result.failures.append(
            "provenance.samples_digest: the logs' answers and scores differ from the submitted ones"
        )
    result.checks += [
        "every run successful, the track's complete sample set and protocol (read from the logs' headers)",
        "one model, one task version, one metric signature and one judge",
        f"every aggregate recomputed from the samples (within {SAME_NUMBER_TOLERANCE:g})",
        "samples digest recomputed",
    ]
    if read := fluency_line(claims):
        (result.sampled if read[1] else result.checks).append(read[0])
    _warnings(runs, claims, result)
    recheck = recheck_runs(runs, sample, PROTOCOLS.get(document["track"]), document["sha256"])
    result.checks += recheck.checks
    result.failures += recheck.failures
    result.unchecked += recheck.unchecked
    result.sampled += recheck.sampled
    result.cannot_rescore = recheck.cannot_rescore


def _close_rows(a: list, b: list) -> bool:
    return len(a) == len(b) and all(_close(list(x), list(y)) for x, y in zip(a, b))


def _warnings(runs, claims_by_setting: dict[str, dict], result: Verification) -> None:
    for run in runs:
        revision = run.header.eval.revision
        if revision is not None and getattr(revision, "dirty", False):
            result.warnings.append(
                f"{run.setting}: generated from uncommitted code (git {revision.commit[:12]}, dirty)"
            )
        claims = claims_by_setting[run.setting]
        result.failures += header_problems(run, claims)
        if (claims["rates"]["empty_extraction"] or 0) > EMPTY_RATE_WARNING:
            result.warnings.append(
                f"{run.setting}: {claims['rates']['empty_extraction']:.0%} of answers are empty after "
                f"extraction"
            )
        rouge = [none_if_nan(sample_scores(s)[0].get("rouge1")) for s in run.samples]
        near = [is_near_verbatim(r) for r in rouge if r is not None]
        if near and fmean(near) > CONTAMINATION_WARNING:
            result.warnings.append(
                f"{run.setting}: {fmean(near):.1%} of answers are near-verbatim copies of the gold "
                f"(ROUGE-1 >= {CONTAMINATION_ROUGE:g}): contamination?"
            )


#: The re-judge (K, grader) a board build asks of every entry it verifies (``leaderboard --rejudge``),
#: set around the build by ``rejudging``; ``verify``'s own ``rejudge`` argument takes precedence.
_BOARD_REJUDGE: ContextVar[tuple[int, Any] | None] = ContextVar("board_rejudge", default=None)


@contextmanager
def rejudging(k: int, grader: Any) -> Iterator[None]:
    """Within this block every ``verify`` with logs also re-judges ``k`` samples with ``grader``."""
    token = _BOARD_REJUDGE.set((k, grader))
    try:
        yield
    finally:
        _BOARD_REJUDGE.reset(token)


def _retests(document: dict, locations: list[str], result: Verification, retests: dict[str, Any]) -> None:
    """``--regenerate`` (AtAvg, with ``model``) and ``--rejudge`` (QAvg, with ``grader``), as asked."""
    runs = read_settings(locations) if retests.get("regenerate") or retests.get("rejudge") else []
    outcomes: list[Retest] = []
    if retests.get("regenerate"):
        from .regenerate import regenerate

        model = retests.get("model") or document["model"]["id"]
        outcomes.append(regenerate(document, runs, model, retests["regenerate"]))
    if retests.get("rejudge"):
        from .rejudge import RejudgeError, declared_grader, rejudge

        grader = retests.get("grader") or declared_grader(document)
        if grader is None:
            raise RejudgeError("--rejudge needs --grader: the submission names no single grader")
        outcomes.append(rejudge(document, runs, grader, retests["rejudge"]))
        result.rejudged = not outcomes[-1].failures
    for outcome in outcomes:
        result.checks += outcome.checks
        result.failures += outcome.failures
        result.warnings += outcome.warnings


def verify(
    path: Path, logs_dir: Path | None = None, sample: int | None = None, **retests: Any
) -> Verification:
    """Every check that the file (and, given, its logs) allows; failures and warnings named.
    ``sample``: re-score the metrics of that many samples (drawn at run time) instead of all.
    ``retests``: ``regenerate=K`` generates K instances per setting again with ``model`` (default:
    the declared one); ``rejudge=K`` judges K samples again with ``grader`` (default: the declared
    one); both test the submitted scores against the fresh ones."""
    result = Verification(str(path))
    document = load_document(path)
    problems = schema_problems(document)
    if problems:
        result.failures += [f"schema: {p}" for p in problems]
        return result
    result.sha256 = document["sha256"]
    result.checks.append("schema")
    if content_hash(document) != document["sha256"]:
        result.failures.append("sha256: the content does not match its hash (edited after submit)")
        return result
    result.checks.append("content hash")
    self_consistency(document, result)
    if logs_dir is not None:
        locations = _find_logs(document, logs_dir, result)
        if locations is not None:
            result.logs_checked = True
            if not recalled(result, sample):  # this machine's verdict on the same content, if any
                _check_logs(document, locations, result, sample)
                remember(result, sample)
            board = _BOARD_REJUDGE.get()
            if board is not None and not retests.get("rejudge"):
                retests = {**retests, "rejudge": board[0], "grader": board[1]}
            _retests(document, locations, result, retests)
    return result


def store(result: Verification, path: Path) -> Path:
    """Write ``result`` beside the submission (``<file>.verification.json``), for people to read."""
    from ....data.atomic import atomic_file

    target = Path(f"{path}.verification.json")
    with atomic_file(target) as partial:
        partial.write_text(json.dumps(result.record(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return target
