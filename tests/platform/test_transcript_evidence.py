"""The transcript is the evidence (issue 57): a sample's output is its generating model call's, its
epoch the one it was generated in, and on a ranked track its calls ran at the protocol's decoding and
its graders with the protocol's judge options, whatever the header says; a ranked track takes the
current task version only. Each forgery below is a real Inspect log edited as a forger would (the
records, the summaries Inspect rewrites and the header's means kept in agreement), refused by
``verify --logs`` and by ``submit``; the honest logs of every kind beside them (a judged demo run, a
run of several epochs, a log made before the epoch was recorded, an import, a baseline) pass."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import VALID_VERDICT, mock_output
from inspect_ai import eval
from inspect_ai import score as inspect_score
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import get_model
from submission_runs import each_sample, forged_logs, small_demo_run

from narrative_infill.platform.analysis.importer import import_generations
from narrative_infill.platform.analysis.submission import build
from narrative_infill.platform.analysis.submission.build import build_submission, write_submission
from narrative_infill.platform.cli import main
from narrative_infill.scorers.metrics.scorer import metrics
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

ANSWER = "<ANSWER>They went home.</ANSWER>"


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> Path:
    """The demo track's l1, answered by a scripted model and judged by a mock grader."""
    folder = tmp_path_factory.mktemp("judged") / "logs"
    grader = get_model("mockllm/grader", custom_outputs=lambda *_: mock_output(VALID_VERDICT), memoize=False)
    model = get_model("mockllm/alpha", custom_outputs=lambda *_: mock_output(ANSWER), memoize=False)
    task = infill_task("l1", data="demo", backbone="minilm", judge=True)
    eval(task, model=model, model_roles={"grader": grader}, log_dir=str(folder), display="none")
    return folder


@pytest.fixture(scope="module")
def epochs(tmp_path_factory) -> Path:
    """Five epochs of the demo set's SIND rows by a model whose answer changes from call to call."""
    folder = tmp_path_factory.mktemp("epochs") / "logs"
    calls: list[int] = []
    answers = ["The kids swam in the lake.", "Nothing happened.", "They ate hot dogs and swam all afternoon."]

    def respond(messages):
        calls.append(1)
        return f"<ANSWER>{answers[len(calls) % len(answers)]}</ANSWER>"

    small_demo_run(folder, respond, name="epochs", epochs=5)
    return folder


def _refused(folder: Path, tmp_path: Path, capsys, monkeypatch, expected: str, track: str = "demo") -> None:
    """``verify`` of a forger's own submission (built past the package's track checks) fails naming
    ``expected``, and ``submit`` refuses the logs, naming it too."""
    with monkeypatch.context() as forger:
        forger.setattr(build, "track_problems", lambda *_, **__: [])
        path = tmp_path / "forged.json"
        write_submission(build_submission([str(folder)], track), path)
    assert main(["verify", str(path), "--logs", str(folder), "--sample", "2"]) == 1
    assert expected in capsys.readouterr().out
    out = tmp_path / "again.json"
    assert main(["submit", str(folder), "-o", str(out), "--track", track, "--sample", "2"]) == 1
    assert expected in capsys.readouterr().err and not out.exists()


def _passes(folder: Path, tmp_path: Path, capsys, track: str) -> str:
    """``submit`` and ``verify`` (every sample re-scored) accept the logs; ``verify``'s output."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "honest.json"
    assert main(["submit", str(folder), "-o", str(path), "--track", track]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["verify", str(path), "--logs", str(folder)]) == 0
    return capsys.readouterr().out


def _gold_in_output(sample) -> None:
    """The gold put into the output and every score recomputed for it, as the forger's own scorer would."""
    from narrative_infill.platform.analysis.submission.recompute import answer_derived
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    gold = str(sample.target)
    sample.output.completion = sample.output.choices[0].message.content = f"<ANSWER>{gold}</ANSWER>"
    [fresh] = score_pairs([gold], [gold], resolve_backbones("minilm"))
    scored = sample.scores["metrics"]
    scored.value.update({k: v for k, v in fresh.values.items() if k in scored.value})
    story = sample.input if isinstance(sample.input, str) else ""
    scored.value.update({key: rule(gold, story) for key, (rule, _) in answer_derived().items()})
    for key in ("metrics", "judge"):
        if key in sample.scores:
            sample.scores[key].answer = gold


def _generations(sample) -> list:
    return [e for e in sample.events if e.event == "model" and e.role is None]


def test_an_honest_judged_demo_run_is_verified(judged, tmp_path, capsys):
    out = _passes(judged, tmp_path, capsys, "demo")
    assert "verified: every claim" in out and "its generating model call" in out


def test_the_gold_in_the_output_with_the_generating_calls_deleted_is_refused(
    judged, tmp_path, capsys, monkeypatch
):
    """Failed before: 'verified' at AtAvg 1.0; the transcript then held the graders' calls only."""

    def edit(sample):
        _gold_in_output(sample)
        sample.events = [e for e in sample.events if e not in _generations(sample)]

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "no model call generated it")


def test_the_gold_in_the_output_with_the_generating_calls_renamed_to_a_grader_is_refused(
    judged, tmp_path, capsys, monkeypatch
):
    """Failed before: the calls, given the grader's role and model, were no longer the generator's."""

    def edit(sample):
        _gold_in_output(sample)
        for call in _generations(sample):
            call.role, call.model = "grader", "mockllm/grader"

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "no model call generated it")


def test_a_task_version_2_log_is_refused_on_a_ranked_track(judged, tmp_path, capsys, monkeypatch):
    """Failed before: version 2, whose paper judge prompt is injectable, was ranked."""
    folder = forged_logs(judged, tmp_path / "logs", lambda log: setattr(log.eval, "task_version", 2))
    _refused(folder, tmp_path, capsys, monkeypatch, "task version 2, the demo track ranks version 3 only")


def test_calls_at_another_temperature_than_the_header_says_are_refused(judged, tmp_path, capsys, monkeypatch):
    """Failed before: decoding was read from the header only (0.8), the calls ran at 0.0 / top-p 1.0."""

    def edit(sample):
        for call in _generations(sample):
            call.config.temperature, call.config.top_p = 0.0, 1.0

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "generating call temperature 0.0, the protocol has 0.8")


def test_a_generating_call_without_the_sample_s_cap_is_refused(judged, tmp_path, capsys, monkeypatch):
    def edit(sample):
        for call in _generations(sample):
            call.config.max_tokens = 4096

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "generating call max_tokens 4096")


def test_a_judge_max_tokens_of_1_in_the_header_is_refused_on_a_ranked_track(
    judged, tmp_path, capsys, monkeypatch
):
    """Failed before: the protocol fixed none of the judge's call; ``--rejudge`` got no usable verdict."""

    def edit(log):
        next(s for s in log.eval.scorers if s.name == "judge").options["max_tokens"] = 1

    folder = forged_logs(judged, tmp_path / "logs", edit)
    _refused(folder, tmp_path, capsys, monkeypatch, "judge max_tokens: 1, the protocol has None")


def test_grader_calls_off_the_judge_protocol_are_refused_whatever_the_header_says(
    judged, tmp_path, capsys, monkeypatch
):
    def edit(sample):
        for call in sample.events:
            if call.event == "model" and call.role == "grader":
                call.config.temperature, call.config.max_tokens = 0.7, 1

    folder = forged_logs(judged, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "grader call temperature 0.7, the protocol has 0.0")


def test_an_honest_run_of_five_epochs_and_one_made_before_the_epoch_was_recorded_pass(
    epochs, tmp_path, capsys
):
    assert "verified: every claim" in _passes(epochs, tmp_path / "five", capsys, "custom")

    def older(sample):
        del sample.metadata["epoch"]

    folder = forged_logs(epochs, tmp_path / "older" / "logs", each_sample(older))
    assert "verified: every claim" in _passes(folder, tmp_path / "older", capsys, "custom")


def _rank(sample) -> tuple[float, int]:
    return sample.scores["metrics"].value["atavg"], sample.epoch


def _best_of_five(log: EvalLog, relabel_record: bool = False) -> None:
    """Each instance's best epoch kept, relabelled epoch 1, the header saying one epoch."""
    best: dict = {}
    for sample in log.samples or []:  # of equals the later: the kept record is not epoch 1's
        kept = best.get(sample.id)
        if kept is None or _rank(sample) > _rank(kept):
            best[sample.id] = sample
    log.samples = list(best.values())
    assert {sample.epoch for sample in log.samples} != {1}
    for sample in log.samples:
        sample.epoch = 1
        if relabel_record:
            sample.metadata["epoch"] = 1
    log.eval.config.epochs = 1
    log.results.total_samples = log.results.completed_samples = len(log.samples)


def test_the_best_of_five_epochs_relabelled_epoch_1_is_refused(epochs, tmp_path, capsys, monkeypatch):
    """Failed before: 'verified' with the best epoch's AtAvg; the solver's record says which epoch."""
    folder = forged_logs(epochs, tmp_path / "logs", _best_of_five)
    _refused(folder, tmp_path, capsys, monkeypatch, "when it generated, the record says 1", track="custom")


def test_epochs_dropped_from_the_records_but_counted_in_the_header_are_refused(
    epochs, tmp_path, capsys, monkeypatch
):
    """The forger who also rewrites the solver's record but leaves Inspect's count of the samples."""

    def edit(log):
        total = log.results.total_samples
        _best_of_five(log, relabel_record=True)
        log.results.total_samples = total

    folder = forged_logs(epochs, tmp_path / "logs", edit)
    _refused(folder, tmp_path, capsys, monkeypatch, "header results.total_samples: 30", track="custom")


def test_the_record_s_epoch_rewritten_but_not_the_solver_s_state_event_is_refused(
    epochs, tmp_path, capsys, monkeypatch
):
    """The forger who rewrites ``metadata.epoch`` and every count but leaves the transcript: the
    solver's state event (what ``inspect view`` shows) still adds the epoch it generated in. Failed
    before: 'verified' (only ``metadata.epoch`` was read)."""

    def edit(log):
        _best_of_five(log, relabel_record=True)

    folder = forged_logs(epochs, tmp_path / "logs", edit)
    _refused(folder, tmp_path, capsys, monkeypatch, "its state event recorded epoch", track="custom")


def test_the_gold_in_the_output_and_in_its_generating_call_is_refused_by_the_rest_of_the_transcript(
    epochs, tmp_path, capsys, monkeypatch
):
    """The forger who rewrites the generating call's output too but not the solver's state event
    that set the output (what ``inspect view`` shows as the state's change). Failed before:
    'verified' at the gold's AtAvg (only the model call was compared)."""

    def edit(sample):
        _gold_in_output(sample)
        made = _generations(sample)[-1].output
        made.completion = made.choices[0].message.content = sample.output.completion

    folder = forged_logs(epochs, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "the solver's state event set", track="custom")


def test_the_gold_in_the_output_its_call_and_its_state_but_not_the_provider_s_raw_response_is_refused(
    epochs, tmp_path, capsys, monkeypatch
):
    """The forger who also rewrites the state event's completion, but not the provider's raw
    response the call records (``ModelCall.response``, what ``inspect view`` shows under API).
    Failed before: 'verified' at the gold's AtAvg."""

    def edit(sample):
        _gold_in_output(sample)
        made = _generations(sample)[-1].output
        made.completion = made.choices[0].message.content = sample.output.completion
        for event in sample.events:
            for change in event.changes if event.event == "state" else []:
                if change.path == "/output/completion":
                    change.value = sample.output.completion

    folder = forged_logs(epochs, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "the provider's raw response", track="custom")


def test_a_served_run_at_temperature_0_relabelled_0_8_in_its_calls_is_refused_by_the_raw_requests(
    standin, tmp_path, monkeypatch, capsys
):
    """A served run (the stand-in llama.cpp server) made at temperature 0 and top-p 1, the header and
    every call's config rewritten to the protocol's 0.8 and 0.9; the provider's raw request each
    call records (what was sent) still says 0. Failed before: 'verified'."""
    from helpers import free_port

    from narrative_infill.platform.local.server import LocalModelServer

    monkeypatch.setenv("STANDIN_ANSWERS", "all")
    with LocalModelServer(standin, port=free_port()) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        task = infill_task("l2", data="demo", backbone="minilm")
        eval(task, model="llama-cpp-python/smollm2", log_dir=str(tmp_path / "made"), display="none",
             temperature=0.0, top_p=1.0)  # fmt: skip

    def edit(log):
        log.eval.model_generate_config.temperature, log.eval.model_generate_config.top_p = 0.8, 0.9
        for sample in log.samples or []:
            for call in _generations(sample):
                call.config.temperature, call.config.top_p = 0.8, 0.9

    folder = forged_logs(tmp_path / "made", tmp_path / "logs", edit)
    _refused(folder, tmp_path, capsys, monkeypatch, "raw request temperature 0.0")


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """Stored generations imported and scored by the importer, as ``narrative-infill import`` does."""
    root = tmp_path_factory.mktemp("imported")
    rows = [
        {
            "id": i,
            "model": "org/m1",
            "template_name": "fitb_l1",
            "template_id": 0,
            "problem": f"Story {i} begins with a walk. ______ It ends at home.",
            "gold_answer": "They crossed the old bridge.",
            "response": f"<ANSWER>They walked over hill {i}.</ANSWER>",
            "prompt_text": f"Story {i} begins with a walk. ______ It ends at home.",
        }
        for i in range(4)
    ]
    source = root / "generations.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    import_generations([str(source)], str(root / "logs"))
    for path in (root / "logs").glob("*.eval"):
        write_eval_log(
            inspect_score(read_eval_log(str(path)), metrics(backbone="minilm"), display="none"), str(path)
        )
    return root / "logs"


def test_imported_outputs_pass_as_imports_and_an_edited_one_is_refused(
    imported, tmp_path, capsys, monkeypatch
):
    out = _passes(imported, tmp_path / "honest", capsys, "custom")
    assert "consistent with its logs" in out and "were imported" in out

    def edit(sample):
        sample.output.completion = "<ANSWER>They crossed the old bridge.</ANSWER>"

    folder = forged_logs(imported, tmp_path / "logs", each_sample(edit))
    _refused(folder, tmp_path, capsys, monkeypatch, "is not the imported response", track="custom")


def test_a_baseline_run_is_verified(tmp_path, capsys):
    folder = tmp_path / "logs"
    task = infill_task("l2", data="demo", backbone="minilm")
    eval(task, model="baseline/context", log_dir=str(folder), display="none")
    assert "verified: every claim" in _passes(folder, tmp_path, capsys, "demo")


def test_an_output_the_solver_made_valid_unicode_is_still_its_call_s(tmp_path, capsys):
    """The solver replaces a lone surrogate (``solvers.valid_output``) after the call: not a forgery."""
    small_demo_run(tmp_path / "logs", lambda _: "<ANSWER>She bought \ud800 a telescope.</ANSWER>")
    assert "verified: every claim" in _passes(tmp_path / "logs", tmp_path, capsys, "custom")


def test_a_served_run_resumed_with_eval_retry_is_verified(standin, tmp_path, monkeypatch, capsys):
    """The README's route (a llama.cpp server, here the stand-in) stopped by a dead server after five
    answers and completed by ``inspect eval-retry``: the retried log keeps the first run's samples."""
    from helpers import free_port

    from narrative_infill.platform.local.server import LocalModelServer

    folder, port = tmp_path / "logs", free_port()
    options = {"max_retries": 1, "timeout": 30, "max_samples": 1, "display": "none"}
    monkeypatch.setenv("STANDIN_ANSWERS", "5")
    with LocalModelServer(standin, port=port) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        args = {"data": "demo", "backbone": "minilm"}  # a registered task, which eval-retry finds again
        [failed] = eval(
            "narrative_infill/l2",
            task_args=args,
            model="llama-cpp-python/smollm2",
            log_dir=str(folder),
            **options,
        )
    assert failed.status == "error"
    monkeypatch.setenv("STANDIN_ANSWERS", "all")
    with LocalModelServer(standin, port=port) as again:  # a new key: Inspect's cached client has the old one
        inspect = str(Path(sys.executable).parent / "inspect")
        retry = [inspect, "eval-retry", str(failed.location), "--log-dir", str(folder), "--display", "none"]
        env = {**os.environ, **again.environment()}
        assert subprocess.run(retry, env=env, capture_output=True, text=True, timeout=900).returncode == 0
    statuses = [read_eval_log(str(path), header_only=True).status for path in folder.glob("*.eval")]
    assert sorted(statuses) == ["error", "success"]
    shutil.move(str(failed.location), tmp_path / "failed.eval")  # the board reads the retried run
    assert "verified: every claim" in _passes(folder, tmp_path, capsys, "demo")
