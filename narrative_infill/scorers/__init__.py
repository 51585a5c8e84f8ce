"""Scorers. Each scores the extracted answer (``Score.answer``) against the gold span."""

from .automatic import metrics

__all__ = ["metrics"]
