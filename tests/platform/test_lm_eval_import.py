"""``narrative-infill import`` on lm-eval's --log_samples output: one Inspect log per task with the
run's record, the same AtAvg for the same answers, and bad or partial files refused by file, line, field.

The run is a real lm-eval run (its evaluator and its results writer) of two packaged tasks with a
stand-in model that answers every other document with its gold span in tags.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from helpers import require
from inspect_ai.log import read_eval_log

from narrative_infill.platform.analysis.importer import score_logs
from narrative_infill.platform.analysis.lm_eval_import import LmEvalImportError, import_lm_eval
from narrative_infill.data.limits import MAX_FIELD_CHARS
from narrative_infill.platform.lm_eval import include_path

pytestmark = pytest.mark.heavy  # lm-eval (the [lm-eval] extra) and the MiniLM backbone


def _stand_in_model():
    from lm_eval.api.model import LM

    class GoldEveryOther(LM):
        """Answers documents 1, 3, ... with their gold span in tags, the others with untagged text."""

        def generate_until(self, requests, disable_tqdm=False):
            return [
                f"<ANSWER>{r.doc['gold_answer']}</ANSWER>" if i % 2 else "The story goes on."
                for i, r in enumerate(requests)
            ]

        def loglikelihood(self, requests):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

    return GoldEveryOther()


@pytest.fixture(scope="module")
def lm_eval_run(tmp_path_factory) -> Path:
    """lm-eval's own output folder for narrative_infill_l2 and _cot on the 24 demo documents."""
    require(importlib.util.find_spec("lm_eval"), "needs lm-eval: pip install 'narrative-infill[lm-eval]'")
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    out = tmp_path_factory.mktemp("lm-eval")
    manager = TaskManager(include_path=str(include_path()), include_defaults=False, metadata={"data": "demo"})
    tracker = EvaluationTracker(output_path=str(out))
    results = simple_evaluate(
        model=_stand_in_model(),
        tasks=["narrative_infill_l2", "narrative_infill_cot"],
        task_manager=manager,
        log_samples=True,
        evaluation_tracker=tracker,
    )
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for name in results["configs"]:
        tracker.save_results_samples(task_name=name, samples=samples[name])
    return out


def _files(folder: Path) -> tuple[Path, Path]:
    """(results file, the l2 task's samples file) of a run folder."""
    [results] = folder.rglob("results_*.json")
    [samples] = folder.rglob("samples_narrative_infill_l2_*.jsonl")
    return results, samples


def test_each_task_becomes_one_log_with_the_runs_record(lm_eval_run, tmp_path):
    locations = import_lm_eval([str(lm_eval_run)], str(tmp_path / "logs"))
    logs = {read_eval_log(location).eval.task: read_eval_log(location) for location in locations}
    assert set(logs) == {"narrative_infill/l2", "narrative_infill/cot"}
    results_file, samples_file = _files(lm_eval_run)
    lines = [json.loads(line) for line in samples_file.read_text().splitlines()]
    log = logs["narrative_infill/l2"]
    assert log.eval.model.startswith("replay/GoldEveryOther/")  # lm-eval's backend / model name
    generation = log.eval.model_generate_config
    assert (generation.temperature, generation.top_p, generation.max_tokens) == (0.8, 0.9, None)
    assert log.eval.metadata["lm_eval"]["version"] == "0.4.13"
    assert log.eval.metadata["lm_eval"]["results_file"] == str(results_file)
    assert log.eval.task_args["data"] == "demo" and log.eval.metadata["dataset_identity"]["source"] == "demo"
    by_id = {line["doc"]["id"]: line for line in lines}
    assert sorted(str(s.id) for s in log.samples) == sorted(by_id)
    for sample in log.samples:
        line = by_id[sample.id]
        assert sample.output.completion == line["resps"][0][0]
        assert (
            sample.messages[0].text == line["arguments"]["gen_args_0"]["arg_0"]
        )  # a completion backend's text
        assert sample.metadata["max_tokens"] == line["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"]
        assert sample.metadata["max_tokens_rule"] == "per_sample"
        assert sample.output.stop_reason == "unknown"  # lm-eval keeps no finish reason
    assert {s.metadata["max_tokens_rule"] for s in logs["narrative_infill/cot"].samples} == {"task_default"}


def test_the_same_answers_get_the_same_atavg_in_inspect(lm_eval_run, tmp_path):
    [location] = [
        loc for loc in import_lm_eval([str(lm_eval_run)], str(tmp_path / "logs")) if "_l2_" in Path(loc).name
    ]
    score_logs([location], ["metrics"])
    log = read_eval_log(location)
    results = json.loads(_files(lm_eval_run)[0].read_text())["results"]["narrative_infill_l2"]
    inspect_atavg = next(s for s in log.results.scores if s.name == "atavg").metrics["mean"].value
    assert inspect_atavg == pytest.approx(results["atavg,extracted"], abs=1e-6)
    per_sample = [(s.scores["metrics"].value["atavg"], s.metadata["lm_eval"]["atavg"]) for s in log.samples]
    assert [a for a, _ in per_sample] == pytest.approx([b for _, b in per_sample], abs=1e-6)
    assert any(a > 0.9 for a, _ in per_sample) and any(a < 0.5 for a, _ in per_sample)


def test_the_imported_run_is_reported_and_submitted(lm_eval_run, tmp_path):
    from narrative_infill.platform.cli import main

    logs, out = tmp_path / "logs", tmp_path / "out"
    score_logs(import_lm_eval([str(lm_eval_run)], str(logs)), ["metrics"])
    assert main(["report", str(logs), "-o", str(out / "report"), "--compare-paper"]) == 0
    assert main(["submit", str(logs), "-o", str(out / "submission.json"), "--track", "custom"]) == 0
    submission = json.loads((out / "submission.json").read_text())
    assert sorted(submission["settings"]) == ["cot", "l2"]


def _edit_lines(edit):
    def apply(results: Path, samples: Path) -> None:
        lines = samples.read_text().splitlines()
        samples.write_text("\n".join(edit(lines)) + "\n")

    return apply


def _edit_doc(key_path: list[str], value):
    def edit(lines):
        record = json.loads(lines[1])
        target = record
        for key in key_path[:-1]:
            target = target[key]
        if value is None:
            del target[key_path[-1]]
        else:
            target[key_path[-1]] = value
        return [lines[0], json.dumps(record), *lines[2:]]

    return _edit_lines(edit)


def _edit_results(edit):
    def apply(results: Path, samples: Path) -> None:
        results.write_text(edit(results.read_text()))

    return apply


SAMPLES = r"samples_narrative_infill_l2_[^,]*"
CAP = "arguments.gen_args_0.arg_1.max_gen_toks"
DAMAGES = {
    "bad-json": (
        _edit_lines(lambda lines: [lines[0], "{not", *lines[2:]]),
        SAMPLES + ", row 2: unparseable JSON",
    ),
    "no-problem": (_edit_doc(["doc", "problem"], None), SAMPLES + ", line 2: field 'doc.problem': missing"),
    "bad-gold-tokens": (
        _edit_doc(["doc", "gold_tokens"], "11"),
        "line 2: field 'doc.gold_tokens': expected int",
    ),
    "no-response": (_edit_doc(["resps"], []), "line 2: field 'resps': expected one response"),
    "no-cap": (
        _edit_doc(["arguments", "gen_args_0", "arg_1", "max_gen_toks"], None),
        f"line 2: field '{CAP}': missing",
    ),
    "partial": (
        _edit_lines(lambda lines: lines[:-1]),
        r"23 samples, but results_.* field 'n-samples.narrative_infill_l2.effective' says 24",
    ),
    "repeated-doc": (
        _edit_lines(lambda lines: [lines[0], *lines[:2]]),
        r"line 2: field 'doc.id': .* repeats line 1",
    ),
    "cut-results": (
        _edit_results(lambda text: text[: len(text) // 2]),
        r"results_.*\.json, line \d+: not JSON",
    ),
    "no-configs": (
        _edit_results(lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "configs"})),
        "field 'configs': missing",
    ),
    "no-samples": (lambda results, samples: samples.unlink(), "task narrative_infill_l2 has no samples file"),
    # issue 44: a model name that would render as another is refused, naming the field
    "look-alike-name": (
        _edit_results(lambda text: json.dumps({**json.loads(text), "model_name": "smollm2\u202e"})),
        r"results_.*\.json: field 'model_name': 'smollm2\\u202e' holds U\+202E \(RIGHT-TO-LEFT OVERRIDE\)",
    ),
    # issue 44: every reader is bounded; an answer over the field limit is refused by line and field
    "huge-response": (
        _edit_doc(["resps"], [["word " * (MAX_FIELD_CHARS // 5 + 1)]]),
        SAMPLES + r", row 2: field 'resps\[0\]\[0\]': 131,075 characters \(at most 131,072\)",
    ),
}


@pytest.mark.parametrize("damage, message", DAMAGES.values(), ids=DAMAGES)
def test_a_bad_or_partial_file_is_refused_by_file_line_and_field(lm_eval_run, tmp_path, damage, message):
    copy = tmp_path / "run"
    shutil.copytree(lm_eval_run, copy)
    damage(*_files(copy))
    with pytest.raises(LmEvalImportError, match=message):
        import_lm_eval([str(copy)], str(tmp_path / "logs"))
    assert not (tmp_path / "logs").exists()  # nothing written


def test_two_runs_whose_model_names_look_alike_are_refused_naming_both(lm_eval_run, tmp_path):
    """Issue 57: "smollm2" beside "smoIlm2" ("I" for "l") would be two models that print as one."""
    runs = []
    for name in ("smollm2", "smoIlm2"):
        copy = tmp_path / name
        shutil.copytree(lm_eval_run, copy)
        _edit_results(lambda text, n=name: json.dumps({**json.loads(text), "model_name": n}))(*_files(copy))
        runs.append(str(copy))
    with pytest.raises(LmEvalImportError, match="only in look-alike characters") as raised:
        import_lm_eval(runs, str(tmp_path / "logs"))
    assert "smoIlm2" in str(raised.value) and "smollm2" in str(raised.value)
    assert not (tmp_path / "logs").exists()
