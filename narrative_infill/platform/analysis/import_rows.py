"""The rows ``narrative-infill import`` reads (JSONL, CSV or xlsx generations), validated before any log
is written: every bad row is reported at once, by file, row and field, and none is dropped.

A row is refused when a field is missing (or the id empty), its template maps to no task, an
integer field is not a whole number or does not fit (``MAX_INTEGER``), ``n`` is not 1-3, or its
problem lacks exactly one blank; across rows, when its id repeats another's of the same model and
task (compared after Unicode normalisation and case folding: ``Café`` in NFC and NFD, ``abc`` and
``ABC``), when it repeats another id-less row's generation (same model, task, problem and
response up to whitespace and Unicode normalisation: the copy would count twice), or when its
model name would render as another or as nothing, or differs from another's only in look-alike
characters, whitespace or case (``"m1 "``, ``"ml"`` and ``"m1"`` would become three models that
print alike: :mod:`..names`). The file readers refuse a column
or field given twice and a lone surrogate (:mod:`..data.jsonl`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...data.jsonl import check_columns, iter_jsonl, read_csv_frame
from ...data.limits import MAX_EXPANDED_CHARS, MAX_ROW_FIELDS, check_rows, check_xlsx, oversized_fields
from ...data.records import MASKED_SENTENCES, blank_problem, id_key, parse_integer
from ...data.text import is_invisible
from ...errors import NarrativeInfillError
from ...number_rules import is_missing
from ...paper_protocol import PARADIGMS, TELER_LEVELS
from ..names import LookAlikes, name_problem

#: The authors' template names and reasoning ids (REFERENCE §2, §7) -> this package's tasks.
TEMPLATE_TASKS = {f"fitb_l{level}": f"l{level}" for level in range(5)}
REASONING_IDS = {0: "abductive", 1: "causal", 2: "counterfactual", 3: "cot"}
REASONING_NAMES = {
    "abductive_reasoning": "abductive",
    "causal_reasoning": "causal",
    "counterfactual_thinking": "counterfactual",
    "chain_of_thought": "cot",
    **{name: name for name in PARADIGMS},
}
REQUIRED = ("problem", "response", "model")
#: Fields that hold text: a JSON list, number or object there is refused, not turned into text.
TEXT_FIELDS = (*REQUIRED, "gold_answer", "answer", "prompt_text")
#: Bad rows listed in the error before the rest are only counted.
LISTED = 20
FOLDED = "ids are compared after Unicode normalisation and case folding"


@dataclass(frozen=True)
class ImportedRow:
    origin: str
    row: int
    task: str
    variant: str | None
    record: dict[str, Any]
    #: the model its log names: ``replay/<record's model>`` (None), or a null baseline
    #: (``baseline/<rule>``) answering the imported instances, never taken from a file's field
    answered_by: str | None = None

    @property
    def log_model(self) -> str:
        return self.answered_by or f"replay/{self.record['model']}"


class ImportRowError(NarrativeInfillError, ValueError):
    """Rows that cannot be imported, each named by file, row and field."""


def read_rows(path: Path, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """(row, record) of one generations file (.jsonl, .csv, .xlsx/.xls) within the input limits
    (:mod:`..data.limits`); a JSONL line that is no record is added to ``problems``, and so is a
    field over the limit. A number in a text column of a CSV or spreadsheet is text there (a model
    named ``7``); in JSONL, where the file says which is which, it is refused (``TEXT_FIELDS``)."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return list(iter_jsonl(path, ImportRowError, problems))
    import pandas as pd

    if suffix == ".csv":
        frame = read_csv_frame(path, ImportRowError, keep_default_na=False)
    elif suffix in (".xlsx", ".xls"):
        check_xlsx(path, ImportRowError)  # a zip bomb is refused before it is unzipped
        check_xlsx_text(path, ImportRowError)  # and shared strings expanding to GBs before pandas holds them
        try:
            header = pd.read_excel(path, header=None, nrows=1).iloc[0].tolist() if path.is_file() else []
            frame = pd.read_excel(path, keep_default_na=False)
        except ImportError:  # no Excel engine (the report extra): not a broken file; the command says so
            raise
        except Exception as err:  # pandas and its Excel engines raise several types for a broken file
            raise ImportRowError(f"{path}: unreadable spreadsheet ({str(err).splitlines()[0]})") from None
        check_columns(header, str(path), ImportRowError)  # pandas renames a second "n" to "n.1"
    else:
        raise ImportRowError(f"{path}: expected .jsonl, .csv or .xlsx")
    check_rows(len(frame), str(path), ImportRowError)
    rows = []
    for row, record in enumerate(frame.to_dict(orient="records"), 1):
        record.update({k: str(v) for k, v in record.items() if k in TEXT_FIELDS and _is_number(v)})
        if oversized := oversized_fields(record):
            problems.append(f"{path}, row {row}: {'; '.join(oversized)}")
        else:
            rows.append((row, record))
    return rows


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not is_missing(value)


def integer_field(value: Any) -> int | None:
    """An integer field (``3``, ``3.0``, ``"3"``); None when empty; ValueError saying why otherwise."""
    if is_missing(value) or (isinstance(value, str) and not value.strip()):
        return None
    return parse_integer(value)


def _task_of(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(task, variant) for a row's template_name / template_id, or (None, reason)."""
    name = str(record.get("template_name") or "").strip()
    try:
        template_id = integer_field(record.get("template_id"))
    except ValueError as err:
        return None, f"field 'template_id': {err}"
    variant = None if template_id is None else f"code{template_id}"
    if name in TEMPLATE_TASKS:
        return TEMPLATE_TASKS[name], variant
    if name in TELER_LEVELS:
        return name, variant
    if name in REASONING_NAMES:
        return REASONING_NAMES[name], "code"
    if name in ("reasoning_paradigms", "reasoning") and template_id is not None:
        paradigm = REASONING_IDS.get(template_id)
        if paradigm:
            return paradigm, "code"
    return None, f"template_name {name!r} (template_id {template_id!r}) maps to no task"


def text_field(value: Any) -> str | None:
    return None if is_missing(value) else str(value)


def has_id(record: dict[str, Any]) -> bool:
    return record.get("id") not in (None, "")


def sample_id(record: dict[str, Any], origin: str, row: int) -> str:
    """The row's id, or one made of its file and row when it has none."""
    return f"{record['id']}" if has_id(record) else f"{Path(origin).stem}-{row}"


def _missing(record: dict[str, Any]) -> list[str]:
    missing = [f for f in REQUIRED if not (text_field(record.get(f)) or "").strip() and f != "response"]
    if text_field(record.get("response")) is None:
        missing.append("response")
    gold = text_field(record.get("gold_answer")) or text_field(record.get("answer"))
    if not gold or is_invisible(gold):  # a zero-width space is no gold either
        missing.append("gold_answer (or answer)")
    if "id" in record and not (text_field(record["id"]) or "").strip():
        missing.append("id (leave the field out to number the rows)")
    return missing


def _not_text(record: dict[str, Any]) -> list[str]:
    """The text fields of a row that hold something else (a JSON list, number or object)."""
    return [
        f"field {name!r}: expected text (a JSON string), got {type(record[name]).__name__}"
        for name in TEXT_FIELDS
        if name in record and not is_missing(record[name]) and not isinstance(record[name], str)
    ]


def _row_problems(record: dict[str, Any]) -> list[str]:
    """What is wrong with one row on its own (empty when nothing is)."""
    if not_text := _not_text(record):
        return not_text
    if missing := _missing(record):
        return [f"missing or empty field(s): {', '.join(missing)}"]
    problems = []
    task, reason = _task_of(record)
    if task is None and reason:
        problems.append(reason)
    try:
        n = integer_field(record.get("n"))
    except ValueError as err:
        problems.append(f"field 'n': {err}")
    else:
        if n is not None and n not in MASKED_SENTENCES:
            problems.append(f"field 'n': must be 1, 2 or 3 masked sentences, got {n}")
    try:  # read by the breakdowns (``importer``): a bad one must be named here, not crash there
        integer_field(record.get("unit_idx"))
    except ValueError as err:
        problems.append(f"field 'unit_idx': {err}")
    if reason := blank_problem(str(record["problem"])):
        problems.append(f"field 'problem': {reason}")
    return problems


class _AcrossRows:
    """What rows must not share: an id (of one model and task), an id-less generation, or a model
    name up to look-alikes (:mod:`...names`)."""

    def __init__(self) -> None:
        self.ids: dict[tuple, tuple[str, str]] = {}  # (model, task, id_key) -> (where, id)
        self.generations: dict[tuple, str] = {}  # (model, task, variant, problem, response) -> where
        self.models = LookAlikes()

    def problem(self, item: ImportedRow, where: str) -> str | None:
        """Why ``item`` (at ``where``) repeats an earlier row, or None (then it is remembered)."""
        return self._model(item, where) or self._id(item, where) or self._generation(item, where)

    def _model(self, item: ImportedRow, where: str) -> str | None:
        model = str(item.record["model"])
        if alike := self.models.problem(model, where):  # beside the name it imitates: both named
            return f"field 'model': {alike}"
        reason = name_problem(model)
        return f"field 'model': {ascii(model)} {reason}" if reason else None

    def _id(self, item: ImportedRow, where: str) -> str | None:
        model, identifier = str(item.record["model"]), sample_id(item.record, item.origin, item.row)
        first_where, first = self.ids.setdefault((model, item.task, id_key(identifier)), (where, identifier))
        if first_where == where:
            return None
        folded = "" if first == identifier else f" ({ascii(first)} there: {FOLDED})"
        return (
            f"field 'id': {ascii(identifier)} repeats {first_where}{folded} (model {model}, task {item.task})"
        )

    def _generation(self, item: ImportedRow, where: str) -> str | None:
        record, model = item.record, str(item.record["model"])
        if has_id(record):
            return None
        texts = (str(record["problem"]), text_field(record["response"]) or "")
        # a copy that differs only in whitespace or Unicode normalisation is still a copy
        generation = (
            model,
            item.task,
            item.variant,
            *(" ".join(unicodedata.normalize("NFC", t).split()) for t in texts),
        )
        first = self.generations.setdefault(generation, where)
        if first == where:
            return None
        return (
            f"the same generation as {first} (model {model}, task {item.task}: problem and response "
            "alike) and neither row has an id: it would count twice; remove the copy or give ids"
        )


def read_generations(files: list[str]) -> list[ImportedRow]:
    """Validate every row first; report all bad rows at once (file, row and field), drop none."""
    rows: list[ImportedRow] = []
    problems: list[str] = []
    across = _AcrossRows()
    for file in files:
        before = len(problems)
        try:
            records = read_rows(Path(file), problems)
        except ImportRowError as err:  # the whole file (too large, unreadable): the others are still read
            problems.append(str(err))
            continue
        if not records and len(problems) == before:
            problems.append(f"{file}: no rows")
        for index, record in records:
            where = f"{file}, row {index}"
            if alone := _row_problems(record):
                problems.append(f"{where}: {'; '.join(alone)}")
                continue
            task, variant = _task_of(record)
            item = ImportedRow(file, index, str(task), variant, record)
            if repeated := across.problem(item, where):
                problems.append(f"{where}: {repeated}")
            else:  # written one way in every row (checked above): the log names its NFKC form
                named = {**record, "model": unicodedata.normalize("NFKC", record["model"])}
                rows.append(replace(item, record=named))
    if problems:
        shown = "\n  ".join(problems[:LISTED])
        more = f"\n  ... and {len(problems) - LISTED} more" if len(problems) > LISTED else ""
        raise ImportRowError(f"{len(problems)} row(s) cannot be imported:\n  {shown}{more}")
    return rows


def check_xlsx_text(path: Path, error: type[Exception]) -> None:
    """Refuse a spreadsheet whose first sheet's cells hold more than ``MAX_EXPANDED_CHARS`` of text
    (a shared string counted at each cell that references it) or a row of more than
    ``MAX_ROW_FIELDS`` cells, read row by row in openpyxl's read-only mode (each shared string held
    once) before pandas builds a frame that holds each cell's text. Here, not in ``data.limits``:
    openpyxl is the platform's (the ``report`` extra), not the core's."""
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception:  # openpyxl raises several types for a broken file: pandas names what is wrong
        return
    try:
        total = 0
        for row, cells in enumerate(book.worksheets[0].iter_rows(values_only=True), 1):
            check_rows(row - 1, str(path), error)  # the first row is the header
            if len(cells) > MAX_ROW_FIELDS:
                raise error(f"{path}, row {row}: {len(cells):,} cells (at most {MAX_ROW_FIELDS:,})")
            total += sum(len(str(value)) for value in cells if value is not None)
            if total > MAX_EXPANDED_CHARS:
                raise error(
                    f"{path}, row {row}: its cells hold more than {MAX_EXPANDED_CHARS:,} characters of "
                    "text up to here (each shared string counted where a cell uses it); split the file"
                )
    finally:
        book.close()
