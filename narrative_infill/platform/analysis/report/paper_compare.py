"""``report --compare-paper``: how close the logs come to the paper, table by table.

For each paper table the logs can speak to, a side-by-side (``paper_<table>.csv``): per setting
and model, the paper's number, ours under each metrics scoring (an extraction rule, see
``scorings``), and the difference. Per setting, the Kendall tau and Spearman rho between our
model ranking and the paper's, tau with conservative 95% bounds from the pairs of models the
clustered paired tests order (``rank_agreement``, ``TAU_RANGE``; an instance is the problem text, so a
model's samples of one problem move together). The
paper's rows that the logs lack are listed (``paper_missing.csv``). A scoring whose backbones
are not the paper's (MiniLM instead of roberta-large and paraphrase-distilroberta) is
labelled "not comparable in level, compare rankings only". ``report.md`` gets one line per
table.

Judge quantities (QAvg and the five dimensions) come from the newest judge scores, labelled
``judge`` (``judge published`` for the published rule's extraction), comparable in level only
when the paper's judge (``paper_protocol.JUDGE_MODEL``) alone gave them; the metrics come from every metrics
scoring, never pooled.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from ....extraction import DEFAULT_EXTRACTION
from ....paper_protocol import (
    BERTSCORE_LAYER,
    BERTSCORE_MODEL,
    JUDGE_MODEL,
    PAPER_JUDGE_VARIANT,
    PARADIGMS,
    SEMF1_MODEL,
    TELER_LEVELS,
)
from ....scorers.judge.rubric import dimensions_of
from ....scorers.metrics.pairs import ATAVG, METRIC_NAMES
from ....scorers.signature import BackboneSignature, JudgeSignature
from ..stats import CONFIDENCE, holm, paired_test
from .metrics_scorings import metrics_scorings
from .paper_results import model_id, paper_results
from .run_labels import sample_narratives

#: Fewer matched models than this leave a ranking coefficient undefined.
MIN_MODELS = 3
NOT_COMPARABLE = "not comparable in level, compare rankings only"
#: What ``tau_low`` and ``tau_high`` are (``rank_agreement``). Simulated with this module's own function
#: (benchmarks/tau_interval_coverage.py), the bounds cover the true tau in at least 95% of draws at
#: 10 and 30 narratives, gaps between models of 0.05 to 0.005; the bootstrap's 2.5-97.5% range they
#: replace covered it in 48-55% (10 narratives) and 82-92% (30) when the gaps were about the noise,
#: and its bias-corrected (BCa) form in 63% and 86%: a noisy ranking pulls the estimate towards 0.
TAU_RANGE = (
    "Kendall τ, with tau_low..tau_high its conservative 95% bounds: the pairs of models the clustered "
    "paired t tests order (Holm-adjusted over the pairs) count as ordered, the others either way "
    "(the narratives column: how many narratives); a wide range says the data leave the ranking open "
    "(docs/statistics.md)"
)
#: A dated snapshot of a model (``gpt-4.1-mini-2025-04-14``): the same judge as its undated name.
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}")
#: The paper's tables report its own judge prompt's dimensions.
JUDGED = ("qavg", *dimensions_of(PAPER_JUDGE_VARIANT))
#: Paper table -> its settings and the quantities it reports per model.
MODEL_TABLES = {
    "table3": (TELER_LEVELS, (ATAVG, "qavg")),
    "table5": (PARADIGMS, (ATAVG, "qavg")),
    "table10_11": (TELER_LEVELS, (*METRIC_NAMES, ATAVG, *JUDGED)),
    "table12": (PARADIGMS, (*METRIC_NAMES, ATAVG, *JUDGED)),
}
#: Tables 6, 8, 13 and 14 need repeated runs, judge panels or the paper's sentence indices;
#: what keeps each out of the comparison is said in the report.
NOT_COMPARED = {
    "table4": "the paper's Table 4 needs judge scores beside the metrics (see table4_kendall)",
    "table6": "the paper quotes only 3 High% cells of Table 6 (an image); compare table6_quality_by_setting "
    "by eye",
    "table7": "Table 7 needs judge scores and blank positions; compare table7_* by eye",
    "table8": "the paper's Table 8 is an image and its text indexes blanks by sentence (p=1), "
    "not by position",
    "table13": "Table 13 is a 10% subset over five seeds; compare table13_seed_robustness by eye",
    "table14": "Table 14's judges (GPT-4.1-mini, Gemini) are named by provider; compare "
    "table14_judge_sensitivity by eye",
}


@dataclass
class Comparison:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    absent: dict[str, str] = field(default_factory=dict)
    #: the paper's (table, setting, model) rows of settings the logs ran, without samples there
    missing: list[dict] = field(default_factory=list)


def paper_name(model: str, names: list[str]) -> str | None:
    """The paper's name of a log's model (``vllm/google/gemma-2-2b-it`` -> ``Gemma-2-2B``)."""
    lowered = model.casefold()
    for name in names:
        known = model_id(name).casefold()
        if lowered == known or lowered.endswith("/" + known):
            return name
    return None


def is_paper_signature(signature: str | None) -> bool:
    """Whether a metrics signature uses the paper's backbones (roberta-large L17, distilroberta)."""
    named = BackboneSignature.parse(signature or "")
    paper = (BERTSCORE_MODEL, BERTSCORE_LAYER, SEMF1_MODEL)
    return named is not None and (named.bertscore_model, named.bertscore_layer, named.semf1_model) == paper


def is_paper_judge(judge_models: str | None) -> bool:
    """Whether the judge scores came from the paper's judge alone (GPT-4.1-mini, any provider
    route or dated snapshot)."""
    models = list(JudgeSignature.parse(judge_models).models.values())
    if len(models) != 1 or not models[0]:
        return False
    model = models[0].casefold().split("/")[-1]
    paper = JUDGE_MODEL.casefold().split("/")[-1]
    return model == paper or (
        model.startswith(paper) and _SNAPSHOT.fullmatch(model[len(paper) :]) is not None
    )


def _judge_scoring(judge_models: str | None) -> str:
    """The judge scores' label: ``judge``, or ``judge published`` when the judge read the
    published rule's extraction."""
    rule = JudgeSignature.parse(judge_models).extraction
    return "judge" if rule == DEFAULT_EXTRACTION else f"judge {rule}"


def _level(scoring: str, signature: str | None) -> str:
    """How a scoring compares with the paper: ``paper judge``, ``paper backbones`` or
    NOT_COMPARABLE (a judge scoring's signature is its ``judge_models``)."""
    if scoring.startswith("judge"):
        return "paper judge" if is_paper_judge(signature) else NOT_COMPARABLE
    return "paper backbones" if is_paper_signature(signature) else NOT_COMPARABLE


def _paper_cells(table: str) -> pd.DataFrame:
    tables = ("table10", "table11") if table == "table10_11" else (table,)
    cells = pd.concat([paper_results(name) for name in tables])
    return cells[cells["row"] != "Overall"].rename(columns={"row": "paper_model", "column": "quantity"})


def _samples(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """One row per (sample, scoring, quantity) with the model's paper name: every metrics
    scoring and, labelled ``judge``, the newest judge scores."""
    parts = []
    scorings = metrics_scorings(frame)
    if not scorings.empty:
        parts.append(
            scorings.melt(
                id_vars=["model", "setting", "instance", "scoring", "signature"],
                value_vars=[ATAVG, *METRIC_NAMES],
                var_name="quantity",
            )
        )
    judged = [c for c in JUDGED if c in frame.columns]
    if judged and frame[judged].notna().any().any():
        judge = frame[["model", "setting", "input", *judged]].rename(columns={"input": "instance"})
        models = (
            frame["judge_models"] if "judge_models" in frame.columns else pd.Series(None, index=frame.index)
        )
        parts.append(
            judge.assign(scoring=models.map(_judge_scoring), signature=models).melt(
                id_vars=["model", "setting", "instance", "scoring", "signature"],
                value_vars=judged,
                var_name="quantity",
            )
        )
    if not parts:
        return pd.DataFrame()
    long = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    long["narrative"] = long["instance"].map(dict(zip(frame["input"], sample_narratives(frame))))
    long["paper_model"] = long["model"].map(lambda m: paper_name(str(m), names))
    return long.dropna(subset=["paper_model"])


def rank_agreement(matrix: np.ndarray, paper: np.ndarray, clusters: list) -> dict[str, float]:
    """Kendall tau and Spearman rho of the column means of ``matrix`` (instances x models, NaN where
    a model has no sample of an instance) against ``paper``, with tau's bounds (``TAU_RANGE``): every
    pair of models gets the clustered paired t test on the instances both scored (``clusters``: one
    narrative per row), Holm-adjusted over the pairs; a pair the tests order counts as ordered so,
    an undecided pair as concordant for ``tau_high`` and discordant for ``tau_low``. The tests'
    family-wise level makes every decided order right in 95% of draws, and then the true tau lies
    within the bounds: a conservative interval, as wide as the data leave the ranking open."""
    import warnings

    from scipy.stats import kendalltau, spearmanr

    nan = {"kendall_tau": math.nan, "tau_low": math.nan, "tau_high": math.nan, "spearman_rho": math.nan}
    if matrix.shape[1] < MIN_MODELS or not len(matrix):
        return nan
    pairs = list(combinations(range(matrix.shape[1]), 2))
    tests = []
    for i, j in pairs:
        both = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
        tests.append(paired_test(matrix[both, i] - matrix[both, j], [c for c, b in zip(clusters, both) if b]))
    adjusted = holm([1.0 if test is None else test.p_value for test in tests])
    decided = undecided = 0.0
    for (i, j), test, p_value in zip(pairs, tests, adjusted):
        sign = np.sign(paper[i] - paper[j])
        if test is not None and p_value < 1 - CONFIDENCE:
            decided += sign * np.sign(test.difference)
        else:
            undecided += abs(sign)
    untied = sum(paper[i] != paper[j] for i, j in pairs)
    # tau-b's denominator with the models' true means untied: the paper's ties alone count
    scale = math.sqrt(len(pairs) * untied) if untied else math.nan
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # a constant ranking has no coefficient: NaN, said by the NaN
        means = np.nanmean(matrix, axis=0)
        return {
            "kendall_tau": kendalltau(means, paper).statistic,
            "tau_low": (decided - undecided) / scale,
            "tau_high": (decided + undecided) / scale,
            "spearman_rho": spearmanr(means, paper).statistic,
        }


def _compare_table(table: str, long: pd.DataFrame, comparison: Comparison) -> list[dict]:
    settings, quantities = MODEL_TABLES[table]
    paper = _paper_cells(table)
    ours = long[long["setting"].isin(settings) & long["quantity"].isin(quantities)]
    if ours.empty:
        comparison.absent[f"paper_{table}"] = f"no runs of {', '.join(settings)} in the logs"
        return []
    means = ours.groupby(["setting", "paper_model", "quantity", "scoring"])["value"].mean().unstack("scoring")
    side = paper.set_index(["setting", "paper_model", "quantity"])[["value"]].rename(
        columns={"value": "paper"}
    )
    side = side[side.index.get_level_values("quantity").isin(set(ours["quantity"]))].join(means, how="left")
    signatures = ours.groupby("scoring")["signature"].first()
    levels = {scoring: _level(scoring, signatures[scoring]) for scoring in means.columns}
    for scoring in means.columns:
        # A difference of levels across backbones means nothing: its column says so.
        label = f"diff {scoring}" + (f" ({NOT_COMPARABLE})" if levels[scoring] == NOT_COMPARABLE else "")
        side[label] = side[scoring] - side["paper"]
    covered = (
        side[list(means.columns)]
        .notna()
        .any(axis=1)
        .groupby(level=["setting", "paper_model"])
        .transform("any")
    )
    comparison.tables[f"paper_{table}"] = side[covered]
    missing = side[~covered].reset_index()[["setting", "paper_model"]].drop_duplicates()
    comparison.missing += [
        {"table": table, "setting": setting, "paper_model": name, "model_id": model_id(name)}
        for setting, name in missing.itertuples(index=False)
        if setting in set(ours["setting"])
    ]
    agreement = []
    for (setting, quantity, scoring), group in ours.groupby(["setting", "quantity", "scoring"]):
        matrix = group.pivot_table(index="instance", columns="paper_model", values="value", aggfunc="mean")
        cells = side.xs((setting, quantity), level=("setting", "quantity"))["paper"]
        matrix = matrix[[m for m in matrix.columns if m in cells.index]]
        clusters = list(group.groupby("instance")["narrative"].first()[matrix.index])
        agreement.append(
            {
                "table": table,
                "setting": setting,
                "quantity": quantity,
                "scoring": scoring,
                "models": matrix.shape[1],
                "instances": matrix.shape[0],
                "narratives": len(set(clusters)),
                "level": levels[scoring],
                **rank_agreement(
                    matrix.to_numpy(dtype=float), cells[matrix.columns].to_numpy(dtype=float), clusters
                ),
            }
        )
    return agreement


def _summary(table: str, agreement: pd.DataFrame, present: pd.DataFrame, missing: int) -> str:
    rows = present.reset_index()[["setting", "paper_model"]].drop_duplicates()
    parts = [f"**{table}**: {len(rows)} paper rows (setting x model) in the logs, {missing} missing"]
    headline = agreement[agreement["quantity"].isin([ATAVG, "qavg"])]
    for (quantity, scoring), group in headline.groupby(["quantity", "scoring"], sort=False):
        taus = ", ".join(f"{s} {t:.2f}" for s, t in zip(group["setting"], group["kendall_tau"]))
        parts.append(f"Kendall tau of the {quantity} ranking [{scoring}]: {taus}")
    judged = agreement["scoring"].str.startswith("judge")
    if NOT_COMPARABLE in set(agreement.loc[~judged, "level"]):
        parts.append(f"metrics {NOT_COMPARABLE} (the logs' backbones are not the paper's)")
    if NOT_COMPARABLE in set(agreement.loc[judged, "level"]):
        parts.append(f"judge scores {NOT_COMPARABLE} (the logs' judge is not the paper's GPT-4.1-mini)")
    return "; ".join(parts) + "."


def compare_with_paper(frame: pd.DataFrame) -> Comparison:
    """Side-by-sides, rank agreement and missing rows for every paper table the logs cover."""
    comparison = Comparison()
    names = sorted(set(paper_results("table3")["row"]) - {"Overall"})
    long = _samples(frame, names)
    # Two log models taken for one paper model (vllm/X and hf/X) would be averaged into its row.
    twice = long.groupby("paper_model")["model"].unique()
    for name, models in twice[twice.map(len) > 1].items():
        comparison.absent[f"paper row {name}"] = (
            f"left out: {len(models)} models of the logs match it ({', '.join(sorted(map(str, models)))}); "
            "report them separately"
        )
        long = long[long["paper_model"] != name]
    if long.empty:
        comparison.absent["paper_comparison"] = "no sample of the paper's 20 models with scores in the logs"
        return comparison
    agreement_rows = []
    for table in MODEL_TABLES:
        rows = _compare_table(table, long, comparison)
        agreement_rows += rows
        if rows:
            table_rows = pd.DataFrame(rows)
            missing = sum(1 for row in comparison.missing if row["table"] == table)
            comparison.lines.append(_summary(table, table_rows, comparison.tables[f"paper_{table}"], missing))
    if not agreement_rows:
        return comparison
    order = {s: i for i, s in enumerate(TELER_LEVELS + PARADIGMS)}
    agreement = pd.DataFrame(agreement_rows).sort_values(
        ["table", "quantity", "scoring", "setting"], key=lambda c: c.map(order) if c.name == "setting" else c
    )
    comparison.tables["paper_rank_agreement"] = agreement.set_index(
        ["table", "quantity", "scoring", "setting"]
    )
    headline = agreement[agreement["table"].isin(["table3", "table5"]) & (agreement["quantity"] == ATAVG)]
    tau = headline.pivot_table(
        index=["table", "setting"],
        columns="scoring",
        values=["kendall_tau", "tau_low", "tau_high"],
        sort=False,
    )
    tau = tau.reorder_levels([1, 0], axis=1).sort_index(axis=1, level=0, sort_remaining=False)
    tau.columns = [f"{stat.replace('kendall_', '')} {scoring}" for scoring, stat in tau.columns]
    tau["narratives"] = headline.groupby(["table", "setting"])["narratives"].max().reindex(tau.index)
    comparison.lines.append(f"paper_tau_atavg: {TAU_RANGE}.")
    comparison.tables["paper_tau_atavg"] = tau
    metrics = agreement[
        agreement["table"].isin(["table10_11", "table12"]) & agreement["quantity"].isin(METRIC_NAMES)
    ]
    if not metrics.empty:
        by_metric = metrics.pivot_table(
            index="setting", columns=["quantity", "scoring"], values="kendall_tau", sort=False
        )
        by_metric.columns = [f"{quantity} {scoring}" for quantity, scoring in by_metric.columns]
        comparison.tables["paper_tau_by_metric"] = by_metric
    if comparison.missing:
        comparison.tables["paper_missing"] = pd.DataFrame(comparison.missing).set_index(
            ["table", "setting", "paper_model"]
        )
    for table, reason in NOT_COMPARED.items():
        comparison.absent[f"paper_{table}"] = reason
    return comparison
