"""A sample's transcript (the model calls ``inspect view`` shows) against what its record claims.

The output extraction and both scorers read must be the output of the call that generated it: the
last model call without a role (the solver's ``generate``; a grader's calls carry their role), its
text made valid Unicode as the solver makes it (``solvers.valid_output``: a lone surrogate the
solver replaced after the call is in the call as the log writer stores it), its stop reason the
same. A scored sample with no such call is refused, unless its log is an import (``narrative-infill
import``: the replay solver puts the stored response in the output and calls no model), whose output
must then be the response it stores; an import's outputs are the importer's word, said as not
checked, and a ranked track takes none. The epoch the solver recorded when it generated
(``metadata.epoch``, and the state event that added it; absent in logs made before it) must be
the record's. On a ranked track the
calls' own config must be the protocol's, whatever the header says: the generating call's
temperature, top-p and cap (the sample's) and no other sampling option, and each grader call's
temperature, cap and reply shape, with no more calls per verdict than the protocol's retries allow.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ....data.text import valid_unicode

#: Decoding options the protocol leaves unset: a generating call that sets one samples otherwise than
#: the track's temperature and top-p say.
SAMPLING_FIELDS = (
    "top_k",
    "best_of",
    "num_choices",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "stop_seqs",
    "system_message",
    "response_schema",
    "extra_body",
)
#: The solver the importer's logs run (``solvers.replay``), as Inspect names it in the plan.
REPLAY_SOLVER = "narrative_infill/replay_output"


def generating_calls(full) -> list:
    """The sample's model calls without a role, in order: the generation (graders have a role)."""
    return [e for e in full.events if e.event == "model" and e.role is None]


def grader_calls(full) -> list:
    return [e for e in full.events if e.event == "model" and e.role is not None]


def is_import(header) -> bool:
    """Whether a log is an import's: its task says so and its one solver replays stored responses."""
    steps = [step.solver for step in header.plan.steps] if header.plan else []
    return bool((header.eval.metadata or {}).get("imported")) and steps == [REPLAY_SOLVER]


#: How the log writer refers to a long text stored once in the sample's attachments.
_ATTACHMENT = "attachment://"
#: A lone surrogate as the log writer stores it in a call's text: its six-character escape.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _valid(text: str) -> str:
    """``text`` as the solver makes it valid (``solvers.valid_output``), from a call's text or an
    output's: a lone surrogate (or its escape, as the writer stored the call's) is U+FFFD."""
    return valid_unicode(_SURROGATE_ESCAPE.sub("\ufffd", text))[0]


def output_problem(full, imported: bool) -> str | None:
    """Why the sample's output is not its generating call's (None when it is)."""
    calls = generating_calls(full)
    if not calls:
        stored = (full.metadata or {}).get("original_response")
        if not imported:
            return "no model call generated it: the transcript holds no call without a role"
        if full.output.completion != stored:
            return f"the output {full.output.completion[:80]!r} is not the imported response {stored!s:.80}"
        return None
    made = calls[-1].output
    if made is None:
        return "its generating call has no output"
    if _valid(full.output.completion) != _valid(made.completion):
        return f"output {full.output.completion[:80]!r}, its generating call wrote {made.completion[:80]!r}"
    written = [_valid(choice.message.text) for choice in made.choices]
    if [_valid(choice.message.text) for choice in full.output.choices] != written:
        return "the output's choices are not its generating call's"
    if full.output.stop_reason != made.stop_reason:
        return f"stop reason {full.output.stop_reason!r}, its generating call stopped by {made.stop_reason!r}"
    return _state_problem(full) or _raw_response_problem(calls[-1], full.attachments or {})


def _strings(raw: Any):
    """Every string in a provider's raw JSON (walked without recursion: a log is untrusted)."""
    stack = [raw]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _raw_response_problem(call, attachments: dict[str, str]) -> str | None:
    """Why the provider's raw response the call records (``ModelCall.response``, where the provider
    records one; a long text in it is the sample's attachment) does not hold the call's completion:
    it holds the text as the API sent it, of which the completion is a part (a reasoning block
    parsed out, say)."""
    raw = call.call.response if call.call is not None else None
    text = _valid(call.output.completion)
    found = (attachments.get(s.removeprefix(_ATTACHMENT), s) for s in _strings(raw))
    if not raw or not text or any(text in _valid(string) for string in found):
        return None
    wrote = call.output.completion[:80]
    return f"its generating call wrote {wrote!r}, which the provider's raw response does not hold"


def _state_problem(full) -> str | None:
    """Why the output is not the completion the solver's state events set (the transcript keeps it
    apart from the model call; a log without one has nothing to compare)."""
    set_by_state = [
        change.value if change.path == "/output/completion" else change.value.get("completion")
        for event in full.events
        if event.event == "state"
        for change in event.changes
        if change.op in ("add", "replace")
        and (
            change.path == "/output/completion"
            or (change.path == "/output" and isinstance(change.value, dict))
        )
    ]
    if set_by_state and _valid(str(set_by_state[-1])) != _valid(full.output.completion):
        said = str(set_by_state[-1])[:80]
        return f"output {full.output.completion[:80]!r}, the solver's state event set {said!r}"
    return None


def epoch_problem(full) -> str | None:
    """Why the record's epoch is not the one the solver recorded while generating, in the record's
    metadata or in the state event of its transcript that added it (None: it is, or the log
    predates the record)."""
    recorded = (full.metadata or {}).get("epoch")
    if recorded is not None and recorded != full.epoch:
        return f"the solver recorded epoch {recorded!r} when it generated, the record says {full.epoch}"
    in_events = [
        change.value
        for event in full.events
        if event.event == "state"
        for change in event.changes
        if change.path == "/metadata/epoch" and change.op in ("add", "replace")
    ]
    if any(value != full.epoch for value in in_events):
        said = in_events[-1]
        return f"its state event recorded epoch {said!r} when it generated, the record says {full.epoch}"
    return None


def decoding_problems(full, protocol) -> list[str]:
    """Where the sample's calls ran off the ranked track's protocol, read from each call's own
    config (and the raw request it sent, where the provider records one): the generating call's
    temperature, top-p and cap, and each grader call's temperature,
    cap and reply shape, at most ``1 + retries`` calls per verdict."""
    problems = []
    cap = (full.metadata or {}).get("max_tokens")
    for call in generating_calls(full):
        config = call.config
        seen = {"temperature": config.temperature, "top_p": config.top_p, "max_tokens": config.max_tokens}
        wanted = {"temperature": protocol.temperature, "top_p": protocol.top_p, "max_tokens": cap}
        problems += [
            f"generating call {name} {seen[name]!r}, the protocol has {wanted[name]!r}"
            for name in seen
            if seen[name] != wanted[name]
        ]
        sent = call.call.request if call.call is not None else {}
        problems += [  # what the provider was sent, where its raw request records it
            f"generating call's raw request {name} {sent[name]!r}, its config says {seen[name]!r}"
            for name in seen
            if isinstance(sent, dict) and name in sent and sent[name] != seen[name]
        ]
        if others := [name for name in SAMPLING_FIELDS if getattr(config, name, None) is not None]:
            problems.append(f"generating call sets {others}: the protocol decodes by temperature and top-p")
    return problems + _grader_problems(full, protocol)


def _grader_problems(full, protocol) -> list[str]:
    from ....scorers.judge.rubric import judge_variant
    from ....scorers.judge.schema import reply_constraint

    problems = []
    calls = grader_calls(full)
    schema = judge_variant(protocol.judge_variant).reply_schema
    for call in calls:
        seen = {"temperature": call.config.temperature, "max_tokens": call.config.max_tokens}
        problems += [
            f"grader call {name} {value!r}, the protocol has {getattr(protocol, f'judge_{name}')!r}"
            for name, value in seen.items()
            if value != getattr(protocol, f"judge_{name}")
        ]
        shape = _shape(call.config)
        path, _ = reply_constraint(str(call.model), protocol.judge_structured, schema)
        if shape != path:
            problems.append(f"grader call to {call.model}: reply shape {shape!r}, the protocol's is {path!r}")
    allowed = Counter(str(v.get("model")) for v in _verdicts(full))
    for model, made in Counter(str(call.model) for call in calls).items():
        if made > allowed[model] * (1 + protocol.judge_retries):
            problems.append(
                f"{made} calls to grader {model} for {allowed[model]} verdict(s): the protocol allows "
                f"{1 + protocol.judge_retries} a verdict"
            )
    return problems


def _shape(config) -> str:
    """How a grader call was told the reply's shape: ``schema``, ``grammar`` or ``none``."""
    if config.response_schema is not None:
        return "schema"
    return "grammar" if "response_format" in (config.extra_body or {}) else "none"


def _verdicts(full) -> list[dict[str, Any]]:
    """Every verdict of every judge scoring the sample holds (``inspect score --action append`` adds
    a scoring, and its grader calls, after the first)."""
    return [
        verdict
        for score in (full.scores or {}).values()
        for verdict in ((score.metadata or {}).get("judges") or {}).values()
        if isinstance(verdict, dict)
    ]


def sample_findings(full, imported: bool, protocol) -> list[tuple[str, str]]:
    """(kind, detail) of everything the sample's transcript contradicts in its record; ``protocol``
    is a ranked track's (None: custom)."""
    findings = []
    if (problem := output_problem(full, imported)) is not None:
        findings.append(("the output is not what its generating model call wrote", problem))
    if imported and protocol is not None:
        findings.append(("an imported output on a ranked track", "a ranked track takes generated runs"))
    if (problem := epoch_problem(full)) is not None:
        findings.append(("the epoch is not the one it was generated in", problem))
    if protocol is not None:
        findings += [("a model call off the track's protocol", p) for p in decoding_problems(full, protocol)]
    return findings
