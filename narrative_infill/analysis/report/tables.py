"""The paper's tables and Figure 2 from Inspect logs: ``narrative-infill report``.

Reads logs through ``inspect_ai.analysis`` dataframes (one row per sample, joined with its
eval's model and task), then writes ``report.md``, one CSV per table and PNG figures. A
table the logs cannot support (no judge scores, one setting only, no repeated runs...) is
listed in ``report.md`` as absent, with the reason; it is never an empty file.

Conventions, each as in the paper unless said:
* AtAvg is the mean of the five metrics per sample, QAvg the mean of the five judge
  dimensions per sample; a cell is the mean over the cell's samples.
* The "Overall" row is the mean over models of the model means (each model counts once).
* High% = share of judged samples with QAvg > 4 (``--high-inclusive``: >= 4, the authors'
  scripts); Low% = share with QAvg < 2.
* Narrative length buckets (Table 8): short <= 5 sentences, medium 6-15, long > 15.
* Kendall tau (Table 4), as Appendix A.2, within each setting: system level over the model
  means; sample level, for each sample, the tau across the models' epoch-averaged scores, then
  the mean over samples. Both are averaged over settings (``table4_kendall_by_setting`` keeps
  each setting's system-level tau).
* Each run counts once: ``load.py`` reads the latest successful log of each run and the
  newest scores of each scorer (see there).
* Contamination: share of answers whose ROUGE-1 F1 against the gold is >= 0.8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ...definitions import CONTAMINATION_ROUGE, DIMENSIONS, PARADIGMS, is_high, is_low
from ...definitions import TELER_LEVELS as LEVELS
from ...scorers.metrics.pairs import METRIC_NAMES as METRICS
from .human import human_agreement

CONTAMINATION_TABLE = f"contamination_rouge1_ge_{CONTAMINATION_ROUGE:g}"


@dataclass
class Report:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def has_columns(frame: pd.DataFrame, columns) -> bool:
    return all(c in frame.columns for c in columns) and frame[list(columns)].notna().any().all()


def _pivot(frame: pd.DataFrame, value: str, columns: str, order: tuple[str, ...]) -> pd.DataFrame:
    present = [c for c in order if c in set(frame[columns])]
    table = frame.pivot_table(index="model", columns=columns, values=value, aggfunc="mean")[present]
    table.loc["Overall"] = table.mean(axis=0)
    return table


def build_report(frame: pd.DataFrame, high_inclusive: bool = False, human_csv: str | None = None) -> Report:
    report = Report()
    has_metrics = has_columns(frame, ("atavg",))
    has_judge = has_columns(frame, ("qavg",))
    if not has_judge:
        report.notes.append(
            "No judge scores in these logs: QAvg, High% and Low% columns are absent (run narrative_infill/judge)."
        )
    if not has_metrics:
        report.notes.append(
            "No automatic-metric scores in these logs: AtAvg columns are absent (run narrative_infill/metrics)."
        )
    if has_judge:
        frame = frame.assign(high=is_high(frame["qavg"], high_inclusive), low=is_low(frame["qavg"]))
        frame.loc[frame["qavg"].isna(), ["high", "low"]] = math.nan
    teler = frame[frame["setting"].isin(LEVELS)]
    reasoning = frame[frame["setting"].isin(PARADIGMS)]

    def by_setting(name: str, subset: pd.DataFrame, order: tuple[str, ...], what: str):
        if subset.empty:
            report.absent[name] = f"no {what} runs in the logs"
            return
        parts = {}
        if has_metrics:
            parts["AtAvg"] = _pivot(subset, "atavg", "setting", order)
        if has_judge:
            parts["QAvg"] = _pivot(subset, "qavg", "setting", order)
        if not parts:
            report.absent[name] = "neither metric nor judge scores in the logs"
            return
        report.tables[name] = pd.concat(parts, axis=1)

    by_setting("table3_model_by_level", teler, LEVELS, "TELeR-level")
    by_setting("table5_model_by_paradigm", reasoning, PARADIGMS, "reasoning-paradigm")

    for name, subset, order in (("table10_11", teler, LEVELS), ("table12", reasoning, PARADIGMS)):
        if subset.empty:
            report.absent[f"{name}_breakdown"] = "no runs of these settings in the logs"
            continue
        columns = [c for c in (*METRICS, "atavg", *DIMENSIONS, "qavg") if has_columns(subset, (c,))]
        if not columns:
            report.absent[f"{name}_breakdown"] = "no scores in the logs"
            continue
        grouped = subset.groupby(["setting", "model"])[columns].mean()
        report.tables[f"{name}_breakdown"] = grouped.reindex(
            [s for s in order if s in set(subset["setting"])], level=0
        )

    if has_judge:
        judged = frame[frame["setting"].isin(LEVELS + PARADIGMS)]
        table6 = judged.groupby("setting").agg(
            QAvg=("qavg", "mean"), High=("high", "mean"), Low=("low", "mean"), judged=("qavg", "count")
        )
        table6[["High", "Low"]] *= 100
        report.tables["table6_quality_by_setting"] = table6.reindex(
            [s for s in LEVELS + PARADIGMS if s in table6.index]
        )
        if has_columns(frame, ("metadata_position",)):
            t7 = frame.groupby(["setting", "metadata_position"]).agg(
                QAvg=("qavg", "mean"), High=("high", "mean")
            )
            t7["High"] *= 100
            report.tables["table7_position_by_setting"] = t7.unstack("metadata_position")
            if has_columns(frame, ("metadata_domain",)):
                t7b = frame.groupby(["metadata_domain", "metadata_position"]).agg(
                    QAvg=("qavg", "mean"), High=("high", "mean")
                )
                t7b["High"] *= 100
                report.tables["table7_domain_by_position"] = t7b.unstack("metadata_position")
        else:
            report.absent["table7_position_by_setting"] = (
                "samples carry no blank position (imported generations without source text)"
            )
        if has_columns(frame, ("metadata_narrative_sentences", "metadata_position", "metadata_n")):
            length = pd.cut(
                frame["metadata_narrative_sentences"].astype(float),
                [0, 5, 15, math.inf],
                labels=["short (<=5)", "medium (6-15)", "long (>15)"],
            )
            t8 = (
                frame.assign(length=length)
                .groupby(["length", "metadata_position", "metadata_n"], observed=True)["low"]
                .mean()
                * 100
            )
            report.tables["table8_low_by_length_position_n"] = t8.unstack(["metadata_position", "metadata_n"])
        else:
            report.absent["table8_low_by_length_position_n"] = (
                "samples carry no narrative length, position or n"
            )
    else:
        for name in (
            "table6_quality_by_setting",
            "table7_position_by_setting",
            "table8_low_by_length_position_n",
        ):
            report.absent[name] = "no judge scores in the logs"

    _correlations(frame, report, has_metrics, has_judge)
    _robustness(frame, report, has_judge)
    if has_metrics:
        contaminated = frame.groupby("model")["rouge1"].agg(
            answers="count", near_verbatim=lambda s: (s >= CONTAMINATION_ROUGE).sum(), share=lambda s: (s >= CONTAMINATION_ROUGE).mean() * 100
        )  # fmt: skip
        report.tables[CONTAMINATION_TABLE] = contaminated
    else:
        report.absent[CONTAMINATION_TABLE] = "no ROUGE-1 scores in the logs"
    if human_csv:
        human_agreement(frame, human_csv, report, has_judge)
    else:
        report.absent["table2_human_agreement"] = "no --human CSV of human ratings given"
    return report


def _correlations(frame: pd.DataFrame, report: Report, has_metrics: bool, has_judge: bool) -> None:
    """Table 4, as Appendix A.2: within one setting, system level correlates the m model means;
    sample level correlates, for each sample, the m models' (epoch-averaged) scores of that
    sample, then averages over samples. Both are then averaged over the settings."""
    from scipy.stats import kendalltau

    if not (has_metrics and has_judge):
        report.absent["table4_kendall"] = "needs both metric and judge scores"
        return
    columns = [*METRICS, "atavg", *DIMENSIONS, "qavg"]
    judged = frame.dropna(subset=["qavg"])
    # One value per (setting, sample, model): the mean over epochs.
    per_model = judged.groupby(["setting", "id", "model"])[columns].mean()
    system_rows, sample_matrices = [], []
    for setting, rows in per_model.groupby(level="setting"):
        systems = rows.groupby(level="model").mean()
        if len(systems) < 3:
            continue
        for metric_name in (*METRICS, "atavg"):
            for d in (*DIMENSIONS, "qavg"):
                tau = kendalltau(systems[metric_name], systems[d]).statistic
                system_rows.append(
                    {"setting": setting, "metric": metric_name, "dimension": d, "system_tau": tau}
                )
        # pandas' Kendall is tau-b, as scipy's, and computes a whole matrix per sample in one call.
        sample_matrices += [
            group[columns].corr(method="kendall")
            for _, group in rows.groupby(level="id")
            if len(group) >= 3
        ]  # fmt: skip
    if not system_rows:
        report.absent["table4_kendall"] = "no setting has at least 3 judged models"
        return
    by_setting = pd.DataFrame(system_rows).set_index(["setting", "metric", "dimension"])
    table = by_setting.groupby(level=["metric", "dimension"], sort=False).mean()
    sample_level = pd.concat(sample_matrices).groupby(level=0).mean() if sample_matrices else None
    table["sample_tau"] = [
        sample_level.loc[metric_name, d] if sample_level is not None else math.nan
        for metric_name, d in table.index
    ]
    table["settings"] = by_setting.groupby(level=["metric", "dimension"], sort=False).size()
    report.tables["table4_kendall"] = table
    report.tables["table4_kendall_by_setting"] = by_setting


def _robustness(frame: pd.DataFrame, report: Report, has_judge: bool) -> None:
    if not has_judge:
        report.absent["table13_seed_robustness"] = report.absent["table14_judge_sensitivity"] = (
            "no judge scores in the logs"
        )
        return
    runs = frame.groupby(["model", "setting", "eval_id", "epoch"])["qavg"].mean().reset_index()
    repeated = runs.groupby(["model", "setting"])["qavg"].agg(["mean", "std", "count"])
    repeated = repeated[repeated["count"] > 1]
    if repeated.empty:
        report.absent["table13_seed_robustness"] = (
            "no task and model was run more than once (epochs or repeated logs)"
        )
    else:
        report.tables["table13_seed_robustness"] = repeated.rename(
            columns={"mean": "QAvg_mean", "std": "QAvg_sd", "count": "runs"}
        )
    judges = [c for c in frame.columns if c.startswith("qavg_")]
    if judges:
        report.tables["table14_judge_sensitivity"] = frame.groupby(["setting", "model"])[judges].mean()
    else:
        report.absent["table14_judge_sensitivity"] = "a single judge scored these logs (use a judge panel)"
