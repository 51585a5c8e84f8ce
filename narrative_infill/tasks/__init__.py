"""The benchmark's nine tasks: five TELeR instruction levels and four reasoning paradigms."""

from .infill import abductive, causal, cot, counterfactual, infill_task, l0, l1, l2, l3, l4

__all__ = ["abductive", "causal", "cot", "counterfactual", "infill_task", "l0", "l1", "l2", "l3", "l4"]
