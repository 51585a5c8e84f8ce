"""The paper's published numbers as data: ``paper_results.csv`` and ``paper_models.csv``.

``paper_results.csv`` holds every number of Tables 3, 4, 5, 7, 10, 11, 12, 13 and 14, and the
numbers the text quotes from Tables 6 and 8 (images in the paper), one row per number:
``table`` (``table3``...), ``setting`` (``l0``..``l4``, a paradigm, ``teler``/``reasoning`` for
Table 7's domain rows, empty for Table 4), ``row`` (the paper's model name, ``Overall``, a
judge dimension, a domain or ``all``), ``column`` (a metric, a dimension, ``atavg``, ``qavg``,
``<position> qavg``/``high_pct``...), ``value`` and ``source`` (``table`` or ``text``).
``tests/platform/test_paper_results.py`` checks every number against the paper's Markdown.
``paper_models.csv`` maps the paper's model names (any case) to the model ids the logs carry.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

_HERE = Path(__file__).resolve().parent
RESULTS_CSV = _HERE / "paper_results.csv"
MODELS_CSV = _HERE / "paper_models.csv"


@cache
def _results() -> pd.DataFrame:
    frame = pd.read_csv(RESULTS_CSV, dtype=str, keep_default_na=False)
    frame["value"] = frame["value"].astype(float)
    return frame


def paper_results(table: str | None = None) -> pd.DataFrame:
    """The paper's numbers (a copy), all of them or one table's."""
    frame = _results()
    return (frame if table is None else frame[frame["table"] == table]).copy()


@cache
def paper_model_ids() -> dict[str, str]:
    """The paper's model name, casefolded -> the model id (``google/gemma-2-2b-it``)."""
    models = pd.read_csv(MODELS_CSV, dtype=str)
    return {name.casefold(): model for name, model in zip(models["paper_name"], models["model_id"])}


def model_id(paper_name: str) -> str:
    """The model id of a paper row name; other rows (``Overall``) keep their name."""
    return paper_model_ids().get(paper_name.casefold(), paper_name)
