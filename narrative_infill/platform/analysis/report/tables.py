"""The paper's tables and Figure 2 from Inspect logs: ``narrative-infill report``.

Reads logs through ``inspect_ai.analysis`` dataframes (one row per sample, joined with its
eval's model and task), then writes ``report.md``, one CSV per table and PNG figures. A
table the logs cannot support (no judge scores, one setting only, no repeated runs...) is
listed in ``report.md`` as absent, with the reason; it is never an empty file.

Conventions, each as in the paper unless said:
* AtAvg is the mean of the five metrics per sample, QAvg the mean of the five judge
  dimensions per sample; a cell is the mean over the cell's samples.
* A cell holds one run (``run_labels.py``): a model's runs that differ (prompt variant, data, decoding,
  epochs...) are rows of their own, labelled by what differs. The "Overall" row is the mean
  over rows of the row means (each row counts once).
* Coverage (``coverage.py``): per cell, the run's samples, the errored, unscored and empty ones;
  a value whose scorer covers under 95% of its cell is marked in report.md and the figure.
* High% = share of judged samples with QAvg > 4 (``--high-inclusive``: >= 4, the authors'
  scripts); Low% = share with QAvg < 2.
* Tables 3 and 5 carry each cell's 95% interval half-width (``AtAvg ±95%``, ``QAvg ±95%``),
  clustered by source narrative (``analysis.stats``), as ``compare`` and the leaderboard do.
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

import pandas as pd

from ....copy_guards import CONTAMINATION_ROUGE, is_near_verbatim
from ....data.narrative import LENGTH_BUCKETS, length_bucket
from ....paper_protocol import PARADIGMS, is_high, is_low
from ....paper_protocol import TELER_LEVELS as LEVELS
from ....scorers.judge.rubric import frame_dimensions
from ....scorers.metrics.pairs import METRIC_NAMES as METRICS
from ..stats import clustered_interval
from .coverage import coverage_tables
from .document import Absent, Report, Table, has_columns
from .human import EPOCH_JOIN_NOTE, human_agreement
from .run_labels import sample_narratives

CONTAMINATION_TABLE = f"contamination_rouge1_ge_{CONTAMINATION_ROUGE:g}"
NO_JUDGE = "no judge scores in the logs"


def _pivot(frame: pd.DataFrame, value: str, columns: str, order: tuple[str, ...]) -> pd.DataFrame:
    present = [c for c in order if c in set(frame[columns])]
    table = frame.pivot_table(index="model", columns=columns, values=value, aggfunc="mean", dropna=False)
    table = table.reindex(columns=present)  # a setting none of whose samples was scored stays, empty
    table.loc["Overall"] = table.mean(axis=0)
    return table


def build_report(frame: pd.DataFrame, high_inclusive: bool = False, human_csv: str | None = None) -> Report:
    """Every table, in the order ``report.md`` lists them, each present or absent with its reason."""
    report = Report()
    logged = frame  # models as the logs name them: Table 2 joins ratings on them
    frame = frame.assign(
        model=frame["row"]
    )  # one run per cell: a model's differing runs are rows of their own
    has_metrics, has_judge = has_columns(frame, ("atavg",)), has_columns(frame, ("qavg",))
    report.notes.extend(_missing_scores_notes(has_metrics, has_judge))
    if has_judge:
        judged = frame["qavg"].notna()  # an unjudged sample is neither high nor low: left out
        frame = frame.assign(
            high=is_high(frame["qavg"], high_inclusive).astype(float).where(judged),
            low=is_low(frame["qavg"]).astype(float).where(judged),
        )
    teler = frame[frame["setting"].isin(LEVELS)]
    reasoning = frame[frame["setting"].isin(PARADIGMS)]
    report.add("table3_model_by_level", _by_setting(teler, LEVELS, "TELeR-level", has_metrics, has_judge))
    report.add(
        "table5_model_by_paradigm",
        _by_setting(reasoning, PARADIGMS, "reasoning-paradigm", has_metrics, has_judge),
    )
    if not (teler.empty and reasoning.empty):
        report.notes.append(_interval_note(pd.concat([teler, reasoning])))
    report.add("table10_11_breakdown", _breakdown(teler, LEVELS))
    report.add("table12_breakdown", _breakdown(reasoning, PARADIGMS))
    report.add("table6_quality_by_setting", _quality_by_setting(frame) if has_judge else Absent(NO_JUDGE))
    report.add("table7_position_by_setting", _position_by_setting(frame) if has_judge else Absent(NO_JUDGE))
    if "table7_position_by_setting" in report.tables and has_columns(frame, ("metadata_domain",)):
        report.add("table7_domain_by_position", _domain_by_position(frame))
    report.add(
        "table8_low_by_length_position_n", _low_by_length_position_n(frame) if has_judge else Absent(NO_JUDGE)
    )
    _add_kendall(report, frame, has_metrics and has_judge)
    report.add("table13_seed_robustness", _seed_robustness(frame) if has_judge else Absent(NO_JUDGE))
    report.add("table14_judge_sensitivity", _judge_sensitivity(frame) if has_judge else Absent(NO_JUDGE))
    report.add(
        CONTAMINATION_TABLE, _contamination(frame) if has_metrics else Absent("no ROUGE-1 scores in the logs")
    )
    report.add(
        "table2_human_agreement",
        human_agreement(logged, human_csv, has_judge)
        if human_csv
        else Absent("no --human CSV of human ratings given"),
    )
    if human_csv and frame["epoch"].max() > 1:
        report.notes.append(EPOCH_JOIN_NOTE)
    for name, table in coverage_tables(frame).items():
        report.add(name, table)
    return report


def _missing_scores_notes(has_metrics: bool, has_judge: bool) -> list[str]:
    """What the report says about a kind of score the logs do not hold."""
    notes = []
    if not has_judge:
        notes.append(
            "No judge scores in these logs: QAvg, High% and Low% columns are absent (run "
            "narrative_infill/judge)."
        )
    if not has_metrics:
        notes.append(
            "No automatic-metric scores in these logs: AtAvg columns are absent (run "
            "narrative_infill/metrics)."
        )
    return notes


def _add_kendall(report: Report, frame: pd.DataFrame, has_both: bool) -> None:
    """Table 4 (Kendall's tau of the metrics against the judge), overall and by setting."""
    kendall = _correlations(frame) if has_both else Absent("needs both metric and judge scores")
    if isinstance(kendall, Absent):
        report.add("table4_kendall", kendall)
    else:
        report.add("table4_kendall", kendall[0])
        report.add("table4_kendall_by_setting", kendall[1])


def _by_setting(
    subset: pd.DataFrame, order: tuple[str, ...], what: str, has_metrics: bool, has_judge: bool
) -> Table:
    """Tables 3 and 5: AtAvg and QAvg per model and setting, with the Overall row."""
    if subset.empty:
        return Absent(f"no {what} runs in the logs")
    parts = {}
    for present, column, name in ((has_metrics, "atavg", "AtAvg"), (has_judge, "qavg", "QAvg")):
        if present:
            parts[name] = _pivot(subset, column, "setting", order)
            parts[f"{name} ±95%"] = _half_widths(subset, column, parts[name])
    if not parts:
        return Absent("neither metric nor judge scores in the logs")
    return pd.concat(parts, axis=1)


def _half_widths(subset: pd.DataFrame, value: str, means: pd.DataFrame) -> pd.DataFrame:
    """Each cell's 95% interval half-width, clustered by source narrative (``analysis.stats``); the
    Overall row, a mean of row means over shared instances, is left without one."""
    scored = subset.dropna(subset=[value])
    narratives = sample_narratives(scored)
    widths = means * float("nan")
    for (model, setting), cell in scored.groupby(["model", "setting"]):
        found = clustered_interval(cell[value].to_numpy(), list(narratives[cell.index]))
        if found is not None:
            widths.loc[model, setting] = found.high - found.mean
    return widths


def _interval_note(subset: pd.DataFrame) -> str:
    """What the ``±95%`` columns of Tables 3 and 5 are, and how many narratives stand behind them."""
    counts = sample_narratives(subset).groupby([subset["model"], subset["setting"]]).nunique()
    low, high = int(counts.min()), int(counts.max())
    return (
        "Tables 3 and 5, ±95% (± in the README): the half-width of each cell's 95% t interval of the "
        "mean (narratives - 1 df), clustered by narrative, not clipped (the log and board clip to 0-1, 1-5); "
        f"{low if low == high else f'{low}-{high}'} narratives per cell"
        + (" (fewer than 30: wide and only roughly at its level)" if low < 30 else "")
    )


def _breakdown(subset: pd.DataFrame, order: tuple[str, ...]) -> Table:
    """Tables 10-12: every metric and dimension per setting and model."""
    if subset.empty:
        return Absent("no runs of these settings in the logs")
    columns = [c for c in (*METRICS, "atavg", *frame_dimensions(subset), "qavg") if has_columns(subset, (c,))]
    if not columns:
        return Absent("no scores in the logs")
    grouped = subset.groupby(["setting", "model"])[columns].mean()
    return grouped.reindex([s for s in order if s in set(subset["setting"])], level=0)


def _quality_by_setting(frame: pd.DataFrame) -> Table:
    """Table 6: QAvg, High% and Low% per setting."""
    judged = frame[frame["setting"].isin(LEVELS + PARADIGMS)]
    table6 = judged.groupby("setting").agg(
        QAvg=("qavg", "mean"), High=("high", "mean"), Low=("low", "mean"), judged=("qavg", "count")
    )
    table6[["High", "Low"]] *= 100
    return table6.reindex([s for s in LEVELS + PARADIGMS if s in table6.index])


def _position_by_setting(frame: pd.DataFrame) -> Table:
    """Table 7: QAvg and High% per setting and blank position."""
    if not has_columns(frame, ("metadata_position",)):
        return Absent("samples carry no blank position (imported generations without source text)")
    t7 = frame.groupby(["setting", "metadata_position"]).agg(QAvg=("qavg", "mean"), High=("high", "mean"))
    t7["High"] *= 100
    return t7.unstack("metadata_position")


def _domain_by_position(frame: pd.DataFrame) -> Table:
    """Table 7's companion: QAvg and High% per domain and blank position."""
    t7b = frame.groupby(["metadata_domain", "metadata_position"]).agg(
        QAvg=("qavg", "mean"), High=("high", "mean")
    )
    t7b["High"] *= 100
    return t7b.unstack("metadata_position")


def _low_by_length_position_n(frame: pd.DataFrame) -> Table:
    """Table 8: Low% per narrative length bucket, blank position and span length."""
    if not has_columns(frame, ("metadata_narrative_sentences", "metadata_position", "metadata_n")):
        return Absent("samples carry no narrative length, position or n")
    length = pd.Categorical(
        frame["metadata_narrative_sentences"].map(length_bucket), [label for label, _ in LENGTH_BUCKETS]
    )
    t8 = (
        frame.assign(length=length)
        .groupby(["length", "metadata_position", "metadata_n"], observed=True)["low"]
        .mean()
        * 100
    )
    return t8.unstack(["metadata_position", "metadata_n"])


def _contamination(frame: pd.DataFrame) -> Table:
    """Per model, the answers whose ROUGE-1 against the gold reaches ``CONTAMINATION_ROUGE``."""
    return frame.groupby("model")["rouge1"].agg(
        answers="count",
        near_verbatim=lambda s: is_near_verbatim(s).sum(),
        share=lambda s: is_near_verbatim(s).mean() * 100,
    )


def _correlations(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | Absent:
    """Table 4 and its per-setting system level, as Appendix A.2: within one setting, system level
    correlates the m model means; sample level correlates, for each sample, the m models'
    (epoch-averaged) scores of that sample, then averages over samples. Both are then averaged
    over the settings."""
    from scipy.stats import kendalltau

    dimensions = frame_dimensions(frame)
    columns = [*METRICS, "atavg", *dimensions, "qavg"]
    judged = frame.dropna(subset=["qavg"])
    # One value per (setting, sample, model): the mean over epochs.
    per_model = judged.groupby(["setting", "id", "model"])[columns].mean()
    system_rows, sample_matrices = [], []
    for setting, rows in per_model.groupby(level="setting"):
        systems = rows.groupby(level="model").mean()
        if len(systems) < 3:
            continue
        for metric_name in (*METRICS, "atavg"):
            for d in (*dimensions, "qavg"):
                tau = kendalltau(systems[metric_name], systems[d]).statistic
                system_rows.append(
                    {"setting": setting, "metric": metric_name, "dimension": d, "system_tau": tau}
                )
        # pandas' Kendall is tau-b, as scipy's, and computes a whole matrix per sample in one call.
        sample_matrices += [
            group[columns].corr(method="kendall") for _, group in rows.groupby(level="id") if len(group) >= 3
        ]
    if not system_rows:
        return Absent("no setting has at least 3 judged models")
    by_setting = pd.DataFrame(system_rows).set_index(["setting", "metric", "dimension"])
    table = by_setting.groupby(level=["metric", "dimension"], sort=False).mean()
    sample_level = pd.concat(sample_matrices).groupby(level=0).mean() if sample_matrices else None
    table["sample_tau"] = [
        sample_level.loc[metric_name, d] if sample_level is not None else math.nan
        for metric_name, d in table.index
    ]
    table["settings"] = by_setting.groupby(level=["metric", "dimension"], sort=False).size()
    return table, by_setting


def _seed_robustness(frame: pd.DataFrame) -> Table:
    """Table 13: QAvg mean and SD over the repeated runs (epochs or logs) of each model and setting."""
    # Runs that differ only in their seed are replicates: pooled here, rows of their own elsewhere.
    runs = frame.groupby(["replicates", "setting", "eval_id", "epoch"])["qavg"].mean().reset_index()
    repeated = runs.groupby(["replicates", "setting"])["qavg"].agg(["mean", "std", "count"])
    repeated = repeated.rename_axis(["model", "setting"])
    repeated = repeated[repeated["count"] > 1]
    if repeated.empty:
        return Absent("no task and model was run more than once (epochs or repeated logs)")
    return repeated.rename(columns={"mean": "QAvg_mean", "std": "QAvg_sd", "count": "runs"})


def _judge_sensitivity(frame: pd.DataFrame) -> Table:
    """Table 14: each panel judge's QAvg per setting and model."""
    judges = [c for c in frame.columns if c.startswith("qavg_")]
    if not judges:
        return Absent("a single judge scored these logs (use a judge panel)")
    return frame.groupby(["setting", "model"])[judges].mean()
