"""Reading input files the same way everywhere: UTF-8 with or without a byte-order mark, a
file that is not UTF-8 named with its line and byte offset, and JSON Lines with blank lines
skipped, every record an object, and a bad line reported with its file and line number, each
in the caller's own error type."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def read_utf8(path: Path | str, error: type[Exception]) -> str:
    """The file's text; a leading byte-order mark (Excel writes one) is dropped. A file that cannot
    be read or decoded raises ``error`` naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise error(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise error(
            f"{path}, line {line} (byte offset {err.start}): not UTF-8 ({err.reason}: "
            f"{data[err.start : err.end]!r}); "
            "save the file as UTF-8"
        ) from None


def read_csv_frame(path: Path | str, error: type[Exception], **options: Any) -> Any:
    """A CSV as a pandas frame (``options`` go to ``read_csv``), its text read as ``read_utf8``
    reads it; an empty or unparseable file raises ``error`` naming it."""
    import io

    import pandas as pd

    text = read_utf8(path, error)
    try:
        return pd.read_csv(io.StringIO(text), **options)
    except pd.errors.EmptyDataError:
        raise error(f"{path}: empty file (no header row)") from None
    except pd.errors.ParserError as err:
        raise error(f"{path}: unparseable CSV ({str(err).strip()})") from None


def iter_jsonl(path: Path | str, error: type[Exception]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line; raises ``error`` naming the bad line."""
    for line_no, line in enumerate(read_utf8(path, error).split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise error(f"{path}, row {line_no}: unparseable JSON: {err.msg}") from None
        if not isinstance(record, dict):
            raise error(f"{path}, row {line_no}: expected a JSON object, got {type(record).__name__}")
        yield line_no, record
