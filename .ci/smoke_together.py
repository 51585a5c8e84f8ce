"""Run benchmark scripts one after another in one Python process (CI's smoke step, .ci/benchmarks):
the scripts that load the metrics' models (torch, the encoders, NLTK's data) then load them once
instead of once each. Each runs as ``python benchmarks/SCRIPT ARGS`` would (``__main__``, its own
``sys.argv``); its output goes to OUT/SCRIPT.out, its exit status to OUT/SCRIPT.rc (an exception
is 1, its traceback in the output) and its seconds to OUT/SCRIPT.seconds; one that fails does not
stop the others, and .ci/benchmarks checks each as it checks a script run alone.
Usage: python .ci/smoke_together.py SPECS OUT, SPECS a file of lines ``SCRIPT<TAB>ARG<TAB>...``.
"""

from __future__ import annotations

import contextlib
import runpy
import sys
import time
import traceback
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run(script: str, args: list[str], out: Path) -> None:
    """Run one script as its own ``__main__``, recording its output, exit status and seconds."""
    status, started = 0, time.perf_counter()
    saved_argv, saved_path = sys.argv, list(sys.path)
    with (
        open(out / f"{script}.out", "w", encoding="utf-8") as output,
        contextlib.redirect_stdout(output),
        contextlib.redirect_stderr(output),
    ):
        sys.argv = [str(BENCHMARKS / script), *args]
        try:
            runpy.run_path(str(BENCHMARKS / script), run_name="__main__")
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if exit_.code is not None and not isinstance(exit_.code, int):
                print(exit_.code)  # SystemExit("message") prints its message, as Python does
        except BaseException:  # a script's crash is its failure, not the runner's
            traceback.print_exc()
            status = 1
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path
    (out / f"{script}.rc").write_text(str(status))
    (out / f"{script}.seconds").write_text(f"{time.perf_counter() - started:.0f}")


def main() -> None:
    specs, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for line in specs.read_text(encoding="utf-8").splitlines():
        script, *args = line.split("\t")
        run(script, args, out)


if __name__ == "__main__":
    main()
