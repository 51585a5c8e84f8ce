"""The five automatic metrics and AtAvg: ``narrative_infill/metrics``.

``scorer`` is the Inspect scorer, ``pairs`` scores a batch of (answer, gold) pairs,
``lexical`` and ``embedding`` hold the metrics, ``batching`` gathers concurrent samples.
"""

from .pairs import ATAVG, METRIC_NAMES, metrics_signature, resolve_backbones, score_pairs
from .scorer import metrics

__all__ = ["ATAVG", "METRIC_NAMES", "metrics", "metrics_signature", "resolve_backbones", "score_pairs"]
