"""The metrics' start-up pays each part once and in the background (issue 49, the scorer's fixed
cost): the story-reuse guard reads METEOR's WordNet reader instead of loading NLTK's stock one
beside it (a second index load, 3-10 s, at the first score and on the event loop); the background
load warms the guard too (its stemmer, scikit-learn's stop words, its WordNet look-up), so the first
score does not import them on the event loop; and scoring no pair (``verify --sample 0`` re-scores
none) loads no model. No model is loaded here: the loaders are replaced by stand-ins."""

from __future__ import annotations

from narrative_infill import nltk_data
from narrative_infill.data import story_rules
from narrative_infill.scorers.metrics import loading, pairs, reuse


class _RecordingWordNet:
    def __init__(self):
        self.looked_up: list[str] = []

    def synsets(self, word):
        self.looked_up.append(word)
        return []


def test_story_reuse_reads_meteors_wordnet_reader(monkeypatch):
    """Failed before: the guard looked words up in ``nltk.corpus.wordnet``, a second reader."""
    reader = _RecordingWordNet()
    monkeypatch.setattr(nltk_data, "english_wordnet", lambda: reader)
    reuse._synonym_stems.cache_clear()
    try:
        reuse._synonym_stems("sailboat")
    finally:
        reuse._synonym_stems.cache_clear()  # nothing the stand-in answered stays cached
    assert reader.looked_up == ["sailboat"]


def test_the_story_rules_read_meteors_wordnet_reader(monkeypatch):
    """Failed before: the story rules' sense look-up loaded ``nltk.corpus.wordnet``, the stock
    reader with its multilingual map (12 of a 24-sample report's 65 s, in every process that
    computes the null rules: report, submit, verify, leaderboard)."""
    reader = _RecordingWordNet()
    monkeypatch.setattr(nltk_data, "english_wordnet", lambda: reader)
    story_rules._commonest_sense.cache_clear()
    try:
        assert story_rules._commonest_sense()("harbour") is None
    finally:
        story_rules._commonest_sense.cache_clear()
    assert reader.looked_up == ["harbour"]


def test_the_background_load_warms_the_story_reuse_guard(monkeypatch):
    """Failed before: the load scored one pair only; the guard's first call came at the first score."""
    calls: list[str] = []
    monkeypatch.setattr(pairs, "score_pairs", lambda *args, **kwargs: calls.append("score_pairs"))
    monkeypatch.setattr(reuse, "story_reuse", lambda answer, problem: calls.append("story_reuse"))
    monkeypatch.setattr(loading, "_started", {})
    loading.wait_loaded(pairs.resolve_backbones("minilm"))
    assert calls == ["score_pairs", "story_reuse"]


def test_scoring_no_pair_loads_no_model(monkeypatch):
    """Failed before: ``score_pairs([], [])`` loaded both encoders (18 s in ``verify --sample 0``)."""

    def refuse(*args, **kwargs):
        raise AssertionError("an encoder was loaded to score no pair")

    monkeypatch.setattr(pairs, "encode_texts", refuse)
    assert pairs.score_pairs([], [], pairs.resolve_backbones("minilm")) == []
