"""The three lexical metrics, each a direct call of the library the authors used.

Settings are those of Hugging Face ``evaluate`` as the authors called it, per pair
(../shared/reference/REFERENCE.md §3): ROUGE-1 F1 without stemming, sacrebleu chrF with its
defaults on a 0-1 scale, NLTK METEOR on ``word_tokenize`` tokens with alpha 0.9, beta 3,
gamma 0.5 (WordNet 3.0 synonyms).
"""

from __future__ import annotations

from functools import cache, lru_cache

from ...definitions import METEOR_PARAMS


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

    from ...nltk_data import ensure_punkt, ensure_wordnet

    ensure_punkt()
    ensure_wordnet()
    return word_tokenize, meteor_score.single_meteor_score, _MemoWordNet()


class _MemoWordNet:
    """NLTK's WordNet reader with ``synsets`` memoised: METEOR looks up every word of every
    answer, and answers share most words, so the same lookup ran thousands of times. The
    reader (WordNet 3.0) never changes within a process, so the results are the same."""

    def __init__(self):
        from nltk.corpus import wordnet

        self._wordnet = wordnet
        self.synsets = lru_cache(maxsize=100_000)(wordnet.synsets)

    def __getattr__(self, name):
        return getattr(self._wordnet, name)


def rouge1_f1(prediction: str, reference: str) -> float:
    return _rouge().score(reference, prediction)["rouge1"].fmeasure


def chrf(prediction: str, reference: str) -> float:
    """sacrebleu sentence chrF on a 0-1 scale."""
    return _chrf().sentence_score(prediction, [reference]).score / 100


def meteor(prediction: str, reference: str) -> float:
    tokenize, single_meteor, wordnet = _meteor()
    return single_meteor(tokenize(reference), tokenize(prediction), wordnet=wordnet, **METEOR_PARAMS)


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
