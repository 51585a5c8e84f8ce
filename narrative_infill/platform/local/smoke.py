"""Can this machine run the installed llama.cpp? ``python -m narrative_infill.platform.local.smoke``
generates a few tokens from SmolLM2 in a child process, so that a build for another CPU (a
SIGILL on its first AMX or AVX-512 instruction) is reported by name instead of killing the
caller. ``scripts/setup.sh`` ends with it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

from .server import LocalServerError, default_gguf, describe_exit

TOKENS = 8
#: Run in the child: a short greedy generation, its text and token count on stdout.
GENERATE = """
import sys, time, llama_cpp
model = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, verbose=False)
started = time.perf_counter()
out = model("Once upon a time", max_tokens=int(sys.argv[2]), temperature=0.0)
seconds = time.perf_counter() - started
print(f"{out['usage']['completion_tokens']} tokens in {seconds:.2f} s: {out['choices'][0]['text']!r}")
"""


def smoke_generation(tokens: int = TOKENS, timeout: float = 300.0) -> str:
    """The child's report of a short generation; :class:`LocalServerError` if it cannot run."""
    model = default_gguf()
    try:
        child = subprocess.run(
            [sys.executable, "-c", GENERATE, str(model), str(tokens)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise LocalServerError(f"llama.cpp did not generate {tokens} tokens within {timeout:.0f} s") from err
    if child.returncode != 0:
        tail = "\n".join((child.stdout + child.stderr).splitlines()[-15:])
        raise LocalServerError(
            f"llama.cpp could not generate from {model.name}: the process "
            f"{describe_exit(child.returncode)}\n{tail}"
        )
    report = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
    generated = re.match(r"(\d+) tokens in ", report)
    if generated is None or int(generated.group(1)) == 0:  # it loaded, but has not shown it can run
        raise LocalServerError(f"llama.cpp generated no tokens from {model.name}: {child.stdout.strip()!r}")
    return report


def main(engine: str = "llama.cpp", generation: Callable[[], str] = smoke_generation) -> int:
    """Report ``generation()`` for ``engine``: 0, or 1 with the reason it failed on stderr."""
    try:
        print(f"{engine} smoke generation: {generation()}", flush=True)
    except LocalServerError as err:
        print(f"{engine} smoke generation FAILED: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
