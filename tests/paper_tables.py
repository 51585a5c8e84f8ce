"""Reads the paper's Markdown tables (../shared/paper/paper.md) into (table, setting, row, column,
value) cells, the form of ``narrative_infill/platform/analysis/report/paper_results.csv``. The test compares
the committed file with what this parser reads, so a typo in either fails; the package itself
never reads ../shared."""

from __future__ import annotations

import re
from pathlib import Path

SETTINGS = {
    "very low (l0)": "l0", "low (l1)": "l1", "moderate (l2)": "l2", "high (l3)": "l3", "very high (l4)": "l4",
    "very low": "l0", "moderate": "l2", "very high": "l4", "l2": "l2", "cot": "cot",
    "abductive": "abductive", "abductive reasoning": "abductive", "causal": "causal",
    "causal reasoning": "causal", "chain-of-thought": "cot", "counterfactual": "counterfactual",
    "counterfactual thinking": "counterfactual",
}  # fmt: skip
COLUMNS = {
    "bert": "bertscore", "r-1": "rouge1", "rouge-1": "rouge1", "met": "meteor", "metero": "meteor",
    "meteor": "meteor", "chrf": "chrf", "f1": "semf1", "sem-f1": "semf1", "atavg": "atavg",
    "flu": "fluency", "faith": "context_faithfulness", "bico": "bidirectional_coherence",
    "narco": "narrative_consistency", "info": "informativeness", "qavg": "qavg",
}  # fmt: skip
DIMENSION_ROWS = {
    "fluency": "fluency", "faithfulness": "context_faithfulness", "coherence": "bidirectional_coherence",
    "narrative consistency": "narrative_consistency", "informativeness": "informativeness",
}  # fmt: skip
DOMAINS = {
    "cnn/dailymail": "cnn_dailymail",
    "wikipedia": "wikipedia",
    "rocstories": "rocstories",
    "sind": "sind",
}
JUDGES = {"gpt-4.1-mini": "gpt-4.1-mini", "gemini 3.5 flash-lite": "gemini-3.5-flash-lite"}
TABLES = (3, 4, 5, 7, 10, 11, 12, 13, 14)
#: Tables 6 and 8 are images in the paper; only the numbers its text quotes are kept.
TEXT_CELLS = {
    6: [("l3", "all", "high_pct", "63.4"), ("cot", "all", "high_pct", "64.0"),
        ("counterfactual", "all", "high_pct", "54.9")],
    8: [("best3_levels", "5-6 sentences", "p=1,n=3", "16.0"), ("best3_levels", "5-6 sentences", "p=1,n=2", "14.1"),
        ("best3_levels", "5-6 sentences", "p=2,n=2", "13.5")],
}  # fmt: skip


def _blocks(text: str) -> dict[int, list[list[str]]]:
    """Table number -> its Markdown rows (cells stripped): the first table after its caption,
    before the next caption."""
    lines = text.splitlines()
    captions = [
        (i, int(m.group(1))) for i, line in enumerate(lines) if (m := re.match(r"Table (\d+):", line))
    ]
    found = {}
    for index, (start, number) in enumerate(captions):
        end = captions[index + 1][0] if index + 1 < len(captions) else len(lines)
        first = next((i for i in range(start + 1, end) if lines[i].startswith("|")), None)
        if first is None:
            continue
        last = next((i for i in range(first, end) if not lines[i].startswith("|")), end)
        found[number] = [
            [c.strip() for c in line.strip().strip("|").split("|")]
            for line in lines[first:last]
            if not re.fullmatch(r"[|\s-]+", line)
        ]
    return found


def _number(text: str) -> str:
    value = text.strip().rstrip("%").strip()
    if not re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        raise ValueError(f"not a number: {text!r}")
    return value


def paper_cells(paper_md: Path) -> list[tuple[str, str, str, str, str, str]]:
    """(table, setting, row, column, value, source) for every number of the transcribed tables."""
    text = paper_md.read_text(encoding="utf-8")
    blocks = _blocks(text)
    cells = []

    def add(table, setting, row, column, value, source="table"):
        cells.append((f"table{table}", setting, row, column, _number(value), source))

    for table in (3, 5):
        head, columns, *rows = blocks[table]
        settings = [SETTINGS[h.casefold()] for h in head[1:] if h]
        names = [COLUMNS[c.casefold()] for c in columns[1:]]
        for row in rows:
            for k, value in enumerate(row[1:]):
                add(table, settings[k // 2], row[0], names[k], value)
    head, *rows = blocks[4]
    for row in rows:
        for name, value in zip(head[1:], row[1:]):
            add(4, "", DIMENSION_ROWS[row[0].casefold()], COLUMNS[name.casefold()], value)
    for table in (10, 11, 12):
        head, *rows = blocks[table]
        setting = None
        for row in rows:
            if not any(row[1:]):
                setting = SETTINGS[row[0].casefold()]
                continue
            for name, value in zip(head[1:], row[1:]):
                add(table, setting, row[0], COLUMNS[name.casefold()], value)
    head, *rows = blocks[7]
    setting, by_domain = None, False
    for row in rows:
        label = row[0].casefold()
        if not any(row[1:]):
            by_domain = by_domain or label.startswith("dataset-level")
            setting = (
                "teler"
                if label.startswith("prompt")
                else "reasoning"
                if label.startswith("reasoning")
                else setting
            )
            continue
        for position, value in zip(head[1:], row[1:]):
            qavg, high = (part.strip() for part in value.split("/"))
            cell_setting, cell_row = (setting, DOMAINS[label]) if by_domain else (SETTINGS[label], "all")
            add(7, cell_setting, cell_row, f"{position.casefold()} qavg", qavg)
            add(7, cell_setting, cell_row, f"{position.casefold()} high_pct", high)
    head, *rows = blocks[13]
    for model, setting, value in rows:
        mean, sd = (part.strip() for part in value.split("$\\pm$"))
        add(13, SETTINGS[setting.casefold()], model, "qavg_mean", mean)
        add(13, SETTINGS[setting.casefold()], model, "qavg_sd", sd)
    head, *rows = blocks[14]
    for row in rows:
        for judge, value in zip(head[2:], row[2:]):
            add(14, SETTINGS[row[1].casefold()], row[0], JUDGES[judge.casefold()], value)
    for table, quoted in TEXT_CELLS.items():
        paragraph = next(
            p
            for p in text.split("\n\n")
            if p.lstrip().startswith(f"Table {table} ")
            or f"Table {table} shows" in p
            or f"Table {table} reports" in p
        )
        for setting, row, column, value in quoted:
            if f"{value}\\%" not in paragraph:
                raise ValueError(f"Table {table}: {value}% is not quoted in its paragraph")
            add(table, setting, row, column, value, "text")
    return cells
