"""Inspect's ``llama-cpp-python`` provider sends the key that ``serve`` set.

The provider passes a fixed placeholder key (``"llama-cpp-python"``) whenever none is given, so
``$LLAMA_CPP_PYTHON_API_KEY`` is never read and a server that checks keys refuses every request.
This hook (registered through the package's Inspect entry point) puts the variable's key in place
of that placeholder; a key given explicitly (``-M api_key=...``) is left alone.
"""

from __future__ import annotations

import os

from inspect_ai.hooks import ApiKeyOverride, Hooks, hooks

from .server import PROVIDER_KEY_VARIABLE as KEY_VARIABLE

PLACEHOLDER_KEY = "llama-cpp-python"  # inspect_ai's LlamaCppPythonAPI default


@hooks(
    name="narrative_infill_local_key",
    description=f"llama-cpp-python provider: sends ${KEY_VARIABLE} (set by narrative-infill serve)",
)
class LocalServerKey(Hooks):
    def enabled(self) -> bool:
        return bool(os.environ.get(KEY_VARIABLE))

    def override_api_key(self, data: ApiKeyOverride) -> str | None:
        if data.env_var_name == KEY_VARIABLE and data.value == PLACEHOLDER_KEY:
            return os.environ.get(KEY_VARIABLE) or None
        return None
