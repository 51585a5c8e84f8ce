"""The board's reference rows and copy marks: the null baselines on the entries' own data.

For each (track, metric signature, data) on the board, the ``empty``, ``neighbour`` and
``context`` baselines (``data.baselines``, the rules ``--model baseline/<rule>`` answers by)
answer the very instances the entries list, read from the data the entries ran on (their
logged dataset identity: the demo set, a local file with the logged SHA-256, or the hub only
when they ran on the hub). Each answer is sent in the format the setting's prompt asks for,
extracted with the signature's extraction rule, and scored with its backbones, so a reference
row is what that baseline would have scored as an entry. Reference rows are never ranked.

Each entry gets:
* ``context_atavg``: the context baseline's AtAvg on the entry's own samples, and ``vs_context``:
  "above" or ``NOT_ABOVE`` (its AtAvg is not above it);
* ``copied``: its share of answers whose ``context_copy`` is above ``CONTEXT_COPY_THRESHOLD``
  (from the submission's claims; None for files from before the claim existed);
* ``copy_flag`` on a ranked track when that share is above ``COPIED_SHARE_LIMIT``: the entry is
  then left unranked, with the rule stated (``COPY_RULE``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...data.baselines import baseline_answer
from ...definitions import (
    ATAVG_COLUMN,
    CONTEXT_COPY_THRESHOLD,
    COPIED_SHARE_LIMIT,
    SETTINGS,
    NarrativeInfillError,
)
from ...extraction import DEFAULT_EXTRACTION
from .protocol import RANKED_TRACKS
from .ranking import interval
from .verify import load_document

REFERENCE_RULES = ("empty", "neighbour", "context")
NOT_ABOVE = "not above the context baseline"
COPY_RULE = (
    f"not ranked: more than {COPIED_SHARE_LIMIT:.0%} of its answers copy the story "
    f"(context_copy > {CONTEXT_COPY_THRESHOLD:g})"
)
COPY_UNKNOWN_RULE = (
    "not ranked: its copy share is unknown (a scored sample of its logs has no context_copy; "
    "rescore them with narrative_infill/metrics)"
)
#: The board's statement of its copy and baseline marks.
COPY_NOTE = (
    f"Reference rows (baseline/empty, baseline/neighbour, baseline/context) answer the entries' own "
    f"instances by the null baselines' rules; never ranked. copied%: answers whose context_copy (share "
    f"of their words in runs of 3+ copied from the story) is above {CONTEXT_COPY_THRESHOLD:g}; on a ranked "
    f"track an entry above {COPIED_SHARE_LIMIT:.0%}, or one whose share is unknown, is "
    f"{COPY_RULE.split(': ')[0]}. vs context: whether the "
    "entry's AtAvg is above the context baseline's on the same instances."
)
_EXTRACTION = re.compile(r"\| extraction=(\S+)\s*$")


class ReferenceDataError(NarrativeInfillError, ValueError):
    """The data an entry ran on cannot be read here."""


def entry_instances(document: dict[str, Any]) -> dict[str, Any]:
    """The instances of the data the entry ran on, by sample id: never another source."""
    from ...data.dataset import DEMO, load_benchmark, source_identity

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
    from ...prompts import prompt_template
    from ...solvers.baseline_model import answer_format

    template = prompt_template(setting, variant)
    return answer_format(f"{template.system}\n{template.user}", answer)


def _baseline_scores(documents: list[dict], signature: str) -> dict[str, dict[tuple[str, str], float]]:
    """Per rule, the AtAvg of its answer to each (setting, sample id) the documents list."""
    from ...extraction import extract_with
    from ...scorers.metrics.pairs import score_pairs
    from .rescore import logged_backbones

    instances = entry_instances(documents[0])
    variants = documents[0]["provenance"].get("prompt_variants") or ["paper"]
    match = _EXTRACTION.search(signature)
    extraction = match.group(1) if match else DEFAULT_EXTRACTION
    keys = sorted({(s, str(row[0])) for d in documents for s, rows in d["samples"].items() for row in rows})
    missing = [key for key in keys if key[1] not in instances]
    if missing:
        raise ReferenceDataError(
            f"{len(missing)} sample ids not in the entries' data (first: {missing[0][1]})"
        )
    pairs = []
    for rule in REFERENCE_RULES:
        for setting, sample_id in keys:
            instance = instances[sample_id]
            answer = baseline_answer(rule, instance.problem, instance.n, gold=lambda: "")
            sent = _sent(setting, variants[0], answer)
            pairs.append((extract_with(extraction, sent, instance.problem).text, instance.gold_answer))
    results = score_pairs([a for a, _ in pairs], [g for _, g in pairs], logged_backbones(signature))
    atavg = iter(r.values["atavg"] for r in results)
    return {rule: {key: next(atavg) for key in keys} for rule in REFERENCE_RULES}


def _reference_row(rule: str, track: str, signature: str, scores: dict) -> dict[str, Any]:
    """A baseline's row: never ranked, its AtAvg with the interval the entries get."""
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
        "settings": {
            s: {"atavg": float(np.mean([v for (t, _), v in scores.items() if t == s])), "qavg": None}
            for s in settings
        },
    }


def _copied_share(document: dict[str, Any]) -> float | None:
    """The entry's share of copied answers over its settings, weighted by their samples; None
    when a setting's is unknown (a part would let the unknown settings hide the copies)."""
    shares = [(claims["rates"].get("copied"), claims["n"]) for claims in document["settings"].values()]
    if not shares or any(share is None for share, _ in shares):
        return None
    return sum(s * n for s, n in shares) / sum(n for _, n in shares)


def _mark(row: dict, document: dict, context: dict[tuple[str, str], float] | None) -> None:
    """The entry's copy share and flag, and where it stands against the context baseline."""
    row["copied"] = _copied_share(document)
    if row["track"] in RANKED_TRACKS and row["copied"] is None:
        row["copy_flag"] = COPY_UNKNOWN_RULE  # else deleting the key would dodge the limit
    elif row["track"] in RANKED_TRACKS and row["copied"] > COPIED_SHARE_LIMIT:
        row["copy_flag"] = COPY_RULE
    if context is None:
        return
    own = [
        (s, str(r[0]), r[ATAVG_COLUMN])
        for s, rows in document["samples"].items()
        for r in rows
        if r[ATAVG_COLUMN] is not None
    ]
    own_mean = float(np.mean([value for _, _, value in own])) if own else None
    row["context_atavg"] = float(np.mean([context[(s, i)] for s, i, _ in own])) if own else None
    if own_mean is not None and row["context_atavg"] is not None:
        row["vs_context"] = "above" if own_mean > row["context_atavg"] else NOT_ABOVE


def _data_key(document: dict) -> str:
    dataset = document["provenance"].get("dataset") or {}
    return hashlib.sha256(json.dumps(dataset, sort_keys=True).encode()).hexdigest()


def reference_rows(rows: list[dict[str, Any]], submissions: Path) -> list[dict[str, Any]]:
    """Mark every entry (copy share, flag, against the context baseline) and return the reference
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
            _mark(member, documents[member["file"]], scores["context"] if scores else None)
        for rule in REFERENCE_RULES:
            if scores:
                out.append(_reference_row(rule, track, signature, scores[rule]))
            else:
                out.append(_reference_row(rule, track, signature, {}) | {"unavailable": reason})
    return out
