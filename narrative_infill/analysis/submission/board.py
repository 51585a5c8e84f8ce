"""``narrative-infill leaderboard``: submissions -> ``leaderboard.md``, ``leaderboard.json`` and a
self-contained ``index.html`` (inline CSS and JS, no server, no network).

One table per track; a row is (model, judge, metric signature), with AtAvg and QAvg per setting,
High%, Low%, n, and a badge saying whether ``verify`` recomputed it from logs. The headline
numbers carry a seeded bootstrap confidence interval over samples (resampled within each
setting), and a row ranks above another only when their intervals do not overlap; rows with
different judges or metric signatures are never ranked together. Two baselines computed here
(an empty answer, and a copy of the sentence left of the blank) show what "did nothing" scores.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ...definitions import (
    ATAVG_COLUMN,
    QAVG_COLUMN,
    SETTINGS,
    NarrativeInfillError,
    high_label,
    is_high,
    is_low,
    is_missing,
)
from .build import content_hash, file_sha256
from .verify import load_document, schema_problems

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20260101
CONFIDENCE = 0.95


class LeaderboardError(NarrativeInfillError, ValueError):
    """A submission that cannot go on the board, named by its file."""


def bootstrap(
    values_by_setting: list[list[float]], seed: int = BOOTSTRAP_SEED
) -> tuple[float, float, float] | None:
    """(mean, low, high): the pooled mean over samples and its percentile interval, resampling
    the samples of each setting separately (numpy has no stratified bootstrap: written here)."""
    groups = [np.asarray(v, dtype=float) for v in values_by_setting if v]
    if not groups:
        return None
    rng = np.random.default_rng(seed)
    total = sum(len(g) for g in groups)
    sums = np.zeros(BOOTSTRAP_RESAMPLES)
    for group in groups:
        picks = rng.integers(0, len(group), size=(BOOTSTRAP_RESAMPLES, len(group)))
        sums += group[picks].sum(axis=1)
    means = sums / total
    tail = (1 - CONFIDENCE) / 2 * 100
    return (
        float(np.concatenate(groups).mean()),
        float(np.percentile(means, tail)),
        float(np.percentile(means, 100 - tail)),
    )


def _row(document: dict[str, Any], verified: bool, file: str, high_inclusive: bool = False) -> dict[str, Any]:
    provenance = document["provenance"]
    samples = document["samples"]
    qavg = [[r[QAVG_COLUMN] for r in rows if r[QAVG_COLUMN] is not None] for rows in samples.values()]
    scored = [q for group in qavg for q in group]
    return {
        "file": file,
        "track": document["track"],
        "model": document["model"]["id"],
        "submitter": document.get("submitter"),
        "judge": ", ".join(provenance.get("judges") or []) or "none",
        "signature": " ; ".join(provenance.get("metrics_signatures") or []) or "none",
        "verified": verified,
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
        "atavg": bootstrap(
            [[r[ATAVG_COLUMN] for r in rows if r[ATAVG_COLUMN] is not None] for rows in samples.values()]
        ),
        "qavg": bootstrap(qavg) if scored else None,
    }


def read_submissions(folder: Path, high_inclusive: bool = False) -> list[dict[str, Any]]:
    """Every submission in ``folder``, each valid and untouched, or an error naming the file."""
    rows = []
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
        sidecar = Path(f"{path}.verification.json")
        verified = False
        if sidecar.is_file():
            record = json.loads(sidecar.read_text(encoding="utf-8"))
            verified = (
                bool(record.get("verified_from_logs"))
                and record.get("submission_sha256") == document["sha256"]
            )
        rows.append(_row(document, verified, path.name, high_inclusive))
    return rows


def rank(rows: list[dict[str, Any]]) -> None:
    """Within each (track, judge, signature) group: QAvg when every entry has it, else AtAvg;
    rank = 1 + the entries whose interval lies wholly above this one's."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if not row["baseline"]:
            groups.setdefault((row["track"], row["judge"], row["signature"]), []).append(row)
    for members in groups.values():
        key = "qavg" if all(m["qavg"] for m in members) else "atavg"
        for row in members:
            row["ranked_on"] = key
            row["rank"] = 1 + sum(
                1
                for other in members
                if other is not row and other[key] and row[key] and other[key][1] > row[key][2]
            )


def _track_instances(track: str):
    from ...data.dataset import DEMO, load_benchmark, stratified_subset

    if track == "demo":
        return load_benchmark(DEMO).instances
    instances = load_benchmark("hf").instances
    return stratified_subset(instances, track) if track == "10pct" else instances


def left_sentence(instance) -> str:
    """The sentence right before the blank (empty when the blank opens the story)."""
    from ...data.records import BLANK
    from ...data.text import split_sentences

    before = instance.problem.split(BLANK)[0].strip()
    sentences = split_sentences(before, instance.domain) if before else []
    return sentences[-1] if sentences else ""


def baselines(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The empty-answer and left-sentence baselines for each (track, metric signature) on the
    board, scored here with that signature's backbones; unavailable ones say why."""
    from ...scorers.metrics.pairs import resolve_backbones, score_pairs

    out = []
    for track, signature in sorted({(r["track"], r["signature"]) for r in rows if not r["baseline"]}):
        settings = sorted(
            {s for r in rows if r["track"] == track and r["signature"] == signature for s in r["settings"]},
            key=SETTINGS.index,
        )
        for name, answer in (
            ("baseline: empty answer", lambda i: ""),
            ("baseline: left sentence copied", left_sentence),
        ):
            row = {"file": None, "track": track, "model": name, "submitter": None, "judge": "not judged", "signature": signature,
                   "verified": True, "baseline": True, "high": None, "low": None, "qavg": None, "settings": {}}  # fmt: skip
            try:
                instances = _track_instances(track)
                backbones = resolve_backbones("minilm" if "MiniLM" in signature else "paper")
                scores = [
                    p.values["atavg"]
                    for p in score_pairs(
                        [answer(i) for i in instances], [i.gold_answer for i in instances], backbones
                    )
                ]
            except Exception as err:  # data or backbone out of reach: say so on the board
                row.update(unavailable=f"{type(err).__name__}: {err}", n=0, atavg=None)
            else:
                row.update(
                    n=len(scores),
                    atavg=bootstrap([scores]),
                    settings={s: {"atavg": float(np.mean(scores)), "qavg": None} for s in settings},
                )
            out.append(row)
    return out


def _cell(value, digits: int = 3) -> str:
    return "—" if is_missing(value) else f"{value:.{digits}f}"


def _interval(value) -> str:
    return "—" if not value else f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"


def markdown(rows: list[dict[str, Any]], high_inclusive: bool = False) -> str:
    lines = ["# Narrative infilling leaderboard", "",
             f"Intervals: {CONFIDENCE:.0%} bootstrap over samples ({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}). "
             "A row ranks above another only when their intervals do not overlap; rows with different judges or metric "
             "signatures are never ranked together."]  # fmt: skip
    if high_inclusive:
        lines.append(
            f"High% counts {high_label(True)} (the authors' scripts), not the paper's {high_label()}."
        )
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
            "metric signature",
        ]
        lines += ["", f"## Track: {track}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for r in sorted(members, key=lambda r: (r["baseline"], r.get("rank", 99), r["model"])):
            badge = "baseline" if r["baseline"] else ("verified from logs" if r["verified"] else "file only")
            cells = [
                str(r.get("rank", "")),
                r["model"],
                r["judge"],
                badge,
                _interval(r["atavg"]),
                _interval(r["qavg"]),
            ]
            cells += [_cell((r["settings"].get(s) or {}).get(k)) for s in settings for k in ("atavg", "qavg")]
            cells += [
                _cell(r["high"] and r["high"] * 100, 1),
                _cell(r["low"] and r["low"] * 100, 1),
                str(r["n"]),
                r["signature"][:60],
            ]
            if r.get("unavailable"):
                cells[4] = f"unavailable ({r['unavailable'][:80]})"
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def entry_logs(rows: list[dict[str, Any]], submissions: Path, logs_dir: Path) -> dict[str, list[Path]]:
    """Each entry's logs, found in ``logs_dir`` by the name and SHA-256 its submission records."""
    found: dict[str, list[Path]] = {}
    for path in sorted(Path(logs_dir).rglob("*.eval")):
        found.setdefault(path.name, []).append(path)
    logs: dict[str, list[Path]] = {}
    for row in rows:
        document = load_document(Path(submissions) / row["file"])
        logs[row["file"]] = []
        for entry in document["provenance"]["logs"]:
            same = [p for p in found.get(entry["file"], []) if file_sha256(str(p)) == entry["sha256"]]
            if not same:
                raise LeaderboardError(
                    f"{row['file']}: log {entry['file']} (setting {entry['setting']}) is not in {logs_dir} "
                    "with the SHA-256 the submission records"
                )
            logs[row["file"]].append(same[0])
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


def write_leaderboard(
    submissions: Path, site: Path, high_inclusive: bool = False, bundle_logs: Path | None = None
) -> list[dict[str, Any]]:
    """Validate every submission first; write the three files only when all of them are good.
    High% follows one rule for the whole board (``high_inclusive``), whatever each file claims.
    With ``bundle_logs`` (a folder holding the entries' logs), each entry's logs become a log viewer
    in ``logs/<entry>/`` and its row links to it."""
    from ...data.atomic import atomic_dir

    rows = read_submissions(submissions, high_inclusive)
    logs = entry_logs(rows, submissions, bundle_logs) if bundle_logs else {}
    for row in rows:
        if row["file"] in logs:
            row["logs_bundle"] = f"logs/{Path(row['file']).stem}/index.html"
    rank(rows)
    rows += baselines(rows)
    data = {
        "settings": list(SETTINGS),
        "confidence": CONFIDENCE,
        "resamples": BOOTSTRAP_RESAMPLES,
        "rows": rows,
    }
    template = resources.files(__package__).joinpath("board.html").read_text(encoding="utf-8")
    payload = json.dumps(data, sort_keys=True).replace(
        "</", "<\\/"
    )  # no "</script>" inside the inline script
    with atomic_dir(site) as folder:
        for file, paths in logs.items():
            _bundle(paths, folder / "logs" / Path(file).stem)
        (folder / "leaderboard.json").write_text(
            json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        (folder / "leaderboard.md").write_text(markdown(rows, high_inclusive), encoding="utf-8")
        (folder / "index.html").write_text(
            template.replace("/*LEADERBOARD_DATA*/null", payload), encoding="utf-8"
        )
    return rows
