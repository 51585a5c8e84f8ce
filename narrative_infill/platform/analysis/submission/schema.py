"""A submission file's own shape: read it, and name every malformed field or row.

Checked before anything else (``verify``, ``leaderboard``): a file that fails here is not read further.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ....paper_protocol import SETTINGS
from ...names import name_problem
from .build import ATAVG_COLUMN, KIND, QAVG_COLUMN, SAMPLE_ROW_FIELDS, SCHEMA_VERSION, SubmissionError
from .protocol import TRACKS


def load_document(path: Path) -> dict[str, Any]:
    """The submission at ``path`` as a JSON object, or a ``SubmissionError`` saying why not."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise SubmissionError(f"{path}: unreadable: {err}") from None
    except json.JSONDecodeError as err:
        raise SubmissionError(
            f"{path}: not valid JSON (truncated or hand-edited?): {err.msg} at line {err.lineno}"
        ) from None
    except RecursionError:  # the parser recurses per level: a hostile file's depth is Python's limit
        raise SubmissionError(f"{path}: not a submission: its JSON is nested too deeply") from None
    if not isinstance(document, dict):
        raise SubmissionError(f"{path}: not a submission (a JSON object is expected)")
    return document


def schema_problems(document: dict[str, Any]) -> list[str]:
    """Every missing or malformed part of a submission document (empty when it has the schema)."""
    problems = []

    def need(condition: bool, problem: str):
        if not condition:
            problems.append(problem)

    need(document.get("schema_version") == SCHEMA_VERSION, f"schema_version must be {SCHEMA_VERSION}")
    need(document.get("kind") == KIND, f"kind must be {KIND!r}")
    need(
        document.get("track") in TRACKS,
        f"track must be one of {', '.join(TRACKS)}, got {document.get('track')!r}",
    )
    model = (document.get("model") or {}).get("id") if isinstance(document.get("model"), dict) else None
    need(isinstance(model, str), "model.id missing")
    if isinstance(model, str) and (reason := name_problem(model, as_written=True)):
        problems.append(f"model.id: {ascii(model)} {reason}")
    settings, samples = document.get("settings"), document.get("samples")
    need(isinstance(settings, dict) and bool(settings), "settings missing or empty")
    need(
        isinstance(samples, dict) and set(samples) == set(settings or {}),
        "samples must hold the same settings as settings",
    )
    for name, claims in (settings or {}).items() if isinstance(settings, dict) else []:
        need(name in SETTINGS, f"settings: unknown setting {name!r}")
        need(
            isinstance(claims, dict)
            and isinstance(claims.get("n"), int)
            and isinstance(claims.get("atavg"), dict),
            f"settings.{name}: n or atavg missing",
        )
    for name, rows in samples.items() if isinstance(samples, dict) else []:
        problems += row_problems(name, rows)
    provenance = document.get("provenance")
    need(
        isinstance(provenance, dict)
        and isinstance(provenance.get("logs"), list)
        and isinstance(provenance.get("samples_digest"), str),
        "provenance.logs or provenance.samples_digest missing",
    )
    need(isinstance(document.get("sha256"), str), "sha256 missing")
    return problems


def _is_value(value: Any) -> bool:
    return value is None or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    )


def row_problems(setting: str, rows: Any) -> list[str]:
    """The malformed per-sample rows of one setting, each named by its index (the first few)."""
    if not isinstance(rows, list):
        return [f"samples.{setting}: a list of rows is expected, got {type(rows).__name__}"]
    bad = []
    for index, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == len(SAMPLE_ROW_FIELDS)):
            bad.append(
                f"samples.{setting}[{index}]: a row is [{', '.join(SAMPLE_ROW_FIELDS)}], got {row!r:.80}"
            )
        elif not (isinstance(row[0], str) and isinstance(row[1], int) and not isinstance(row[1], bool)):
            bad.append(
                f"samples.{setting}[{index}]: id must be a string and epoch an integer, got {row[:2]!r:.80}"
            )
        elif not (_is_value(row[ATAVG_COLUMN]) and _is_value(row[QAVG_COLUMN])):
            bad.append(f"samples.{setting}[{index}]: atavg and qavg must be numbers or null, got {row!r:.80}")
    return bad[:5] + ([f"samples.{setting}: {len(bad) - 5} more malformed rows"] if len(bad) > 5 else [])
