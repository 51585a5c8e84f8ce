"""Sizes bounded before they are materialised (issue 57, Why 5): a small xlsx whose rows all reference
one long shared string (the issue's 6.5 MB file expanded to about 30 GB of text), a row of too many
cells, and a JSONL or CSV record of too many keys or columns are refused naming the file, the row
and what is over the limit, before pandas (or the importer) holds their text."""

from __future__ import annotations

import random
import zipfile
from xml.sax.saxutils import escape

import pytest
from helpers import refused, write_jsonl
from input_records import GENERATION_ROW

from narrative_infill.data.limits import MAX_EXPANDED_CHARS, MAX_ROW_FIELDS
from narrative_infill.platform.analysis.importer import read_generations

openpyxl = pytest.importorskip("openpyxl")  # the report extra: what reads an xlsx

COLUMNS = list(GENERATION_ROW)


def _words(count: int) -> str:
    """Seeded words (a text that compresses as prose does, not as one repeated letter)."""
    rng = random.Random(57)
    return " ".join(rng.choice(("ann", "ran", "to", "the", "bus", "it", "was", "late")) for _ in range(count))


MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PARTS = {
    "[Content_Types].xml": (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="'
        'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="'
        '/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.'
        'sharedStrings+xml"/></Types>'
    ),
    "_rels/.rels": (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship '
        f'Id="rId1" Type="{RELATIONSHIPS}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    ),
    "xl/workbook.xml": (
        f'<workbook xmlns="{MAIN}" xmlns:r="{RELATIONSHIPS}"><sheets><sheet name="Sheet1" sheetId="1" '
        'r:id="rId1"/></sheets></workbook>'
    ),
    "xl/_rels/workbook.xml.rels": (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{RELATIONSHIPS}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{RELATIONSHIPS}/sharedStrings" Target="sharedStrings.xml"/>'
        "</Relationships>"
    ),
}


def shared_string_xlsx(path, rows: int, response: str):
    """A spreadsheet as Excel writes one: every text in the shared-string table once, each cell an
    index into it; ``rows`` rows of generations (numbered by an ``id`` column) whose responses all
    reference ``response``."""
    row = {**GENERATION_ROW, "response": response}
    texts = list(dict.fromkeys([*COLUMNS, "id", *row.values()]))
    index = {text: position for position, text in enumerate(texts)}

    def cell(column: int, number: int, value) -> str:
        where = f"{chr(65 + column)}{number}"
        return (
            f'<c r="{where}"><v>{value}</v></c>'
            if isinstance(value, int)
            else (f'<c r="{where}" t="s"><v>{index[value]}</v></c>')
        )

    def line(number: int, values: list) -> str:
        return f'<row r="{number}">' + "".join(cell(c, number, v) for c, v in enumerate(values)) + "</row>"

    body = line(1, [*COLUMNS, "id"]) + "".join(
        line(number, [*(row[c] for c in COLUMNS), number]) for number in range(2, rows + 2)
    )
    strings = "".join(f"<si><t>{escape(text)}</t></si>" for text in texts)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in PARTS.items():
            archive.writestr(name, text)
        archive.writestr(
            "xl/sharedStrings.xml", f'<sst xmlns="{MAIN}" uniqueCount="{len(texts)}">{strings}</sst>'
        )
        dimension = f'<dimension ref="A1:{chr(65 + len(COLUMNS))}{rows + 1}"/>'  # as Excel writes it
        sheet = f'<worksheet xmlns="{MAIN}">{dimension}<sheetData>{body}</sheetData></worksheet>'
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
    return path


def test_an_xlsx_whose_shared_string_expands_past_the_bound_is_refused_before_it_is_read(tmp_path):
    """Failed before: every row passed (each cell under the field limit), the text past any file's
    bound. The file is under 1 MB: one 120,000-character string, referenced by every row."""
    long = _words(40_000)[:120_000]
    path = shared_string_xlsx(tmp_path / "g.xlsx", MAX_EXPANDED_CHARS // len(long) + 2, long)
    assert path.stat().st_size < 2**20
    message = refused(read_generations, [str(path)])
    assert f"{path}, row " in message and f"more than {MAX_EXPANDED_CHARS:,} characters" in message


def test_a_shared_string_xlsx_within_the_bound_imports(tmp_path):
    path = shared_string_xlsx(tmp_path / "g.xlsx", 2, "<ANSWER>She ran.</ANSWER>")
    [first, second] = read_generations([str(path)])
    assert first.record["response"] == second.record["response"] == "<ANSWER>She ran.</ANSWER>"


def test_an_xlsx_row_of_too_many_cells_is_refused(tmp_path):
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet()
    sheet.append(COLUMNS + [f"extra{i}" for i in range(MAX_ROW_FIELDS)])
    sheet.append(list(GENERATION_ROW.values()))
    path = tmp_path / "g.xlsx"
    book.save(path)
    message = refused(read_generations, [str(path)])
    assert f"{path}, row 1: {len(COLUMNS) + MAX_ROW_FIELDS:,} cells (at most {MAX_ROW_FIELDS:,})" in message


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_a_jsonl_row_of_too_many_keys_is_refused_naming_it(tmp_path, nested):
    """Failed before: a 700,000-key row imported (28 s, 1 GB); one key over the bound is enough."""
    extra = {f"k{i}": 1 for i in range(MAX_ROW_FIELDS)}
    row = {**GENERATION_ROW, "meta": extra} if nested else {**GENERATION_ROW, **extra}
    source = write_jsonl(tmp_path / "g.jsonl", [GENERATION_ROW | {"id": 1}, row])
    message = refused(read_generations, [source])
    assert f"{source}, row 2: more than {MAX_ROW_FIELDS:,} fields" in message


def test_a_csv_of_too_many_columns_is_refused(tmp_path):
    path = tmp_path / "g.csv"
    header = COLUMNS + [f"extra{i}" for i in range(MAX_ROW_FIELDS)]
    path.write_text(",".join(header) + "\n", encoding="utf-8")
    message = refused(read_generations, [str(path)])
    assert f"{path}, line 1: {len(header):,} columns (at most {MAX_ROW_FIELDS:,})" in message


def test_rows_within_the_bounds_still_import(tmp_path):
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet()
    sheet.append(COLUMNS)
    for index in range(3):
        sheet.append(
            [{**GENERATION_ROW, "problem": f"Ann woke {index}. ______ It was late."}[c] for c in COLUMNS]
        )
    path = tmp_path / "g.xlsx"
    book.save(path)
    row = {**GENERATION_ROW, "meta": {f"k{i}": 1 for i in range(MAX_ROW_FIELDS - len(GENERATION_ROW) - 1)}}
    source = write_jsonl(tmp_path / "h.jsonl", [row])
    assert len(read_generations([str(path), source])) == 4  # 1,000 keys in all, nested ones counted
