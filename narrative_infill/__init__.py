"""narrative_infill: the narrative-infilling benchmark of "Evaluating Whether LLMs Can
Reliably Connect the DOTs?" as Inspect tasks.

Kept import-light on purpose: Inspect imports ``narrative_infill._registry`` whenever it
resolves a registry name, so nothing here pulls in torch, llama_cpp or model backbones.
"""

__version__ = "0.2.0"
