"""What an Every Eval Ever document says about the run, read from the Inspect log: the model, the
dataset, the generation config (with the task's arguments) and the judges with their prompt.

Kept apart from ``eee`` (which turns the log's scores into results and per-sample records): these
sections describe a run, not its scores, and are the same for every result of a log.
"""

from __future__ import annotations

import json
from typing import Any

from ....errors import NarrativeInfillError
from ....paper_protocol import PAPER_JUDGE_VARIANT
from ....scorers.judge.rubric import judge_variant
from ....task_options import setting_name
from ..submission.protocol import scorer_options


class ExportError(NarrativeInfillError, ValueError):
    """A log that cannot be exported as it is."""


def string_details(mapping: dict[str, Any]) -> dict[str, str]:
    """EEE's ``additional_details``: strings only (JSON for anything else), nothing empty."""
    return {
        k: v if isinstance(v, str) else json.dumps(v, sort_keys=True)
        for k, v in mapping.items()
        if v is not None
    }


def model_info(model_id: str, **extra: Any) -> dict[str, Any]:
    # Who deployed the model and whether its weights are open is not in the log: said so, not guessed.
    return {
        "name": model_id,
        "id": model_id,
        "developer": model_id.split("/")[0],
        "additional_details": {"deployment_type": "unknown", "model_availability": "unknown", **extra},
    }


def source_data(header) -> dict[str, Any]:
    identity = dict((header.eval.metadata or {}).get("dataset_identity") or {})
    samples = identity.get("instances")
    source = str(identity.get("source", header.eval.dataset.name))
    details = string_details({**identity, "task_args": header.eval.task_args})
    if source.startswith("hf:") and "commit" in identity:
        return {
            "dataset_name": "Narrative-Infilling",
            "source_type": "hf_dataset",
            "hf_repo": source[3:],
            "hf_split": "train",
            "samples_number": samples,
            "additional_details": details,
        }
    return {
        "dataset_name": f"narrative_infill {source}",
        "source_type": "other",
        "additional_details": details,
    }


def llm_scoring(header, judged: list) -> dict[str, Any] | None:
    """Who judged and with which prompt: from the samples' judge scores (the judges that really ran)."""
    judges: dict[str, str] = {}
    variants = set()
    for score in judged:
        meta = score.metadata or {}
        variants.add(meta.get("judge_variant", PAPER_JUDGE_VARIANT))
        for name, verdict in (meta.get("judges") or {}).items():
            judges.setdefault(name, verdict.get("model", "unknown"))
    if not judges:
        return None
    if len(variants) > 1:
        raise ExportError(f"{header.location}: judge prompts {sorted(variants)} in one log")
    [variant] = variants
    prompt = judge_variant(variant).prompt
    temperature = (scorer_options(header, "judge") or {}).get("temperature", 0.0)  # the newest judging's
    return {
        "judges": [
            {"model_info": model_info(model, role=name), "temperature": temperature}
            for name, model in sorted(judges.items())
        ],
        "input_prompt": f"{prompt.system}\n\n{prompt.user_template}",
        "aggregation_method": "average" if len(judges) > 1 else None,
        "additional_details": {"judge_variant": variant},
    }


def generation_config(header) -> dict[str, Any]:
    config = header.plan.config  # the GenerateConfig the run used: the task's, under the user's
    args = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "eval_plan": {
            "name": "narrative_infill",
            "steps": [json.dumps(step.model_dump(), sort_keys=True) for step in header.plan.steps],
        },
    }
    metadata = header.eval.metadata or {}
    return {
        "generation_args": {k: v for k, v in args.items() if v is not None},
        "additional_details": string_details(
            {
                "setting": setting_name(metadata, header.eval.task),
                "prompt_variant": metadata.get("prompt_variant"),
                "system_role": metadata.get("system_role"),
                # Inspect reduces each sample's epochs first: a result is a mean over reduced samples.
                "epochs": header.eval.config.epochs,
                "epochs_reducer": header.eval.config.epochs_reducer,
                "max_tokens_rule": sorted(
                    {str((s.metadata or {}).get("max_tokens_rule")) for s in header.samples}
                ),
                **{f"task_arg.{k}": v for k, v in (header.eval.task_args or {}).items()},
            }
        ),
    }
