"""The board's reference rows and entry marks: the null rules on the entries' own data.

For each (track, metric signature, data) on the board, every null rule (``data.baselines``'
``NULL_RULES``, the rules ``--model baseline/<rule>`` answers by) answers the very instances the
entries list, read from the data the entries ran on (their logged dataset identity: the demo set,
a local file with the logged SHA-256, or the hub only when they ran on the hub). Each answer is
sent in the format the setting's prompt asks for, extracted with the signature's extraction rule,
scored with its backbones and read by the three guards, so a reference row is what that rule
would have scored as an entry. Reference rows are never ranked.

Each entry gets (the rules: ``analysis.floor``):
* ``copied``, ``reused`` and ``not_fluent``: its shares of answers over the copy, story-reuse and
  fluency guards (from the submission's claims, which ``verify`` recomputes from the logs; None for
  files from before a claim existed, or built where the fluency check could not run);
* ``ignored``: its share of stories whose blanks its answers ignore (``analysis.blank_guard``);
* ``floor_atavg`` and ``floor_rule``: the best AtAvg of a null rule the story guards do not flag, on
  the entry's own samples, and ``vs_floor``: above it (its paired difference from that rule
  significant, ``analysis.floor``) or ``NOT_ABOVE``;
* ``unranked`` on a ranked track: why it is shown but not ranked (a share over the entry limit or
  unknown, or an AtAvg not above the floor).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from ....copy_guards import (
    CONTEXT_COPY_THRESHOLD,
    COPIED_SHARE_LIMIT,
    STORY_REUSE_THRESHOLD,
    is_copied,
    is_story_reuse,
)
from ....data.baselines import NULL_RULES, baseline_answer
from ....errors import NarrativeInfillError
from ....extraction import DEFAULT_EXTRACTION
from ....paper_protocol import PAPER_PROMPT_VARIANT, SETTINGS
from ....scorers.signature import MetricsSignature
from ..blank_guard import ignored_share, story_key
from ..floor import (
    ABOVE,
    BLANK_RULE,
    FLOOR_NOTE,
    FLOOR_RULE,
    IN_FLOOR,
    NOT_ABOVE,
    floor_mark,
    floor_of,
    floor_test,
    guard_reason,
)
from ..fluency import FLUENCY_THRESHOLD, fluency_or_none, is_not_fluent
from .build import ATAVG_COLUMN
from .protocol import RANKED_TRACKS
from .ranking import interval, narrative
from .verify import NOT_VERIFIED, load_document

#: A board entry whose metrics its machine could not re-score is shown, never ranked: its AtAvg
#: rests on the file's word (a forger naming backbones absent there could inflate BERTScore and Sem-F1).
UNVERIFIED_RULE = f"not ranked: {NOT_VERIFIED} (the board's machine could not re-score its metrics)"

REFERENCE_RULES = NULL_RULES
#: The board's statement of its guard and floor marks.
COPY_NOTE = (
    f"Reference rows (baseline/<rule>: every null rule, {', '.join(NULL_RULES)}) answer the entries' own "
    f"instances; never ranked. copied%: answers whose context_copy (share of their words in runs of 3+ "
    f"copied from the story) is above {CONTEXT_COPY_THRESHOLD:g}; reused%: answers whose story_reuse "
    f"(share of their content words found in the story, in any order) is above {STORY_REUSE_THRESHOLD:g}; "
    f"not fluent%: answers whose order_gain (nats a word their own order saves the packaged SmolLM2 "
    f"over a shuffle of the same words) is below {FLUENCY_THRESHOLD:g}. "
    f"blank ignored%: stories whose blanks (apart) get answers alike beyond the story's own words. "
    f"floor: the best AtAvg of a null rule, story-reading ones included, no story guard flags (more "
    f"than {COPIED_SHARE_LIMIT:.0%} of its answers) on the entry's own instances; above it means a "
    "significant one-sided clustered paired difference, and the floor is a lower bound tuned text can "
    "pass. On a ranked track an entry over any limit, with a share unknown (fluency unread where its "
    "model is missing), or not above the floor is shown but not ranked, with the reason. AtAvg alone "
    "can be won by fluent filler with the story's words: the guards, and QAvg (the judge), read what "
    f"it cannot. {FLOOR_NOTE}"
)
#: A null rule's answer to one instance: (AtAvg, copied, story reuse, not fluent: None where the
#: fluency check cannot run here, and what the blank guard reads: story, problem, gold, answer).
Answered = tuple[float, bool, bool, bool | None, tuple[str, str, str, str]]
__all__ = ["ABOVE", "COPY_NOTE", "FLOOR_RULE", "NOT_ABOVE", "REFERENCE_RULES", "reference_rows"]


class ReferenceDataError(NarrativeInfillError, ValueError):
    """The data an entry ran on cannot be read here."""


def entry_instances(document: dict[str, Any]) -> dict[str, Any]:
    """The instances of the data the entry ran on, by sample id: never another source."""
    from ....data.dataset import DEMO, load_benchmark, source_identity

    dataset = document["provenance"].get("dataset") or {}
    source = str(dataset.get("source") or "")
    if source == DEMO:
        data, revision = DEMO, None
    elif source.startswith("hf:"):
        data, revision = source, dataset.get("commit") if dataset.get("commit") != "unresolved" else None
    elif source and Path(source).is_file():
        if dataset.get("sha256") != source_identity(source)["sha256"]:
            raise ReferenceDataError(f"{source} has changed since the entries ran on it (SHA-256 differs)")
        data, revision = source, None
    else:
        raise ReferenceDataError(f"the entries' data ({source or 'not recorded'}) is not readable here")
    return {i.sample_id: i for i in load_benchmark(data, revision).instances}


def _sent(setting: str, variant: str, answer: str) -> str:
    """``answer`` as the provider sends it in ``setting``: tagged when the prompt asks for tags."""
    from ....prompts import prompt_template
    from ....solvers.baseline_model import answer_format

    template = prompt_template(setting, variant)
    return answer_format(f"{template.system}\n{template.user}", answer)


def rule_scores(instances: dict, signature: str, variant: str) -> dict[str, dict]:
    """Per null rule, its answer to each instance: ``instances`` maps a key to (setting, sample id,
    problem, n, gold); each rule's answer is sent as the setting's prompt asks, extracted with the
    signature's extraction and scored with its backbones, and read by the guards as the metrics
    scorer reads an answer (``Answered``). The report and the board both compute the floor here."""
    from ....extraction import extract_with
    from ....scorers.metrics.copying import context_copy
    from ....scorers.metrics.reuse import story_reuse
    from .cache import scored_pairs
    from .rescore import logged_backbones

    extraction = MetricsSignature.parse(signature).extraction or DEFAULT_EXTRACTION
    pairs, guards = [], []
    read_fluency = fluency_or_none()
    for rule in REFERENCE_RULES:
        for setting, sample_id, problem, n, gold in instances.values():
            answer = baseline_answer(rule, problem, n, gold=lambda: "")
            extracted = extract_with(extraction, _sent(setting, variant, answer), problem).text
            pairs.append((extracted, gold))
            story = f"{setting}|{story_key(sample_id, problem)}"
            guards.append(
                (
                    bool(is_copied(context_copy(extracted, problem))),
                    bool(is_story_reuse(story_reuse(extracted, problem))),
                    bool(is_not_fluent(read_fluency(extracted))) if read_fluency else None,
                    (story, problem, gold, extracted),
                )
            )
    answers, golds = [a for a, _ in pairs], [g for _, g in pairs]
    results = scored_pairs(answers, golds, signature, logged_backbones(signature))
    answered = iter((r["atavg"], *guard) for r, guard in zip(results, guards))
    return {rule: {key: next(answered) for key in instances} for rule in REFERENCE_RULES}


def _baseline_scores(documents: list[dict], signature: str) -> dict[str, dict[tuple[str, str], Answered]]:
    """Per rule, its answer to each (setting, sample id) the documents list (``rule_scores``)."""
    instances = entry_instances(documents[0])
    variants = documents[0]["provenance"].get("prompt_variants") or [PAPER_PROMPT_VARIANT]
    keys = sorted({(s, str(row[0])) for d in documents for s, rows in d["samples"].items() for row in rows})
    missing = [key for key in keys if key[1] not in instances]
    if missing:
        raise ReferenceDataError(
            f"{len(missing)} sample ids not in the entries' data (first: {missing[0][1]})"
        )
    chosen = {(s, i): (s, i, instances[i].problem, instances[i].n, instances[i].gold_answer) for s, i in keys}
    return rule_scores(chosen, signature, variants[0])


def rule_shares(answered: dict[tuple[str, str], Answered]) -> tuple[float, float, float | None, float]:
    """(copied, story-reuse, not-fluent share, share of stories whose blanks it ignores) of a rule's
    answers (not fluent None where unknown)."""
    flags = [flag for _, _, _, flag, _ in answered.values()]
    return (
        float(np.mean([copied for _, copied, _, _, _ in answered.values()])),
        float(np.mean([reused for _, _, reused, _, _ in answered.values()])),
        None if None in flags else sum(map(bool, flags)) / len(flags),
        ignored_share(read for *_, read in answered.values()),
    )


def _rule_mark(shares: tuple) -> str:
    """A reference row's mark: the story guard that flags it, else kept for the floor (with the blank
    guard's flag, which does not leave a rule out of the floor: ``analysis.floor``)."""
    reason = guard_reason(*shares)
    if reason == BLANK_RULE:
        return f"{IN_FLOOR}; as an entry {BLANK_RULE}"
    return reason or IN_FLOOR


def _reference_row(rule: str, track: str, signature: str, answered: dict) -> dict[str, Any]:
    """A baseline's row: never ranked, its AtAvg with the interval the entries get and its guard shares."""
    scores = {key: atavg for key, (atavg, *_) in answered.items()}
    settings = sorted({s for s, _ in scores}, key=lambda s: SETTINGS.index(s) if s in SETTINGS else 99)
    return {
        "file": None,
        "track": track,
        "model": f"baseline/{rule}",
        "submitter": None,
        "judge": "not judged",
        "signature": signature,
        "badge": "baseline",
        "verified": False,
        "baseline": True,
        "high": None,
        "low": None,
        "qavg": None,
        "n": len(scores),
        "atavg": interval({key: [value] for key, value in scores.items()}) if scores else None,
        "copied": rule_shares(answered)[0] if answered else None,
        "reused": rule_shares(answered)[1] if answered else None,
        "not_fluent": rule_shares(answered)[2] if answered else None,
        "ignored": rule_shares(answered)[3] if answered else None,
        "vs_floor": _rule_mark(rule_shares(answered)) if answered else None,
        "settings": {
            s: {"atavg": float(np.mean([v for (t, _), v in scores.items() if t == s])), "qavg": None}
            for s in settings
        },
    }


def _claimed_share(document: dict[str, Any], rate: str) -> float | None:
    """The entry's claimed share ``rate`` over its settings, weighted by their samples; None when a
    setting's is unknown (a part would let the unknown settings hide the guarded answers)."""
    shares = [(claims["rates"].get(rate), claims["n"]) for claims in document["settings"].values()]
    if not shares or any(share is None for share, _ in shares):
        return None
    return sum(s * n for s, n in shares) / sum(n for _, n in shares)


def _floor(own: dict[tuple[str, str], float], scores: dict[str, dict[tuple[str, str], Answered]]):
    """(the floor (rule, AtAvg), the entry's paired test against that rule) on the entry's own
    (setting, sample id) keys and per-key AtAvg (``analysis.floor``)."""
    figures = {}
    for name, answered in scores.items():
        mine = {key: answered[key] for key in own}
        figures[name] = (float(np.mean([atavg for atavg, *_ in mine.values()])), *rule_shares(mine)[:3])
    floor = floor_of(figures)
    if floor is None:
        return None, None
    best = scores[floor[0]]
    test = floor_test(list(own.values()), [best[key][0] for key in own], [narrative(i) for _, i in own])
    return floor, test


def _mark(row: dict, document: dict, scores: dict[str, dict[tuple[str, str], Answered]] | None) -> None:
    """The entry's guard shares, where it stands against the floor, and on a ranked track why it is
    not ranked (the first rule it fails)."""
    row["copied"], row["reused"] = _claimed_share(document, "copied"), _claimed_share(document, "reused")
    # the share is read where the check runs: where the board's machine cannot, it is unknown here
    # (a claimed share would rank an entry on a reading the board could not check)
    row["not_fluent"] = _claimed_share(document, "not_fluent") if fluency_or_none() else None
    unverified = row["badge"].startswith(NOT_VERIFIED)
    row["ignored"] = _claimed_share(document, "ignored")
    shares = (row["copied"], row["reused"], row["not_fluent"], row["ignored"])
    reason = UNVERIFIED_RULE if unverified else guard_reason(*shares)
    epochs: dict[tuple[str, str], list[float]] = {}
    for setting, rows in document["samples"].items():
        for r in rows:
            if r[ATAVG_COLUMN] is not None:
                epochs.setdefault((setting, str(r[0])), []).append(r[ATAVG_COLUMN])
    own = {key: float(np.mean(values)) for key, values in epochs.items()}
    if scores is None:
        row["vs_floor"] = "floor unknown: the reference rows could not be computed here"
        reason = reason or f"not ranked: {row['vs_floor']}"
    elif own:
        floor, test = _floor(own, scores)
        row["floor_rule"] = f"baseline/{floor[0]}" if floor else None
        row["floor_atavg"] = floor[1] if floor else None
        row["vs_floor"] = floor_mark(test, floor)
        if not row["vs_floor"].startswith(ABOVE):
            reason = reason or FLOOR_RULE
    if row["track"] in RANKED_TRACKS and reason:
        row["unranked"] = reason


def _data_key(document: dict) -> str:
    dataset = document["provenance"].get("dataset") or {}
    return hashlib.sha256(json.dumps(dataset, sort_keys=True).encode()).hexdigest()


def reference_rows(rows: list[dict[str, Any]], submissions: Path) -> list[dict[str, Any]]:
    """Mark every entry (guard shares, the floor, why it is not ranked) and return the reference
    rows, per (track, metric signature, data); rows whose data cannot be read here say why."""
    documents = {row["file"]: load_document(Path(submissions) / row["file"]) for row in rows}
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["track"], row["signature"], _data_key(documents[row["file"]])), []).append(row)
    out = []
    for (track, signature, _), members in sorted(groups.items()):
        try:
            scores = _baseline_scores([documents[m["file"]] for m in members], signature)
        except Exception as err:  # data or backbones out of reach: the rows say so
            scores, reason = None, f"{type(err).__name__}: {err}"
        for member in members:
            _mark(member, documents[member["file"]], scores)
        for rule in REFERENCE_RULES:
            if scores:
                out.append(_reference_row(rule, track, signature, scores[rule]))
            else:
                out.append(_reference_row(rule, track, signature, {}) | {"unavailable": reason})
    return out
