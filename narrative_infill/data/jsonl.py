"""Reading JSON Lines the same way everywhere: blank lines skipped, every record an object,
and a bad line reported with its file and line number in the caller's own error type."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def iter_jsonl(path: Path | str, error: type[Exception]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line; raises ``error`` naming the bad line."""
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise error(f"{path}, row {line_no}: unparseable JSON: {err.msg}") from None
            if not isinstance(record, dict):
                raise error(f"{path}, row {line_no}: expected a JSON object, got {type(record).__name__}")
            yield line_no, record
