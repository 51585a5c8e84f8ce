"""Reading input files the same way everywhere: UTF-8 with or without a byte-order mark, a
file that is not UTF-8 named with its line and byte offset, and JSON Lines with blank lines
skipped, every record an object, and a bad line reported with its file and line number, each
in the caller's own error type, and no more than :mod:`.limits` allows (bytes, rows, field size).
A record of more than ``limits.MAX_ROW_FIELDS`` fields (keys or columns) is refused as it is
parsed. What a reader would otherwise resolve silently is refused,
named: a CSV column or a JSON field given twice (one of the two would be dropped), and a lone
surrogate (``"\\ud800"``: an escape that names no character, stored as six characters later)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .limits import MAX_ROW_FIELDS, check_fields, check_rows, read_bounded

_SURROGATE = re.compile("[\ud800-\udfff]")


class _RepeatedField(ValueError):
    """A JSON object that names a field twice (``json`` would keep the last silently)."""


def read_utf8(path: Path | str, error: type[Exception], bounded: bool = True) -> str:
    """The file's text; a leading byte-order mark (Excel writes one) is dropped. A file that cannot
    be read or decoded, or (``bounded``) holds more than ``limits.MAX_FILE_BYTES``, raises ``error``
    naming it."""
    data = read_bounded(path, error, bounded)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise error(
            f"{path}, line {line} (byte offset {err.start}): not UTF-8 ({err.reason}: "
            f"{data[err.start : err.end]!r}); "
            "save the file as UTF-8"
        ) from None


def check_columns(names: Iterable[Any] | None, where: str, error: type[Exception]) -> None:
    """A header that names a column twice raises ``error``: ``csv.DictReader`` keeps the last of
    the two, pandas renames the second, and either way one value is read silently."""
    names = list(names or ())
    if len(names) > MAX_ROW_FIELDS:
        raise error(f"{where}, line 1: {len(names):,} columns (at most {MAX_ROW_FIELDS:,})")
    counts = Counter(str(name).strip() for name in names)
    repeated = [name for name, count in counts.items() if count > 1]
    if repeated:
        raise error(
            f"{where}, line 1: column {repeated[0]!r} is named {counts[repeated[0]]} times in the header; "
            "name each column once"
        )


def csv_rows(path: Path | str, error: type[Exception], bounded: bool = True) -> csv.DictReader:
    """A ``csv.DictReader`` over the file (read as ``read_utf8`` reads it) whose header names each
    column once (``check_columns``). Its fields are bounded by the ``csv`` module's own limit, which
    is ``limits.MAX_FIELD_CHARS``."""
    reader = csv.DictReader(io.StringIO(read_utf8(path, error, bounded), newline=""))
    check_columns(reader.fieldnames, str(path), error)
    return reader


def read_csv_frame(path: Path | str, error: type[Exception], **options: Any) -> Any:
    """A CSV as a pandas frame (``options`` go to ``read_csv``), its text read as ``read_utf8``
    reads it; an empty or unparseable file, or a column named twice, raises ``error`` naming it."""
    import pandas as pd

    text = read_utf8(path, error)
    try:
        header = next(csv.reader(io.StringIO(text, newline="")), None)
    except csv.Error:
        header = None  # pandas names what is wrong with it below
    check_columns(header, str(path), error)
    try:
        return pd.read_csv(io.StringIO(text), **options)
    except pd.errors.EmptyDataError:
        raise error(f"{path}: empty file (no header row)") from None
    except pd.errors.ParserError as err:
        raise error(f"{path}: unparseable CSV ({str(err).strip()})") from None


class _TooManyFields(ValueError):
    """A JSON record with more keys than its reader allows (``limits.MAX_ROW_FIELDS``)."""


def _fields_hook(max_fields: int | None):
    """An ``object_pairs_hook`` refusing a key given twice in one object and, with ``max_fields``,
    more keys than that in one record (its nested objects' counted too), as each object is parsed."""
    seen = 0

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal seen
        seen += len(pairs)
        if max_fields is not None and seen > max_fields:
            raise _TooManyFields(seen)
        counts = Counter(key for key, _ in pairs)
        repeated = [key for key, count in counts.items() if count > 1]
        if repeated:
            raise _RepeatedField(repeated[0])
        return dict(pairs)

    return hook


def lone_surrogate(value: Any, name: str = "") -> str | None:
    """Where in ``value`` (a parsed JSON value) a lone surrogate sits, as a field path, or None."""
    if isinstance(value, str):
        return (name or "(the value)") if _SURROGATE.search(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        label = f"{name}.{key}" if name else str(key)
        if isinstance(key, str) and _SURROGATE.search(key):
            return label
        if found := lone_surrogate(item, label):
            return found
    return None


def parse_json(text: str, where: str, error: type[Exception], max_fields: int | None = None) -> Any:
    """``text`` parsed as JSON, refusing (``error``, naming ``where`` and the field) a field given
    twice in one object, more than ``max_fields`` keys in all (None: no bound; a corpus file), a
    value Python cannot read (an integer of over 4,300 digits, nesting too deep) or a lone
    surrogate anywhere; a ``json.JSONDecodeError`` passes through."""
    try:
        value = json.loads(text, object_pairs_hook=_fields_hook(max_fields))
    except _RepeatedField as err:
        raise error(f"{where}: field {err.args[0]!r} is given twice; give each field once") from None
    except _TooManyFields:
        raise error(
            f"{where}: more than {max_fields:,} fields (keys, nested ones counted); a record has a few dozen"
        ) from None
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as err:  # an integer of over 4,300 digits; nesting too deep
        raise error(f"{where}: unreadable JSON: {str(err)[:80]}") from None
    if field := lone_surrogate(value):
        raise error(
            f"{where}: field {field!r} holds a lone surrogate (an escape such as \\ud800 that names no "
            "character); write the text as valid Unicode"
        )
    return value


def iter_jsonl(
    path: Path | str, error: type[Exception], problems: list[str] | None = None, bounded: bool = True
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line; a bad line (unparseable, not an object, a
    field over ``limits.MAX_FIELD_CHARS``) raises ``error`` naming it, or, given ``problems``, is
    added to it and skipped, so that a caller can list every bad line at once. A file over the
    limits on bytes or rows raises ``error`` either way. ``bounded=False`` lifts the limits (a
    corpus the user builds from: a Wikipedia article can be longer than any answer)."""
    count = 0
    for line_no, line in enumerate(read_utf8(path, error, bounded).split("\n"), 1):
        if not line.strip():
            continue
        count += 1
        if bounded:
            check_rows(count, str(path), error)
        try:
            record = _record(line, f"{path}, row {line_no}", error, bounded)
        except error as err:
            if problems is None:
                raise
            problems.append(str(err))
            continue
        yield line_no, record


def _record(line: str, where: str, error: type[Exception], bounded: bool) -> dict[str, Any]:
    try:
        record = parse_json(line, where, error, MAX_ROW_FIELDS if bounded else None)
    except json.JSONDecodeError as err:
        raise error(f"{where}: unparseable JSON: {err.msg}") from None
    if not isinstance(record, dict):
        raise error(f"{where}: expected a JSON object, got {type(record).__name__}")
    if bounded:
        check_fields(record, where, error)
    return record
