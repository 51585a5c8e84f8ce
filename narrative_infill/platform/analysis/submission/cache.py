"""What ``verify`` computed, remembered on disk by content, so that nothing is computed twice.

Three caches share one SQLite file (``NARRATIVE_INFILL_VERDICT_CACHE``; default the user's cache
folder; ``off``: none), each key a SHA-256 over the verifying code itself (every source file of the
package: a changed rule is another key) and the content its value depends on:

* re-scored metrics by (metric signature, answer, gold): a changed answer is another key, so it is
  always scored again, and an unchanged one never is (the reference rows' null answers too);
* verdicts by (submission SHA-256, its logs' SHA-256s, the draw asked for, whether the fluency check
  runs here): ``leaderboard --logs`` recalls the verdict ``verify`` reached on this machine, and a
  board rebuilt with nothing changed reads no answer again;
* the replay rule's folded answers of an entry (``replay``) by its submission's SHA-256: nor any log.

A cache that cannot be opened or written is skipped, never an error: everything can be recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

#: Where the caches live (default: the user's cache folder); ``off`` keeps nothing.
CACHE_VARIABLE = "NARRATIVE_INFILL_VERDICT_CACHE"


@cache
def code_digest() -> str:
    """SHA-256 over the package's source files: whatever verifies is part of every key."""
    root = Path(__file__).resolve().parents[3]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(f"{path.relative_to(root)}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _path() -> Path | None:
    setting = os.environ.get(CACHE_VARIABLE, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting)
    return (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        / "narrative-infill"
        / "verdicts.sqlite"
    )


def key(*parts: str) -> str:
    return hashlib.sha256("\0".join((code_digest(), *parts)).encode("utf-8", "surrogatepass")).hexdigest()


class JsonCache:
    """JSON values by key in one SQLite table (SQLite's locking lets processes share the file)."""

    def __init__(self, table: str, path: Path | None = None):
        self.table, self.path = table, path if path is not None else _path()
        self._connection: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection | None:
        if self._connection is None and self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._connection = sqlite3.connect(self.path, timeout=30)
                self._connection.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, value TEXT)"
                )
            except (OSError, sqlite3.Error):
                self._connection, self.path = None, None
        return self._connection

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        connection, found = self._open(), dict[str, Any]()
        if connection is None:
            return found
        for start in range(0, len(keys), 500):  # SQLite's bound on a statement's parameters
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            try:
                rows = connection.execute(
                    f"SELECT key, value FROM {self.table} WHERE key IN ({marks})", chunk
                )
                found.update((k, json.loads(v)) for k, v in rows)
            except (sqlite3.Error, ValueError):
                return {}
        return found

    def put_many(self, items: dict[str, Any]) -> None:
        connection = self._open()
        if connection is None or not items:
            return
        try:
            with connection:
                connection.executemany(
                    f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?)",
                    [(k, json.dumps(v)) for k, v in items.items()],
                )
        except (sqlite3.Error, ValueError):
            pass  # an optimisation: the values were computed and are returned anyway


def scored_pairs(
    answers: list[str], golds: list[str], signature: str, backbones: Any
) -> list[dict[str, float]]:
    """Each (answer, gold)'s metric values (``score_pairs``' ``values``) under ``backbones``, the
    ones scored before with the same ``signature`` recalled, only the others scored (one batch)."""
    from ....scorers.metrics.pairs import score_pairs

    store = JsonCache("scores")
    keys = [key("scores", signature, a, g) for a, g in zip(answers, golds)]
    known = store.get_many(sorted(set(keys)))
    missing = sorted({i for i, k in enumerate(keys) if k not in known}, key=lambda i: keys[i])
    missing = list({keys[i]: i for i in missing}.values())  # one scoring per distinct pair
    fresh = (
        score_pairs([answers[i] for i in missing], [golds[i] for i in missing], backbones) if missing else []
    )
    scored = {keys[i]: {k: float(v) for k, v in r.values.items()} for i, r in zip(missing, fresh)}
    store.put_many(scored)
    return [known[k] if k in known else scored[k] for k in keys]


#: The parts of a verdict remembered (``verify.Verification``'s fields a recheck of the logs fills).
VERDICT_FIELDS = ("checks", "failures", "warnings", "unchecked", "sampled", "cannot_rescore")


def _verdict_key(result: Any, sample: int | None) -> str:
    """The submission's SHA-256 (its logs' SHA-256s included, each found equal to its log's before
    this is asked), the draw asked for, and whether the fluency check runs on this machine."""
    from ..fluency import fluency_or_none

    return key("verdict", str(result.sha256), str(sample), str(fluency_or_none() is not None))


def recalled(result: Any, sample: int | None) -> bool:
    """Fill ``result`` with this machine's earlier verdict on the same content, if it has one."""
    found = JsonCache("verdicts").get_many([_verdict_key(result, sample)])
    for verdict in found.values():
        result.cannot_rescore = verdict["cannot_rescore"]
        for name in VERDICT_FIELDS[:-1]:
            getattr(result, name).extend(verdict[name])
        result.checks.append("verdict recalled: this machine verified the same submission and logs before")
    return bool(found)


def remember(result: Any, sample: int | None) -> None:
    """Keep ``result``'s verdict for the next ``verify`` of the same content on this machine (not one
    that could not re-score the metrics: installing the backbones must change it)."""
    if result.cannot_rescore is None:
        verdict = {name: getattr(result, name) for name in VERDICT_FIELDS}
        JsonCache("verdicts").put_many({_verdict_key(result, sample): verdict})
