"""Loading and validating benchmark records, metadata, positions, ids, filters and the subset."""

import csv
import json
import logging

import pytest
from helpers import BENCHMARK_CSV, write_jsonl
from input_records import BENCHMARK_RECORD

from narrative_infill.data.dataset import (
    DataSourceError,
    filter_instances,
    infill_dataset,
    load_benchmark,
    stratified_subset,
)
from narrative_infill.data.records import SCHEMA, InvalidRecordError, canonical_domain


def write_csv(path, records, fieldnames=SCHEMA):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fieldnames))
        writer.writeheader()
        writer.writerows(records)
    return str(path)


FAULTS = [
    ("no blank", {"problem": "Ann woke up. It was late."}, "problem", "no blank"),
    ("two blanks", {"problem": "Ann woke up. ______ It was late. ______"}, "problem", "2 blanks"),
    ("n above 3", {"n": 4}, "n", "must be 1, 2 or 3"),
    ("n zero", {"n": 0}, "n", "must be 1, 2 or 3"),
    ("n not a number", {"n": "two"}, "n", "expected an integer"),
    ("empty gold", {"gold_answer": "   "}, "gold_answer", "empty text"),
    ("negative unit_idx", {"unit_idx": -1}, "unit_idx", "0-based"),
    ("empty source", {"source_text": ""}, "source_text", "empty text"),
]


@pytest.mark.parametrize("label,change,field,message", FAULTS, ids=[f[0] for f in FAULTS])
def test_structural_faults_name_file_row_instance_and_field(tmp_path, label, change, field, message):
    path = write_jsonl(tmp_path / "bad.jsonl", [BENCHMARK_RECORD, {**BENCHMARK_RECORD, "ref_id": 8, **change}])
    with pytest.raises(InvalidRecordError) as caught:
        load_benchmark(path)
    text = str(caught.value)
    assert f"{path}, row 2" in text
    assert "dataset='roc', ref_id=8" in text
    assert f"field '{field}'" in text and message in text
    assert caught.value.row == 2 and caught.value.field == field


def test_missing_column_is_a_fault(tmp_path):
    path = write_csv(
        tmp_path / "bad.csv",
        [{k: v for k, v in BENCHMARK_RECORD.items() if k != "unit_idx"}],
        fieldnames=[k for k in SCHEMA if k != "unit_idx"],
    )
    with pytest.raises(InvalidRecordError, match=r"row 1 .*field 'unit_idx': column missing"):
        load_benchmark(path)


def test_unparseable_rows_are_reported_with_their_row(tmp_path):
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(json.dumps(BENCHMARK_RECORD) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"bad.jsonl, row 2: unparseable JSON"):
        load_benchmark(str(jsonl))
    csv_path = tmp_path / "extra.csv"
    csv_path.write_text(
        ",".join(SCHEMA) + "\nroc,1,a ______ b,a ______ b,x,sentence(s),1,1,SURPLUS\n", encoding="utf-8"
    )
    with pytest.raises(InvalidRecordError, match=r"extra.csv, row 1 .*cells beyond the header"):
        load_benchmark(str(csv_path))


def test_duplicate_instances_are_a_fault(tmp_path):
    path = write_jsonl(tmp_path / "dup.jsonl", [BENCHMARK_RECORD, BENCHMARK_RECORD])
    with pytest.raises(
        InvalidRecordError, match=r"row 2 .*duplicates row 1 \(sample id rocstories-7-n1-i1\)"
    ):
        load_benchmark(path)


def test_bad_sources_fail_clearly(tmp_path):
    with pytest.raises(DataSourceError, match="data file not found"):
        load_benchmark(str(tmp_path / "absent.csv"))
    other = tmp_path / "data.txt"
    other.write_text("x")
    with pytest.raises(DataSourceError, match="unsupported file type"):
        load_benchmark(str(other))


@pytest.mark.shared
def test_real_published_rows_load_with_metadata_and_counted_irregularities(caplog):
    with caplog.at_level(logging.WARNING):
        loaded = load_benchmark(str(BENCHMARK_CSV))
    assert len(loaded.instances) == 61
    assert {i.domain for i in loaded.instances} == {"wikipedia", "rocstories", "cnn_dailymail", "sind"}
    # Two published CNN rows do not reproduce their source when the gold is put back.
    assert dict(loaded.irregularities) == {"gold_does_not_reproduce_source": 2}
    assert {i.sample_id for i in loaded.instances if i.irregularities} == {
        "cnn_dailymail-224-n2-i5",
        "cnn_dailymail-703-n1-i10",
    }
    assert "gold_does_not_reproduce_source: 2" in caplog.text
    roc = next(i for i in loaded.instances if i.sample_id == "rocstories-28-n3-i1")
    assert roc.narrative_sentences == 5 and roc.position == "opening" and roc.gold_tokens > 0
    metadata = roc.metadata()
    for key in ("domain", "ref_id", "n", "unit_idx", "position", "narrative_sentences", "gold_tokens"):
        assert key in metadata
    wiki = next(i for i in loaded.instances if i.sample_id == "wikipedia-586-n1-i4")
    assert wiki.dataset == "wikipedia" and wiki.n == 1 and wiki.unit_idx == 4


def test_all_formats_give_the_same_instances(tmp_path, benchmark_rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = benchmark_rows[:6]
    csv_path = write_csv(tmp_path / "rows.csv", rows)
    jsonl_path = write_jsonl(
        tmp_path / "rows.jsonl", [{**r, "n": int(r["n"]), "ref_id": int(r["ref_id"])} for r in rows]
    )
    parquet_path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet_path)
    ids = [
        [i.sample_id for i in load_benchmark(p).instances] for p in (csv_path, jsonl_path, str(parquet_path))
    ]
    assert ids[0] == ids[1] == ids[2] and len(ids[0]) == 6


def test_hub_source_reads_a_dataset_repository_layout(tmp_path, benchmark_rows):
    """The hub loader, pointed at a local folder laid out like the published dataset repo."""
    repo = tmp_path / "Narrative-Infilling"
    (repo / "data").mkdir(parents=True)
    write_csv(repo / "data" / "train.csv", benchmark_rows[:5])
    dataset = infill_dataset(data=f"hf:{repo}")
    assert len(dataset) == 5 and dataset.location == f"hf:{repo}"


def test_domain_names_are_canonical():
    assert canonical_domain("roc") == "rocstories"
    assert canonical_domain("abisee/cnn_dailymail") == "cnn_dailymail"
    assert canonical_domain("SIND") == "sind"
    assert canonical_domain("wikipedia") == "wikipedia"
    assert canonical_domain("my_letters") == "my_letters"


def test_demo_set_covers_domains_spans_and_positions():
    instances = load_benchmark("demo").instances
    assert len(instances) >= 24
    assert {i.domain for i in instances} == {"wikipedia", "rocstories", "cnn_dailymail", "sind"}
    assert {i.n for i in instances} == {1, 2, 3}
    assert {i.position for i in instances} == {"opening", "middle", "closing"}
    assert not any(i.irregularities for i in instances)
    assert len({i.sample_id for i in instances}) == len(instances)


def test_sample_ids_are_stable_across_formats_and_orders(tmp_path, benchmark_rows):
    forward = [i.sample_id for i in load_benchmark(write_csv(tmp_path / "a.csv", benchmark_rows)).instances]
    backward = [
        i.sample_id for i in load_benchmark(write_csv(tmp_path / "b.csv", benchmark_rows[::-1])).instances
    ]
    assert sorted(forward) == sorted(backward) and len(set(forward)) == 61


def test_filters_combine():
    instances = load_benchmark("demo").instances
    assert {i.domain for i in filter_instances(instances, domain="roc,sind")} == {"rocstories", "sind"}
    assert all(i.n == 2 for i in filter_instances(instances, n=2))
    closing = filter_instances(instances, position="closing", domain=["wikipedia"])
    assert closing and all(i.position == "closing" and i.domain == "wikipedia" for i in closing)
    long = filter_instances(instances, min_sentences=11, max_sentences=11)
    assert long and all(i.narrative_sentences == 11 for i in long)
    with pytest.raises(DataSourceError, match="unknown"):
        filter_instances(instances, position="end")
    with pytest.raises(DataSourceError, match="no instances left"):
        infill_dataset(data="demo", domain="sind", min_sentences=6)


def test_subset_is_deterministic_and_stratified(benchmark_rows):
    instances = load_benchmark(str(BENCHMARK_CSV)).instances
    first = stratified_subset(instances, "10pct")
    assert [i.sample_id for i in first] == [i.sample_id for i in stratified_subset(instances, "10pct")]
    strata = {(i.domain, i.unit_idx) for i in instances}
    assert {(i.domain, i.unit_idx) for i in first} == strata  # at least one of every stratum
    assert len(first) < len(instances)
    with pytest.raises(DataSourceError, match="unknown subset"):
        stratified_subset(instances, "5pct")


def test_samples_carry_problem_gold_and_metadata():
    dataset = infill_dataset(data="demo", n=1)
    sample = dataset[0]
    assert "______" in sample.input and sample.target
    assert sample.metadata["n"] == 1 and sample.metadata["position"] in {"opening", "middle", "closing"}


@pytest.mark.shared
def test_task_metadata_counts_the_irregularities_of_its_samples():
    from narrative_infill.tasks import infill_task

    assert infill_task("l2", data=str(BENCHMARK_CSV)).metadata["data_irregularities"] == {
        "gold_does_not_reproduce_source": 2
    }
    assert infill_task("l2", data=str(BENCHMARK_CSV), domain="roc").metadata["data_irregularities"] == {}


def test_a_changed_file_is_read_again(tmp_path):
    path = tmp_path / "grow.jsonl"
    write_jsonl(path, [BENCHMARK_RECORD])
    assert len(load_benchmark(str(path)).instances) == 1
    write_jsonl(path, [BENCHMARK_RECORD, {**BENCHMARK_RECORD, "ref_id": 9}])
    assert len(load_benchmark(str(path)).instances) == 2


def test_a_byte_order_mark_is_accepted_in_csv_and_jsonl(tmp_path):
    csv_path = tmp_path / "bom.csv"
    write_csv(csv_path, [BENCHMARK_RECORD])
    csv_path.write_bytes(b"\xef\xbb\xbf" + csv_path.read_bytes())
    jsonl_path = tmp_path / "bom.jsonl"
    jsonl_path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(BENCHMARK_RECORD) + "\n").encode())
    for path in (csv_path, jsonl_path):
        [instance] = load_benchmark(str(path)).instances
        assert instance.dataset == "roc" and instance.gold_answer == BENCHMARK_RECORD["gold_answer"]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_file_that_is_not_utf8_is_named_with_line_and_offset(tmp_path, suffix):
    record = {**BENCHMARK_RECORD, "ref_id": 8, "gold_answer": "She ran to the café."}
    path = tmp_path / f"latin{suffix}"
    if suffix == ".csv":
        write_csv(path, [BENCHMARK_RECORD, record])
        path.write_bytes(path.read_text(encoding="utf-8").encode("latin-1"))
    else:
        path.write_bytes(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (BENCHMARK_RECORD, record)).encode("latin-1")
        )
    line = 3 if suffix == ".csv" else 2
    with pytest.raises(DataSourceError, match=rf"latin{suffix}, line {line} \(byte offset \d+\): not UTF-8"):
        load_benchmark(str(path))


def test_tasks_record_their_version_and_the_exact_data_they_read(tmp_path, benchmark_rows):
    import hashlib

    from narrative_infill.tasks import infill_task
    from narrative_infill.tasks.infill import TASK_VERSION
    from narrative_infill.task_options import version_parts

    path = write_csv(tmp_path / "rows.csv", benchmark_rows, fieldnames=benchmark_rows[0].keys())
    task = infill_task("l2", data=path, n=1)
    identity = task.metadata["dataset_identity"]
    assert task.version == TASK_VERSION and version_parts(TASK_VERSION)[0] >= 1
    assert identity == {"source": path, "sha256": hashlib.sha256((tmp_path / "rows.csv").read_bytes()).hexdigest(),
                        "instances": len(task.dataset)}  # fmt: skip
    assert len(task.dataset) < len(benchmark_rows)  # counted after the filters
    demo = infill_task("l2", data="demo").metadata["dataset_identity"]
    assert demo["source"] == "demo" and len(demo["sha256"]) == 64 and demo["instances"] == 24


@pytest.fixture
def fresh_benchmark_cache():
    """The loaded-benchmark cache emptied before and after: the fake hub's sets must not outlive the
    test in its worker (test_protocol's check of the published 10pct ids read them once)."""
    from narrative_infill.data import dataset

    dataset._load_benchmark.cache_clear()
    yield
    dataset._load_benchmark.cache_clear()


def test_a_hub_source_is_identified_by_the_commit_its_revision_resolved_to(
    tmp_path, monkeypatch, fresh_benchmark_cache
):
    import huggingface_hub.constants

    from narrative_infill.data.dataset import source_identity

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "datasets--BridgeAI-Lab--Narrative-Infilling"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "data.csv").write_text("x\n")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert source_identity("hf") == {
        "source": "hf:BridgeAI-Lab/Narrative-Infilling",
        "revision": "main",
        "commit": commit,
    }
    assert (
        source_identity("hf:someone/uncached")["commit"] == "unresolved"
    )  # offline, not cached: said, not guessed


def _hub_cache(root, snapshots: dict[str, list[str]], main: str):
    """A Hugging Face hub cache holding the published set at these commits (each: its JSONL lines, in
    data/train.jsonl), with refs/main at ``main``: what the hub's download leaves behind."""
    repo = root / "datasets--BridgeAI-Lab--Narrative-Infilling"
    for commit, lines in snapshots.items():
        (repo / "snapshots" / commit / "data").mkdir(parents=True)
        (repo / "snapshots" / commit / "data" / "train.jsonl").write_text("".join(lines), encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(main)


def test_the_published_set_is_read_at_its_pinned_revision_and_every_log_says_which(
    tmp_path, monkeypatch, fresh_benchmark_cache
):
    """The default hub path reads PUBLISHED_REVISION, not whatever main is now; ``-T revision=`` overrides;
    the log records the revision and the commit it resolved to. On a hub cache laid out as the hub
    serves it (offline: the hub is out of reach here)."""
    import datasets.config
    import huggingface_hub.constants
    from helpers import mock_model
    from inspect_ai import eval as inspect_eval

    from narrative_infill.data import dataset
    from narrative_infill.tasks import infill_task

    # Test commits, named so that no one takes them for the published set's.
    pinned, newer = "a" * 40, "b" * 40
    demo = dataset._demo_path().read_text(encoding="utf-8").splitlines(keepends=True)
    _hub_cache(tmp_path / "hub", {pinned: demo, newer: demo[:20]}, main=newer)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    monkeypatch.setattr(dataset, "PUBLISHED_REVISION", pinned)
    model = mock_model(lambda messages, config: "<ANSWER>She went home.</ANSWER>")
    for revision, commit, instances in ((None, pinned, 24), ("main", newer, 20)):
        task = infill_task("l2", revision=revision, judge=False, backbone="minilm")
        [log] = inspect_eval(task, model=model, limit=1, score=False, display="none")
        assert log.status == "success", log.error
        assert log.eval.metadata["dataset_identity"] == {
            "source": "hf:BridgeAI-Lab/Narrative-Infilling",
            "revision": revision or pinned,
            "commit": commit,
            "instances": instances,
        }
