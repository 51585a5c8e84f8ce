"""The judge reply parser's time on each hostile shape at 16, 64 and 256 KB (the cap lifted).

The shapes are the linear-time test's (tests/core/test_judge_parse_linear.py). Prints one row per shape:
milliseconds for one parse at each size (the best of five rounds, each parsing the same number of
characters at every size, the sizes interleaved: the test's method) and the growth of the cost per
character from 16 KB (1.0 when linear, 16 at 256 KB when quadratic). ``--parser FILE`` times
another copy of parse.py (e.g. the one before the fix, ``git show
b96fdae:narrative_infill/scorers/judge/parse.py``), with ``--sizes`` to keep a quadratic one short.
Usage: python benchmarks/judge_parse_linear.py [--parser FILE] [--sizes 16 64 256]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))


def _parser(path: Path | None):
    from narrative_infill.scorers.judge import parse

    if path is None:
        return parse
    spec = importlib.util.spec_from_file_location("narrative_infill.scorers.judge._timed", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parser", type=Path, help="another parse.py to time")
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 256], help="sizes in KB")
    args = parser.parse_args()
    from test_judge_parse_linear import SHAPES

    module = _parser(args.parser)
    module.MAX_REPLY_CHARS = 10**9  # time the patterns, not the cap (absent before the fix)
    sizes = [size * 1024 for size in args.sizes]
    print("| shape | " + " | ".join(f"{s // 1024} KB ms" for s in sizes) + " | growth per char | escaped |")
    print("|---" * (len(sizes) + 3) + "|")
    for name, shape in SHAPES.items():
        texts, escaped = [shape(size) for size in sizes], set()
        best = [float("inf")] * len(sizes)
        for _ in range(5):  # rounds; the sizes interleaved in each, as the test does
            for index, (size, text) in enumerate(zip(sizes, texts)):
                repeats = max(1, sizes[-1] // size)
                started = time.perf_counter()
                for _ in range(repeats):
                    try:
                        module.parse_judgement(text)
                    except module.JudgementError:
                        pass
                    except Exception as err:  # what the parser before the fix let out (the sample errored)
                        escaped.add(type(err).__name__)
                best[index] = min(best[index], (time.perf_counter() - started) / repeats)
        growth = [(t / s) / (best[0] / sizes[0]) for t, s in zip(best, sizes)]
        print(
            f"| {name} | "
            + " | ".join(f"{t * 1000:.2f}" for t in best)
            + f" | {' / '.join(f'{g:.1f}' for g in growth)} | {', '.join(sorted(escaped)) or '-'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
