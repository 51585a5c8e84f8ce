"""Low-coverage marks (``platform/analysis/report/coverage.py``): on the values of the scorer that missed
samples, in report.md's tables and in Figure 2's labels."""

import pandas as pd

from narrative_infill.platform.analysis.report.coverage import MARK, marked
from narrative_infill.platform.analysis.report.figures import figure2


def test_only_the_values_of_the_scorer_that_missed_samples_are_marked():
    columns = pd.MultiIndex.from_tuples([("AtAvg", "l1"), ("AtAvg", "l2"), ("QAvg", "l1"), ("QAvg", "l2")])
    table = pd.DataFrame([[0.2, 0.3, 4.0, 3.0], [0.1, None, 2.0, 2.5]], index=["m1", "m2"], columns=columns)
    table.index.name = "model"
    text = marked(table, {"metrics": {("m2", "l2")}, "judge": {("m1", "l1")}})
    assert (
        text.loc["m2", ("AtAvg", "l2")] == f"none {MARK}"
    )  # a cell with no scored sample is marked, not blank
    assert text.loc["m1", ("QAvg", "l1")] == f"4.0 {MARK}"
    assert text.loc["m1", ("AtAvg", "l1")] == 0.2 and text.loc["m2", ("QAvg", "l2")] == 2.5


def test_figure2_marks_a_model_whose_judged_cell_is_under_the_threshold(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    frame = pd.DataFrame(
        {"row": ["m1", "m1", "m2", "m2"], "setting": ["l1"] * 4, "qavg": [4.5, 3.0, 4.2, 1.0]}
    )
    seen = {}
    save = plt.savefig

    def capture(path, **options):
        seen["labels"] = [label.get_text() for label in plt.gca().get_xticklabels()]
        save(path, **options)

    monkeypatch.setattr(plt, "savefig", capture)
    table, path = figure2(frame, tmp_path, False, {"judge": {("m2", "l1")}})
    assert seen["labels"] == ["m1", f"m2 {MARK}"] and path.exists()
    assert list(table.index) == ["m1", "m2"]  # the CSV keeps the plain row names
