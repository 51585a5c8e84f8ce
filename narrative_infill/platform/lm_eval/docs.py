"""The lm-eval tasks' documents: the Inspect tasks' dataset (same loader, ids, validation, filters
and order), one document per sample, and the prompt each is sent."""

from __future__ import annotations

from typing import Any

from ...data.dataset import infill_dataset
from ...prompts import PromptTemplate
from .options import HarnessOptions

#: The split the task YAML files name (``test_split``).
SPLIT = "test"


def load(**metadata: Any) -> dict[str, Any]:
    """lm-eval's ``custom_dataset``: the benchmark's samples as a ``datasets.Dataset`` of documents
    (``id``, ``problem``, ``gold_answer`` and the sample metadata the Inspect tasks record)."""
    from datasets import Dataset

    options = HarnessOptions.from_metadata(metadata)
    dataset = infill_dataset(options.data, options.revision, options.subset, **options.filters())
    docs = [
        {
            "id": str(sample.id),
            "problem": sample.input,
            "gold_answer": sample.target,
            **(sample.metadata or {}),
        }
        for sample in dataset
    ]
    return {SPLIT: Dataset.from_list(docs)}


def conversation(
    template: PromptTemplate, doc: dict[str, Any], options: HarnessOptions
) -> list[tuple[str, str]]:
    """The (role, text) turns the Inspect solver sends for this document (``PromptTemplate.conversation``)."""
    slots = {"problem": doc["problem"], "n": doc["n"], "unit": options.unit or doc["unit"]}
    return template.conversation(slots, options.system_role)
