"""The judge reads the answer the metrics read (issue 44, finding 7): under ``extraction=published``
an untagged response is the answer whole, and the judge was sent all of it, however long; it now
gets the metrics' bounded answer (first ``MAX_TEXT_CHARS`` characters, ``MAX_ANSWER_SENTENCES``
sentences), and the score records how much it did not read."""

from __future__ import annotations

from helpers import VALID_VERDICT, mock_model, scripted_grader
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from narrative_infill.extraction import MAX_TEXT_CHARS
from narrative_infill.scorers.answer import bounded_answer
from narrative_infill.scorers.judge import judge

PROBLEM = "Maya had been saving her allowance. ______ She rode her bike to the shop."


def test_the_judge_reads_the_bounded_answer_under_the_published_rule():
    answer = "word " * 20_000  # 100,000 characters without a tag: the published rule takes it whole
    model, calls = scripted_grader(VALID_VERDICT)
    task = Task(
        dataset=[Sample(input=PROBLEM, target="She bought a bike.")],
        solver=generate(),
        scorer=judge(extraction="published"),
    )
    [log] = eval(task, model=mock_model(lambda m, c: answer), model_roles={"grader": model}, display="none")
    assert log.status == "success", log.error
    prompt = calls[0][-1].text
    read = bounded_answer(answer.strip())
    assert len(read) == MAX_TEXT_CHARS and read in prompt
    assert "word " * (MAX_TEXT_CHARS // 5 + 1) not in prompt  # failed before: the whole answer was sent
    score = log.samples[0].scores["judge"]
    assert score.metadata["answer_truncated_chars"] == len(answer.strip()) - MAX_TEXT_CHARS
