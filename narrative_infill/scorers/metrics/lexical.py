"""The three lexical metrics, each a direct call of the library the authors used.

Settings are those of Hugging Face ``evaluate`` as the authors called it, per pair
(../shared/reference/REFERENCE.md §3): ROUGE-1 F1 without stemming, sacrebleu chrF with its
defaults on a 0-1 scale, NLTK METEOR on ``word_tokenize`` tokens with alpha 0.9, beta 3,
gamma 0.5 (WordNet 3.0 synonyms).
"""

from __future__ import annotations

from functools import cache, lru_cache

from ...paper_protocol import METEOR_PARAMS


@cache
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)


@cache
def _chrf():
    from sacrebleu.metrics import CHRF

    # char order 6, word order 0 (plain chrF), beta 2: evaluate's and sacrebleu's defaults.
    return CHRF()


@cache
def _meteor():
    from nltk import word_tokenize
    from nltk.translate import meteor_score

    from ...nltk_data import ensure_punkt

    ensure_punkt()
    return word_tokenize, meteor_score.single_meteor_score, _MemoWordNet()


class _MemoWordNet:
    """NLTK's WordNet reader with ``synsets`` memoised: METEOR looks up every word of every
    answer, and answers share most words, so the same lookup ran thousands of times. The
    reader (WordNet 3.0) never changes within a process, so the results are the same."""

    def __init__(self):
        from ...nltk_data import english_wordnet

        wordnet = english_wordnet()
        self._wordnet = wordnet
        self.synsets = lru_cache(maxsize=100_000)(wordnet.synsets)
        # the base forms synsets() looks a word up under (NLTK's own lookup; no synset is loaded)
        self.base_forms = lru_cache(maxsize=100_000)(wordnet._morphy)

    def __getattr__(self, name):
        return getattr(self._wordnet, name)


def rouge1_f1(prediction: str, reference: str) -> float:
    return _rouge().score(reference, prediction)["rouge1"].fmeasure


def chrf(prediction: str, reference: str) -> float:
    """sacrebleu sentence chrF on a 0-1 scale."""
    return _chrf().sentence_score(prediction, [reference]).score / 100


class _SynonymsOf:
    """WordNet as METEOR's synonym stage needs it for one reference (its stemmed words): a
    prediction word's synsets are loaded only when one of its base forms shares a synset with a
    reference word; the synsets of any other word cannot hold a reference word, so METEOR scores
    the same without them. An answer
    of thousands of distinct dictionary words otherwise loaded thousands of synsets (seconds, and
    NLTK keeps every synset it loads for the life of the process): the cost now grows with the
    reference (a gold span of at most three sentences), not with the answer.

    Why it is exact: a synset reaches ``synsets(word)`` through a base form of the word
    (``_morphy``, NLTK's own lookup) that is one of its lemmas; if that synset also holds the
    reference word ``r``, it is one of ``synsets(r)``, so the base form is among the lemmas of
    ``synsets(r)`` that hold ``r`` (``related``)."""

    def __init__(self, wordnet: _MemoWordNet, reference: list[str]):
        self._wordnet = wordnet
        self._related = {
            name.lower()
            for word in set(reference)
            for synset in wordnet.synsets(word)
            if word in (names := synset.lemma_names())
            for name in names
        }

    def synsets(self, word: str) -> list:
        lowered = word.lower()
        if any(form in self._related for pos in _POS for form in self._wordnet.base_forms(lowered, pos)):
            return self._wordnet.synsets(word)
        return []


@cache
def _stemmer():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()  # the stemmer single_meteor_score uses by default


_POS = ("n", "v", "a", "r", "s")  # NLTK's POS_LIST, the order synsets() looks in


def meteor(prediction: str, reference: str) -> float:
    tokenize, single_meteor, wordnet = _meteor()
    reference_words = tokenize(reference)
    # METEOR's synonym stage sees the words its stem stage left, stemmed (NLTK's Porter stemmer)
    stem = _stemmer().stem
    synonyms = _SynonymsOf(wordnet, [stem(word.lower()) for word in reference_words])
    return single_meteor(reference_words, tokenize(prediction), wordnet=synonyms, **METEOR_PARAMS)


def lexical_signature() -> str:
    import nltk
    import rouge_score

    rouge_version = getattr(rouge_score, "__version__", None) or _dist_version("rouge-score")
    scorer = _chrf()
    scorer.sentence_score("x", ["x"])  # sacrebleu signs a metric once it knows the reference count
    meteor_params = ",".join(f"{name}={value:g}" for name, value in METEOR_PARAMS.items())
    return (
        f"rouge1=rouge-score-{rouge_version}:no-stemmer | "
        f"chrf=sacrebleu:{scorer.get_signature()} | "
        f"meteor=nltk-{nltk.__version__}:{meteor_params}:wordnet-3.0:word_tokenize"
    )


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)
