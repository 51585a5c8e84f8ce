"""Build infilling instances from narratives: choose spans, mask them, write the published schema.

Joining rule (the authors' generator, reproduced exactly on the published ROC and SIND rows):
``problem = " ".join(sentences[:i]) + " ______ " + " ".join(sentences[i + n:])`` and
``gold_answer = " ".join(sentences[i:i + n])``; sentences are the source split as
``text.split_sentences`` does (``<eos>`` for ROC/SIND, NLTK Punkt for prose), so newlines
inside a Punkt sentence survive while the spaces between sentences become single spaces.
A blank at the very start or end (``all-positions``) has no empty side: the blank is then
the problem's first or last token, with one space towards the context.

Span policies:
* ``paper-code``: the authors' rule: n in 1..min(3, S-2), start in [1, S-n-1], so there is
  always a sentence of context on both sides;
* ``all-positions``: n in 1..min(3, S-1), start in [0, S-n]: blanks may open or close the story.
By default one span per n is drawn at random (the authors' ``one_of_each``); ``per_narrative=K``
draws K distinct spans; ``all_spans`` takes every span. Each narrative draws from its own RNG,
seeded from (seed, domain, ref_id), so output does not depend on input order or batching.
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import NarrativeInfillError, OptionError
from .atomic import atomic_file
from .jsonl import csv_rows, iter_jsonl
from .records import BLANK, SCHEMA, blank_position, breakdown_fields, canonical_domain
from .text import count_tokens

POLICIES = ("paper-code", "all-positions")
MAX_SPAN = 3
OUTPUT_COLUMNS = (*SCHEMA, "position", "narrative_sentences", "gold_tokens")


class BuiltFileError(NarrativeInfillError, ValueError):
    """A built (or published) instance file that cannot be read, naming the file and row, or a
    build that has nothing to write."""


@dataclass(frozen=True)
class Narrative:
    """A source narrative, already split into sentences."""

    dataset: str  # the published domain string: roc, sind, abisee/cnn_dailymail, wikipedia, or a user's
    ref_id: str
    source_text: str
    sentences: tuple[str, ...]


@dataclass
class BuildReport:
    """What a build did, including what it skipped and why."""

    narratives: int = 0
    instances: int = 0
    skipped: Counter = field(default_factory=Counter)


def candidate_spans(sentence_count: int, policy: str) -> list[tuple[int, int]]:
    """Every (n, start) the policy allows for a narrative of ``sentence_count`` sentences."""
    if policy == "paper-code":
        return [
            (n, start)
            for n in range(1, min(MAX_SPAN, sentence_count - 2) + 1)
            for start in range(1, sentence_count - n)
        ]
    if policy == "all-positions":
        return [
            (n, start)
            for n in range(1, min(MAX_SPAN, sentence_count - 1) + 1)
            for start in range(0, sentence_count - n + 1)
        ]
    raise OptionError(f"policy must be one of {POLICIES}, got {policy!r}")


def choose_spans(
    narrative: Narrative, policy: str, seed: int, per_narrative: int | None = None, all_spans: bool = False
) -> list[tuple[int, int]]:
    candidates = candidate_spans(len(narrative.sentences), policy)
    if all_spans or not candidates:
        return candidates
    rng = random.Random(f"{seed}|{narrative.dataset}|{narrative.ref_id}")
    if per_narrative is None:  # one random start per span length, as the authors' generator
        by_n: dict[int, list[int]] = {}
        for n, start in candidates:
            by_n.setdefault(n, []).append(start)
        return [(n, rng.choice(starts)) for n, starts in sorted(by_n.items())]
    return sorted(rng.sample(candidates, min(per_narrative, len(candidates))))


def mask(sentences: tuple[str, ...] | list[str], n: int, start: int) -> tuple[str, str]:
    """(problem, gold_answer) with sentences[start:start+n] replaced by the blank."""
    left, right = " ".join(sentences[:start]), " ".join(sentences[start + n :])
    problem = " ".join(part for part in (left, BLANK, right) if part)
    return problem, " ".join(sentences[start : start + n])


def instance_record(narrative: Narrative, n: int, start: int) -> dict:
    problem, gold = mask(narrative.sentences, n, start)
    return {
        "dataset": narrative.dataset,
        "ref_id": narrative.ref_id,
        "source_text": narrative.source_text,
        "problem": problem,
        "gold_answer": gold,
        "unit": "sentence(s)",
        "n": n,
        "unit_idx": start,
        "position": blank_position(start, problem),
        "narrative_sentences": len(narrative.sentences),
        "gold_tokens": count_tokens(gold),
    }


def build(
    narratives: Iterable[Narrative],
    policy: str = "paper-code",
    seed: int = 0,
    per_narrative: int | None = None,
    all_spans: bool = False,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    max_tokens: int | None = None,
    report: BuildReport | None = None,
) -> Iterator[dict]:
    """Instance records for ``narratives``; what is filtered or too short is counted in ``report``."""
    if policy not in POLICIES:
        raise OptionError(f"policy must be one of {POLICIES}, got {policy!r}")
    report = report if report is not None else BuildReport()
    for narrative in narratives:
        report.narratives += 1
        count = len(narrative.sentences)
        if min_sentences is not None and count < min_sentences:
            report.skipped["fewer sentences than --min-sentences"] += 1
            continue
        if max_sentences is not None and count > max_sentences:
            report.skipped["more sentences than --max-sentences"] += 1
            continue
        if max_tokens is not None and count_tokens(narrative.source_text) > max_tokens:
            report.skipped["more tokens than --max-tokens"] += 1
            continue
        spans = choose_spans(narrative, policy, seed, per_narrative, all_spans)
        if not spans:
            report.skipped[f"too short for any span under {policy} ({count} sentences)"] += 1
            continue
        possible = {n for n, _ in candidate_spans(count, policy)}
        for n in range(1, MAX_SPAN + 1):
            if n not in possible:
                report.skipped[f"too short for n={n} under {policy}"] += 1
        for n, start in spans:
            report.instances += 1
            yield instance_record(narrative, n, start)


def write_records(records: Iterable[dict], out: Path, inputs: Iterable[Path | str] = ()) -> int:
    """Write CSV or JSONL (by extension) with a fixed column order and line ending: byte-stable.
    ``out`` may not be one of the ``inputs`` the records are read from."""
    count = 0
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise OptionError(f"output must end in .csv or .jsonl, got {out.name}")
    # Records are built lazily from the input: a bad input row surfaces mid-write, so the file
    # is written beside ``out`` and replaces it only once every record is written.
    with atomic_file(out, inputs) as partial, open(partial, "w", encoding="utf-8", newline="") as handle:
        if suffix == ".csv":
            writer = csv.DictWriter(handle, fieldnames=OUTPUT_COLUMNS, lineterminator="\n")
            writer.writeheader()
        for record in records:
            if suffix == ".csv":
                writer.writerow(record)
            else:
                handle.write(json.dumps({k: record[k] for k in OUTPUT_COLUMNS}, ensure_ascii=False) + "\n")
            count += 1
        if not count:  # an empty file would replace an earlier build, and no task can load it
            raise BuiltFileError(
                f"{out}: no instances to write (no narratives were read, or every one was too short); "
                "nothing written"
            )
    return count


def read_built(path: Path) -> list[dict]:
    if path.suffix.lower() == ".csv":
        return list(csv_rows(path, BuiltFileError))
    return [record for _, record in iter_jsonl(path, BuiltFileError)]


def _with_derived_fields(record: dict) -> dict:
    """Sentence count and position for files that lack them (the published CSV)."""
    if record.get("narrative_sentences") not in (None, "") and record.get("position"):
        return record
    derived = breakdown_fields(
        str(record["dataset"]), int(record["unit_idx"]), record["problem"], record["source_text"]
    )
    return {**record, "narrative_sentences": derived["narrative_sentences"], "position": derived["position"]}


def build_stats(records: list[dict]) -> str:
    """A Table-1-like summary: instances, narratives and mean sentences per domain, counts by n and
    position."""
    records = [_with_derived_fields(record) for record in records]
    by_domain: dict[str, list[dict]] = {}
    for record in records:
        by_domain.setdefault(canonical_domain(str(record["dataset"])), []).append(record)
    lines = [
        f"{'domain':<15}{'instances':>10}{'narratives':>11}{'sent/narr':>10}   n=1/2/3          "
        f"opening/middle/closing"
    ]
    for domain, rows in sorted(by_domain.items()):
        narratives = {}
        for row in rows:
            narratives[row["ref_id"]] = int(row.get("narrative_sentences") or 0)
        n_counts = Counter(int(row["n"]) for row in rows)
        positions = Counter(row.get("position", "?") for row in rows)
        mean_sentences = sum(narratives.values()) / len(narratives)
        lines.append(
            f"{domain:<15}{len(rows):>10}{len(narratives):>11}{mean_sentences:>10.1f}   "
            f"{n_counts[1]}/{n_counts[2]}/{n_counts[3]:<12}"
            f"{positions['opening']}/{positions['middle']}/{positions['closing']}"
        )
    total_positions = Counter(row.get("position", "?") for row in records)
    lines.append(
        f"{'all':<15}{len(records):>10}   positions: opening {total_positions['opening']}, "
        f"middle {total_positions['middle']}, closing {total_positions['closing']}"
    )
    return "\n".join(lines)
