"""``narrative-infill leaderboard``: submissions -> ``leaderboard.md``, ``leaderboard.json`` and a
self-contained ``index.html`` (inline CSS and JS, no server, no network).

One table per track; a row is (model, judge, metric signature), with AtAvg and QAvg per setting,
High%, Low%, n, and a badge the board earns itself: with ``--logs`` it runs ``verify`` on each
submission (a ``.verification.json`` beside a file is never read), and without it every entry is
"file only". Each file's claims are checked against its own samples. The headline numbers carry
a 95% interval clustered by source narrative, and entries are ordered by paired tests on the
instances each pair shares (``ranking.py``), within a group that shares track, settings, task
versions, metric signature, data and judge (models, prompt variant, weighting); ``custom`` entries
are never ranked. The null rules, computed here on the entries' instances (``reference.py``), show
what "did nothing" scores and set the floor a ranked entry must be above.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ....errors import NarrativeInfillError
from ....number_rules import is_missing
from ....paper_protocol import SETTINGS, high_label, is_high, is_low
from ..stats import CONFIDENCE
from .build import ATAVG_COLUMN, QAVG_COLUMN, content_hash
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
        "task_versions",
        "metrics_signatures",
        "judges",
        "judge_endpoints",
        "judge_variant",
        "judge_weighting",
        "prompt_variants",
    )
    return [
        document["track"],
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
        "qavg": interval(qavg, file) if scored else None,
        INSTANCES: {"atavg": atavg, "qavg": qavg},
    }


VERIFIED, CONSISTENT, FILE_ONLY = "verified", "consistent with its logs", "file only"
REJUDGED = " + re-judged"  # the badge's suffix when ``leaderboard --rejudge`` passed the entry


def _badge(path: Path, logs: Path | None, sample: int | None) -> str:
    """The board's own verdict on one submission: ``verify`` run here, never a file's say-so."""
    if logs is None:
        return FILE_ONLY
    result = verify(path, logs, sample=sample)
    if not result.passed:
        raise LeaderboardError(f"{path}: fails verification: " + "; ".join(result.failures[:5]))
    if not result.rescored:
        return NOT_VERIFIED + (REJUDGED if result.rejudged else "")
    return (VERIFIED if result.fully_verified else CONSISTENT) + (REJUDGED if result.rejudged else "")


def read_submissions(
    folder: Path, high_inclusive: bool = False, logs: Path | None = None, sample: int | None = None
) -> list[dict[str, Any]]:
    """Every submission in ``folder``, each valid, untouched, agreeing with its own samples and
    submitting logs no other file submits, or an error naming the file; with ``logs`` each one
    verified here against its logs."""
    rows = []
    submitted: dict[str, str] = {}  # a log's SHA-256 or eval id -> the file that submits it
    files = sorted(p for p in Path(folder).glob("*.json") if not p.name.endswith(".verification.json"))
    if not files:
        raise LeaderboardError(f"no submission files (*.json) in {folder}")
    for path in files:
        try:
            document = load_document(path)
        except ValueError as err:
            raise LeaderboardError(str(err)) from None
        problems = schema_problems(document)
        if problems:
            raise LeaderboardError(f"{path}: not a valid submission: {'; '.join(problems)}")
        if content_hash(document) != document["sha256"]:
            raise LeaderboardError(f"{path}: the content does not match its hash (edited after submit)")
        own = Verification(str(path))
        self_consistency(document, own)
        if own.failures:
            raise LeaderboardError(
                f"{path}: its claims disagree with its own samples: {'; '.join(own.failures)}"
            )
        for entry in document["provenance"]["logs"]:  # a copy re-signed under another name or submitter
            for key in (entry.get("sha256"), entry.get("eval_id")):
                if key and (earlier := submitted.setdefault(key, path.name)) != path.name:
                    raise LeaderboardError(
                        f"{path}: {earlier} and {path.name} submit the same log {entry.get('file')} "
                        "(same SHA-256 or eval id): one entry per run"
                    )
        rows.append(_row(document, _badge(path, logs, sample), path.name, high_inclusive))
    return rows


def _cell(value, digits: int = 3) -> str:
    return "—" if is_missing(value) else f"{value:.{digits}f}"


def _interval(value) -> str:
    return "—" if not value else f"{value[0]:.3f} [{_cell(value[1])}, {_cell(value[2])}]"


def _markdown_cell(text: str) -> str:
    """A table cell no string can leave: a pipe or a line break would start a cell or a row of
    its own (a forged "verified" row), and ``<`` would open inline HTML."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def markdown(rows: list[dict[str, Any]], high_inclusive: bool = False) -> str:
    lines = [
        "# Narrative infilling leaderboard",
        "",
        f"{INTERVAL_NOTE}. {RANK_RULE}; "
        '"tied with #k" names the rows it is not told apart from, within a group sharing settings, '
        "task versions, metric signature, data, judge (models, prompt variant, "
        "weighting) and instances (G1, G2... when a track has several); custom entries are never ranked. "
        "Badges: verified (every claim and sample recomputed here from the logs, the metrics re-scored), "
        "consistent with its logs (every figure recomputed, some other check not possible here), "
        f"{NOT_VERIFIED} (the metrics could not be re-scored on the board's machine), file only "
        "(no logs given: the file's own claims only).",
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
            "vs floor",
            "metric signature",
        ]
        lines += ["", f"## Track: {track}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for r in sorted(members, key=lambda r: (r["baseline"], r.get("position", 99), r["model"])):
            lines.append("| " + " | ".join(map(_markdown_cell, _row_cells(r, settings))) + " |")
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
        _cell(r.get("copied") and r["copied"] * 100, 1),
        _cell(r.get("reused") and r["reused"] * 100, 1),
        _cell(r.get("not_fluent") and r["not_fluent"] * 100, 1),
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
    """Validate (and with ``logs`` verify) every submission first; write the three files only when
    all of them are good. High% follows one rule for the whole board (``high_inclusive``).
    With ``bundle_logs`` (a folder holding the entries' logs), each entry's logs become a log viewer
    in ``logs/<entry>/`` and its row links to it."""
    from ....data.atomic import atomic_dir, check_output_dir

    inputs = [submissions, *(path for path in (logs, bundle_logs) if path)]
    check_output_dir(site, "leaderboard", inputs)
    rows = read_submissions(submissions, high_inclusive, logs, sample)
    bundled = entry_logs(rows, submissions, bundle_logs) if bundle_logs else {}
    for row in rows:
        if row["file"] in bundled:
            row["logs_bundle"] = f"logs/{Path(row['file']).stem}/index.html"
    references = reference_rows(rows, submissions)
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
    }
    template = resources.files(__package__).joinpath("board.html").read_text(encoding="utf-8")
    payload = embed(data)
    with atomic_dir(site, "leaderboard", inputs) as folder:
        for file, paths in bundled.items():
            _bundle(paths, folder / "logs" / Path(file).stem)
        (folder / "leaderboard.json").write_text(
            json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        (folder / "leaderboard.md").write_text(markdown(rows, high_inclusive), encoding="utf-8")
        (folder / "index.html").write_text(
            template.replace("/*LEADERBOARD_DATA*/null", payload), encoding="utf-8"
        )
    return rows
