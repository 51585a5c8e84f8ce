"""Scorers. Each scores the extracted answer (``Score.answer``) against the gold span."""

from .automatic import metrics
from .judge import judge

__all__ = ["judge", "metrics"]
