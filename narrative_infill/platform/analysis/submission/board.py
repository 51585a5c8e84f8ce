"""``narrative-infill leaderboard``: submissions -> ``leaderboard.md``, ``leaderboard.json`` and a
self-contained ``index.html`` (inline CSS and JS, no server, no network).

One table per track; a row is (model, judge, metric signature), with AtAvg and QAvg per setting,
High%, Low%, n, and a badge the board earns itself: with ``--logs`` it runs ``verify`` on each
submission (a ``.verification.json`` beside a file is never read), and without it every entry is
"file only", shown but never ranked. Each file's claims are checked against its own samples; a file
that fails any check is listed as refused, with its reasons, and the rest of the board is built.
With ``--logs``, entries whose answers are one run's are shown but not ranked (``replay.py``). The
headline numbers carry a 95% interval clustered by source narrative, and entries are ordered by
paired tests on the instances each pair shares (``ranking.py``), within a group that shares track,
settings, task versions, metric signature, data and judge (models, prompt variant, weighting);
``custom`` entries are never ranked. The null rules, computed here on the entries' instances
(``reference.py``), show what "did nothing" scores and set the floor a ranked entry must be above.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ....errors import NarrativeInfillError
from ....number_rules import JUDGE_RANGE, is_missing
from ....paper_protocol import SETTINGS, high_label, is_high, is_low
from ....task_options import comparability
from ...names import LookAlikes, name_problem
from ..stats import CONFIDENCE
from .build import ATAVG_COLUMN, QAVG_COLUMN, content_hash
from .protocol import RANKED_TRACKS
from .ranking import (
    INSTANCES,
    INTERVAL_NOTE,
    RANK_RULE,
    instance_values,
    interval,
    narrative,
    rank,
    rank_label,
)
from .reference import COPY_NOTE, NOT_ABOVE, reference_rows
from .replay import mark_replays
from .verify import (
    NOT_VERIFIED,
    Verification,
    load_document,
    locate_logs,
    schema_problems,
    self_consistency,
    verify,
)


class LeaderboardError(NarrativeInfillError, ValueError):
    """A submission that cannot go on the board, named by its file."""


def _group(document: dict[str, Any]) -> list:
    """What two entries must share to be ranked together."""
    provenance = document["provenance"]
    dataset = provenance.get("dataset") or {}
    keys = (
        "metrics_signatures",
        "judges",
        "judge_endpoints",
        "judge_variant",
        "judge_weighting",
        "prompt_variants",
    )
    return [
        document["track"],
        sorted({comparability(v) for v in provenance.get("task_versions") or []}),  # 3 and 3-A alike
        sorted(document["settings"]),
        dataset.get("source"),
        dataset.get("commit"),
        dataset.get("sha256"),
        *(provenance.get(k) for k in keys),
    ]


def _row(document: dict[str, Any], badge: str, file: str, high_inclusive: bool = False) -> dict[str, Any]:
    provenance = document["provenance"]
    samples = document["samples"]
    atavg, qavg = instance_values(samples, ATAVG_COLUMN), instance_values(samples, QAVG_COLUMN)
    scored = [q for rows in samples.values() for q in (r[QAVG_COLUMN] for r in rows) if q is not None]
    return {
        "file": file,
        "track": document["track"],
        "model": document["model"]["id"],
        "submitter": document.get("submitter"),
        "judge": ", ".join(provenance.get("judges") or []) or "none",
        "signature": " ; ".join(provenance.get("metrics_signatures") or []) or "none",
        "badge": badge,
        "verified": badge.startswith(VERIFIED),
        "group": json.dumps(_group(document), sort_keys=True),
        "baseline": False,
        "settings": {
            name: {
                "atavg": (claims.get("atavg") or {}).get("mean"),
                "qavg": (claims.get("qavg") or {}).get("mean"),
            }
            for name, claims in document["settings"].items()
        },
        "high": float(np.mean([is_high(q, high_inclusive) for q in scored])) if scored else None,
        "low": float(np.mean([is_low(q) for q in scored])) if scored else None,
        "n": sum(len(rows) for rows in samples.values()),
        "narratives": len({narrative(sample_id) for _, sample_id in atavg}),
        "atavg": interval(atavg, file),
        "qavg": interval(qavg, file, JUDGE_RANGE) if scored else None,
        INSTANCES: {"atavg": atavg, "qavg": qavg},
    }


VERIFIED, CONSISTENT, FILE_ONLY = "verified", "consistent with its logs", "file only"
REJUDGED = " + re-judged"  # the badge's suffix when ``leaderboard --rejudge`` passed the entry
#: An entry the board did not verify (no ``--logs``) is shown with its file's claims, never ranked: a
#: rank would rest on a file nobody checked against its logs.
FILE_ONLY_RULE = "not ranked: file only (the board was built without --logs, nothing verified)"
#: A refused submission's badge: shown with its reasons, never ranked.
REFUSED = "refused"
#: Reasons of one refused file shown before the rest are counted, and the characters of each.
SHOWN_REASONS, REASON_CHARS = 10, 600


def _badge(path: Path, logs: Path | None, sample: int | None) -> tuple[str, list[str]]:
    """The board's own verdict on one submission, ``verify`` run here (never a file's say-so), and
    why it is refused (empty when it is not)."""
    if logs is None:
        return FILE_ONLY, []
    try:
        result = verify(path, logs, sample=sample)
    except Exception as err:  # a log that cannot be read refuses its entry, not the whole board
        return REFUSED, [f"cannot be verified: {type(err).__name__}: {err}"]
    if not result.passed:
        return REFUSED, [f"fails verification: {failure}" for failure in result.failures]
    if not result.rescored:
        return NOT_VERIFIED + (REJUDGED if result.rejudged else ""), []
    return (VERIFIED if result.fully_verified else CONSISTENT) + (REJUDGED if result.rejudged else ""), []


def _refusal(path: Path, document: Any, reasons: list[str]) -> dict[str, Any]:
    """A refused file as the board shows it: its name, what it says it is (when readable) and every
    reason, each bounded (the rest counted, never dropped unsaid)."""
    said = document if isinstance(document, dict) else {}
    model = said.get("model")
    shown = [reason[:REASON_CHARS] for reason in reasons[:SHOWN_REASONS]]
    if len(reasons) > SHOWN_REASONS:
        shown.append(f"... and {len(reasons) - SHOWN_REASONS} more")
    return {
        "file": path.name,
        "model": str(model.get("id") if isinstance(model, dict) else "")[:200],
        "track": str(said.get("track") or "")[:50],
        "badge": REFUSED,
        "reasons": shown,
    }


def _file_problems(path: Path, submitted: dict[str, str]) -> tuple[Any, list[str]]:
    """(the document, why the file itself cannot be boarded): unreadable, invalid, edited after
    submit, claims against its own samples, or a log another file already submits (its logs are
    then recorded in ``submitted``)."""
    if reason := name_problem(path.name, as_written=True):  # the board prints it as the entry's name
        return None, [f"file name {ascii(path.name)} {reason}"]
    try:
        document = load_document(path)
    except ValueError as err:
        return None, [str(err)]
    problems = schema_problems(document)
    if problems:
        return document, [f"not a valid submission: {problem}" for problem in problems]
    if content_hash(document) != document["sha256"]:
        return document, ["the content does not match its hash (edited after submit)"]
    own = Verification(str(path))
    self_consistency(document, own)
    if own.failures:
        return document, [f"its claims disagree with its own samples: {failure}" for failure in own.failures]
    logs = [
        (key, entry.get("file"))
        for entry in document["provenance"]["logs"]
        for key in (entry.get("sha256"), entry.get("eval_id"))
        if key
    ]
    for key, name in logs:  # a copy re-signed under another name or submitter
        if (earlier := submitted.get(key, path.name)) != path.name:
            return document, [
                f"{earlier} and {path.name} submit the same log {name} (same SHA-256 or eval id): "
                "one entry per run"
            ]
    submitted.update((key, path.name) for key, _ in logs)
    return document, []


def read_submissions(
    folder: Path, high_inclusive: bool = False, logs: Path | None = None, sample: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the board's entries, the refused files): every submission in ``folder`` that is valid,
    untouched, agreeing with its own samples and submitting logs no other file submits, with
    ``logs`` verified here against its logs; every other one refused with its reasons."""
    rows, refused = [], []
    submitted: dict[str, str] = {}  # a log's SHA-256 or eval id -> the file that submits it
    names = LookAlikes()  # two rows whose model names print alike would read as one model
    files = sorted(p for p in Path(folder).glob("*.json") if not p.name.endswith(".verification.json"))
    if not files:
        raise LeaderboardError(f"no submission files (*.json) in {folder}")
    for path in files:
        document, problems = _file_problems(path, submitted)
        if problems:
            refused.append(_refusal(path, document, problems))
            continue
        badge, failures = _badge(path, logs, sample)
        if not failures and (clash := names.problem(document["model"]["id"], path.name)):
            failures = [f"model.id: {clash}"]
        if failures:
            refused.append(_refusal(path, document, failures))
        else:
            rows.append(_row(document, badge, path.name, high_inclusive))
    return rows, refused


def _cell(value, digits: int = 3) -> str:
    return "—" if is_missing(value) else f"{value:.{digits}f}"


def _interval(value) -> str:
    return "—" if not value else f"{value[0]:.3f} [{_cell(value[1])}, {_cell(value[2])}]"


def _markdown_cell(text: str) -> str:
    """A table cell no string can leave: a pipe or a line break would start a cell or a row of
    its own (a forged "verified" row), and ``<`` would open inline HTML."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def markdown(
    rows: list[dict[str, Any]], high_inclusive: bool = False, refused: Sequence[dict[str, Any]] = ()
) -> str:
    lines = [
        "# Narrative infilling leaderboard",
        "",
        f"{INTERVAL_NOTE}. {RANK_RULE}; ranked "
        "within a group sharing settings, "
        "task versions, metric signature, data, judge (models, prompt variant, "
        "weighting) and instances (G1, G2... when a track has several); custom entries are never ranked. "
        "Badges: verified (every claim and sample recomputed here from the logs, the metrics re-scored), "
        "consistent with its logs (every figure recomputed, some other check not possible here), "
        f"{NOT_VERIFIED} (the metrics could not be re-scored on the board's machine), file only "
        "(no logs given: the file's own claims only, never ranked). A refused file is listed under "
        "Refused with its reasons, never ranked.",
    ]
    if high_inclusive:
        lines.append(
            f"High% counts {high_label(True)} (the authors' scripts), not the paper's {high_label()}."
        )
    lines.append(COPY_NOTE)
    for track in sorted({r["track"] for r in rows}):
        members = [r for r in rows if r["track"] == track]
        settings = [s for s in SETTINGS if any(s in r["settings"] for r in members)]
        header = [
            "rank",
            "model",
            "judge",
            "badge",
            "AtAvg",
            "QAvg",
            *(f"{k} {s}" for s in settings for k in ("AtAvg", "QAvg")),
            "High%",
            "Low%",
            "n",
            "narratives",
            "copied%",
            "reused%",
            "not fluent%",
            "blank ignored%",
            "vs floor",
            "metric signature",
        ]
        lines += ["", f"## Track: {track}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for r in sorted(members, key=lambda r: (r["baseline"], r.get("position", 99), r["model"])):
            lines.append("| " + " | ".join(map(_markdown_cell, _row_cells(r, settings))) + " |")
    if refused:
        lines += ["", "## Refused", "", "| file | model | track | reasons |", "|---|---|---|---|"]
        for r in refused:
            cells = [r["file"], r["model"], r["track"], "; ".join(r["reasons"])]
            lines.append("| " + " | ".join(map(_markdown_cell, cells)) + " |")
    return "\n".join(lines) + "\n"


def _row_cells(r: dict[str, Any], settings: list[str]) -> list[str]:
    """One entry's cells of the Markdown board, in the header's order."""
    cells = [rank_label(r), r["model"], r["judge"], r["badge"], _interval(r["atavg"]), _interval(r["qavg"])]
    cells += [_cell((r["settings"].get(s) or {}).get(k)) for s in settings for k in ("atavg", "qavg")]
    cells += [
        _cell(r["high"] and r["high"] * 100, 1),
        _cell(r["low"] and r["low"] * 100, 1),
        str(r["n"]),
        str(r.get("narratives", "")),
        *(_cell(r.get(k) and r[k] * 100, 1) for k in ("copied", "reused", "not_fluent", "ignored")),
        r.get("unranked") or r.get("vs_floor") or "",
        r["signature"][:60],
    ]
    if r.get("unavailable"):
        cells[4] = f"unavailable ({r['unavailable'][:80]})"
    return cells


def entry_logs(rows: list[dict[str, Any]], submissions: Path, logs_dir: Path) -> dict[str, list[Path]]:
    """Each entry's logs, found in ``logs_dir`` by the name and SHA-256 its submission records."""
    logs: dict[str, list[Path]] = {}
    for row in rows:
        located, problems = locate_logs(load_document(Path(submissions) / row["file"]), logs_dir)
        if problems:
            raise LeaderboardError(f"{row['file']}: {'; '.join(problems)}")
        logs[row["file"]] = [Path(location) for location in located]
    return logs


def _bundle(logs: list[Path], output: Path) -> None:
    """``inspect view bundle`` of ``logs``: a static log viewer in ``output``."""
    import shutil
    import tempfile

    from inspect_ai.log import bundle_log_dir

    with tempfile.TemporaryDirectory() as staging:
        for log in logs:
            shutil.copy2(log, Path(staging) / log.name)
        bundle_log_dir(log_dir=staging, output_dir=str(output))


def embed(data: Any) -> str:
    """JSON that no string can end or break out of an inline script: every ``<`` is escaped, so
    neither ``</script>`` nor ``<!--`` survives (non-ASCII, U+2028 included, is escaped by json)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=True).replace("<", "\\u003c")


def write_leaderboard(
    submissions: Path,
    site: Path,
    high_inclusive: bool = False,
    logs: Path | None = None,
    sample: int | None = None,
    bundle_logs: Path | None = None,
) -> list[dict[str, Any]]:
    """Validate (and with ``logs`` verify) every submission, then write the three files: every good
    entry as usual, every refused file listed with its reasons (its row has ``badge`` "refused"),
    never ranked; without ``logs`` no entry is ranked. High% follows one rule for the whole board
    (``high_inclusive``). Returns the entries, the reference rows, then the refused files.
    With ``bundle_logs`` (a folder holding the entries' logs), each entry's logs become a log viewer
    in ``logs/<entry>/`` and its row links to it."""
    from ....data.atomic import atomic_dir, check_output_dir

    inputs = [submissions, *(path for path in (logs, bundle_logs) if path)]
    check_output_dir(site, "leaderboard", inputs)
    rows, refused = read_submissions(submissions, high_inclusive, logs, sample)
    bundled = entry_logs(rows, submissions, bundle_logs) if bundle_logs else {}
    for row in rows:
        if row["file"] in bundled:
            row["logs_bundle"] = f"logs/{Path(row['file']).stem}/index.html"
    references = reference_rows(rows, submissions)
    for row in rows:  # a reason of its own (a guard, the floor) said first
        if row["badge"] == FILE_ONLY and row["track"] in RANKED_TRACKS:
            row.setdefault("unranked", FILE_ONLY_RULE)
    if logs is not None:
        mark_replays(rows, submissions, logs)
    rank(rows)
    for row in rows:
        del row[INSTANCES]
    rows += references
    data = {
        "settings": list(SETTINGS),
        "confidence": CONFIDENCE,
        "interval_note": INTERVAL_NOTE,
        "rank_rule": RANK_RULE,
        "high_rule": high_label(high_inclusive),
        "copy_note": COPY_NOTE,
        "not_above": NOT_ABOVE,
        "rows": rows,
        "refused": refused,
    }
    template = resources.files(__package__).joinpath("board.html").read_text(encoding="utf-8")
    payload = embed(data)
    with atomic_dir(site, "leaderboard", inputs) as folder:
        for file, paths in bundled.items():
            _bundle(paths, folder / "logs" / Path(file).stem)
        (folder / "leaderboard.json").write_text(
            json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        (folder / "leaderboard.md").write_text(markdown(rows, high_inclusive, refused), encoding="utf-8")
        (folder / "index.html").write_text(
            template.replace("/*LEADERBOARD_DATA*/null", payload), encoding="utf-8"
        )
    return rows + refused
