"""narrative_infill: the narrative-infilling benchmark of "Evaluating Whether LLMs Can
Reliably Connect the DOTs?" as Inspect tasks.

Kept import-light on purpose: Inspect imports ``narrative_infill._registry`` whenever it
resolves a registry name, so nothing here pulls in torch, llama_cpp or model backbones.
The tasks are exported here, as Inspect's evaluation packages export theirs.
"""

from .tasks import abductive, causal, cot, counterfactual, l0, l1, l2, l3, l4
from .tasks.judge_check import judge_check

#: The package version, its one home: pyproject.toml reads it from here (hatch's dynamic version).
__version__ = "0.3.0"

__all__ = ["abductive", "causal", "cot", "counterfactual", "judge_check", "l0", "l1", "l2", "l3", "l4"]
