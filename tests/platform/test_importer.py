"""Importing existing generations: logs per (model, task), replayed outputs, rescoring, bad rows."""

import json

import pytest
from helpers import SHARED, require_shared, write_jsonl
from inspect_ai import score
from inspect_ai.log import read_eval_log

from narrative_infill.platform.analysis.import_rows import ImportRowError, read_generations
from narrative_infill.platform.analysis.importer import import_generations
from narrative_infill.platform.cli import main
from narrative_infill.scorers.metrics import metrics


@pytest.fixture(scope="module")
def shared_rows():
    require_shared()
    with (SHARED / "data" / "extraction" / "responses.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_one_log_per_model_and_task_with_the_original_prompt_and_response(tmp_path, shared_rows):
    rows = [
        r
        for r in shared_rows
        if r["model"] in ("google/gemma-2-2b-it", "mistralai/Mistral-Nemo-Instruct-2407")
    ][:300]
    source = write_jsonl(tmp_path / "gen.jsonl", rows)
    locations = import_generations([source], str(tmp_path / "logs"))
    expected_groups = {(r["model"], r["template_name"]) for r in rows}
    assert len(locations) == len(expected_groups)
    total = 0
    by_id = {str(r["id"]): r for r in rows}
    for location in locations:
        log = read_eval_log(location)
        assert log.status == "success" and log.eval.model.startswith("replay/")
        assert log.results.total_samples == len(log.samples) == log.eval.dataset.samples
        for sample in log.samples:
            original = by_id[sample.id]
            assert sample.input == original["problem"] and sample.target == original["gold_answer"]
            assert sample.output.completion == original["response"]
            assert (
                sample.messages[0].text == original["prompt_text"]
                and sample.messages[-1].text == original["response"]
            )
            assert sample.metadata["template"] == f"l{original['template_name'][-1]}"
            assert sample.metadata["prompt_variant"] == f"code{original['template_id']}"
            assert (
                sample.metadata["temperature"] == original["temperature"]
                and sample.metadata["problem_id"] == original["problem_id"]
            )
            total += 1
    assert total == len(rows)


@pytest.mark.heavy
def test_imported_logs_rescore_with_the_package_scorers(tmp_path, shared_rows):
    source = write_jsonl(tmp_path / "gen.jsonl", shared_rows[:40])
    [location, *_] = import_generations([source], str(tmp_path / "logs"))
    log = read_eval_log(location)
    scored = score(log, metrics(backbone="minilm"), action="append", display="none")
    assert all(0 <= s.scores["metrics"].value["atavg"] <= 1 for s in scored.samples)
    assert {s.name for s in scored.results.scores} >= {"atavg", "bertscore"}


def test_bad_rows_are_reported_with_file_and_row(tmp_path, shared_rows):
    good = dict(shared_rows[0])
    rows = [
        good,
        {**good, "response": None},
        {**good, "template_name": "fitb_l9"},
        {k: v for k, v in good.items() if k != "gold_answer"},
    ]
    source = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ImportRowError) as raised:
        read_generations([source])
    message = str(raised.value)
    assert "3 row(s) cannot be imported" in message
    assert f"{source}, row 2: missing or empty field(s): response" in message
    assert (
        "row 3: template_name 'fitb_l9'" in message
        and "row 4: missing or empty field(s): gold_answer (or answer)" in message
    )


def test_csv_and_xlsx_from_the_authors_pipeline_with_reasoning_ids(tmp_path, shared_rows):
    import pandas as pd

    frame = pd.DataFrame(shared_rows[:6]).rename(columns={"gold_answer": "answer"})
    frame["template_name"] = "reasoning_paradigms"
    frame["template_id"] = [0, 1, 2, 3, 0, 3]
    frame["extra_column"] = "kept"
    frame.to_excel(tmp_path / "gen.xlsx", index=False)
    frame.to_csv(tmp_path / "gen.csv", index=False)
    for name in ("gen.xlsx", "gen.csv"):
        rows = read_generations([str(tmp_path / name)])
        assert [r.task for r in rows] == ["abductive", "causal", "counterfactual", "cot", "abductive", "cot"]
    assert main(["import", str(tmp_path / "gen.xlsx"), "-o", str(tmp_path / "logs")]) == 0
    logs = [read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval")]
    assert sorted(log.eval.task for log in logs) == [
        "narrative_infill/abductive",
        "narrative_infill/causal",
        "narrative_infill/cot",
        "narrative_infill/counterfactual",
    ]
    assert all(s.metadata["extra_column"] == "kept" for log in logs for s in log.samples)


def test_non_integer_fields_and_repeated_ids_are_bad_rows_reported_together(tmp_path, shared_rows):
    good = dict(shared_rows[0])
    rows = [good, {**good, "id": "x1", "template_id": "two"}, {**good, "id": "x2", "n": "1.5"}, dict(good)]
    source = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ImportRowError) as raised:
        read_generations([source])
    message = str(raised.value)
    assert "3 row(s) cannot be imported" in message
    assert (
        "row 2: field 'template_id': expected an integer, got 'two'" in message
        and "row 3: field 'n': expected an integer, got '1.5'" in message
    )
    assert f"row 4: field 'id': '{good['id']}' repeats {source}, row 1" in message


def test_a_non_empty_output_folder_is_refused_unless_overwrite(tmp_path, shared_rows, capsys):
    source = write_jsonl(tmp_path / "gen.jsonl", shared_rows[:3])
    logs = tmp_path / "logs"
    assert main(["import", source, "-o", str(logs)]) == 0
    before = sorted(p.name for p in logs.iterdir())
    assert main(["import", source, "-o", str(logs)]) == 1
    assert (
        "not an empty folder" in capsys.readouterr().err and sorted(p.name for p in logs.iterdir()) == before
    )
    assert main(["import", source, "-o", str(logs), "--overwrite"]) == 0
    after = sorted(p.name for p in logs.iterdir())
    assert len(after) == len(before) and after != before  # replaced, not added to


def test_a_failed_import_leaves_the_folder_as_it_was(tmp_path, shared_rows, capsys):
    logs = tmp_path / "logs"
    assert main(["import", write_jsonl(tmp_path / "gen.jsonl", shared_rows[:3]), "-o", str(logs)]) == 0
    before = {p.name: p.read_bytes() for p in logs.iterdir()}
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [*shared_rows[:3], {**shared_rows[0], "template_name": "fitb_l9"}]
    )
    assert main(["import", bad, "-o", str(logs), "--overwrite"]) == 1
    assert {p.name: p.read_bytes() for p in logs.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".logs")]


def test_csv_with_a_byte_order_mark_imports_and_other_encodings_are_named(tmp_path, shared_rows):
    import pandas as pd

    frame = pd.DataFrame(shared_rows[:2])
    (tmp_path / "bom.csv").write_bytes(frame.to_csv(index=False).encode("utf-8-sig"))
    assert [r.record["id"] for r in read_generations([str(tmp_path / "bom.csv")])] == [
        r["id"] for r in shared_rows[:2]
    ]
    (tmp_path / "latin.csv").write_bytes(
        frame.assign(problem="Café. ______").to_csv(index=False).encode("latin-1")
    )
    with pytest.raises(ImportRowError, match=r"latin.csv, line 2 \(byte offset \d+\): not UTF-8"):
        read_generations([str(tmp_path / "latin.csv")])


@pytest.mark.parametrize("given", [("dataset", "ref_id", "n", "unit_idx"), ("dataset",), ()])
def test_imported_rows_get_the_breakdowns_a_tasks_samples_get(tmp_path, given):
    """An imported generation gets the domain (with ``dataset``), blank position, span length and
    narrative length the demo task's own sample of that instance has. Issue 61: a row without ``n``
    and ``unit_idx`` (the authors' shared outputs) got none; the gold's sentences give ``n``, the
    sentences before ``______`` the blank's place."""
    from narrative_infill.data.dataset import infill_dataset

    samples = list(infill_dataset("demo"))
    rows = [
        {
            "id": f"r{index}",
            "model": "m",
            "template_name": "fitb_l2",
            "problem": sample.input,
            "gold_answer": sample.target,
            "response": "They went home.",
            **{k: sample.metadata[k] for k in given},
        }
        for index, sample in enumerate(samples)
    ]
    [location] = import_generations([write_jsonl(tmp_path / "gen.jsonl", rows)], str(tmp_path / "logs"))
    imported = {s.id: s.metadata for s in read_eval_log(location).samples}
    dataset = "dataset" in given
    fields = ("n", "position", "narrative_sentences", *(("domain",) if dataset else ()))
    for index, sample in enumerate(samples):
        assert {f: imported[f"r{index}"].get(f) for f in fields} == {f: sample.metadata[f] for f in fields}
    assert dataset or not any("domain" in m for m in imported.values())  # no source: no domain guessed


@pytest.mark.shared
def test_the_shared_outputs_get_the_span_length_and_position_breakdowns(tmp_path, shared_rows):
    """The authors' 9,800 rows carry neither ``n`` nor ``unit_idx``; where a row's prompt states the
    span ("Fill in the blank with 2 sentence(s)"), the ``n`` derived from its gold must say the same."""
    import re

    rows = [r for r in shared_rows if r["model"] == "google/gemma-2-2b-it"]
    locations = import_generations([write_jsonl(tmp_path / "gen.jsonl", rows)], str(tmp_path / "logs"))
    stated = 0
    for location in locations:
        for sample in read_eval_log(location).samples:
            metadata = sample.metadata
            assert metadata["n"] in (1, 2, 3) and metadata["position"] in ("opening", "middle", "closing")
            assert metadata["narrative_sentences"] > metadata["n"]
            if said := re.search(r"with (\d) sentence\(s\)", metadata["original_prompt"]):
                stated += 1
                assert metadata["n"] == int(said.group(1)), sample.id
    assert stated > 100


def _breakdown_row(**fields) -> dict:
    """One imported row of a one-sentence blank, with the breakdown fields given."""
    row = {"id": "r0", "model": "m", "template_name": "fitb_l2", "response": "x."}
    return row | {"problem": "Ann woke up. ______ She smiled.", "gold_answer": "The sun was out."} | fields


@pytest.mark.parametrize("unit_idx", ["abc", 2.5, True])
def test_a_unit_idx_that_is_not_an_integer_is_refused_with_its_row_and_field(tmp_path, capsys, unit_idx):
    """The breakdowns read ``unit_idx``; a bad one crashed the import with a bare traceback
    ("expected an integer, got 'abc'"), naming neither the row nor the field."""
    row = _breakdown_row(dataset="roc", ref_id=1, unit_idx=unit_idx)
    source = write_jsonl(tmp_path / "gen.jsonl", [row])
    with pytest.raises(ImportRowError, match=r"gen.jsonl, row 1: field 'unit_idx': expected an integer"):
        read_generations([source])
    assert main(["import", source, "-o", str(tmp_path / "logs")]) == 1
    assert "field 'unit_idx'" in capsys.readouterr().err


def test_a_blank_dataset_gives_no_domain_breakdown(tmp_path):
    """A ``dataset`` of spaces named no source for the narrative key, yet became the domain ""."""
    row = _breakdown_row(dataset="  ", unit_idx=1)
    [location] = import_generations([write_jsonl(tmp_path / "gen.jsonl", [row])], str(tmp_path / "logs"))
    [sample] = read_eval_log(location).samples
    assert "domain" not in sample.metadata and sample.metadata["narrative"].startswith("text-")
