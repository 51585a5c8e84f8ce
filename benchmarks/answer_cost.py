"""What one answer costs the five metrics, at and past the input limits (docs/extraction-limits.md).

Scores, one pair at a time with the MiniLM backbone, the longest real response of ../shared (as the
published rule scores it: the whole response) and three 200 KB hostile answers, each against that
response's gold span; prints a markdown table of seconds and the characters left unscored.
Usage: python benchmarks/answer_cost.py [--file PATH]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

DEFAULT_FILE = (
    Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction" / "responses.jsonl"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    longest = max(rows, key=lambda row: len(row["response"]))
    backbones = resolve_backbones("minilm")
    score_pairs(["A warm-up answer."], ["A gold span."], backbones, use_cache=False)  # loads the models
    answers = {
        f"the longest real response, {len(longest['response']):,} characters": longest["response"].strip(),
        "200 KB of distinct short sentences": "".join(f"Tom ran {i} miles. " for i in range(200_000 // 19)),
        "200 KB of dots": "." * 200_000,
        "200 KB of words without a sentence end": "word " * 40_000,
    }
    print("| answer | time | answer_truncated_chars |\n|---|---|---|")
    for name, text in answers.items():
        start = time.perf_counter()
        [result] = score_pairs([text], [longest["gold_answer"]], backbones, use_cache=False)
        print(f"| {name} | {time.perf_counter() - start:.1f} s | {result.truncated_chars:,} |", flush=True)
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
