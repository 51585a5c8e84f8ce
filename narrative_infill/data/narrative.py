"""Which source narrative an instance was cut from: the cluster key of every error bar.

The benchmark masks each source narrative at several positions and span lengths, so the
instances of one narrative are correlated (a model that misreads a story misreads all its
blanks). Standard errors, intervals and paired tests therefore resample or cluster by
narrative, never by instance. The key is written into each sample's metadata under
``NARRATIVE`` (hub, demo and local data by the loader, imported generations by the importer),
and is derived the same way wherever a sample lacks it:

1. ``(dataset, ref_id)``, the dataset canonicalised (``roc`` and ``rocstories`` are one source),
   written ``rocstories-1234``: the prefix of the instance's sample id.
2. A sample id of the benchmark's form ``<domain>-<ref_id>-n<n>-i<unit_idx>``: its prefix.
3. For imported generations without either, the narrative text itself (the problem with the
   gold put into its blank, whitespace normalised), as a short hash: every masking of one story
   gives back that story.
4. Otherwise the sample is a narrative of its own (``own:<id>``): no worse than the unclustered
   error bar, and counted in a warning wherever it happens (``own_cluster``).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any

from ..number_rules import is_missing
from .records import canonical_domain
from .text import normalise_space

#: The sample metadata field naming an instance's source narrative.
NARRATIVE = "narrative"
#: The prefix of a key made for a sample no narrative could be found for.
OWN_CLUSTER = "own:"
_SAMPLE_ID = re.compile(r"^(?P<narrative>.+)-n\d+-i\d+$")
_BLANK_RUN = re.compile(r"_{3,}")


def narrative_key(dataset: Any, ref_id: Any) -> str:
    """The key of the narrative ``ref_id`` of ``dataset``: ``rocstories-1234``."""
    return f"{canonical_domain(str(dataset))}-{str(ref_id).strip()}"


def narrative_of_id(sample_id: Any) -> str | None:
    """The narrative a benchmark sample id names (``rocstories-1234-n2-i3`` -> ``rocstories-1234``),
    None for an id of another form."""
    match = _SAMPLE_ID.match(str(sample_id))
    return match.group("narrative") if match else None


def story_of(problem: str, gold: str) -> str:
    """The story a problem and its gold rebuild: the gold put into the blank, whitespace normalised."""
    return normalise_space(_BLANK_RUN.sub(lambda _: gold, problem, count=1))


def narrative_of_text(problem: str, gold: str) -> str:
    """The narrative a problem and its gold rebuild, as ``text-<hash>``: the story with the gold
    in its blank, so every masking of one story has one key."""
    return "text-" + hashlib.sha256(story_of(problem, gold).encode("utf-8")).hexdigest()[:16]


def own_cluster(sample_id: Any) -> str:
    """The key of a sample that is a narrative of its own."""
    return f"{OWN_CLUSTER}{sample_id}"


def is_own_cluster(key: str) -> bool:
    """Whether ``key`` was made for a sample no narrative could be found for."""
    return str(key).startswith(OWN_CLUSTER)


def narrative_of(metadata: Mapping[str, Any] | None, sample_id: Any) -> str:
    """A sample's narrative: its ``NARRATIVE`` field, else ``(dataset, ref_id)``, else its id's
    prefix, else the sample on its own (see the module's docstring)."""
    metadata = metadata or {}
    value = metadata.get(NARRATIVE)
    if not is_missing(value) and str(value).strip():
        return str(value)
    dataset, ref_id = metadata.get("dataset"), metadata.get("ref_id")
    if not is_missing(dataset) and not is_missing(ref_id) and str(dataset).strip() and str(ref_id).strip():
        return narrative_key(dataset, ref_id)
    return narrative_of_id(sample_id) or own_cluster(sample_id)


def record_narrative(record: Mapping[str, Any], problem: str, gold: str) -> str:
    """The narrative of an imported record: its ``(dataset, ref_id)`` when it has them, else the
    story its problem and gold rebuild."""
    found = narrative_of({k: record.get(k) for k in (NARRATIVE, "dataset", "ref_id")}, None)
    return narrative_of_text(problem, gold) if is_own_cluster(found) else found


#: Table 8's narrative length buckets: (label, the most sentences it holds), shortest first.
LENGTH_BUCKETS = (("short (<=5)", 5.0), ("medium (6-15)", 15.0), ("long (>15)", math.inf))


def length_bucket(sentences: Any) -> str | None:
    """Table 8's bucket of a narrative of ``sentences`` sentences, None when it is unknown."""
    if is_missing(sentences):
        return None
    count = float(sentences)
    return next(label for label, most in LENGTH_BUCKETS if count <= most)
