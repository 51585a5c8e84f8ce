"""A blinded human-rating study over Inspect logs: the shared sample, each annotator's ratings,
and the export that ``narrative-infill report --human`` reads (Table 2).

The study folder holds ``manifest.json`` (the drawn items, written once: every annotator rates
the same ones), ``ratings-<annotator>.jsonl`` (append-only: every rating is flushed to disk
when given, so a crash, a closed tab or a killed server loses nothing; the last rating of an
item counts, the earlier ones stay in the file) and ``ratings.csv`` (all annotators, rewritten
atomically after every rating; a rating that replaced an earlier one is marked ``revised``).
Annotators' servers may run side by side on one folder: each append and each rewrite of the
export holds the study's lock (``.ratings.lock``, ``flock``), so no save is lost to a rewrite
that read the files before it. Model names, settings and scores are kept in the manifest for
the export and never shown.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import io
import json
import os
import random
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ....data.atomic import atomic_file
from ....data.records import BLANK
from ....errors import NarrativeInfillError
from ....paper_protocol import PAPER_JUDGE_VARIANT
from ....scorers.judge.rubric import dimensions_of
from ....task_options import setting_name

#: The judge prompt variant whose rubric people rate by (its dimensions, with the definitions the
#: page shows): the paper's, so that ratings sit beside the paper judge's scores.
STUDY_VARIANT = PAPER_JUDGE_VARIANT
RATED = dimensions_of(STUDY_VARIANT)

MANIFEST = "manifest.json"
DEFAULT_ITEMS = 300  # the paper's human study
EXPORT = "ratings.csv"
LOCK = ".ratings.lock"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class StudyError(NarrativeInfillError, ValueError):
    """A study that cannot be drawn, opened or rated; the message says why."""


def _candidates(paths: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Every rateable sample (first epoch, answer and problem present) of the logs' runs."""
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

    from ..report.load import newest_score_key, select_logs

    selected, _, _ = select_logs(paths)
    if not selected:
        raise StudyError(f"no successful log in {', '.join(map(str, paths))}")
    items, logs = [], []
    for location in selected:
        header = read_eval_log(location, header_only=True)
        model = re.sub(r"^replay/", "", header.eval.model)
        setting = setting_name(header.eval.metadata, header.eval.task)
        logs.append({"file": Path(location).name, "eval_id": header.eval.eval_id})
        for summary in read_eval_log_sample_summaries(location):
            scores = summary.scores or {}
            key = newest_score_key(scores, "metrics") or newest_score_key(scores, "judge")
            if (
                summary.epoch != 1
                or key is None
                or not isinstance(summary.input, str)
                or BLANK not in summary.input
            ):
                continue
            items.append(
                {
                    "sample_id": str(summary.id),
                    "model": model,
                    "setting": setting,
                    "problem": summary.input,
                    "answer": scores[key].answer or "",
                }
            )
    if not items:
        raise StudyError(
            "the logs hold no scored samples with a problem text and an extracted answer to rate"
        )
    return items, sorted(logs, key=lambda log: log["eval_id"])


def _eval_ids(paths: list[str]) -> list[str]:
    """The eval ids of the runs the logs hold, from their headers only."""
    from inspect_ai.log import read_eval_log

    from ..report.load import select_logs

    selected, _, _ = select_logs(paths)
    return sorted(read_eval_log(location, header_only=True).eval.eval_id for location in selected)


def draw(paths: list[str], n: int, seed: int) -> dict[str, Any]:
    """N items, stratified over (model, setting): round robin over the shuffled strata."""
    items, logs = _candidates(paths)
    if n > len(items):
        raise StudyError(f"--n {n} is more than the {len(items)} rateable samples in these logs")
    rng = random.Random(seed)
    strata: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for item in items:
        strata[(item["model"], item["setting"])].append(item)
    for members in strata.values():
        rng.shuffle(members)
    order = sorted(strata)
    chosen: list[dict] = []
    while len(chosen) < n:
        for key in order:
            if strata[key] and len(chosen) < n:
                chosen.append(strata[key].pop())
    for index, item in enumerate(chosen, 1):
        item["item"] = f"item-{index:04d}"
    return {"seed": seed, "n": n, "logs": logs, "items": chosen}


def open_study(folder: Path, paths: list[str], n: int | None, seed: int) -> dict[str, Any]:
    """The study's manifest: drawn and written on first use (``n`` items, 300 by default), read
    (and checked against the logs given, and ``n`` when given) afterwards, so that every
    annotator rates the same items."""
    manifest_path = Path(folder) / MANIFEST
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if n is not None and n != manifest["n"]:
            raise StudyError(
                f"{manifest_path} holds a study of {manifest['n']} items, not --n {n}; leave --n out to join "
                f"it"
            )
        if _eval_ids(paths) != [log["eval_id"] for log in manifest["logs"]]:
            raise StudyError(
                f"{manifest_path} was drawn from other logs "
                f"({', '.join(log['file'] for log in manifest['logs'])}); "
                "give the same logs, or a new ratings folder for a new study"
            )
        return manifest
    given = [path.name for path in ratings_files(folder)]
    if given:  # a new draw would give these ratings' item ids to other samples
        raise StudyError(
            f"{folder} holds ratings ({', '.join(given)}) but no {MANIFEST}: restore it, "
            "or use a new ratings folder for a new study"
        )
    manifest = draw(paths, DEFAULT_ITEMS if n is None else n, seed)
    with atomic_file(manifest_path) as partial:
        partial.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def ratings_files(folder: Path) -> list[Path]:
    """Every annotator's ratings file in the study folder (``Ratings.path``)."""
    return sorted(Path(folder).glob("ratings-*.jsonl"))


def check_name(annotator: str) -> str:
    if not _NAME.match(annotator or ""):
        raise StudyError(
            f"annotator name {annotator!r}: letters, digits, '.', '_' and '-' only (it names a file)"
        )
    return annotator


def order_for(manifest: dict[str, Any], annotator: str) -> list[str]:
    """This annotator's own shuffled order of the shared items (stable across restarts)."""
    seed = int(hashlib.sha256(f"{manifest['seed']}:{annotator}".encode()).hexdigest()[:12], 16)
    items = [item["item"] for item in manifest["items"]]
    random.Random(seed).shuffle(items)
    return items


def blank_marked(problem: str, answer: str) -> dict[str, str]:
    """The story split around the blank, for the page to show the infill marked in place."""
    before, _, after = problem.partition(BLANK)
    return {"before": before, "infill": answer, "after": after}


@contextmanager
def study_lock(folder: Path) -> Iterator[None]:
    """The study's one writer at a time, across every annotator's server process.

    ``flock`` on a lock file that is never removed (removing it would let two holders in); the
    kernel releases it when its holder dies, so a killed server never leaves the study locked.
    """
    with open(Path(folder) / LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def check_scores(scores: Any) -> dict[str, int]:
    """The five dimensions, each an integer 1-5: ``True`` is no score, though Python counts it an int."""
    if not isinstance(scores, dict):
        raise StudyError(f"scores must be an object with {', '.join(RATED)}")
    unknown = sorted(set(scores) - set(RATED))
    if unknown:
        raise StudyError(f"{', '.join(map(str, unknown))}: not a dimension ({', '.join(RATED)})")
    bad = [d for d in RATED if not (type(scores.get(d)) is int and 1 <= scores[d] <= 5)]
    if bad:
        raise StudyError(f"{', '.join(bad)}: each must be an integer from 1 to 5")
    return {d: scores[d] for d in RATED}


def _whole(line: bytes) -> bool:
    """A line that holds a whole JSON value (what ``history`` reads as a rating, or names)."""
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


class Ratings:
    """One annotator's ratings: an append-only JSON Lines file, each line flushed and synced."""

    def __init__(self, folder: Path, annotator: str):
        self.folder = Path(folder)
        self.annotator = check_name(annotator)
        self.path = self.folder / f"ratings-{annotator}.jsonl"

    def history(self) -> dict[str, list[dict[str, Any]]]:
        """Every rating of each item, oldest first."""
        ratings: dict[str, list[dict[str, Any]]] = defaultdict(list)
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines() if self.path.is_file() else []
        except UnicodeDecodeError as err:
            raise StudyError(f"{self.path}: not UTF-8 text ({err}; the file was edited?)") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):  # the last line, cut by a crash mid-write: never answered as saved
                    continue
                raise StudyError(f"{self.path}, line {number}: not a rating (the file was edited?)") from None
            if not isinstance(record, dict) or not isinstance(record.get("item"), str):
                raise StudyError(
                    f"{self.path}, line {number}: a rating names its 'item' (the file was edited?)"
                )
            try:
                check_scores({d: record.get(d) for d in RATED})
            except StudyError as err:
                raise StudyError(f"{self.path}, line {number}: {err} (the file was edited?)") from None
            ratings[record["item"]].append(record)
        return dict(ratings)

    def load(self) -> dict[str, dict[str, Any]]:
        """The rating that counts for each item: its last."""
        return {item: records[-1] for item, records in self.history().items()}

    def add(self, item: str, scores: Any, note: str = "") -> dict[str, Any]:
        record = {"item": item, **check_scores(scores), "note": note or "", "time": time.time()}
        with study_lock(self.folder):
            if self.path.is_file() and self.path.stat().st_size:
                with open(self.path, "r+b") as handle:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":
                        data = self.path.read_bytes()
                        if _whole(data[data.rfind(b"\n") + 1 :]):  # an editor dropped the final newline
                            handle.write(b"\n")
                        else:  # a line cut by a crash, never answered as saved: drop it
                            handle.truncate(data.rfind(b"\n") + 1)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        return record


def export(folder: Path, manifest: dict[str, Any]) -> Path:
    """``ratings.csv`` over every annotator's file, with model and setting from the manifest.

    Read and rewritten under the study's lock: a rewrite that read the files before another
    server's save cannot land after that save's own rewrite.
    """
    by_item = {item["item"]: item for item in manifest["items"]}
    target = Path(folder) / EXPORT
    with study_lock(folder):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["sample_id", "annotator", *RATED, "model", "setting", "note", "revised"])
        for path in ratings_files(folder):
            annotator = path.stem.removeprefix("ratings-")
            for item_id, records in sorted(Ratings(folder, annotator).history().items()):
                item, record = by_item.get(item_id), records[-1]
                if item is None:
                    raise StudyError(
                        f"{path}: item {item_id!r} is not in this study's {MANIFEST} "
                        "(copied from another study?)"
                    )
                writer.writerow(
                    [
                        item["sample_id"],
                        annotator,
                        *(record[d] for d in RATED),
                        item["model"],
                        item["setting"],
                        record.get("note", ""),
                        str(len(records) > 1).lower(),
                    ]
                )
        try:
            with atomic_file(target) as partial:
                partial.write_text(out.getvalue(), encoding="utf-8")
        except OSError as err:
            raise StudyError(f"{target} cannot be rewritten: {err}") from None
    return target
