"""Scorers. Each scores the extracted answer (``Score.answer``) against the gold span.

``answer`` is the extraction both share; ``metrics/`` holds the five automatic metrics and
AtAvg (``narrative_infill/metrics``), ``judge/`` the rubric judge (``narrative_infill/judge``).
"""
