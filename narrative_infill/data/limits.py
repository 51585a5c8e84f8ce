"""How much of a file someone else wrote is read (generations for ``import``, benchmark records for
``-T data=``, lm-eval outputs). Each limit is checked before the data is materialised: a file's
bytes before they are read (read in a bounded chunk, so a pipe that claims no size is bounded too),
an xlsx's declared uncompressed sizes before it is unzipped (a zip bomb) and its text once its shared
strings are expanded before pandas reads it, a JSON record's keys as it is parsed, a parquet file's
declared rows and sizes before its row groups are read. Why these numbers: docs/import.md, "Limits".
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, BinaryIO

#: Bytes of one input file (JSONL, CSV, JSON, parquet, and an xlsx's XML once unzipped): 14 times
#: the 9,800 real responses of the paper's 20 models (18 MB), and what Python can hold parsed in a
#: few GB of memory.
MAX_FILE_BYTES = 256 * 2**20
#: Records of one file: 25 times the 9,800 real responses.
MAX_ROWS = 250_000
#: Characters of one text field (a response, a problem, a gold span): Python's ``csv`` module's own
#: default field limit; 6 times the longest real response (21,453 characters) and 4 times what the
#: metrics and the judge read of an answer (``extraction.MAX_TEXT_CHARS``).
MAX_FIELD_CHARS = 131_072
#: An xlsx member that declares more than this many times its compressed size is refused: the XML
#: of a spreadsheet of real generations compresses 3 to 10 times; the issue's 67 KB zip bomb held a
#: 64 MB cell (about 1,000 times).
MAX_COMPRESSION_RATIO = 100
#: Bytes of a parquet file's footer (its schema and row-group metadata), read before pyarrow parses
#: it: a benchmark file's footer is a few KB.
MAX_PARQUET_FOOTER_BYTES = 2**20
#: Fields of one record: a JSON object's keys (nested objects' counted too) or a row's cells. A
#: generations row has about 15, an lm-eval sample about 30; a 700,000-key row took 28 s and 1 GB
#: to import before this bound.
MAX_ROW_FIELDS = 1_000
#: Characters of a spreadsheet's cells once each shared string is counted at every cell that
#: references it: what an input file may hold as text (a CSV of the same rows). A 6.5 MB xlsx whose
#: 250,000 rows reference one 120,000-character string expands to 30 GB of text.
MAX_EXPANDED_CHARS = MAX_FILE_BYTES
#: Members this small are not checked for their ratio (a sheet of one repeated row compresses well).
RATIO_CHECKED_FROM_BYTES = 2**20


def _size(count: int) -> str:
    return f"{count:,} bytes"


def read_bounded(path: Path | str, error: type[Exception], bounded: bool = True) -> bytes:
    """The file's bytes; ``error`` naming it when it cannot be read or, ``bounded``, holds more than
    ``MAX_FILE_BYTES`` (of which at most one byte more is read). Unbounded: a corpus the user builds
    from."""
    limit = MAX_FILE_BYTES if bounded else None
    try:
        with open(path, "rb") as handle:
            data = _read_at_most(handle, limit)
    except OSError as err:
        raise error(f"{path}: cannot read: {err.strerror or err}") from None
    if limit is not None and len(data) > limit:
        raise error(_too_large(path, limit))
    return data


def check_file_size(path: Path, error: type[Exception]) -> None:
    """``error`` when the file on disk holds more than ``MAX_FILE_BYTES`` (a reader that seeks in it:
    parquet, xlsx)."""
    if path.is_file() and path.stat().st_size > MAX_FILE_BYTES:
        raise error(_too_large(path, MAX_FILE_BYTES))


def _too_large(path: Path | str, limit: int) -> str:
    return f"{path}: larger than the {_size(limit)} an input file may hold; split it into several files"


def _read_at_most(handle: BinaryIO, limit: int | None) -> bytes:
    return handle.read() if limit is None else handle.read(limit + 1)


def check_rows(count: int, where: str, error: type[Exception]) -> None:
    """``error`` when a file has more than ``MAX_ROWS`` records (called as they are counted)."""
    if count > MAX_ROWS:
        raise error(f"{where}: more than {MAX_ROWS:,} rows; split it into several files")


def oversized_fields(record: dict[str, Any]) -> list[str]:
    """The fields of ``record`` (nested ones by path) whose text is over ``MAX_FIELD_CHARS``."""
    found = []
    stack: list[tuple[str, Any]] = list(record.items())
    while stack:
        name, value = stack.pop()
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            found.append(f"field {name!r}: {len(value):,} characters (at most {MAX_FIELD_CHARS:,})")
        elif isinstance(value, dict):
            stack.extend((f"{name}.{key}", item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((f"{name}[{index}]", item) for index, item in enumerate(value))
    return sorted(found)


def check_fields(record: dict[str, Any], where: str, error: type[Exception]) -> None:
    """``error`` naming ``where`` and every field of ``record`` over ``MAX_FIELD_CHARS``."""
    if found := oversized_fields(record):
        raise error(f"{where}: {'; '.join(found)}")


def check_xlsx(path: Path, error: type[Exception]) -> None:
    """Refuse a spreadsheet from its zip directory, before anything is unzipped: more than
    ``MAX_FILE_BYTES`` declared in all, or a large member declaring more than
    ``MAX_COMPRESSION_RATIO`` times its compressed size. A file that is no zip is left to the reader
    (it names what is wrong). The declared sizes bound what is read: Python's ``zipfile`` stops a
    member that inflates past its declared size."""
    check_file_size(path, error)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return
    declared = sum(member.file_size for member in members)
    if declared > MAX_FILE_BYTES:
        raise error(
            f"{path}: its parts declare {_size(declared)} once unzipped, more than the "
            f"{_size(MAX_FILE_BYTES)} an input file may hold"
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size >= RATIO_CHECKED_FROM_BYTES and ratio > MAX_COMPRESSION_RATIO:
            raise error(
                f"{path}: part {member.filename!r} declares {_size(member.file_size)} unzipped from "
                f"{_size(member.compress_size)} ({ratio:,.0f} times; at most {MAX_COMPRESSION_RATIO}): "
                "a zip bomb, not a spreadsheet of generations"
            )


def check_parquet_footer(path: Path, error: type[Exception]) -> None:
    """Refuse a parquet file whose footer declares more than ``MAX_PARQUET_FOOTER_BYTES``, from the
    eight bytes that end the file (the footer's length and ``PAR1``), before pyarrow parses it. A
    file that does not end so is left to pyarrow (it names what is wrong)."""
    check_file_size(path, error)
    with open(path, "rb") as handle:
        if handle.seek(0, 2) < 8:
            return
        handle.seek(-8, 2)
        tail = handle.read(8)
    declared = int.from_bytes(tail[:4], "little")
    if tail[4:] == b"PAR1" and declared > MAX_PARQUET_FOOTER_BYTES:
        raise error(
            f"{path}: its footer declares {_size(declared)} of metadata (at most "
            f"{_size(MAX_PARQUET_FOOTER_BYTES)}); a benchmark file's footer is a few KB"
        )


def check_parquet(metadata: Any, path: Path, error: type[Exception]) -> None:
    """Refuse a parquet file from its footer (``pyarrow.parquet.FileMetaData``), before any row
    group is read: more than ``MAX_ROWS`` rows or ``MAX_FILE_BYTES`` uncompressed."""
    check_rows(metadata.num_rows, str(path), error)
    declared = sum(metadata.row_group(index).total_byte_size for index in range(metadata.num_row_groups))
    if declared > MAX_FILE_BYTES:
        raise error(
            f"{path}: its row groups declare {_size(declared)} uncompressed, more than the "
            f"{_size(MAX_FILE_BYTES)} an input file may hold"
        )
