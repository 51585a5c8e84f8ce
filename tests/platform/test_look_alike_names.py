"""Model names that only look like another (issue 57, Why 5): a right-to-left override, a Cyrillic
"о", a Hangul filler, a blank Braille pattern, a hyphen or minus for "-", "I" or "1" for "l" and
all-Cyrillic look-alikes are refused wherever a name enters (``import``'s model column, an lm-eval
results file, ``submit``'s logs, the submission file ``verify`` and the board read), naming the
character (U+XXXX) or both names; the names honest runs use pass."""

from __future__ import annotations

import json

import pytest
from helpers import SHARED, mock_output, refused, require_shared, write_jsonl
from input_records import GENERATION_ROW
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.platform.analysis.importer import read_generations
from narrative_infill.platform.analysis.lm_eval_import import LmEvalImportError, model_name
from narrative_infill.platform.analysis.submission.build import content_hash
from narrative_infill.platform.analysis.submission.schema import schema_problems
from narrative_infill.platform.cli import main
from narrative_infill.platform.names import name_problem, skeleton
from narrative_infill.tasks import infill_task

RLO, CYRILLIC_O = "\u202e", "\u043e"
#: the names the package's own runs and the README give a model
HONEST = [
    "vllm/google/gemma-2-2b-it",
    "openai-api/local/SmolLM2-135M",
    "llama-cpp-python/smollm2",
    "baseline/generic-sentence",
    "mockllm/model",
    "Llama-3.1-8B-Instruct",
    "Qwen2.5-7B",
    "gpt-4o-mini",
    "Qwen/通义千问-7B",  # Latin with Han: Unicode's "highly restrictive" profile allows it
]


def _paper_models() -> list[str]:
    require_shared()
    path = SHARED / "data" / "extraction" / "responses.jsonl"
    with path.open(encoding="utf-8") as handle:
        return sorted({json.loads(line)["model"] for line in handle})


@pytest.mark.shared
def test_every_honest_name_passes_and_no_two_look_alike(tmp_path):
    names = HONEST + _paper_models()
    assert len(_paper_models()) == 20
    assert [name for name in names if name_problem(name, as_written=True)] == []
    assert len({skeleton(name) for name in names}) == len(names)
    rows = [{**GENERATION_ROW, "id": i, "model": name} for i, name in enumerate(names)]
    imported = read_generations([write_jsonl(tmp_path / "g.jsonl", rows)])
    assert sorted({row.record["model"] for row in imported}) == sorted(names)


@pytest.mark.parametrize(
    ("name", "character"),
    [
        (f"gpt-4o{RLO}inim", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("m1\u3164", "U+3164 (HANGUL FILLER)"),
        ("\u115fm1", "U+115F (HANGUL CHOSEONG FILLER)"),
        ("m1\u2800", "U+2800 (BRAILLE PATTERN BLANK)"),
        ("m\u200b1", "U+200B (ZERO WIDTH SPACE)"),
        (f"gpt-4{CYRILLIC_O}", "Cyrillic ('\u043e', U+043E)"),
    ],
    ids=[
        "bidi override",
        "Hangul filler",
        "Hangul choseong filler",
        "Braille blank",
        "zero-width",
        "mixed script",
    ],
)
def test_an_imported_name_that_renders_as_another_is_refused_naming_the_character(tmp_path, name, character):
    """Failed before for the Hangul fillers and the Braille blank: accepted as models of their own."""
    source = write_jsonl(tmp_path / "g.jsonl", [{**GENERATION_ROW, "id": 1, "model": name}])
    message = refused(read_generations, [source])
    assert f"{source}, row 1: field 'model': {ascii(name)}" in message and character in message


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("gpt-4o", "gpt\u20104o"),  # U+2010 HYPHEN
        ("gpt-4o", "gpt\u22124o"),  # U+2212 MINUS SIGN
        ("llama-3", "Ilama-3"),  # "I" for "l"
        ("m1", "ml"),  # "l" for "1"
        ("gpt-4o", "gpt-40"),  # "0" for "o"
        ("copa", "\u0441\u043e\u0440\u0430"),  # all Cyrillic: с о р а
        ("m1", "M1"),
    ],
    ids=["hyphen", "minus", "I for l", "l for 1", "0 for o", "all Cyrillic", "case"],
)
def test_two_imported_names_that_look_alike_are_refused_naming_both(tmp_path, first, second):
    """Failed before: each pair became two models whose names print alike."""
    rows = [{**GENERATION_ROW, "id": 1, "model": first}, {**GENERATION_ROW, "id": 2, "model": second}]
    source = write_jsonl(tmp_path / "g.jsonl", rows)
    message = refused(read_generations, [source])
    assert (
        f"{source}, row 2: field 'model': {ascii(second)} differs from {ascii(first)} ({source}, row 1)"
        in (message)
    )


def test_an_lm_eval_model_name_that_renders_as_another_is_refused(tmp_path):
    results = {"config": {"model": "local-chat-completions"}, "model_name": f"smollm2{RLO}"}
    with pytest.raises(LmEvalImportError, match="field 'model_name': .*U\\+202E"):
        model_name(results, tmp_path / "results.json")
    assert model_name({**results, "model_name": "smollm2"}, tmp_path) == "local-chat-completions/smollm2"


@pytest.mark.parametrize(
    "name",
    [f"gpt-4o{RLO}", f"gpt-4{CYRILLIC_O}", "m1\u3164"],
    ids=["bidi override", "Cyrillic o", "Hangul filler"],
)
def test_submit_refuses_logs_whose_model_name_renders_as_another(tmp_path, capsys, name):
    """Failed before: ``submit`` wrote the name into the file, and the board showed it."""
    model = get_model(
        f"mockllm/{name}", custom_outputs=lambda *_: mock_output("<ANSWER>x</ANSWER>"), memoize=False
    )
    eval(infill_task("l2", data="demo", domain="sind"), model=model, log_dir=str(tmp_path / "logs"),
         display="none", score=False, limit=1)  # fmt: skip
    assert main(["submit", str(tmp_path / "logs"), "-o", str(tmp_path / "s.json"), "--track", "custom"]) == 1
    err = capsys.readouterr().err
    assert "field 'eval.model'" in err and ascii(f"mockllm/{name}") in err and "U+" in err
    assert not (tmp_path / "s.json").exists()


@pytest.mark.heavy
@pytest.mark.parametrize(
    "name",
    [f"mockllm/alpha{RLO}", f"mockllm/alph{CYRILLIC_O}", "mockllm/alpha\u3164", "ｍｏｃｋｌｌｍ/alpha"],
    ids=["bidi override", "Cyrillic o", "Hangul filler", "not NFKC"],
)
def test_verify_and_the_board_refuse_a_submission_whose_model_name_renders_as_another(
    submissions, logs, tmp_path, capsys, name
):
    """A submission re-hashed with its ``model.id`` edited: failed before (``verify``'s schema and
    the board read the name as it was)."""
    document = json.loads((submissions / "alpha.json").read_text())
    document["model"]["id"] = name
    document["sha256"] = content_hash(document)
    assert any(problem.startswith(f"model.id: {ascii(name)}") for problem in schema_problems(document))
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "alpha.json").write_text(json.dumps(document))
    assert main(["verify", str(folder / "alpha.json")]) == 1
    assert f"schema: model.id: {ascii(name)}" in capsys.readouterr().out
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 1
    shown = capsys.readouterr().err + "".join(p.read_text() for p in tmp_path.glob("site/*.md"))
    assert f"model.id: {ascii(name)}" in shown  # refused: in the error, or beside the entry on the board
