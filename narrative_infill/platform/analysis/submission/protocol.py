"""The tracks of the leaderboard and the protocol each one fixes, checked against the logs' headers.

A ranked track (``full``, ``10pct``, ``demo``) declares the task version (the current one: an older
version's judge prompt is injectable), its data (source, revision, instance count), its prompt
(variant, unit, system role), its decoding (temperature, top-p, the output-cap rule) and its judge
protocol (prompt variant, probability weighting, and the call the package's judge makes:
temperature 0, no cap on a reply, two retries, the reply's shape told where the provider can be
constrained). Every field is read from what the
log recorded when it ran (task arguments, the task's and the model's generation config, the
scorers' options, the task metadata, each sample's cap rule), never from the submission's own
provenance, and a deviation fails naming the field; the calls' own decoding is read from each
sample's transcript by ``transcript``. ``custom`` takes any complete run and is never
ranked with the others. Errored samples fail a ranked track; so does an unscored-judgement rate
above ``UNSCORED_LIMIT``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....data.dataset import DEMO, HF_DATASET
from ....errors import OptionError
from ....extraction import DEFAULT_EXTRACTION
from ....paper_protocol import JUDGE_TEMPERATURE, PUBLISHED_INSTANCES, TEMPERATURE, TOP_P, output_cap
from ....scorers.judge.schema import structured_mode
from ....task_options import comparability
from ....tasks.infill import TASK_VERSION
from ....tasks.options import FILTERS, InfillOptions
from ..report.load import newest_score
from .judges import endpoint_problems

RANKED_TRACKS = ("full", "10pct", "demo")
CUSTOM_TRACK = "custom"
TRACKS = (*RANKED_TRACKS, CUSTOM_TRACK)
PUBLISHED_SOURCE = f"hf:{HF_DATASET}"
#: The largest share of unscored judgements a ranked run may have: samples where any grader
#: failed, so a panel's mean over the graders left counts too.
UNSCORED_LIMIT = 0.02
#: The tasks' defaults: a ranked track's prompt, cap and judge options are the paper's, which they are.
_PAPER = InfillOptions()
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Protocol:
    """What a ranked track fixes; ``None`` where the track leaves a field open."""

    data: tuple[str, ...]
    subset: str | None
    instances: int | None  # None: the data decides (the 10% subset of the published set)
    temperature: float = TEMPERATURE
    top_p: float = TOP_P
    prompt_variant: str = _PAPER.variant
    system_role: bool = _PAPER.system_role
    unit: str | None = _PAPER.unit  # None: the record's own unit
    max_tokens_factor: float = _PAPER.max_tokens_factor
    cap_rules: tuple[str, ...] = ("per_sample", "task_default")  # never a user-set cap
    extraction: str = _PAPER.extraction  # the paper's extraction rules, not the published code's
    judge_variant: str = _PAPER.judge_variant
    probability_weighted: bool = False
    task_version: int | str = TASK_VERSION
    #: the judge's call (``scorers.judge.scorer.judge``'s defaults): its options in the header, and
    #: in the transcript the grader calls' own config
    judge_temperature: float = JUDGE_TEMPERATURE
    judge_max_tokens: int | None = None
    judge_retries: int = 2
    judge_structured: str | bool = _PAPER.judge_structured


PROTOCOLS = {
    "full": Protocol(data=("hf", PUBLISHED_SOURCE), subset=None, instances=PUBLISHED_INSTANCES),
    "10pct": Protocol(data=("hf", PUBLISHED_SOURCE), subset="10pct", instances=None),
    "demo": Protocol(data=(DEMO,), subset=None, instances=None),
}


def generation(header) -> dict[str, Any]:
    """The decoding a run used: the model's config (``--temperature`` ...) over the task's."""
    task = header.plan.config.model_dump(exclude_none=True) if header.plan else {}
    model = header.eval.model_generate_config.model_dump(exclude_none=True)
    return {**task, **model}


def scorer_options(header, name: str) -> dict[str, Any] | None:
    """The options a log's scorer ``name`` (``metrics``, ``judge``) last ran with, None if it did not
    run: ``inspect score --action append`` adds its scorer after the first and its scores as
    ``metrics1``, the newest, which the claims use, so its options are the ones that count."""
    for scorer in reversed(header.eval.scorers or []):
        if scorer.name.split("/")[-1] == name:
            return scorer.options or {}
    return None


def extraction_of(header, name: str = "metrics") -> str:
    """The answer-extraction rule a log's scorer ran with."""
    return (scorer_options(header, name) or {}).get("extraction", DEFAULT_EXTRACTION)


def _dataset_problems(track: str, protocol: Protocol, spec, args: dict, name: str) -> list[str]:
    identity = (spec.metadata or {}).get("dataset_identity") or {}
    problems = []
    data = args.get("data", (spec.metadata or {}).get("data", "hf"))
    if data not in protocol.data:
        problems.append(
            f"{name}: data: task argument data={data!r}, the {track} track reads {protocol.data[0]!r}"
        )
    if track == "demo":
        if identity.get("source") != DEMO:
            problems.append(f"{name}: data: source {identity.get('source')!r}, not the demo set")
        return problems
    if identity.get("source") != PUBLISHED_SOURCE or "sha256" in identity:
        where = "a local folder or file" if "sha256" in identity else "another source"
        problems.append(
            f"{name}: data: source {identity.get('source')!r} is {where}, not the published hub dataset"
        )
    if args.get("revision") is not None:
        problems.append(
            f"{name}: data: revision {args['revision']!r}, the track reads the published main branch"
        )
    if not _COMMIT.match(str(identity.get("commit"))):
        problems.append(f"{name}: data: hub commit {identity.get('commit')!r}, not a resolved commit")
    if (args.get("subset") or None) != protocol.subset:
        problems.append(f"{name}: subset: {args.get('subset')!r}, the {track} track has {protocol.subset!r}")
    return problems


def _decoding_problems(protocol: Protocol, header, args: dict, name: str) -> list[str]:
    decoding = generation(header)
    problems = []
    for field in ("temperature", "top_p"):
        if decoding.get(field) != getattr(protocol, field):
            problems.append(
                f"{name}: {field}: {decoding.get(field)!r}, the protocol has {getattr(protocol, field)}"
            )
    if decoding.get("max_tokens") is not None or args.get("max_tokens") is not None:
        problems.append(
            f"{name}: max_tokens: a fixed cap ({args.get('max_tokens') or decoding.get('max_tokens')}), "
            "the protocol caps each sample by its gold span"
        )
    if float(args.get("max_tokens_factor", protocol.max_tokens_factor)) != protocol.max_tokens_factor:
        problems.append(
            f"{name}: max_tokens_factor: {args['max_tokens_factor']}, "
            f"the protocol has {protocol.max_tokens_factor}"
        )
    metadata = header.eval.metadata or {}
    recorded = {
        "variant": args.get("variant", metadata.get("prompt_variant", _PAPER.variant)),
        "system_role": args.get("system_role", metadata.get("system_role", False)),
        "unit": args.get("unit"),
    }
    recorded["extraction"] = extraction_of(header)
    for field, value in recorded.items():
        expected = getattr(protocol, "prompt_variant" if field == "variant" else field)
        if value != expected:
            problems.append(f"{name}: {field}: {value!r}, the protocol has {expected!r}")
    return problems


def sample_protocol_problem(sample, setting: str, protocol: Protocol) -> str | None:
    """Whether one sample's prompt and output cap are the protocol's, rebuilt from its own record:
    the prompt rendered again from the paper's template (so the variant, the unit and the system
    role are checked on what the model was sent) and the cap from the gold span's length."""
    from ....prompts import prompt_template

    metadata = sample.metadata or {}
    template = prompt_template(setting, protocol.prompt_variant)
    problem = sample.input if isinstance(sample.input, str) else None
    slots = {"problem": problem, "n": metadata.get("n"), "unit": metadata.get("unit")}
    expected = [text for _, text in template.conversation(slots, protocol.system_role)]
    sent = [m.text for m in sample.messages if m.role in ("system", "user")]  # all: no hint after it
    if problem is None or sent != expected:
        return "prompt: the model was not sent the protocol's prompt (variant, unit or system role)"
    cap, _ = output_cap(setting, int(metadata.get("gold_tokens") or 0), factor=protocol.max_tokens_factor)
    if metadata.get("max_tokens") != cap:
        return f"max_tokens: {metadata.get('max_tokens')!r}, the protocol's cap is {cap}"
    return None


def _judge_problems(protocol: Protocol, header, args: dict, name: str) -> list[str]:
    options = scorer_options(header, "judge")
    if options is None:
        return []
    problems = []
    variant = options.get("variant", args.get("judge_variant", _PAPER.judge_variant))
    if variant != protocol.judge_variant:
        problems.append(f"{name}: judge_variant: {variant!r}, the protocol has {protocol.judge_variant!r}")
    if bool(options.get("probability_weighted", False)) != protocol.probability_weighted:
        problems.append(
            f"{name}: judge probability_weighted: {options.get('probability_weighted')!r}, "
            "the protocol has no weighting"
        )
    for option in ("temperature", "max_tokens", "retries", "structured"):
        expected = getattr(protocol, f"judge_{option}")
        recorded = options.get(option, expected)
        if option == "structured":
            recorded = _mode(recorded)
        if recorded != expected:
            problems.append(f"{name}: judge {option}: {recorded!r}, the protocol has {expected!r}")
    return problems


def _mode(value: Any) -> Any:
    """A recorded ``structured`` option as the judge reads it (``on`` for True...), else as written."""
    try:
        return structured_mode(value)
    except OptionError:
        return value


def _sample_problems(samples: list, name: str, protocol: Protocol) -> list[str]:
    problems = []
    errored = [str(s.id) for s in samples if getattr(s, "error", None)]
    if errored:
        problems.append(
            f"{name}: {len(errored)} errored sample(s) ({', '.join(errored[:5])}...): a ranked run has none"
        )
    rules = {str((s.metadata or {}).get("max_tokens_rule")) for s in samples} - set(protocol.cap_rules)
    if rules - {"None"}:
        problems.append(
            f"{name}: max_tokens_rule: {sorted(rules)}, the protocol has {list(protocol.cap_rules)}"
        )
    return problems


def unscored_problem(setting: str, claims: dict, track: str) -> str | None:
    """Too many unscored judgements for a ranked track (a run's failures must not leave its mean)."""
    rate = (claims.get("rates") or {}).get("unscored")
    if track in RANKED_TRACKS and rate is not None and rate > UNSCORED_LIMIT:
        return f"{setting}: {rate:.1%} of judgements unscored, a ranked track allows {UNSCORED_LIMIT:.0%}"
    return None


def _published_ids(track: str, unchecked: list[str]) -> set[str] | None:
    """The instance ids of a hub track from the published data, or None (said in ``unchecked``)
    when the data is out of reach: the log's own list is then all there is to check against."""
    from ....data.dataset import load_benchmark, stratified_subset

    try:
        instances = load_benchmark("hf").instances
    except Exception as err:  # offline, or no hub client: say so instead of passing silently
        unchecked.append(
            f"{track} instance ids not checked against the published data ({type(err).__name__})"
        )
        return None
    picked = stratified_subset(instances, track) if track == "10pct" else instances
    return {i.sample_id for i in picked}


class _Published:
    """A hub track's published instance ids, read at most once and only for a run on the hub's own
    data (None where the data is out of reach, said in ``unchecked``)."""

    def __init__(self, track: str, unchecked: list[str]):
        self.track, self.unchecked = track, unchecked
        self.read = False
        self.ids: set[str] | None = None

    def get(self) -> set[str] | None:
        if not self.read:
            self.read, self.ids = True, _published_ids(self.track, self.unchecked)
        return self.ids


def track_problems(track: str, runs: list, unchecked: list[str] | None = None) -> list[str]:
    """Why these runs are not the track's complete runs under its protocol (empty when they are);
    what could not be checked here goes to ``unchecked``."""
    if track not in TRACKS:
        return [f"unknown track {track!r}; choose from {', '.join(TRACKS)}"]
    published = _Published(track, [] if unchecked is None else unchecked)
    problems = [problem for run in runs for problem in _run_problems(track, run, published)]
    if PROTOCOLS.get(track) is not None:  # the judge at its provider's official endpoint (judges.py)
        problems += endpoint_problems(track, runs)
    return problems


def _run_problems(track: str, run, published: _Published) -> list[str]:
    """One run's problems: whole (no limit, no filter), under the track's protocol, every instance
    once per epoch, every sample scored."""
    spec, name = run.header.eval, Path(run.location).name
    args = spec.task_args or {}
    problems = []
    if spec.config.limit is not None or spec.config.sample_id is not None:
        problems.append(f"{name}: run with --limit/--sample-id, not the whole track")
    if any(args.get(f) is not None for f in FILTERS):
        problems.append(
            f"{name}: filtered by task arguments {sorted(f for f in FILTERS if args.get(f) is not None)}"
        )
    expected = {str(i) for i in spec.dataset.sample_ids or []}
    protocol = PROTOCOLS.get(track)
    if protocol is not None:
        expected = _instances_expected(track, protocol, run, expected, published, problems)
    return problems + _coverage_problems(run, expected, name)


def _instances_expected(track, protocol: Protocol, run, listed: set[str], published, problems) -> set[str]:
    """The run checked against the track's protocol (``problems`` grows); the instance ids the
    track expects of it (the log's own list where the published ids are out of reach)."""
    from ....data.dataset import load_benchmark

    spec, name = run.header.eval, Path(run.location).name
    args = spec.task_args or {}
    if comparability(spec.task_version) != comparability(protocol.task_version):
        problems.append(
            f"{name}: task version {spec.task_version!r}, the {track} track ranks version "
            f"{comparability(protocol.task_version)} only (older versions score differently)"
        )
    problems += _sample_problems(run.samples, name, protocol)
    off_data = _dataset_problems(track, protocol, spec, args, name)
    problems += off_data
    problems += _decoding_problems(protocol, run.header, args, name)
    problems += _judge_problems(protocol, run.header, args, name)
    expected = listed
    if track == "demo":
        expected = {i.sample_id for i in load_benchmark(DEMO).instances}
    else:  # the hub only for its own data
        ids = published.ids if off_data else published.get()
        if ids is not None and expected != ids:
            problems.append(
                f"{name}: instances: the log's {len(expected)} ids are not the {track} track's {len(ids)}"
            )
    if protocol.instances is not None and len(expected) != protocol.instances:
        problems.append(f"{name}: instances: {len(expected)}, the {track} track has {protocol.instances:,}")
    recorded = ((spec.metadata or {}).get("dataset_identity") or {}).get("instances")
    if recorded is not None and recorded != len(expected):
        problems.append(f"{name}: instances: the task read {recorded}, the log lists {len(expected)}")
    return expected


def _coverage_problems(run, expected: set[str], name: str) -> list[str]:
    """Every expected instance once per epoch, each with a metrics score."""
    problems = []
    epochs = run.header.eval.config.epochs or 1
    seen = {str(s.id) for s in run.samples}
    if seen != expected or len(run.samples) != len(expected) * epochs:
        problems.append(
            f"{name}: {len(seen)} of the track's {len(expected)} instances "
            f"({len(run.samples)} samples, {epochs} epoch(s))"
        )
    pairs = {(str(s.id), s.epoch) for s in run.samples}
    if pairs != {(i, e) for i in expected for e in range(1, epochs + 1)}:
        problems.append(
            f"{name}: the samples are not each instance once per epoch 1..{epochs} "
            f"({len(run.samples) - len(pairs)} repeated (id, epoch))"
        )
    unscored = [str(s.id) for s in run.samples if not s.error and newest_score(s, "metrics") is None]
    if unscored:
        problems.append(
            f"{name}: {len(unscored)} sample(s) with no metrics score ({', '.join(unscored[:5])}...): "
            "they would leave the means"
        )
    return problems
