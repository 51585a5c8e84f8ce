"""Attacks on the baseline names (issue 37): only the package's own baseline rows are
``baseline/<rule>`` in the report; a file's model field or an edited log header cannot pass a model off
as a baseline (hiding it from the marks) or stand in for a null rule of the floor."""

from __future__ import annotations

import pytest
from helpers import write_jsonl
from input_records import rows
from inspect_ai.log import read_eval_log, write_eval_log

from narrative_infill.platform.analysis.importer import import_generations
from narrative_infill.platform.analysis.report.baselines import (
    ForgedBaselineError,
    baselines_table,
    is_baseline,
)
from narrative_infill.platform.analysis.report.load import load_samples


def _imported(tmp_path, records, **options):
    return import_generations([write_jsonl(tmp_path / "gen.jsonl", records)], str(tmp_path / "logs"), **options)


def test_an_imported_model_named_like_a_baseline_is_no_baseline_in_the_report(tmp_path):
    weak = [r for r in rows() if r["model"] == "m/weak"]
    forged = [{**r, "model": "baseline/context"} for r in weak]
    _imported(tmp_path, forged, baselines=["context"])
    frame = load_samples([str(tmp_path / "logs")]).frame
    assert sorted(frame["model"].unique()) == ["baseline/context", "replay/baseline/context"]
    assert not frame[frame["model"] == "replay/baseline/context"]["model"].map(is_baseline).any()
    # scored by hand: the forged run (a weak model) is a model, marked against a floor computed here,
    # never the baseline log's figure (its signature names no backbones: the floor is unknown)
    scored = frame.assign(atavg=frame["model"].map({"baseline/context": 0.3, "replay/baseline/context": 0.1}))
    table = baselines_table(scored)
    forged_rows = table[~table["baseline"]]
    assert len(forged_rows) == 1 and forged_rows["floor rule"].iloc[0] != "baseline/context", table
    assert forged_rows["mark"].iloc[0].startswith("floor unknown: the null rules cannot be scored here")


def test_an_edited_log_header_cannot_pass_a_model_off_as_a_baseline(tmp_path):
    weak = [{**r, "n": 1} for r in rows() if r["model"] == "m/weak"]
    [location] = _imported(tmp_path, weak)
    log = read_eval_log(location)
    log.eval.model = "baseline/context"
    for sample in log.samples or []:
        sample.output.model = "baseline/context"
    write_eval_log(log, location)
    with pytest.raises(ForgedBaselineError, match="not the context rule's"):
        load_samples([location])


def test_the_package_s_own_baseline_logs_pass_the_check(tmp_path):
    locations = _imported(tmp_path, rows(), baselines=["empty", "neighbour", "context", "gold"])
    frame = load_samples(locations).frame
    assert {"baseline/empty", "baseline/neighbour", "baseline/context", "baseline/gold"} <= set(frame["model"])
