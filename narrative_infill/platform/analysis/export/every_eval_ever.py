"""Every Eval Ever export: ``narrative-infill export eee LOGS -o DIR``.

Each log becomes an aggregate and a per-sample file of the Every Eval Ever schema
(https://github.com/evaleval/every_eval_ever) under ``DIR/data/narrative_infill/<developer>/<model>/``.
Hand-written: EEE's Inspect converter reads our dict-valued scores as 0.0, drops the grader, files each
setting as its own benchmark and crashes on NaN; EEE needs Python 3.12, so its validator checks these files in
CI (``.ci/every-eval-ever``). One aggregate result per score key (and QAvg's High%, under the rule asked
for, and Low%) with bounds, direction and, for the judge's keys, the judge models and prompt. A NaN in the
log (a failed judgement, a judge that never ran) is left out, its reason kept (``score_details.details``,
``additional_details``). The run's own sections (model, dataset, generation, judges): ``log_header``.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from statistics import fmean
from typing import Any

from ....data.atomic import atomic_file
from ....number_rules import none_if_nan
from ....scorers.judge.rubric import dimensions_of_variants
from ....scorers.judge.scorer import NOT_RUN_HINT
from ....task_options import setting_name
from ..report.load import newest_score_key
from .log_header import ExportError, generation_config, llm_scoring, model_info, source_data, string_details
from .metric_configs import MetricSpec, Share, is_best, shares_of, spec_for

#: The EEE schema version these files follow (every-eval-ever 0.3.0).
SCHEMA_VERSION = "0.3.0"
COLLECTION = "narrative_infill"
SCORERS = ("metrics", "judge")


def _path_component(value: str, location: str) -> str:
    """A model id part as EEE files it (``:`` becomes ``_``), refused when it cannot be a folder."""
    value = value.replace(":", "_")
    if not value or value in {".", "..", "data"} or any(c in value for c in '<>"\\|?*'):
        raise ExportError(f"{location}: model id part {value!r} cannot be an Every Eval Ever folder")
    return value


def _folder(model_id: str, location: str) -> PurePosixPath:
    """``data/narrative_infill/<developer>/<model>``: the developer is the id's prefix, the rest flattened."""
    parts = model_id.split("/")
    if len(parts) < 2 or not all(parts):
        raise ExportError(f"{location}: model {model_id!r} has no provider prefix (provider/model)")
    developer = _path_component(parts[0], location)
    model = "_".join(_path_component(p, location) for p in parts[1:])
    return PurePosixPath("data", COLLECTION, developer, model)


def _file_uuid(eval_id: str) -> str:
    """A UUID4-shaped name derived from the log's eval id: exporting a log again rewrites the same files."""
    return str(uuid.UUID(bytes=hashlib.sha256(eval_id.encode()).digest()[:16], version=4))


def _metric_config(key: str, spec: MetricSpec, scorer: str, scoring: dict | None) -> dict[str, Any]:
    config = {
        "evaluation_description": spec.description,
        "metric_id": f"narrative_infill.{key}",
        "metric_name": spec.name,
        "metric_kind": spec.kind,
        "metric_unit": spec.unit,
        "lower_is_better": spec.lower_is_better,
        "score_type": "continuous",
        "min_score": spec.min_score,
        "max_score": spec.max_score,
        "additional_details": {"scorer": f"narrative_infill/{scorer}", "aggregate": "mean over samples"},
    }
    if scorer == "judge" and scoring:
        config["llm_scoring"] = scoring
    return config


def _header_metrics(header, scorer_key: str, key: str):
    """The log header's metrics of ``scorer_key``'s ``key``. A log rescored with ``--action append``
    lists a scorer's keys twice (the empty entries of a judge that had no grader, then the new
    ones): the last entry that scored samples is the one the samples hold."""
    results = header.results.scores if header.results else []
    entries = [e for e in results if e.scorer == scorer_key and e.name == key]
    scored = [e for e in entries if e.scored_samples]
    return (scored or entries or [None])[-1]


def _value(score, key: str) -> float | None:
    """The sample's value of ``key``: a float, None when absent or NaN."""
    raw = (score.value or {}).get(key) if isinstance(score.value, dict) else None
    return None if raw is None or isinstance(raw, str) else none_if_nan(float(raw))


def _share_value(log, entry, scorer_key: str, key: str, share: Share) -> tuple[float | None, int]:
    """(share, samples counted): the log's own metric when it was computed under this rule, else
    counted here as Inspect's metrics count, over the reduced samples (epochs reduced) judged."""
    metric = entry.metrics.get(f"narrative_infill/{share.metric}")
    if metric is not None and (metric.params or {}) == share.params:
        return none_if_nan(metric.value), entry.scored_samples
    reduced = [sample for r in log.reductions or [] if r.scorer == scorer_key for sample in r.samples]
    values = [value for sample in reduced if (value := _value(sample, key)) is not None]
    return (fmean(map(share.counts, values)) if values else None), len(values)


def _absent_reason(sample, score, key: str) -> str:
    if sample.error:  # its first line: the traceback is in the log
        return f"the sample errored: {sample.error.message.partition(chr(10))[0]}"
    return str(score.explanation or score.reason or f"{key} is NaN in the log") if score else "not scored"


def _sample_record(sample, header, base: dict, result_id: str, key: str, score, spec, value) -> dict:
    reference = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    raw_input = sample.input if isinstance(sample.input, str) else "\n\n".join(m.text for m in sample.input)
    usage = (sample.model_usage or {}).get(header.eval.model)
    status = (score.metadata or {}).get("extraction_status", "unknown")
    record = {
        **base,
        "evaluation_result_id": result_id,
        "sample_id": str(sample.id),
        "sample_hash": hashlib.sha256((raw_input + reference).encode()).hexdigest(),
        "interaction_type": "single_turn",
        "input": {
            "raw": raw_input,
            "formatted": "\n\n".join(m.text for m in sample.messages if m.role != "assistant"),
            "reference": [reference],
        },
        "output": {"raw": [sample.output.completion if sample.output else ""]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": score.answer or "",
                "extraction_method": f"narrative_infill extraction ({status})",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": value, "is_correct": is_best(spec, value), "num_turns": 1},
        "metadata": {**(sample.metadata or {}), "epoch": sample.epoch},
    }
    if usage:
        record["token_usage"] = usage.model_dump(include={"input_tokens", "output_tokens", "total_tokens"})
    if sample.error:
        record["error"] = sample.error.message
    return record


@dataclass
class _Run:
    """One log being exported, and what every result of it shares."""

    log: Any
    location: str
    setting: str
    base: dict[str, Any]
    high_inclusive: bool
    results: list[dict] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    absent: dict[str, str] = field(default_factory=dict)

    def result(self, result_id: str, config: dict, score: float, details: dict, uncertainty: dict) -> dict:
        """One aggregate result of the run, in EEE's shape."""
        return {
            "evaluation_result_id": result_id,
            "evaluation_name": COLLECTION,
            "source_data": source_data(self.log),
            "evaluation_timestamp": self.log.eval.created,
            "metric_config": config,
            "score_details": {"score": score, "details": string_details(details), "uncertainty": uncertainty},
            "generation_config": generation_config(self.log),
        }


@dataclass(frozen=True)
class _Scorer:
    """One scorer's newest scores in a log: (sample, score or None) pairs and the score name."""

    name: str
    scores: list[tuple[Any, Any]]
    key: str  # the newest score name (``judge``, ``judge1``...)
    scoring: dict | None  # the judge's models and prompt (None for the metrics)
    dimensions: tuple[str, ...]  # the judge prompt variant's dimensions

    def score_keys(self) -> list[str]:
        """Every score key some sample holds, sorted."""
        return sorted({k for _, sc in self.scores if sc and isinstance(sc.value, dict) for k in sc.value})


def log_records(
    location: str, organization: str, relationship: str = "third_party", high_inclusive: bool = False
) -> tuple[dict, list[dict]]:
    """(aggregate document, per-sample records) of one log; High% under ``paper_protocol.is_high``'s rule."""
    from ..report.load import read_log

    log = read_log(location, ExportError, header_only=False)
    if log.status != "success" or not log.samples:
        raise ExportError(
            f"{location}: status {log.status} with {len(log.samples or [])} samples; export a finished run"
        )
    model_id = log.eval.model
    base = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{COLLECTION}/{model_id}/{log.eval.eval_id}",
        "model_id": model_id,
        "evaluation_name": COLLECTION,
    }
    run = _Run(log, location, setting_name(log.eval.metadata, log.eval.task), base, high_inclusive)
    for name in SCORERS:
        scorer = _scorer(run, name)
        for key in scorer.score_keys():
            _add_key(run, scorer, key)
    samples_path = _folder(model_id, location) / f"{_file_uuid(log.eval.eval_id)}_samples.jsonl"
    return _aggregate(run, organization, relationship, samples_path), run.records


def _scorer(run: _Run, name: str) -> _Scorer:
    """A scorer's newest scores in the run's samples; a scorer that never ran is noted as absent."""
    keyed = [(s, newest_score_key(s.scores or {}, name)) for s in run.log.samples]
    scores = [(s, (s.scores or {})[k] if k else None) for s, k in keyed]
    keys = {k for _, k in keyed if k}
    if not keys:
        hint = f" (no grader role was bound); add it with: {NOT_RUN_HINT}" if name == "judge" else ""
        run.absent[f"{run.setting}/{name}"] = f"not run: no sample has a {name} score{hint}"
        return _Scorer(name, [], "", None, ())
    judged = [sc for _, sc in scores if sc]
    variants = sorted({str(v) for sc in judged if (v := (sc.metadata or {}).get("judge_variant"))})
    scoring = llm_scoring(run.log, judged) if name == "judge" else None
    return _Scorer(name, scores, max(keys), scoring, dimensions_of_variants(variants))


def _add_key(run: _Run, scorer: _Scorer, key: str) -> None:
    """One score key's per-sample records, its aggregate result and its shares (High%, Low%)."""
    spec = spec_for(key, scorer.dimensions)
    if spec is None:
        raise ExportError(f"{run.location}: score key {scorer.name}.{key} has no known bounds or direction")
    result_id = f"{run.setting}/{scorer.name}/{key}"
    missing = {}
    for sample, score in scorer.scores:
        value = _value(score, key) if score else None
        if value is None:
            missing[f"{sample.id}@{sample.epoch}"] = _absent_reason(sample, score, key)
            continue
        run.records.append(_sample_record(sample, run.log, run.base, result_id, key, score, spec, value))
    entry = _header_metrics(run.log, scorer.key, key)
    mean = entry.metrics.get("mean") if entry else None
    if mean is None or mean.value is None or math.isnan(mean.value):
        everything = len(missing) == len(scorer.scores)
        run.absent[result_id] = "no sample has a value" if everything else "no mean in the log"
        return
    stderr = entry.metrics.get("stderr")
    uncertainty: dict[str, Any] = {"num_samples": entry.scored_samples}
    if stderr is not None and stderr.value is not None and math.isfinite(stderr.value):
        uncertainty["standard_error"] = {"value": stderr.value, "method": "analytic (Inspect stderr)"}
    details = {"absent_samples": missing or None, "absent_count": len(missing)}
    config = _metric_config(key, spec, scorer.name, scorer.scoring)
    run.results.append(run.result(result_id, config, mean.value, details, uncertainty))
    for share in shares_of(key, run.high_inclusive):
        value, counted = _share_value(run.log, entry, scorer.key, key, share)
        if value is None:
            run.absent[f"{result_id}/{share.suffix}"] = "no value in the log"
            continue
        config = _metric_config(f"{key}.{share.suffix}", share.spec, scorer.name, scorer.scoring)
        share_id = f"{result_id}/{share.suffix}"
        run.results.append(run.result(share_id, config, value, details, {"num_samples": counted}))


def _aggregate(run: _Run, organization: str, relationship: str, samples_path: PurePosixPath) -> dict:
    """The run's aggregate document: its source, library, model, results and where its samples are."""
    log = run.log
    packages = log.eval.packages or {}
    details = {
        "log": Path(run.location).name,
        "task": log.eval.task,
        "task_version": log.eval.task_version,
        "absent_results": run.absent or None,
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": run.base["evaluation_id"],
        "evaluation_timestamp": log.eval.created,
        "retrieved_timestamp": str(int(time.time())),
        "source_metadata": {
            "source_name": "Inspect AI eval log (narrative-infill export eee)",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": relationship,
            "additional_details": string_details(details),
        },
        "eval_library": {
            "name": "inspect_ai",
            "version": packages.get("inspect_ai", "unknown"),
            "additional_details": string_details({"narrative_infill": packages.get("narrative_infill")}),
        },
        "model_info": model_info(log.eval.model),
        "evaluation_results": run.results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": str(samples_path),
            "hash_algorithm": "sha256",
            "total_rows": len(run.records),
        },
    }


def export_eee(
    locations: list[str],
    out: Path,
    organization: str,
    relationship: str = "third_party",
    high_inclusive: bool = False,
) -> list[Path]:
    """Write every log's files under ``out``; all logs are read and checked before anything is written."""
    documents = [log_records(location, organization, relationship, high_inclusive) for location in locations]
    runs: dict[str, str] = {}  # two files of one run (a copy, a rescored copy) would write the same files
    for location, (aggregate, _) in zip(locations, documents):
        if (first := runs.setdefault(aggregate["evaluation_id"], location)) != location:
            raise ExportError(f"{location} and {first} hold one run ({aggregate['evaluation_id']}): pass one")
    written = []
    for aggregate, records in documents:
        samples_path = out / aggregate["detailed_evaluation_results"]["file_path"]
        text = "".join(json.dumps(r, allow_nan=False, ensure_ascii=False) + "\n" for r in records)
        aggregate["detailed_evaluation_results"]["checksum"] = hashlib.sha256(text.encode()).hexdigest()
        aggregate_path = samples_path.with_name(samples_path.name.replace("_samples.jsonl", ".json"))
        with atomic_file(samples_path) as temporary:
            temporary.write_text(text, encoding="utf-8")
        with atomic_file(aggregate_path) as temporary:
            temporary.write_text(
                json.dumps(aggregate, indent=2, allow_nan=False, ensure_ascii=False), encoding="utf-8"
            )
        written += [aggregate_path, samples_path]
    return written
