"""Probability-weighted judge scores (G-Eval): each dimension's expected score from the grader's
top logprobs, for ``judge(probability_weighted=True)``."""

from __future__ import annotations

import math

from inspect_ai.model import Logprob, ModelOutput


def expected_scores(output: ModelOutput, text: str, offsets: dict[str, int]) -> dict[str, float] | None:
    """G-Eval style: the probability-weighted score of each dimension from the top logprobs
    of the token that carries its digit; None when the grader returned no logprobs."""
    choice = output.choices[0] if output.choices else None
    if choice is None or choice.logprobs is None:
        return None
    position, by_offset = 0, dict[int, Logprob]()
    for token in choice.logprobs.content:
        start = text.find(token.token, position) if token.token else -1
        if start < 0:
            continue
        for offset in range(start, start + len(token.token)):
            by_offset.setdefault(offset, token)
        position = start + len(token.token)
    expected = {}
    for dimension, offset in offsets.items():
        scored = by_offset.get(offset)
        if scored is None or not scored.top_logprobs:
            return None
        weights: dict[int, float] = {}
        for candidate in scored.top_logprobs:
            digit = candidate.token.strip()
            if digit in {"1", "2", "3", "4", "5"}:
                weights[int(digit)] = weights.get(int(digit), 0.0) + math.exp(candidate.logprob)
        total = sum(weights.values())
        if total <= 0:
            return None
        expected[dimension] = sum(score * weight for score, weight in weights.items()) / total
    return expected
