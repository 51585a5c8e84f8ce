"""The infilling tasks' ``-T`` options, written once: the nine tasks, the lm-eval tasks
(``platform/lm_eval/options.py``), the leaderboard's protocol and docs/options.md read them here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from inspect_ai import Task

from ..errors import OptionError
from ..paper_protocol import CAP_FACTOR, PAPER_JUDGE_VARIANT, PAPER_PROMPT_VARIANT
from ..scorers.answer import DEFAULT_EXTRACTION
from ..solvers.infill import check_cap_factor

#: The options that filter the data (``infill_dataset``'s keywords); a ranked run sets none.
FILTERS = ("domain", "n", "position", "min_sentences", "max_sentences")


@dataclass(frozen=True)
class InfillOptions:
    """Every ``-T`` option of the infilling tasks, with its default and type; checked when made.

    Attributes:
        data: ``hf`` (the published dataset), ``hf:REPO``, ``demo``, or a local CSV/JSONL/parquet path.
        revision: hub revision (branch, tag or commit) of an ``hf`` source; the published set's
            default is ``PUBLISHED_REVISION`` (data/dataset.py), the pin.
        domain: keep these domains (wikipedia, rocstories, cnn_dailymail, sind; published names accepted).
        n: keep these span lengths (1-3 sentences).
        position: keep these blank positions (opening, middle, closing).
        min_sentences: keep narratives with at least this many sentences.
        max_sentences: keep narratives with at most this many sentences.
        subset: ``10pct``, the authors' stratified robustness subset (seed 42).
        variant: ``paper`` or a published-code variant (``code0``..``code3``; ``code`` for paradigms).
        system_role: send the system text as a system message instead of leading the user turn.
        unit: text of the ``{{unit}}`` slot (default: the record's ``unit`` column).
        max_tokens: a fixed output cap for every sample, in place of the task's own rule; it is
            the task's ``GenerateConfig.max_tokens``, so Inspect's ``--max-tokens`` wins over it.
        max_tokens_factor: per-sample cap (TELeR levels) as a multiple of the gold span's length.
        backbone: embedding backbones of BERTScore and Sem-F1: ``auto`` (the paper's when
            available, else the packaged MiniLM with a warning), ``paper`` or ``minilm``.
        judge: run the LLM judge; by default it runs when a ``grader`` model role is bound at
            scoring time (however it is bound); ``false`` turns it off, ``true`` requires a grader.
        judge_variant: judge prompt, ``paper`` or ``authors``.
        judge_roles: model role(s) whose models judge (a list, or comma-separated); several make a panel.
        grader_model: a grader to use when no ``grader`` role is bound (implies ``judge``).
        judge_structured: tell the grader the reply's shape: ``auto`` where its provider can be
            constrained, ``on`` (fail for one that cannot), ``off``.
        extraction: the answer both scorers score: ``ours`` (the paper's extraction rules) or
            ``published`` (the authors' released code: first ``<ANSWER>`` span, else the whole response).
    """

    data: str = "hf"
    revision: str | None = None
    domain: str | list[str] | None = None
    n: int | list[int] | None = None
    position: str | list[str] | None = None
    min_sentences: int | None = None
    max_sentences: int | None = None
    subset: str | None = None
    variant: str = PAPER_PROMPT_VARIANT
    system_role: bool = False
    unit: str | None = None
    max_tokens: int | None = None
    max_tokens_factor: float = CAP_FACTOR
    backbone: str = "auto"
    judge: bool | None = None
    judge_variant: str = PAPER_JUDGE_VARIANT
    judge_roles: str | list[str] = "grader"
    grader_model: str | None = None
    judge_structured: str | bool = "auto"
    extraction: str = DEFAULT_EXTRACTION

    def __post_init__(self) -> None:
        """Refuse a value of the wrong kind, naming the option (the data loader, the prompt and the
        scorers check the values they alone know: filters, variants, backbones, extraction, graders)."""
        if not isinstance(self.data, str):
            raise OptionError(f"data must be 'hf', 'hf:REPO', 'demo' or a file path, got {self.data!r}")
        if type(self.system_role) is not bool:
            raise OptionError(f"system_role must be true or false, got {self.system_role!r}")
        if self.judge not in (None, True, False):
            raise OptionError(f"judge must be true or false (or left out), got {self.judge!r}")
        if self.max_tokens is not None and (type(self.max_tokens) is not int or self.max_tokens < 1):
            raise OptionError(
                f"max_tokens must be positive (a whole number of tokens), got {self.max_tokens!r}"
            )
        check_cap_factor(self.max_tokens_factor)

    @classmethod
    def given(cls, options: Mapping[str, Any]) -> InfillOptions:
        """The options a caller passed by name; a name that is no option is refused with the list."""
        unknown = sorted(set(options) - {f.name for f in fields(cls)})
        if unknown:
            raise OptionError(f"no such option {', '.join(unknown)}; the options are {option_names()}")
        return cls(**options)

    def filters(self) -> dict[str, Any]:
        """The data filters, as ``infill_dataset`` takes them."""
        return {name: getattr(self, name) for name in FILTERS}


def option_names() -> tuple[str, ...]:
    """The options' names, in their order."""
    return tuple(f.name for f in fields(InfillOptions))


TaskFunction = TypeVar("TaskFunction", bound=Callable[..., Task])


def takes_infill_options(function: TaskFunction) -> TaskFunction:
    """Give a named task ``InfillOptions``' parameters (names, defaults, types) as its signature.

    Inspect reads a ``@task`` function's signature for its ``-T`` options, warns about any other
    name and logs every default, and has no idiom that shares one parameter list between tasks
    (``**options`` would log no defaults and take any name). Python's own ``__signature__``
    (PEP 362; Inspect sets it on its agents) lets the nine tasks state the options once."""
    function.__signature__ = inspect.signature(InfillOptions).replace(  # type: ignore[attr-defined]
        return_annotation=Task
    )
    return function
