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
* Kendall tau (Table 4): system level over the model means of a setting pool; sample level
  as Appendix A.2, the mean over samples (problems) of the tau across models' outputs.
* Contamination: share of answers whose ROUGE-1 F1 against the gold is >= 0.8.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .auto_metrics import METRIC_NAMES as METRICS
from .judging import DIMENSIONS
from .prompts import PARADIGMS
from .prompts import TELER_LEVELS as LEVELS

CONTAMINATION_ROUGE = 0.8


@dataclass
class Report:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _score_columns(frame: pd.DataFrame, prefix: str) -> list[str]:
    return sorted((c for c in frame.columns if c == f"score_{prefix}" or c.startswith(f"score_{prefix}")), key=len)


def _expand(frame: pd.DataFrame, column: str, keys: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Dict-valued score column (JSON text in the dataframe) -> one float column per key."""
    def parse(value):
        if isinstance(value, str):
            try:
                return json.loads(value.replace("NaN", "null"))
            except json.JSONDecodeError:
                return {}
        return value if isinstance(value, dict) else {}

    parsed = frame[column].map(parse)
    names = keys or sorted({key for value in parsed for key in value})
    return pd.DataFrame({name: parsed.map(lambda v, n=name: _float(v.get(n))) for name in names}, index=frame.index)


def _float(value) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        return math.nan
    return result


def _template(metadata) -> str | None:
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError:
            return None
    return metadata.get("template") if isinstance(metadata, dict) else None


def load_samples(paths: list[str]) -> pd.DataFrame:
    """One row per scored sample: model, setting, metadata, metrics, judge dimensions."""
    from inspect_ai.analysis import evals_df, samples_df

    samples = samples_df(paths, quiet=True, parallel=True)
    evals = evals_df(paths, quiet=True)
    # The setting is the task's template (task metadata), else the registered task name's last part.
    evals["setting"] = [
        _template(metadata) or str(name).split("/")[-1] for metadata, name in zip(evals["metadata"], evals["task_name"])
    ]
    frame = samples.merge(evals[["eval_id", "model", "task_name", "setting"]], on="eval_id", how="left")
    frame["model"] = frame["model"].astype(str).str.replace(r"^replay/", "", regex=True)
    metric_columns = _score_columns(frame, "metrics")
    if metric_columns:
        frame = frame.join(_expand(frame, metric_columns[0], (*METRICS, "atavg")))
    judge_columns = _score_columns(frame, "judge")
    if judge_columns:
        frame = frame.join(_expand(frame, judge_columns[0]))
    return frame


def _has(frame: pd.DataFrame, columns) -> bool:
    return all(c in frame.columns for c in columns) and frame[list(columns)].notna().any().all()


def _pivot(frame: pd.DataFrame, value: str, columns: str, order: tuple[str, ...]) -> pd.DataFrame:
    present = [c for c in order if c in set(frame[columns])]
    table = frame.pivot_table(index="model", columns=columns, values=value, aggfunc="mean")[present]
    table.loc["Overall"] = table.mean(axis=0)
    return table


def build_report(frame: pd.DataFrame, high_inclusive: bool = False, human_csv: str | None = None) -> Report:
    report = Report()
    has_metrics = _has(frame, ("atavg",))
    has_judge = _has(frame, ("qavg",))
    if not has_judge:
        report.notes.append("No judge scores in these logs: QAvg, High% and Low% columns are absent (run narrative_infill/judge).")
    if not has_metrics:
        report.notes.append("No automatic-metric scores in these logs: AtAvg columns are absent (run narrative_infill/metrics).")
    if has_judge:
        frame = frame.assign(high=(frame["qavg"] >= 4) if high_inclusive else (frame["qavg"] > 4), low=frame["qavg"] < 2)
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
        columns = [c for c in (*METRICS, "atavg", *DIMENSIONS, "qavg") if _has(subset, (c,))]
        if not columns:
            report.absent[f"{name}_breakdown"] = "no scores in the logs"
            continue
        grouped = subset.groupby(["setting", "model"])[columns].mean()
        report.tables[f"{name}_breakdown"] = grouped.reindex([s for s in order if s in set(subset["setting"])], level=0)

    if has_judge:
        judged = frame[frame["setting"].isin(LEVELS + PARADIGMS)]
        table6 = judged.groupby("setting").agg(QAvg=("qavg", "mean"), High=("high", "mean"), Low=("low", "mean"), judged=("qavg", "count"))
        table6[["High", "Low"]] *= 100
        report.tables["table6_quality_by_setting"] = table6.reindex([s for s in LEVELS + PARADIGMS if s in table6.index])
        if _has(frame, ("metadata_position",)):
            t7 = frame.groupby(["setting", "metadata_position"]).agg(QAvg=("qavg", "mean"), High=("high", "mean"))
            t7["High"] *= 100
            report.tables["table7_position_by_setting"] = t7.unstack("metadata_position")
            if _has(frame, ("metadata_domain",)):
                t7b = frame.groupby(["metadata_domain", "metadata_position"]).agg(QAvg=("qavg", "mean"), High=("high", "mean"))
                t7b["High"] *= 100
                report.tables["table7_domain_by_position"] = t7b.unstack("metadata_position")
        else:
            report.absent["table7_position_by_setting"] = "samples carry no blank position (imported generations without source text)"
        if _has(frame, ("metadata_narrative_sentences", "metadata_position", "metadata_n")):
            length = pd.cut(frame["metadata_narrative_sentences"].astype(float), [0, 5, 15, math.inf], labels=["short (<=5)", "medium (6-15)", "long (>15)"])
            t8 = frame.assign(length=length).groupby(["length", "metadata_position", "metadata_n"], observed=True)["low"].mean() * 100
            report.tables["table8_low_by_length_position_n"] = t8.unstack(["metadata_position", "metadata_n"])
        else:
            report.absent["table8_low_by_length_position_n"] = "samples carry no narrative length, position or n"
    else:
        for name in ("table6_quality_by_setting", "table7_position_by_setting", "table8_low_by_length_position_n"):
            report.absent[name] = "no judge scores in the logs"

    _correlations(frame, report, has_metrics, has_judge)
    _robustness(frame, report, has_judge)
    if has_metrics:
        contaminated = frame.groupby("model")["rouge1"].agg(
            answers="count", near_verbatim=lambda s: (s >= CONTAMINATION_ROUGE).sum(), share=lambda s: (s >= CONTAMINATION_ROUGE).mean() * 100
        )  # fmt: skip
        report.tables["contamination_rouge1_ge_0.8"] = contaminated
    else:
        report.absent["contamination_rouge1_ge_0.8"] = "no ROUGE-1 scores in the logs"
    if human_csv:
        _human_agreement(frame, human_csv, report, has_judge)
    else:
        report.absent["table2_human_agreement"] = "no --human CSV of human ratings given"
    return report


def _correlations(frame: pd.DataFrame, report: Report, has_metrics: bool, has_judge: bool) -> None:
    from scipy.stats import kendalltau

    if not (has_metrics and has_judge):
        report.absent["table4_kendall"] = "needs both metric and judge scores"
        return
    judged = frame.dropna(subset=["qavg"])
    systems = judged.groupby("model")[[*METRICS, "atavg", *DIMENSIONS, "qavg"]].mean()
    if len(systems) < 3:
        report.absent["table4_kendall"] = f"system-level tau needs at least 3 models, the logs hold {len(systems)}"
        return
    # Sample level (Appendix A.2): per problem, tau across the models' outputs, then the mean.
    # pandas' Kendall is tau-b, as scipy's, and computes a whole matrix per group in one call.
    columns = [*METRICS, "atavg", *DIMENSIONS, "qavg"]
    per_problem = [
        group[columns].corr(method="kendall")
        for _, group in judged.groupby("input")
        if group["model"].nunique() >= 3
    ]  # fmt: skip
    sample_level = pd.concat(per_problem).groupby(level=0).mean() if per_problem else None
    rows = []
    for metric_name in (*METRICS, "atavg"):
        for d in (*DIMENSIONS, "qavg"):
            rows.append({
                "metric": metric_name, "dimension": d,
                "system_tau": kendalltau(systems[metric_name], systems[d]).statistic,
                "sample_tau": sample_level.loc[metric_name, d] if sample_level is not None else math.nan,
            })  # fmt: skip
    report.tables["table4_kendall"] = pd.DataFrame(rows).set_index(["metric", "dimension"])


def _robustness(frame: pd.DataFrame, report: Report, has_judge: bool) -> None:
    if not has_judge:
        report.absent["table13_seed_robustness"] = report.absent["table14_judge_sensitivity"] = "no judge scores in the logs"
        return
    runs = frame.groupby(["model", "setting", "eval_id", "epoch"])["qavg"].mean().reset_index()
    repeated = runs.groupby(["model", "setting"])["qavg"].agg(["mean", "std", "count"])
    repeated = repeated[repeated["count"] > 1]
    if repeated.empty:
        report.absent["table13_seed_robustness"] = "no task and model was run more than once (epochs or repeated logs)"
    else:
        report.tables["table13_seed_robustness"] = repeated.rename(columns={"mean": "QAvg_mean", "std": "QAvg_sd", "count": "runs"})
    judges = [c for c in frame.columns if c.startswith("qavg_")]
    if judges:
        report.tables["table14_judge_sensitivity"] = frame.groupby(["setting", "model"])[judges].mean()
    else:
        report.absent["table14_judge_sensitivity"] = "a single judge scored these logs (use a judge panel)"


class HumanRatingsError(ValueError):
    """A human-ratings CSV that cannot be used, naming the file, row and column."""


def read_human_ratings(path: str) -> pd.DataFrame:
    """Human ratings, one row per (sample, annotator), each dimension an integer 1-5.

    Checked here because a pivot would silently average repeated rows and a cast would
    silently truncate 3.5 to 3.
    """
    human = pd.read_csv(path, dtype={"sample_id": str, "annotator": str, "model": str, "setting": str})
    missing = [c for c in ("sample_id", "annotator", *DIMENSIONS) if c not in human.columns]
    if missing:
        raise HumanRatingsError(f"{path}: missing column(s) {', '.join(missing)}")
    for index, row in human.iterrows():
        number = index + 1  # data rows counted from 1, after the header
        for column in ("sample_id", "annotator"):
            if pd.isna(row[column]) or not str(row[column]).strip():
                raise HumanRatingsError(f"{path}, row {number}: column {column!r} is empty")
        for dimension in DIMENSIONS:
            value = pd.to_numeric(row[dimension], errors="coerce")
            if pd.isna(value) or value != int(value) or not 1 <= value <= 5:
                raise HumanRatingsError(f"{path}, row {number}: {dimension!r} must be an integer from 1 to 5, got {row[dimension]!r}")
    keys = [c for c in ("model", "setting", "sample_id", "annotator") if c in human.columns]
    repeated = human.duplicated(keys, keep="first")
    if repeated.any():
        number = int(repeated.idxmax()) + 1
        raise HumanRatingsError(f"{path}, row {number}: a second rating of the same sample by the same annotator")
    human[list(DIMENSIONS)] = human[list(DIMENSIONS)].apply(pd.to_numeric).astype(int)
    return human


def _human_agreement(frame: pd.DataFrame, human_csv: str, report: Report, has_judge: bool) -> None:
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    human = read_human_ratings(human_csv)
    annotators = sorted(human["annotator"].unique())
    keys = [c for c in ("model", "setting") if c in human.columns] + ["sample_id"]
    judged = frame.drop(columns=["sample_id"], errors="ignore").rename(columns={"id": "sample_id"})
    judged["sample_id"] = judged["sample_id"].astype(str)
    if has_judge and judged.duplicated(keys).any():
        report.absent["table2_human_agreement"] = (
            "sample ids repeat across models or settings in these logs: give the ratings 'model' and 'setting' columns"
        )
        return
    judged = judged.set_index(keys) if has_judge else None
    wide = human.pivot_table(index=keys, columns="annotator", values=list(DIMENSIONS))
    rows = []
    for d in DIMENSIONS:
        row = {"dimension": d}
        if len(annotators) >= 2:
            pair = wide[d][annotators[:2]].dropna()
            row["cohen_kappa"] = cohen_kappa_score(pair[annotators[0]], pair[annotators[1]])
        if has_judge:
            for annotator in annotators:
                joined = pd.concat([wide[d][annotator], judged[d]], axis=1, join="inner").dropna()
                row[f"spearman_{annotator}"] = spearmanr(joined.iloc[:, 0], joined.iloc[:, 1]).statistic if len(joined) > 2 else math.nan
        rows.append(row)
    report.tables["table2_human_agreement"] = pd.DataFrame(rows).set_index("dimension")


def figure2(frame: pd.DataFrame, out: Path, report: Report, high_inclusive: bool) -> None:
    if not _has(frame, ("qavg",)):
        report.absent["figure2_high_by_model"] = "no judge scores in the logs"
        return
    kind = frame["setting"].map(lambda s: "instruction" if s in LEVELS else "reasoning" if s in PARADIGMS else None)
    high = (frame["qavg"] >= 4) if high_inclusive else (frame["qavg"] > 4)
    table = (frame.assign(kind=kind, high=high.where(frame["qavg"].notna())).dropna(subset=["kind", "high"])
             .groupby(["model", "kind"])["high"].mean().unstack("kind") * 100)  # fmt: skip
    if table.empty:
        report.absent["figure2_high_by_model"] = "no judged TELeR or reasoning runs"
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = table.plot.bar(figsize=(max(6, len(table) * 0.6), 4))
    axes.set_ylabel("High% (QAvg > 4)" if not high_inclusive else "High% (QAvg >= 4)")
    axes.set_title("High-quality completions by model: instruction vs reasoning prompting")
    plt.tight_layout()
    path = out / "figure2_high_by_model.png"
    plt.savefig(path, dpi=120)
    plt.close("all")
    report.figures["figure2_high_by_model"] = path
    report.tables["figure2_high_by_model"] = table


def write_report(paths: list[str], out: Path, high_inclusive: bool = False, human_csv: str | None = None) -> Report:
    out.mkdir(parents=True, exist_ok=True)
    frame = load_samples(paths)
    report = build_report(frame, high_inclusive, human_csv)
    figure2(frame, out, report, high_inclusive)
    lines = ["# Narrative infilling report", "", f"{len(frame)} samples from {frame['eval_id'].nunique()} logs; "
             f"models: {', '.join(sorted(frame['model'].unique()))}.", ""]  # fmt: skip
    lines += [f"- {note}" for note in report.notes]
    for name, table in report.tables.items():
        table.to_csv(out / f"{name}.csv")
        lines += ["", f"## {name}", "", table.round(3).to_markdown()]
    for name, path in report.figures.items():
        lines += ["", f"![{name}]({path.name})"]
    if report.absent:
        lines += ["", "## Absent", ""] + [f"- **{name}**: {reason}" for name, reason in report.absent.items()]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report
