"""Every file that enters is bounded before it is materialised, and every bad row is named (issue
44, finding 7): a zip-bomb spreadsheet is refused from its declared sizes, a file over the byte or
row limit and a field over the field limit are refused by file, row and field (JSONL, CSV, xlsx,
parquet), a row that is not an object no longer hides the rows after it, a model name or response
that is not text is refused, and model names that render as another are refused naming which.
Sizes are scaled down (the limits are patched); benchmarks/import_bounds.py measures real sizes."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import refused, write_jsonl
from input_records import BENCHMARK_RECORD as RECORD
from input_records import GENERATION_ROW

from narrative_infill.data import limits
from narrative_infill.data.dataset import load_benchmark
from narrative_infill.platform.analysis.import_rows import read_generations


def xlsx(path, rows) -> str:
    """A spreadsheet written by openpyxl (pandas' writer would cut a cell at Excel's 32,767 characters)."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(list(rows[0]))
    for row in rows:
        sheet.append([row.get(name) for name in rows[0]])
    book.save(path)
    return str(path)


def zip_bomb(path, cell_chars: int) -> str:
    """A spreadsheet whose response cell holds ``cell_chars`` of one letter (Excel's writers cut a
    cell at 32,767 characters: the sheet's XML is rewritten in the zip)."""
    import zipfile

    plain = path.with_suffix(".plain.xlsx")
    xlsx(plain, [{**GENERATION_ROW, "response": "RESPONSE"}])
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"RESPONSE", b"a" * cell_chars)
            bomb.writestr(member, data, zipfile.ZIP_DEFLATED)
    return str(path)


def test_a_zip_bomb_spreadsheet_is_refused_before_it_is_unzipped(tmp_path, monkeypatch):
    """Failed before: a 4 MB cell of one letter (4 KB zipped) was unzipped and imported (the issue's
    67 KB file held 64 MB: 32 s and 1.6 GB)."""
    bomb = zip_bomb(tmp_path / "bomb.xlsx", 2**22)

    def unzipped(*args, **kwargs):
        raise AssertionError("the spreadsheet was read")

    monkeypatch.setattr(pd, "read_excel", unzipped)
    message = refused(read_generations, [bomb])
    assert f"{bomb}: part 'xl/worksheets/sheet1.xml' declares 4,19" in message
    assert "a zip bomb" in message


def test_a_spreadsheet_declaring_more_than_the_byte_limit_is_refused(tmp_path, monkeypatch):
    sheet = xlsx(tmp_path / "big.xlsx", [{**GENERATION_ROW, "id": i, "response": f"answer {i}"} for i in range(50)])
    limit = (tmp_path / "big.xlsx").stat().st_size + 1  # the file itself is within it
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", limit)
    assert f"once unzipped, more than the {limit:,} bytes" in refused(read_generations, [sheet])


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".xlsx"])
def test_a_field_over_the_limit_is_refused_by_file_row_and_field(tmp_path, monkeypatch, suffix):
    """Failed before: an answer of any size was imported whole."""
    monkeypatch.setattr(limits, "MAX_FIELD_CHARS", 1000)
    rows = [{**GENERATION_ROW, "id": 1}, {**GENERATION_ROW, "id": 2, "response": "word " * 400}]
    path = tmp_path / f"g{suffix}"
    if suffix == ".jsonl":
        write_jsonl(path, rows)
    elif suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        xlsx(path, rows)
    assert f"{path}, row 2: field 'response': 2,000 characters (at most 1,000)" in refused(
        read_generations, [str(path)]
    )


def test_a_file_over_the_byte_limit_is_refused_unread(tmp_path, monkeypatch):
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": i} for i in range(40)])
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1024)
    message = refused(read_generations, [source])
    assert f"{source}: larger than the 1,024 bytes an input file may hold" in message


def test_a_file_over_the_row_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ROWS", 3)
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": i} for i in range(5)])
    assert f"{source}: more than 3 rows" in refused(read_generations, [source])


def test_every_bad_row_is_listed_not_only_the_first_that_is_no_object(tmp_path):
    """Failed before: the first line that was not an object ended the listing."""
    source = tmp_path / "g.jsonl"
    lines = ["[1, 2]", json.dumps({**GENERATION_ROW, "n": 9}), '"text"', "{not json", json.dumps({**GENERATION_ROW, "id": 5})]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = refused(read_generations, [str(source)])
    assert "4 row(s) cannot be imported" in message
    assert f"{source}, row 1: expected a JSON object, got list" in message
    assert f"{source}, row 2: field 'n': must be 1, 2 or 3" in message
    assert f"{source}, row 3: expected a JSON object, got str" in message
    assert f"{source}, row 4: unparseable JSON" in message


@pytest.mark.parametrize(
    "field, value, kind",
    [("model", ["m1", "m2"], "list"), ("response", 42, "int"), ("model", {"name": "m1"}, "dict")],
)
def test_a_model_name_or_response_that_is_not_text_is_refused(tmp_path, field, value, kind):
    """Failed before: a JSON list became the model "['m1', 'm2']", a number the answer "42"."""
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, field: value}])
    assert f"row 1: field '{field}': expected text (a JSON string), got {kind}" in refused(
        read_generations, [source]
    )


def test_a_number_in_a_spreadsheet_is_the_text_it_shows(tmp_path):
    source = tmp_path / "g.csv"
    pd.DataFrame([{**GENERATION_ROW, "model": 7, "response": 42}]).to_csv(source, index=False)
    (row,) = read_generations([str(source)])
    assert (row.record["model"], row.record["response"]) == ("7", "42")


@pytest.mark.parametrize(
    "name, shown",
    [
        ("gpt-4\u043e", "Latin ('g', U+0067), Cyrillic ('о', U+043E)"),  # a Cyrillic o
        ("\u0430pex", "Cyrillic ('а', U+0430), Latin ('p', U+0070)"),  # a Cyrillic a
        ("m1\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("m1\u2066x\u2069", "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
    ],
)
def test_a_model_name_that_renders_as_another_is_refused_naming_the_character(tmp_path, name, shown):
    """Failed before: each became a model of its own, printed like the honest name beside it."""
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": 1, "model": name}])
    message = refused(read_generations, [source])
    assert f"{source}, row 1: field 'model': {ascii(name)}" in message
    assert shown in message


def test_a_look_alike_beside_the_honest_name_says_which(tmp_path):
    rows = [{**GENERATION_ROW, "id": 1, "model": "m1"}, {**GENERATION_ROW, "id": 2, "model": "m1\u202e"}]
    source = write_jsonl(tmp_path / "g.jsonl", rows)
    assert f"row 2: field 'model': 'm1\\u202e' differs from 'm1' ({source}, row 1)" in refused(
        read_generations, [source]
    )


def test_names_mixing_latin_with_cjk_and_compatibility_forms_are_normalised_and_kept(tmp_path):
    rows = [{**GENERATION_ROW, "id": 1, "model": "Qwen-通义"}, {**GENERATION_ROW, "id": 2, "model": "\uff47\uff50\uff54-4"}]
    models = [row.record["model"] for row in read_generations([write_jsonl(tmp_path / "g.jsonl", rows)])]
    assert models == ["Qwen-通义", "gpt-4"]  # fullwidth letters: NFKC


def test_a_data_file_field_over_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_FIELD_CHARS", 500)
    path = tmp_path / "data.jsonl"
    path.write_text(
        json.dumps({**RECORD, "source_text": RECORD["source_text"] + " x" * 400}) + "\n", encoding="utf-8"
    )
    assert f"{path}, row 1: field 'source_text': " in refused(load_benchmark, str(path))


def test_a_parquet_file_is_refused_from_its_footer_before_its_rows_are_read(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    rows = [{**RECORD, "ref_id": f"r{i}", "note": "x" * 5000} for i in range(5)]
    pq.write_table(pa.Table.from_pylist(rows), path)
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("the rows were read"))
    monkeypatch.setattr(limits, "MAX_ROWS", 3)
    assert f"{path}: more than 3 rows" in refused(load_benchmark, str(path))
    monkeypatch.setattr(limits, "MAX_ROWS", 100)
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", path.stat().st_size + 1)  # the file itself is within it
    assert "row groups declare" in refused(load_benchmark, str(path))


def test_a_parquet_footer_declaring_too_much_metadata_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    pq.write_table(pa.Table.from_pylist([RECORD]), path)
    monkeypatch.setattr(pq, "ParquetFile", lambda *a, **k: pytest.fail("the footer was parsed"))
    monkeypatch.setattr(limits, "MAX_PARQUET_FOOTER_BYTES", 64)
    assert "its footer declares" in refused(load_benchmark, str(path))
