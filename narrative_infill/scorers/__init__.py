"""Scorers. Each scores the extracted answer (``Score.answer``) against the gold span."""

from .overlap import overlap

__all__ = ["overlap"]
