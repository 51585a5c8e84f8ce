"""What the reproductions of issue 44, finding 7 cost at their real sizes, each in a fresh process
(time and peak RSS): a 64 MB response in a zip-bomb xlsx and in a JSONL file (both refused now),
METEOR on an answer just under the 32 KB cap of distinct dictionary words (with the synonym lookups
bounded, and with NLTK's plain WordNet reader as before), and the examples stage's slot pattern on
"{{a" repeated to 64 KB. The tests (tests/platform/test_bounded_entry.py, tests/core/test_meteor_synonyms_bounded.py,
tests/core/test_linear_time.py) check the same at sizes that keep them fast.
Usage: PYTHONPATH=$PWD python benchmarks/import_bounds.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap

CASES = {
    "xlsx zip bomb, 64 MB cell: import": """
        import sys, zipfile
        sys.path.insert(0, "tests/platform")
        from test_bounded_entry import zip_bomb
        from narrative_infill.platform.analysis.import_rows import read_generations
        path = zip_bomb(__import__("pathlib").Path(DIR) / "bomb.xlsx", int(64 * 2**20 * SCALE))
        size = __import__("os").path.getsize(path)
        start = time.perf_counter()
        try:
            read_generations([path])
            outcome = "imported"
        except Exception as err:
            outcome = "refused: " + str(err).splitlines()[-1].strip()[:90]
        report(f"{size // 1024} KB file; {outcome}", start)
    """,
    "JSONL, one 64 MB response: import": """
        import json, pathlib
        from narrative_infill.platform.analysis.import_rows import read_generations
        path = pathlib.Path(DIR) / "big.jsonl"
        row = {"model": "m1", "template_name": "fitb_l2", "problem": "A. ______ B.", "gold_answer": "x.",
               "response": "a" * (int(64 * 2**20 * SCALE))}
        path.write_text(json.dumps(row) + "\\n")
        start = time.perf_counter()
        try:
            read_generations([str(path)])
            outcome = "imported"
        except Exception as err:
            outcome = "refused: " + str(err).splitlines()[-1].strip()[:90]
        report(outcome, start)
    """,
    "METEOR, 32 KB of distinct dictionary words (bounded lookups)": """
        from narrative_infill.scorers.metrics import lexical
        answer = WORDS
        lexical.meteor("A warm-up answer.", "A gold span.")
        start = time.perf_counter()
        lexical.meteor(answer, "She ran to the bus, but the driver had already left the stop.")
        report(f"{len(answer):,} characters", start)
    """,
    "METEOR, the same answer, NLTK's plain WordNet reader (before)": """
        from narrative_infill.paper_protocol import METEOR_PARAMS
        from narrative_infill.scorers.metrics import lexical
        tokenize, single, wordnet = lexical._meteor()
        answer = WORDS
        lexical.meteor("A warm-up answer.", "A gold span.")
        start = time.perf_counter()
        gold = "She ran to the bus, but the driver had already left the stop."
        single(tokenize(gold), tokenize(answer), wordnet=wordnet, **METEOR_PARAMS)
        report(f"{len(answer):,} characters", start)
    """,
    'examples stage, "{{a" repeated to 64 KB': """
        from narrative_infill.extraction.examples import _words
        start = time.perf_counter()
        _words("{{a" * (int(64 * 1024 * SCALE) // 3))
        report("", start)
    """,
}

PRELUDE = """
import resource, time
def report(what, start):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{time.perf_counter() - start:.2f} s | {rss} MB | {what}")
"""


def _dictionary_answer(scale: float) -> str:
    """Distinct WordNet lemmas in a fixed shuffled order, cut just under 32,768 characters."""
    import random

    from nltk.corpus import wordnet

    words = sorted({name for name in wordnet.all_lemma_names() if name.isalpha()})
    random.Random(0).shuffle(words)
    return " ".join(words)[: int(32_700 * scale)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scale", type=float, default=1.0, help="every size times this (CI's smoke step: 0.001)"
    )
    args = parser.parse_args()
    answer = _dictionary_answer(args.scale)
    print("| case | time | peak RSS of its process | outcome |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, body in CASES.items():
            code = (
                PRELUDE
                + f"DIR = {folder!r}\nSCALE = {args.scale!r}\nWORDS = {answer!r}\n"
                + textwrap.dedent(body)
            )
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
            line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
            print(f"| {name} | {line} |", flush=True)


if __name__ == "__main__":
    main()
