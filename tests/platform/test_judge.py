"""The LLM judge with mockllm graders: parsing, retries, failures, panels, weighting, prompts."""

import math

import pytest
import yaml
from helpers import REFERENCE_MD, VALID_VERDICT, mock_model, mock_output, scripted_grader
from inspect_ai import eval, score, task_with
from inspect_ai.model import Logprob, Logprobs, TopLogprob, get_model
from standin_grader import openai_server

from narrative_infill.scorers.judge import DIMENSIONS, JudgementError, judge, judge_variant, parse_judgement
from narrative_infill.scorers.judge.scorer import NOT_RUN_HINT
from narrative_infill.tasks import infill_task


def run(roles, answer="<ANSWER>They laughed together.</ANSWER>", **task_options):
    task = infill_task("l2", data="demo", domain="sind", n=1, judge=True, **task_options)
    [log] = eval(task, model=mock_model(lambda m, c: answer), model_roles=roles, display="none", limit=1)
    assert log.status == "success", log.error
    return log, log.samples[0].scores["judge"]


@pytest.mark.parametrize(
    "reply",
    [
        VALID_VERDICT,
        f"```json\n{VALID_VERDICT}\n```",
        f"Here is my evaluation of the infill.\n{VALID_VERDICT}\nThe candidate is decent.",
        '{"fluency": "4", "Context Faithfulness": 3, "coherence": 4.0, "Narrative Consistency": 5, "informativeness": {"score": 3, "reason": "ok"}}',
    ],
)
def test_valid_replies_in_many_shapes_parse(reply):
    assert parse_judgement(reply).scores == dict(zip(DIMENSIONS, (4, 3, 4, 5, 3)))


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"Fluency": 4, "Context_Faithfulness": 3}', "missing dimension"),
        (VALID_VERDICT.replace('"Fluency": 4', '"Fluency": 7'), "fluency must be an integer from 1 to 5"),
        (VALID_VERDICT.replace('"Fluency": 4', '"Fluency": 3.5'), "fluency must be an integer"),
        ("I'm sorry, I can't evaluate this story.", "no scores found"),
        ('{"Fluency": 1-5, "Context_Faithfulness": 1-5}', "no scores found"),
    ],
)
def test_invalid_replies_say_what_is_wrong(reply, problem):
    with pytest.raises(JudgementError, match=problem):
        parse_judgement(reply)


@pytest.mark.heavy
def test_valid_judgement_gives_dimensions_qavg_and_tokens():
    model, calls = scripted_grader(VALID_VERDICT)
    log, result = run({"grader": model})
    assert result.value == {**dict(zip(DIMENSIONS, (4, 3, 4, 5, 3))), "qavg": 3.8, "grader_failed": 0.0}
    assert (
        result.metadata["judges"]["grader"]["attempts"] == 1 and result.metadata["grader_tokens"]["total"] > 0
    )
    system, user = calls[0]
    assert system.role == "system" and "Apply these penalties BEFORE final scoring" in system.text
    assert "They laughed together." in user.text and 'Insert the candidate into "______"' in user.text
    metrics = {s.name: s.metrics for s in log.results.scores if s.scorer == "judge"}
    assert (
        metrics["qavg"]["narrative_infill/share_above"].value == 0.0
        and metrics["grader_failed"]["mean"].value == 0.0
    )
    assert (
        list(result.value)[0] == "qavg" and list(metrics)[0] == "qavg"
    )  # the headline leads the viewer and the summary


@pytest.mark.heavy
def test_retry_then_success_tells_the_grader_what_was_wrong():
    model, calls = scripted_grader('{"Fluency": 4}', VALID_VERDICT)
    _, result = run({"grader": model})
    assert result.value["qavg"] == 3.8 and result.metadata["judges"]["grader"]["attempts"] == 2
    assert "could not be used (missing dimension(s)" in calls[1][-1].text


@pytest.mark.heavy
@pytest.mark.parametrize("bad", ["I cannot grade this.", '{"Fluency": 9, "Context_Faithfulness": 3}'])
def test_retries_spent_leave_the_sample_unscored_not_zero(bad):
    model, calls = scripted_grader(bad)
    log, result = run({"grader": model})
    assert len(calls) == 3  # the first call and two retries
    assert (
        all(math.isnan(result.value[d]) for d in (*DIMENSIONS, "qavg"))
        and result.value["grader_failed"] == 1.0
    )
    assert result.reason == "grader_failed" and len(result.metadata["judges"]["grader"]["raw"]) == 3
    scores = {s.name: s for s in log.results.scores if s.scorer == "judge"}
    assert scores["qavg"].unscored_samples == 1 and scores["grader_failed"].metrics["mean"].value == 1.0


def judge_one_sample(model, **options):
    """The log of one demo sample judged by ``model`` as the grader role."""
    task = infill_task("l2", data="demo", domain="sind", n=1, judge=True, **options)
    answer = mock_model(lambda m, c: "<ANSWER>x.</ANSWER>")
    [log] = eval(task, model=answer, model_roles={"grader": model}, display="none", limit=1)
    return log


@pytest.mark.heavy
def test_a_grader_error_fails_the_sample_once_instead_of_a_nan_success():
    """A wrong key or a dead endpoint is the sample's error (for --retry-on-error and eval-retry),
    not three wasted calls and a 'successful' run full of NaN."""
    model, calls = scripted_grader(RuntimeError("401 invalid api key"))
    log = judge_one_sample(model)
    assert log.status == "error" and "401 invalid api key" in log.error.message
    assert len(calls) == 1


@pytest.mark.heavy
def test_empty_extraction_is_judged_as_an_empty_infill():
    model, calls = scripted_grader(VALID_VERDICT.replace('"Informativeness": 3', '"Informativeness": 1'))
    _, result = run({"grader": model}, answer="<think>never finished")
    assert result.answer == "" and result.value["informativeness"] == 1
    assert "[empty: the candidate wrote nothing]" in calls[0][-1].text


@pytest.mark.heavy
def test_panel_keeps_each_judge_and_averages():
    first, _ = scripted_grader(VALID_VERDICT, name="judge-a")
    second, _ = scripted_grader(VALID_VERDICT.replace('"Fluency": 4', '"Fluency": 2'), name="judge-b")
    log, result = run({"grader": first, "grader2": second}, judge_roles=["grader", "grader2"])
    assert result.value["qavg_grader"] == 3.8 and result.value["qavg_grader2"] == pytest.approx(3.4)
    assert result.value["fluency"] == 3.0 and result.value["qavg"] == pytest.approx(3.6)
    assert {"qavg_grader", "qavg_grader2"} <= {s.name for s in log.results.scores}


@pytest.mark.heavy
def test_without_a_grader_the_judge_is_not_run_and_says_how_to_add_it(caplog):
    task = infill_task("l2", data="demo", domain="sind", n=1)
    assert task.metadata["judge"] == "paper prompt"  # whether it ran shows in the scores, not here
    with caplog.at_level("WARNING"):
        [log] = eval(task, model=mock_model(lambda m, c: "x"), display="none", limit=2)
    assert log.status == "success" and all("judge" not in s.scores for s in log.samples)
    assert all(s.scored_samples == 0 for s in log.results.scores if s.scorer == "judge")
    warnings = [r.getMessage() for r in caplog.records if "LLM judge not run" in r.getMessage()]
    assert len(warnings) == 1 and NOT_RUN_HINT in warnings[0]  # once per run, not once per sample


@pytest.mark.heavy
def test_judge_follows_a_grader_role_bound_after_the_task_is_built():
    # task_with binds roles to a built task, as eval-set and Inspect Flow do: the judge must see them.
    model, calls = scripted_grader(VALID_VERDICT)
    task = task_with(infill_task("l2", data="demo", domain="sind", n=1), model_roles={"grader": model})
    [log] = eval(task, model=mock_model(lambda m, c: "They laughed."), display="none", limit=1)
    assert log.status == "success", log.error
    assert log.samples[0].scores["judge"].value["qavg"] == 3.8 and len(calls) == 1


@pytest.mark.heavy
def test_judge_false_turns_the_judge_off_even_with_a_grader_bound():
    model, calls = scripted_grader(VALID_VERDICT)
    task = task_with(
        infill_task("l2", data="demo", domain="sind", n=1, judge=False), model_roles={"grader": model}
    )
    [log] = eval(task, model=mock_model(lambda m, c: "They laughed."), display="none", limit=1)
    assert "judge" not in log.samples[0].scores and calls == []
    assert not [s for s in log.results.scores if s.scorer == "judge"]


@pytest.mark.heavy
def test_forced_judge_without_grader_fails_clearly_instead_of_grading_with_the_model_under_test():
    task = infill_task("l2", data="demo", domain="sind", n=1, judge=True)
    [log] = eval(task, model=mock_model(lambda m, c: VALID_VERDICT), display="none", limit=1, fail_on_error=False)
    assert "the model under test never grades itself" in str(log.samples[0].error or log.error)


@pytest.mark.heavy
def test_rescoring_a_log_with_the_judge_later():
    [log] = eval(
        infill_task("l2", data="demo", domain="sind", n=1),
        model=mock_model(lambda m, c: "They laughed."),
        display="none",
        limit=1,
    )
    model, _ = scripted_grader(VALID_VERDICT)
    rescored = score(log, judge(), model_roles={"grader": model}, action="append")
    assert rescored.samples[0].scores["judge"].value["qavg"] == 3.8


@pytest.mark.heavy
def test_probability_weighted_scores_from_top_logprobs():
    # Every digit token of the reply carries top logprobs: itself 0.75, "1" 0.25.
    def top(ch: str) -> list[TopLogprob]:
        if not ch.isdigit():
            return []
        return [TopLogprob(token=ch, logprob=math.log(0.75)), TopLogprob(token="1", logprob=math.log(0.25))]

    tokens = [Logprob(token=ch, logprob=0.0, top_logprobs=top(ch)) for ch in VALID_VERDICT]

    def outputs(messages, tools, tool_choice, config):
        assert config.logprobs and config.top_logprobs == 5
        output = mock_output(VALID_VERDICT)
        output.choices[0].logprobs = Logprobs(content=tokens)
        return output

    [log] = eval(
        infill_task("l2", data="demo", domain="sind", n=1),
        model=mock_model(lambda m, c: "x"),
        display="none",
        limit=1,
    )
    weighted_grader = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    rescored = score(
        log, judge(probability_weighted=True), model_roles={"grader": weighted_grader}, action="append"
    )
    result = rescored.samples[0].scores["judge"]
    assert result.value["fluency"] == pytest.approx(0.75 * 4 + 0.25 * 1)
    assert result.value["narrative_consistency"] == pytest.approx(0.75 * 5 + 0.25 * 1)
    assert result.metadata["judges"]["grader"]["scores"]["fluency"] == 4  # the sampled integer is kept too

    plain_grader, _ = scripted_grader(VALID_VERDICT, name="plain")  # no logprobs: falls back to the integers, and says so
    fallback = score(
        log, judge(probability_weighted=True), model_roles={"grader": plain_grader}, action="overwrite"
    )
    verdict = fallback.samples[0].scores["judge"].metadata["judges"]["grader"]
    assert verdict["probability_weighting"].startswith("unavailable") and verdict["values"]["fluency"] == 4


@pytest.mark.shared
def test_authors_variant_is_their_exact_prompt_and_paper_variant_adds_what_they_left_out():
    reference = REFERENCE_MD.read_text(encoding="utf-8")
    block = reference[reference.index("```yaml\n", reference.index("### 1.1 Exact YAML")) + 8 :]
    parts = yaml.safe_load(block[: block.index("```")])["narrative_infilling_evaluation_v4"]
    authors = judge_variant("authors").prompt
    assert authors.system == f"{parts['system']}\n\n{parts['evaluation_procedure']}\n\n{parts['rubric']}"
    assert "missing bridging.\n\n\nSTEP 1" in authors.system  # three newlines, as REFERENCE §1.2 says
    assert authors.user("S ______ T", "C") == parts["user"].format(
        story_with_blank="S ______ T", candidate_infill="C"
    )
    assert "Apply these penalties" not in authors.system
    paper = judge_variant("paper").prompt
    assert parts["automatic_penalties"] in paper.system and '"____"' not in paper.system + paper.user(
        "x", "y"
    )
    assert "How effectively the completion fills the narrative gap without being generic." in paper.system


@pytest.fixture
def openai_compatible_server():
    """A local OpenAI-compatible endpoint that records each request and answers with VALID_VERDICT
    (or with the queued (content, finish reason) replies first)."""
    replies: list[tuple[str, str]] = []
    with openai_server(lambda body: replies.pop(0) if replies else (VALID_VERDICT, "stop")) as (url, requests):
        yield url, requests, replies


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("grader_name", "model_args", "path"),
    [
        ("openai/gpt-4.1-mini", {"api_key": "test"}, "schema"),
        ("llama-cpp-python/smollm2", {"api_key": "local"}, "grammar"),
        ("openai-api/someservice/judge", {"api_key": "test"}, "none"),
    ],
    ids=["schema-honoured", "llama-cpp-grammar", "schema-ignored"],
)
def test_each_provider_is_told_the_reply_shape_its_own_way(
    openai_compatible_server, grader_name, model_args, path
):
    url, requests, _ = openai_compatible_server
    model = get_model(grader_name, base_url=url, memoize=False, **model_args)
    _, result = run({"grader": model})
    assert result.value["qavg"] == 3.8 and result.metadata["judges"]["grader"]["constraint"] == path
    [body] = requests
    shape = body.get("response_format")
    if path == "schema":
        assert shape["type"] == "json_schema" and shape["json_schema"]["strict"] is True
        schema = shape["json_schema"]["schema"]
    elif (
        path == "grammar"
    ):  # llama-cpp-python's server answers 500 to json_schema, builds a grammar from this
        assert shape["type"] == "json_object"
        schema = shape["schema"]
    else:
        assert shape is None
        return
    assert schema["required"] == [
        "Fluency",
        "Context_Faithfulness",
        "Bidirectional_Coherence",
        "Narrative_Consistency",
        "Informativeness",
    ]
    assert schema["additionalProperties"] is False
    assert all(
        p == {"type": "integer", "enum": [1, 2, 3, 4, 5]} for p in schema["properties"].values()
    )  # no min/max


@pytest.mark.heavy
def test_the_log_records_where_the_grader_was_reached_and_what_answered(
    openai_compatible_server, monkeypatch
):
    """Failed before: a local server reached through OPENAI_BASE_URL left only the paper judge's
    name in the log (its header records the grader's base_url as None)."""
    url, _, _ = openai_compatible_server
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    _, result = run({"grader": get_model("openai/gpt-4.1-mini", api_key="test", memoize=False)})
    verdict = result.metadata["judges"]["grader"]
    assert result.metadata["judge_endpoints"] == f"grader={url}" and verdict["endpoint"] == url
    assert result.metadata["judge_served_by"] == "grader=gpt-4.1-mini (fp_standin)"
    assert (verdict["response_model"], verdict["system_fingerprint"]) == ("gpt-4.1-mini", "fp_standin")


@pytest.mark.heavy
def test_a_reply_cut_at_the_token_limit_is_a_failed_attempt(openai_compatible_server):
    url, requests, replies = openai_compatible_server
    replies.append(
        (
            '{"Fluency": 4, "Context_Faithfulness": 3, "Bidirectional_Coherence": 4, "Narrative_Consistency": 5, "Informativeness": 3',
            "length",
        )
    )
    _, result = run(
        {"grader": get_model("llama-cpp-python/smollm2", base_url=url, api_key="local", memoize=False)}
    )
    verdict = result.metadata["judges"]["grader"]
    assert verdict["attempts"] == 2 and result.value["qavg"] == 3.8 and len(requests) == 2
    assert "cut off at the token limit" in requests[1]["messages"][-1]["content"]


@pytest.mark.heavy
def test_structured_on_refuses_a_grader_that_cannot_be_constrained():
    model, calls = scripted_grader(VALID_VERDICT)
    log = judge_one_sample(model, judge_structured="on")
    assert log.status == "error" and "cannot be told the reply's shape" in log.error.message and not calls


@pytest.mark.heavy
def test_the_batch_recipe_reaches_the_grader():
    """README: --model-role 'grader={model: openai/gpt-4.1-mini, batch: true}' (eval-level --batch
    does not reach roles). The role is parsed as the package's commands parse it, and the config
    the grader's API receives is read: it fails if the judge drops or overrides the role's config."""
    from narrative_infill.inspect_compat import parse_model_roles

    grader = parse_model_roles(["grader={model: mockllm/model, batch: true}"])["grader"]
    seen = []

    async def generate(input, tools, tool_choice, config):
        seen.append(config.batch)
        return mock_output(VALID_VERDICT)

    grader.api.generate = generate
    _, result = run({"grader": grader})
    assert seen == [True] and result.value["qavg"] == 3.8


def _sharp_grader(messages, tools, tool_choice, config):
    """Scores a written infill 4-5, and 1 an empty one or one whose first sentence is in the story."""
    story, candidate = messages[-1].text.split("STORY WITH BLANK:")[1].split("CANDIDATE INFILL", 1)
    candidate = candidate.split("<candidate_infill>")[-1].split("</candidate_infill>")[0]
    first = candidate.split("INSTRUCTIONS:")[0].strip().split(". ")[0]
    empty = "[empty: the candidate wrote nothing]" in candidate or first in story
    return mock_output(VALID_VERDICT.replace("4", "1").replace("3", "1").replace("5", "1") if empty else VALID_VERDICT)


def test_judge_check_separates_gold_from_empty_and_flags_a_blind_grader(tmp_path, monkeypatch, capsys):
    import narrative_infill.inspect_compat as compat
    from narrative_infill.platform.cli import main
    from narrative_infill.tasks.judge_check import judge_check, summarize

    sharp = get_model("mockllm/sharp", custom_outputs=_sharp_grader, memoize=False)
    [log] = eval(
        judge_check(instances=3), model_roles={"grader": sharp}, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success" and len(log.samples) == 12
    assert {s.metadata["baseline"] for s in log.samples} == {"gold", "empty", "context", "neighbour"}
    assert all(
        s.scores["judge"].answer == (s.target if s.metadata["baseline"] == "gold" else "")
        for s in log.samples
        if s.metadata["baseline"] in ("gold", "empty")
    )
    figures = summarize(log)
    assert (
        figures["qavg_gold"] == pytest.approx(3.8)
        and figures["qavg_empty"] == figures["qavg_context"] == figures["qavg_neighbour"] == 1.0
        and figures["gap"] == figures["gap_context"] == pytest.approx(2.8)
    )
    monkeypatch.setattr(compat, "parse_model_roles", lambda roles: {"grader": sharp})
    assert main(["judge-check", "--model-role", "grader=sharp", "-n", "2", "--log-dir", str(tmp_path)]) == 0
    assert "gap    2.80" in capsys.readouterr().out
    blind, _ = scripted_grader(VALID_VERDICT)  # the same scores whatever it is shown
    monkeypatch.setattr(compat, "parse_model_roles", lambda roles: {"grader": blind})
    assert main(["judge-check", "--model-role", "grader=blind", "-n", "2", "--log-dir", str(tmp_path)]) == 1
    assert "FLAGGED" in capsys.readouterr().out


def test_judge_check_flags_a_grader_that_rewards_copying_and_names_the_probe(tmp_path):
    """A grader that only sees emptiness passes the empty probe but not the copies."""
    from narrative_infill.data.baselines import context_answer
    from narrative_infill.tasks.judge_check import describe, judge_check

    def empty_only(messages, tools, tool_choice, config):
        empty = "[empty: the candidate wrote nothing]" in messages[-1].text
        return mock_output(VALID_VERDICT.replace("4", "1").replace("3", "1").replace("5", "1") if empty else VALID_VERDICT)

    grader_model = get_model("mockllm/copy-blind", custom_outputs=empty_only, memoize=False)
    [log] = eval(
        judge_check(instances=2), model_roles={"grader": grader_model}, display="none", log_dir=str(tmp_path)
    )
    copies = [s for s in log.samples if s.metadata["baseline"] == "context"]
    assert copies and all(s.scores["judge"].answer == context_answer(s.input) for s in copies)  # whole
    text, flagged = describe(log)
    assert flagged and "cannot tell the gold span from the context, neighbour probes" in text
    assert "gap    2.80 (gold minus empty" in text and "gap    0.00 (gold minus context" in text
