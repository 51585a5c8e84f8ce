"""Entries whose answers replay another entry's: shown on the board, never ranked.

A replay is another entrant's logs submitted again under a new model name and eval id: new files,
new SHA-256s, so the board's one-log-one-entry rule does not see it, and its samples may come in
any order. With ``--logs`` the board reads every verified entry's answers (each the extraction of
its raw output, as ``verify`` checked) and compares each pair of entries: the share of one entry's
non-empty answers whose letters (``folded_words`` run together, each read as its look-alike set's
prototype, ``names.skeleton``: case, compatibility forms, look-alike letters of any script,
punctuation and spacing, a space put inside a word included, left out) are the letters of one of
the other entry's answers to the same instance (setting and sample id), in any epoch. At or above
``REPLAY_SHARE`` both entries are marked not ranked, each naming the other: the files cannot say
which one is the original (a log's creation time is a field its submitter writes), so the board's
maintainer decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....scorers.metrics.copying import folded_words
from ...names import skeleton
from .build import logged_answer, read_settings
from .verify import load_document, locate_logs

#: The share of an entry's answers found word for word among another's, per instance, at which the
#: two are one run. Honest answers to the same instance (benchmarks/replay_share.py on ../shared's
#: real outputs) share far less: see docs/leaderboard.md.
REPLAY_SHARE = 0.5

#: An entry's answers: (setting, sample id) -> the folded letters of each of its non-empty answers.
Answers = dict[tuple[str, str], set[str]]


def folded_answer(answer: str) -> str:
    """What the rule compares of an answer: its letters, not its words, each as its look-alike set's
    prototype, so a space put inside a word or a look-alike letter of another script (Armenian
    "օ", Latin "ɑ") does not make a replayed answer another one."""
    return skeleton("".join(folded_words(answer)))


def answers_of(runs) -> Answers:
    """The non-empty answers of every sample of ``runs`` (``build.read_settings``), by instance."""
    answers: Answers = {}
    for run in runs:
        for sample in run.samples:
            if letters := folded_answer(logged_answer(sample)):
                answers.setdefault((run.setting, str(sample.id)), set()).add(letters)
    return answers


def _remembered(sha256: str, located: list[str]) -> Answers:
    """``answers_of`` the entry's logs, kept by its submission's SHA-256 (its logs' included, each
    found equal to its log's): an unchanged board reads no log again (``cache``)."""
    from .cache import JsonCache, key

    store, entry = JsonCache("answers"), key("answers", sha256)
    if kept := store.get_many([entry]):
        return {(setting, sample_id): set(letters) for setting, sample_id, letters in kept[entry]}
    answers = answers_of(read_settings(located))
    store.put_many({entry: [[*instance, sorted(letters)] for instance, letters in answers.items()]})
    return answers


def replayed_share(mine: Answers, theirs: Answers) -> float:
    """The share of ``mine``'s answers that are, word for word, an answer of ``theirs`` to the same
    instance (0 when ``mine`` has none)."""
    found = total = 0
    for instance, answers in mine.items():
        total += len(answers)
        found += len(answers & theirs.get(instance, set()))
    return found / total if total else 0.0


def mark_replays(rows: list[dict[str, Any]], submissions: Path, logs_dir: Path) -> None:
    """Mark every entry whose answers are, at ``REPLAY_SHARE`` or more, another entry's: not ranked,
    naming the other (``replays``: their files)."""
    read = {}
    for row in rows:
        document = load_document(Path(submissions) / row["file"])
        located, _ = locate_logs(document, logs_dir)
        read[row["file"]] = _remembered(document["sha256"], located)  # verified: every log is there
    for row in rows:
        mine, shared = read[row["file"]], {}
        for other, theirs in read.items():
            share = max(replayed_share(mine, theirs), replayed_share(theirs, mine))
            if other != row["file"] and share >= REPLAY_SHARE:
                shared[other] = share
        if shared:
            row["replays"] = sorted(shared)
            named = ", ".join(f"{other} ({share:.0%})" for other, share in sorted(shared.items()))
            row["unranked"] = f"not ranked: its answers are another entry's, word for word: {named}"
