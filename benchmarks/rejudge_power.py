"""The re-judge check's false-alarm rate and power, offline, with the stand-in grader.

Judges the demo set's l2 outputs of a scripted model (tests/test_rejudge.py's) three ways, each a
demo-track submission: ``honest`` (the stand-in judge with noise: each dimension moves one point
with probability ``--noise``), ``slight`` (the same judge, one point added to Fluency: QAvg +0.2),
``inflated`` (one point added to every dimension) and ``fake`` (5 for everything, issue 35's fake
endpoint). Then re-judges each ``--repeats``
times with the verifier's own stand-in (same judge, fresh noise; each check draws its own seed)
at each K, and prints how often each failed: for ``honest`` that is the false-alarm rate, for the
others the power. No network, no GPU; about ten minutes on two shared cores (reading the drawn
samples dominates).
Usage: python benchmarks/rejudge_power.py [--k 8 16] [--repeats 200] [--noise 0.2] [--only NAME...]
[--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def submissions(folder: Path, noise: float, only: list[str] | None) -> dict[str, tuple[dict, list]]:
    """(document, runs) of each judged variant (or of those ``only`` names), built in ``folder``."""
    from standin_grader import standin_grader
    from test_rejudge import judged_logs

    from narrative_infill.analysis.submission.build import build_submission, read_settings

    graders = {
        "honest": standin_grader("standin-honest", noise=noise, seed=1),
        "slight": standin_grader("standin-slight", noise=noise, seed=3, inflate=1, inflated=1),
        "inflated": standin_grader("standin-inflated", noise=noise, seed=2, inflate=1),
        "fake": standin_grader("fake", fives=True),
    }
    out = {}
    for name, grader in graders.items():
        if only and name not in only:
            continue
        judged_logs(folder / name, grader)
        paths = [str(folder / name)]
        out[name] = (build_submission(paths, "demo"), read_settings(paths))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[8, 16], help="samples re-judged per check")
    parser.add_argument("--repeats", type=int, default=200, help="checks per variant and K")
    parser.add_argument("--noise", type=float, default=0.2, help="the stand-in judge's per-dimension noise")
    parser.add_argument("--only", nargs="+", help="judge only these variants")
    parser.add_argument("--keep", type=Path, help="keep the logs here")
    args = parser.parse_args()

    from standin_grader import standin_grader

    from narrative_infill.analysis.submission.rejudge import ALPHA, MARGIN, rejudge

    started = time.perf_counter()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="rejudge-power-"))
    # A cache of its own: Inspect's model cache would hand an earlier run's (noisier) verdicts back
    os.environ["INSPECT_CACHE_DIR"] = str(folder / "inspect-cache")
    judged = submissions(folder, args.noise, args.only)
    print(f"logs in {time.perf_counter() - started:.0f} s ({folder})", flush=True)
    print(
        f"rule: one-sided Wilcoxon signed-rank of claimed - re-judged - {MARGIN}, fails below {ALPHA}; "
        f"noise {args.noise}"
    )
    print("| variant | claimed QAvg | K | failed checks | rate |")
    print("|---|---|---|---|---|")
    for name, (document, runs) in judged.items():
        claimed = document["settings"]["l2"]["qavg"]["mean"]
        for k in args.k:
            failed = 0
            for repeat in range(args.repeats):
                verifier = standin_grader("standin-verifier", noise=args.noise, seed=10_000 + repeat)
                failed += bool(rejudge(document, runs, verifier, k).failures)
            print(
                f"| {name} | {claimed:.3f} | {k} | {failed}/{args.repeats} | {failed / args.repeats:.3f} |",
                flush=True,
            )
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
