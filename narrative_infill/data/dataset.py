"""Loading the benchmark into Inspect samples: the hub, local files, or the bundled demo set."""

from __future__ import annotations

import csv
import hashlib
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from ..errors import NarrativeInfillError
from ..task_options import as_list
from .jsonl import csv_rows, iter_jsonl
from .limits import check_fields, check_parquet, check_parquet_footer, check_rows
from .narrative import NARRATIVE, narrative_key
from .records import POSITIONS, Instance, InvalidRecordError, canonical_domain, id_key, parse_record

logger = logging.getLogger(__name__)

HF_DATASET = "BridgeAI-Lab/Narrative-Infilling"
#: The revision of HF_DATASET the tasks read unless ``-T revision=`` says otherwise: the pin's one home.
#: UNVERIFIED: the hub was out of reach when this was written, so no commit could be read; "main" is
#: the branch, not a pin, and runs float with it until the maintainer puts the commit here
#: (docs/register.md says how). Every log records the commit the revision resolved to either way.
PUBLISHED_REVISION = "main"
DEMO = "demo"
SUBSET_FRACTION = {"10pct": 0.10}
SUBSET_SEED = 42


class DataSourceError(NarrativeInfillError, ValueError):
    """A data source that cannot be read, or filters that leave nothing to evaluate."""


@dataclass(frozen=True)
class LoadedBenchmark:
    origin: str
    instances: list[Instance]
    irregularities: Counter
    #: what exactly was read: a file's SHA-256, or the hub commit the revision resolved to
    identity: dict[str, str]

    def irregularity_summary(self) -> str:
        counts = ", ".join(f"{name}: {count}" for name, count in sorted(self.irregularities.items()))
        return f"{self.origin}: {len(self.instances)} instances; content irregularities ({counts})"


def _rows_from_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv_rows(path, DataSourceError)
    row = 0
    try:
        for row, record in enumerate(reader, start=1):
            check_rows(row, str(path), DataSourceError)
            if None in record:  # more cells than header columns
                raise InvalidRecordError(
                    str(path), row, record, "(row)", f"{len(record[None])} cells beyond the header's columns"
                )
            yield row, record
    except csv.Error as err:
        raise DataSourceError(f"{path}, row {row + 1}: unparseable CSV: {err}") from err


def _rows_from_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    return iter_jsonl(path, DataSourceError)


def _rows_from_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow.parquet as pq

    try:
        check_parquet_footer(path, DataSourceError)  # before pyarrow parses the footer
        parquet = pq.ParquetFile(path)
        check_parquet(parquet.metadata, path, DataSourceError)  # before any row group is read
        table = parquet.read()
    except DataSourceError:
        raise
    except Exception as err:  # pyarrow raises several types for corrupt files
        raise DataSourceError(f"{path}: unreadable parquet file: {err}") from err
    for row, record in enumerate(table.to_pylist(), start=1):
        check_fields(record, f"{path}, row {row}", DataSourceError)
        yield row, record


def revision_is_pinned(revision: str | None) -> bool:
    """A full commit hash names one immutable state of a hub repository; a branch or tag can move."""
    return revision is not None and re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def hub_revision(repo: str, revision: str | None) -> str | None:
    """The revision to read: the one asked for, else the pin for the published set (other repos: main)."""
    return revision or (PUBLISHED_REVISION if repo == HF_DATASET else None)


def _rows_from_hub(repo: str, revision: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    # Heavy: only when the hub is the source. The repository's snapshot at the revision (the hub
    # cache's, offline), read by datasets as a local folder: the snapshot's folder is named by the
    # commit it holds, which source_identity records.
    from datasets import load_dataset
    from huggingface_hub import snapshot_download

    if Path(repo).expanduser().is_dir():
        folder = str(Path(repo).expanduser())
    else:
        folder = snapshot_download(repo, repo_type="dataset", revision=hub_revision(repo, revision))
    split = load_dataset(folder, split="train")
    yield from enumerate(split, start=1)


def _demo_path() -> Path:
    return Path(str(resources.files(__package__) / "demo.jsonl"))


def read_records(
    data: str, revision: str | None = None
) -> tuple[str, Iterable[tuple[int, Mapping[str, Any]]]]:
    """Resolve ``data`` to (origin label, numbered raw records).

    ``demo``: the bundled demo set. ``hf`` or ``hf:REPO``: a Hugging Face dataset (the
    published one by default) at ``revision``. Anything else: a local CSV, JSONL or parquet
    file in the published schema.
    """
    if data == DEMO:
        path = _demo_path()
        return f"demo ({path.name})", _rows_from_jsonl(path)
    if data == "hf" or data.startswith("hf:"):
        repo = data[3:] or HF_DATASET
        label = f"hf:{repo}" + (f"@{revision}" if (revision := hub_revision(repo, revision)) else "")
        return label, _rows_from_hub(repo, revision)
    path = Path(data).expanduser()
    if not path.is_file():
        raise DataSourceError(
            f"data file not found: {path} (use 'demo', 'hf', 'hf:REPO' or a .csv/.jsonl/.parquet path)"
        )
    suffix = path.suffix.lower()
    readers = {
        ".csv": _rows_from_csv,
        ".jsonl": _rows_from_jsonl,
        ".json": _rows_from_jsonl,
        ".parquet": _rows_from_parquet,
    }
    if suffix not in readers:
        raise DataSourceError(f"{path}: unsupported file type '{suffix}' (expected .csv, .jsonl or .parquet)")
    return str(path), readers[suffix](path)


def load_benchmark(data: str = "hf", revision: str | None = None) -> LoadedBenchmark:
    """Validate every record of a source; raise on structural faults, count content irregularities.

    Parsed once per process and source: an eval-set of all nine tasks splits the full
    benchmark's sentences once, not nine times. A local file is re-read when it changes.
    """
    path = Path(data).expanduser()
    stat = path.stat() if path.is_file() else None
    stamp = (stat.st_mtime_ns, stat.st_size) if stat else None
    loaded = _load_benchmark(data, revision, stamp)
    if loaded.irregularities:
        logger.warning(loaded.irregularity_summary())
    return loaded


@lru_cache(maxsize=8)
def _load_benchmark(data: str, revision: str | None, stamp: tuple[int, int] | None) -> LoadedBenchmark:
    origin, rows = read_records(data, revision)
    instances: list[Instance] = []
    seen: dict[str, tuple[int, str]] = {}  # id_key(sample id) -> (row, sample id)
    for row, record in rows:
        instance = parse_record(record, origin, row)
        if (first := seen.get(id_key(instance.sample_id))) is not None:
            raise InvalidRecordError(
                origin,
                row,
                record,
                "(dataset, ref_id, n, unit_idx)",
                _repeated_id(instance.sample_id, *first),
            )
        seen[id_key(instance.sample_id)] = (row, instance.sample_id)
        instances.append(instance)
    if not instances:
        raise DataSourceError(f"{origin}: no records")
    irregularities = Counter(kind for instance in instances for kind in instance.irregularities)
    return LoadedBenchmark(origin, instances, irregularities, source_identity(data, revision))


def _repeated_id(sample_id: str, row: int, other: str) -> str:
    """Why an instance's id repeats row ``row``'s id ``other`` (equal, or equal once folded)."""
    if sample_id == other:
        return f"duplicates row {row} (sample id {sample_id})"
    return (
        f"duplicates row {row}: sample id {ascii(sample_id)} and {ascii(other)} are one id after "
        "Unicode normalisation and case folding; give them ids that differ otherwise"
    )


def _sha256(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _hub_commit(repo: str, revision: str | None) -> str | None:
    """The commit ``revision`` of a hub dataset resolves to: from the local hub cache (the
    snapshot folder is named by its commit), else by asking the hub; None when neither can say."""
    from huggingface_hub import HfApi, snapshot_download

    try:
        return Path(
            snapshot_download(repo, repo_type="dataset", revision=revision, local_files_only=True)
        ).name
    except Exception:  # not cached (huggingface_hub raises several types)
        pass
    try:
        return HfApi().dataset_info(repo, revision=revision).sha
    except Exception:  # offline or unknown
        return None


def source_identity(data: str, revision: str | None = None) -> dict[str, str]:
    """Which data a run read, for comparing runs: the SHA-256 of a local file (or of a local
    dataset folder's files), or the resolved hub commit of an ``hf`` source."""
    if data == DEMO:
        return {"source": "demo", "sha256": _sha256([_demo_path()])}
    if data == "hf" or data.startswith("hf:"):
        repo = data[3:] or HF_DATASET
        folder = Path(repo).expanduser()
        if folder.is_dir():
            files = sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts)
            return {"source": f"hf:{folder}", "sha256": _sha256(files)}
        revision = hub_revision(repo, revision)
        commit = _hub_commit(repo, revision)
        return {"source": f"hf:{repo}", "revision": revision or "main", "commit": commit or "unresolved"}
    return {"source": str(Path(data).expanduser()), "sha256": _sha256([Path(data).expanduser()])}


def stratified_subset(instances: Sequence[Instance], name: str) -> list[Instance]:
    """The authors' robustness subset: a share of each (domain, unit_idx) stratum, at least one.

    Like ``make_subset.sh``: stratify on (dataset, unit_idx), sample 10% of each stratum
    (rounded half up, minimum 1) with seed 42. Returned in source order.
    """
    if name not in SUBSET_FRACTION:
        raise DataSourceError(f"unknown subset {name!r}; available: {', '.join(SUBSET_FRACTION)}")
    import pandas as pd

    frame = pd.DataFrame(
        {"domain": [i.domain for i in instances], "unit_idx": [i.unit_idx for i in instances]}
    )
    picked: list[int] = []
    for _, stratum in frame.groupby(["domain", "unit_idx"], sort=True):
        size = max(1, math.floor(len(stratum) * SUBSET_FRACTION[name] + 0.5))
        picked.extend(stratum.sample(n=size, random_state=SUBSET_SEED).index.tolist())
    return [instances[i] for i in sorted(picked)]


def filter_instances(
    instances: Sequence[Instance],
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
) -> list[Instance]:
    """Keep instances matching every given filter (lists mean "any of")."""
    domains = as_list(domain)
    if domains is not None:
        domains = [canonical_domain(str(d)) for d in domains]
        present = sorted({i.domain for i in instances})
        absent = [d for d in domains if d not in present]
        if absent:  # a mistyped one of several would silently leave its domain out
            raise DataSourceError(
                f"domain filter: {absent} not in the data; its domains: {', '.join(present)}"
            )
    spans = as_list(n)
    if spans is not None:
        try:
            spans = [int(v) for v in spans]
        except ValueError as err:
            raise DataSourceError(f"n filter: expected integers 1-3, got {n!r}") from err
        if not set(spans) <= {1, 2, 3}:
            raise DataSourceError(f"n filter: expected integers 1-3, got {n!r}")
    for name, bound in (("min_sentences", min_sentences), ("max_sentences", max_sentences)):
        if bound is not None and type(bound) is not int:
            raise DataSourceError(f"{name} filter: expected a whole number of sentences, got {bound!r}")
    positions = as_list(position)
    if positions is not None:
        unknown = [p for p in positions if p not in POSITIONS]
        if unknown:
            raise DataSourceError(f"position filter: unknown {unknown}; choose from {', '.join(POSITIONS)}")

    def keep(i: Instance) -> bool:
        return (
            (domains is None or i.domain in domains)
            and (spans is None or i.n in spans)
            and (positions is None or i.position in positions)
            and (min_sentences is None or i.narrative_sentences >= min_sentences)
            and (max_sentences is None or i.narrative_sentences <= max_sentences)
        )

    return [i for i in instances if keep(i)]


def to_sample(instance: Instance) -> Sample:
    """The instance as an Inspect sample; its metadata names its source narrative (``NARRATIVE``),
    the cluster of the scorers' error bars."""
    return Sample(
        id=instance.sample_id,
        input=instance.problem,
        target=instance.gold_answer,
        metadata={**instance.metadata(), NARRATIVE: narrative_key(instance.dataset, instance.ref_id)},
    )


def infill_dataset(
    data: str = "hf", revision: str | None = None, subset: str | None = None, **filters: Any
) -> MemoryDataset:
    """The benchmark as an Inspect dataset: subset first (the same set whatever the filters), then
    ``filters``."""
    loaded = load_benchmark(data, revision)
    instances = loaded.instances
    if subset:
        instances = stratified_subset(instances, subset)
    instances = filter_instances(instances, **filters)
    if not instances:
        described = ", ".join(f"{k}={v!r}" for k, v in filters.items() if v is not None)
        raise DataSourceError(
            f"{loaded.origin}: no instances left after filters ({described}; subset={subset!r})"
        )
    return MemoryDataset([to_sample(i) for i in instances], name="narrative_infill", location=loaded.origin)
