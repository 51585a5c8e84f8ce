"""Import and data files that a reader would once have resolved silently (issue 35, finding 9) are
refused, naming the file, the row (or line) and the field: identical id-less generations in two
files, model names differing only in whitespace, n outside 1-3, a problem without exactly one
blank, a column or field given twice, ids equal after Unicode normalisation and case folding, an
integer that does not fit, and a lone surrogate."""

from __future__ import annotations

import json
import unicodedata

import pytest
from helpers import refused, write_jsonl
from input_records import BENCHMARK_RECORD as RECORD
from input_records import GENERATION_ROW

from narrative_infill.data.dataset import load_benchmark
from narrative_infill.data.sources import read_source
from narrative_infill.errors import NarrativeInfillError
from narrative_infill.platform.analysis.importer import read_generations

NFC, NFD = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")


def test_identical_generations_in_two_files_without_ids_are_refused(tmp_path):
    """They became four samples, the copies counted twice."""
    rows = [GENERATION_ROW, {**GENERATION_ROW, "problem": "Bo sat. ______ He left."}]
    first, second = write_jsonl(tmp_path / "a.jsonl", rows), write_jsonl(tmp_path / "b.jsonl", rows)
    message = refused(read_generations, [first, second])
    assert "2 row(s) cannot be imported" in message
    assert f"{second}, row 1: the same generation as {first}, row 1 (model m1, task l2" in message
    assert f"{second}, row 2: the same generation as {first}, row 2" in message


def test_model_names_differing_only_in_whitespace_are_refused(tmp_path):
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": 1}, {**GENERATION_ROW, "id": 2, "model": "m1 "}])
    message = refused(read_generations, [source])
    assert (
        f"{source}, row 2: field 'model': 'm1 ' differs from 'm1' ({source}, row 1) only in look-alike "
        "characters, whitespace or case"
        in (message)
    )


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"n": 9}, "field 'n': must be 1, 2 or 3 masked sentences, got 9"),
        ({"n": 0}, "field 'n': must be 1, 2 or 3 masked sentences, got 0"),
        ({"n": int("9" * 401)}, "field 'n': " + "9" * 40 + "... (401 characters) does not fit"),
        ({"problem": "Ann woke up. It was late."}, "field 'problem': no blank (______) in the text"),
        ({"problem": "______ Ann woke up. ______"}, "field 'problem': 2 blanks in the text"),
    ],
    ids=["n 9", "n 0", "n 401 digits", "no blank", "two blanks"],
)
def test_an_imported_row_out_of_the_benchmarks_shape_is_refused(tmp_path, change, expected):
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": 1}, {**GENERATION_ROW, "id": 2, **change}])
    assert f"{source}, row 2: {expected}" in refused(read_generations, [source])


@pytest.mark.parametrize("names", [("m1", "m1\u200b"), (NFC, NFD)], ids=["zero-width", "NFC/NFD"])
def test_model_names_that_render_alike_are_refused(tmp_path, names):
    """Failed before: each pair became two models whose names print alike."""
    source = write_jsonl(
        tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": 1, "model": names[0]}, {**GENERATION_ROW, "id": 2, "model": names[1]}]
    )
    assert f"{source}, row 2: field 'model': {ascii(names[1])} differs from {ascii(names[0])}" in refused(
        read_generations, [source]
    )


@pytest.mark.parametrize(
    "copy",
    [{"response": GENERATION_ROW["response"] + "\n"}, {"problem": GENERATION_ROW["problem"].replace(" It", "  It")}],
    ids=["trailing newline", "double space"],
)
def test_id_less_generations_differing_only_in_whitespace_are_refused(tmp_path, copy):
    """Failed before: a copy with a trailing newline (or a doubled space) counted twice."""
    first, second = write_jsonl(tmp_path / "a.jsonl", [GENERATION_ROW]), write_jsonl(tmp_path / "b.jsonl", [{**GENERATION_ROW, **copy}])
    assert f"{second}, row 1: the same generation as {first}, row 1" in refused(
        read_generations, [first, second]
    )


@pytest.mark.parametrize(
    "ids", [(NFC, NFD), ("abc", "ABC"), ("abc", "a\u200bbc")], ids=["NFC/NFD", "case", "zero-width"]
)
def test_imported_ids_equal_once_folded_are_refused(tmp_path, ids):
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": ids[0]}, {**GENERATION_ROW, "id": ids[1]}])
    message = refused(read_generations, [source])
    assert (
        f"{source}, row 2: field 'id': {ascii(ids[1])} repeats {source}, row 1 ({ascii(ids[0])} there"
        in message
    )


def test_a_column_named_twice_is_refused_in_import_and_data_files(tmp_path):
    """csv.DictReader kept the last ``n`` silently; pandas renamed the second to ``n.1``."""
    header = "model,template_name,problem,gold_answer,response,n,n\n"
    imported = tmp_path / "g.csv"
    imported.write_text(header + 'm1,fitb_l2,"A. ______ B.",G.,R.,1,3\n', encoding="utf-8")
    assert f"{imported}, line 1: column 'n' is named 2 times in the header" in refused(
        read_generations, [str(imported)]
    )
    data = tmp_path / "data.csv"
    columns = list(RECORD) + ["n"]
    data.write_text(
        ",".join(columns) + "\n" + ",".join(f'"{RECORD[c]}"' for c in RECORD) + ",3\n", encoding="utf-8"
    )
    assert f"{data}, line 1: column 'n' is named 2 times in the header" in refused(load_benchmark, str(data))


def test_a_json_field_given_twice_is_refused(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(RECORD)[:-1] + ', "n": 3}\n', encoding="utf-8")
    assert f"{data}, row 1: field 'n' is given twice" in refused(load_benchmark, str(data))


@pytest.mark.parametrize("ref_ids", [(NFC, NFD), ("abc", "ABC")], ids=["NFC/NFD", "case"])
def test_data_ids_equal_once_folded_are_refused(tmp_path, ref_ids):
    """Two instances whose ids render alike (or that a case-folding tool merges)."""
    data = write_jsonl(tmp_path / "data.jsonl", [{**RECORD, "ref_id": ref_id} for ref_id in ref_ids])
    message = refused(load_benchmark, data)
    assert (
        f"{data}, row 2" in message and "field '(dataset, ref_id, n, unit_idx)': duplicates row 1" in message
    )
    assert "are one id after Unicode normalisation and case folding" in message


def test_an_integer_that_does_not_fit_is_refused_not_a_traceback(tmp_path):
    """A 401-digit unit_idx ended ``inspect eval`` with an OverflowError."""
    data = write_jsonl(tmp_path / "data.jsonl", [{**RECORD, "unit_idx": int("1" * 401)}])
    message = refused(load_benchmark, data)
    assert f"{data}, row 1" in message and "field 'unit_idx': " + "1" * 40 + "... (401 characters)" in message
    assert "does not fit: an integer field holds at most 9,007,199,254,740,991" in message


@pytest.mark.parametrize(
    "value", ["9" * 5000, "[" * 100_000 + "]" * 100_000], ids=["5000-digit integer", "100,000 levels deep"]
)
def test_a_json_value_python_cannot_read_is_refused_not_a_traceback(tmp_path, value):
    """Failed before: json's ValueError (over 4,300 digits) or RecursionError ended the command."""
    row = json.dumps({**GENERATION_ROW, "n": 2})[:-1] + f', "extra": {value}}}\n'
    generations, data = tmp_path / "g.jsonl", tmp_path / "data.jsonl"
    generations.write_text(row, encoding="utf-8")
    data.write_text(json.dumps(RECORD)[:-1] + f', "extra": {value}}}\n', encoding="utf-8")
    assert f"{generations}, row 1: unreadable JSON" in refused(read_generations, [str(generations)])
    assert f"{data}, row 1: unreadable JSON" in refused(load_benchmark, str(data))


def test_a_lone_surrogate_is_refused_where_the_file_is_read(tmp_path):
    """It was stored as the six characters \\ud800."""
    generations = tmp_path / "g.jsonl"
    generations.write_text(
        json.dumps({**GENERATION_ROW, "response": "She bought \ud800 a telescope."}) + "\n", encoding="utf-8"
    )
    assert f"{generations}, row 1: field 'response' holds a lone surrogate" in refused(
        read_generations, [str(generations)]
    )
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({**RECORD, "gold_answer": "She \udfff ran."}) + "\n", encoding="utf-8")
    assert f"{data}, row 1: field 'gold_answer' holds a lone surrogate" in refused(load_benchmark, str(data))


def test_source_narrative_ids_equal_once_folded_are_refused(tmp_path):
    source = write_jsonl(
        tmp_path / "narratives.jsonl", [{"id": NFC, "text": "A. B. C."}, {"id": NFD, "text": "D. E. F."}]
    )
    message = refused(lambda: list(read_source("jsonl", [source])))
    assert "are one id after Unicode normalisation and case folding" in message


def test_a_source_csv_with_a_column_named_twice_is_refused(tmp_path):
    source = tmp_path / "roc.csv"
    header = "storyid,storytitle,sentence1,sentence2,sentence3,sentence4,sentence5,sentence5\n"
    source.write_text(header + "s1,T,A.,B.,C.,D.,E.,F.\n", encoding="utf-8")
    assert f"{source}, line 1: column 'sentence5' is named 2 times" in refused(
        lambda: list(read_source("rocstories", [str(source)]))
    )
