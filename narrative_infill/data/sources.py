"""Read raw corpora into ``Narrative``s for the builder.

Each reader yields narratives in file order with a ``ref_id`` that is the 0-based index of
the document in its source (the published benchmark's convention), and reports a malformed
record with its file and line. A corpus is the user's own and is read without the input limits of
:mod:`.limits` (bytes, rows, field size): a Wikipedia dump is larger, and an article longer, than any
file of generations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import NarrativeInfillError, OptionError
from .builder import Narrative
from .jsonl import csv_rows, iter_jsonl, parse_json, read_utf8
from .records import canonical_domain, id_key
from .text import split_sentences

SOURCES = ("rocstories", "sind", "cnn_dailymail", "wikipedia", "jsonl", "text")
#: the ``dataset`` strings of the published benchmark
PUBLISHED_NAMES = {
    "rocstories": "roc",
    "sind": "sind",
    "cnn_dailymail": "abisee/cnn_dailymail",
    "wikipedia": "wikipedia",
}
_ROC_SENTENCES = tuple(f"sentence{i}" for i in range(1, 6))


class SourceRecordError(NarrativeInfillError, ValueError):
    """A malformed source record; the message names the file, line and field."""


def _eos_narrative(dataset: str, ref_id: int, sentences: list[str]) -> Narrative:
    sentences = [s.strip() for s in sentences if s and s.strip()]
    return Narrative(dataset, str(ref_id), " <eos> ".join(sentences), tuple(sentences))


def _prose_narrative(dataset: str, ref_id: str | int, text: str, domain: str) -> Narrative:
    return Narrative(dataset, str(ref_id), text, tuple(split_sentences(text, domain)))


def read_rocstories(path: Path, start: int = 0) -> Iterator[Narrative]:
    """ROCStories CSV: ``storyid, storytitle, sentence1..sentence5``."""
    reader = csv_rows(path, SourceRecordError, bounded=False)
    missing = [c for c in _ROC_SENTENCES if c not in (reader.fieldnames or [])]
    if missing:
        raise SourceRecordError(f"{path}:1: ROCStories CSV lacks column(s) {', '.join(missing)}")
    for index, row in enumerate(reader):
        empty = [c for c in _ROC_SENTENCES if not (row.get(c) or "").strip()]
        if empty:
            raise SourceRecordError(
                f"{path}:{reader.line_num}: field {empty[0]!r} is empty (storyid={row.get('storyid')!r})"
            )
        yield _eos_narrative("roc", start + index, [row[c] for c in _ROC_SENTENCES])


def read_sind(path: Path, start: int = 0) -> Iterator[Narrative]:
    """SIND/VIST story JSON (``annotations``: one sentence per image, grouped by ``story_id``,
    ordered by ``worker_arranged_photo_order``; ``original_text`` preferred over ``text``)."""
    try:
        data = parse_json(read_utf8(path, SourceRecordError, bounded=False), str(path), SourceRecordError)
    except json.JSONDecodeError as err:
        raise SourceRecordError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        raise SourceRecordError(f"{path}: expected a VIST story JSON with an 'annotations' list")
    stories: dict[str, list[tuple[int, str]]] = {}
    for index, group in enumerate(data["annotations"]):
        for item in group if isinstance(group, list) else [group]:
            try:
                story, order = str(item["story_id"]), int(item["worker_arranged_photo_order"])
                sentence = item.get("original_text") or item["text"]
            except (KeyError, TypeError, ValueError) as err:
                raise SourceRecordError(
                    f"{path}: annotations[{index}]: field {err} missing or invalid"
                ) from None
            stories.setdefault(story, []).append((order, sentence))
    for offset, sentences in enumerate(stories.values()):
        yield _eos_narrative("sind", start + offset, [s for _, s in sorted(sentences)])


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line, record) of a JSONL, CSV or parquet file."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        yield from iter_jsonl(path, SourceRecordError, bounded=False)
    elif suffix == ".csv":
        reader = csv_rows(path, SourceRecordError, bounded=False)
        for row in reader:
            yield reader.line_num, row
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        for index, row in enumerate(pq.read_table(path).to_pylist()):
            yield index + 1, row
    else:
        raise SourceRecordError(f"{path}: expected .jsonl, .csv or .parquet")


def _hub_texts(repo: str, config: str, split: str, column: str) -> Iterator[tuple[int, dict]]:
    from datasets import load_dataset

    for index, row in enumerate(load_dataset(repo, config, split=split, streaming=True)):
        yield index + 1, {column: row[column]}


def read_prose(path: str, domain: str, column: str, start: int = 0) -> Iterator[Narrative]:
    """CNN/DailyMail (``article``) or Wikipedia (``text``) from a local file or the hub.

    ``hf`` (or ``hf:CONFIG:SPLIT``) streams ``abisee/cnn_dailymail`` 1.0.0 test /
    ``wikimedia/wikipedia`` 20231101.en train through ``datasets``; a ``.txt`` file is one
    narrative.
    """
    dataset = PUBLISHED_NAMES[domain]
    if path == "hf" or path.startswith("hf:"):
        defaults = {
            "cnn_dailymail": ("abisee/cnn_dailymail", "1.0.0", "test"),
            "wikipedia": ("wikimedia/wikipedia", "20231101.en", "train"),
        }
        repo, config, split = defaults[domain]
        parts = path.split(":")[1:]
        config, split = (parts + [config, split][len(parts) :])[:2]
        rows = _hub_texts(repo, config, split, column)
        origin = f"{repo}:{config}:{split}"
    elif path.endswith(".txt"):
        yield _prose_narrative(dataset, start, read_utf8(path, SourceRecordError, bounded=False), domain)
        return
    else:
        rows, origin = _records(Path(path)), path
    for offset, (line, record) in enumerate(rows):
        text = record.get(column)
        if not isinstance(text, str) or not text.strip():
            raise SourceRecordError(f"{origin}:{line}: field {column!r} missing or empty")
        yield _prose_narrative(dataset, start + offset, text, domain)


def read_generic_jsonl(path: Path, start: int = 0) -> Iterator[Narrative]:
    """One narrative per record: ``sentences`` (a list) or ``text`` (split with Punkt, or on
    ``<eos>`` when present); optional ``id`` and ``domain``."""
    for offset, (line, record) in enumerate(_records(path)):
        dataset = str(record.get("domain") or "jsonl")
        ref_id = record.get("id", start + offset)
        if ref_id is None or not str(ref_id).strip():
            raise SourceRecordError(f"{path}:{line}: field 'id' is empty (leave it out to number the record)")
        if isinstance(record.get("sentences"), list) and record["sentences"]:
            if not all(isinstance(s, str) for s in record["sentences"]):
                raise SourceRecordError(f"{path}:{line}: field 'sentences' must be a list of strings")
            narrative = _eos_narrative(dataset, 0, record["sentences"])
            yield Narrative(dataset, str(ref_id), narrative.source_text, narrative.sentences)
        elif isinstance(record.get("text"), str) and record["text"].strip():
            yield _prose_narrative(dataset, ref_id, record["text"], canonical_domain(dataset))
        else:
            raise SourceRecordError(f"{path}:{line}: needs a non-empty 'sentences' list or 'text' string")


def read_source(source: str, files: list[str]) -> Iterator[Narrative]:
    """Narratives of every file of ``source``, numbered across files."""
    if source not in SOURCES:
        raise OptionError(f"source must be one of {SOURCES}, got {source!r}")
    count = 0
    seen: dict[tuple[str, str], tuple[str, str]] = {}  # (dataset, id_key(ref_id)) -> (file, ref_id)
    for file in files:
        if source == "rocstories":
            narratives = read_rocstories(Path(file), count)
        elif source == "sind":
            narratives = read_sind(Path(file), count)
        elif source == "cnn_dailymail":
            narratives = read_prose(file, "cnn_dailymail", "article", count)
        elif source == "wikipedia":
            narratives = read_prose(file, "wikipedia", "text", count)
        elif source == "jsonl":
            narratives = read_generic_jsonl(Path(file), count)
        else:
            text = read_utf8(file, SourceRecordError, bounded=False)
            narratives = iter([_prose_narrative("text", Path(file).stem, text, "text")])
        for narrative in narratives:
            key = (narrative.dataset, id_key(narrative.ref_id))
            if key in seen:  # its instances would share sample ids with the first one's
                raise SourceRecordError(_repeated_narrative(file, narrative, *seen[key]))
            seen[key] = (file, narrative.ref_id)
            count += 1
            yield narrative


def _repeated_narrative(file: str, narrative: Narrative, first_file: str, first_id: str) -> str:
    """Why a narrative's id repeats an earlier one's (equal, or equal once folded)."""
    where = f"{file}: narrative id {narrative.ref_id!r} ({narrative.dataset})"
    if first_id == narrative.ref_id:
        return f"{where} repeats one of {first_file}"
    return (
        f"{where} and {ascii(first_id)} of {first_file} are one id after Unicode normalisation and case "
        f"folding ({ascii(narrative.ref_id)}); give them ids that differ otherwise"
    )
