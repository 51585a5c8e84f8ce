"""Solvers: render a benchmark prompt, then generate with the paper's per-sample length cap."""

from .infill import generate_infill, infill_prompt

__all__ = ["generate_infill", "infill_prompt"]
