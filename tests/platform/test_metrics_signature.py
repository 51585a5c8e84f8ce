"""Metric signatures as data: built without loading a model, parsed back, used by verify."""

from __future__ import annotations

from pathlib import Path

import pytest

import narrative_infill.scorers.metrics.embedding as embedding
import narrative_infill.scorers.metrics.pairs as pairs
from narrative_infill.platform.analysis.submission.rescore import logged_backbones
from narrative_infill.scorers.signature import MINILM_DISPLAY, BackboneSignature, JudgeSignature, MetricsSignature

PAPER = BackboneSignature(
    "roberta-large", 17, "0.3.13", "4.44.0", "sentence-transformers/paraphrase-MiniLM-L6-v2", "128", "3.0.1"
)
LEXICAL = " | rouge1=rouge-score-0.1.2:no-stemmer | chrf=sacrebleu:nrefs:1 | extraction=ours"


def test_a_rendered_signature_parses_back_to_the_same_record():
    fallback = BackboneSignature(
        MINILM_DISPLAY,
        6,
        "0.3.13",
        "5.2",
        MINILM_DISPLAY,
        "256",
        "6.2",
        "roberta-large not available offline",
    )
    for record in (PAPER, fallback):
        assert BackboneSignature.parse(str(record) + LEXICAL) == record
    assert BackboneSignature.parse("rouge1=rouge-score-0.1.2") is None


def test_a_signature_parses_whatever_segments_follow_it():
    """The parse once ended the fallback reason at a lookahead for `` | rouge1=``: a signature whose
    next segment was another metric took that metric into the reason."""
    fallback = BackboneSignature("m:with:colons", 6, "0.3.13", "5.2", "s", "256", "6.2", "no roberta here")
    for after in ("", " | extraction=ours", " | chrf=sacrebleu:nrefs:1 | rouge1=rouge-score-0.1.2"):
        assert BackboneSignature.parse(str(fallback) + after) == fallback
    broken = str(PAPER).replace(":no-idf:", ":idf:")
    assert BackboneSignature.parse(broken) is None


@pytest.mark.heavy  # the signature names the installed bert-score and sentence-transformers versions
def test_the_signature_loads_no_model(monkeypatch):
    def refuse(model):
        raise AssertionError(f"signature() loaded {model}")

    monkeypatch.setattr(embedding, "_sentence_model", refuse)
    backbones = embedding.resolve_backbones("minilm")
    record = BackboneSignature.parse(backbones.signature())
    assert (
        record is not None and record.semf1_model == MINILM_DISPLAY and record.semf1_max_seq_length == "256"
    )


def test_verify_rescoring_uses_the_backbones_the_signature_names_not_a_substring(monkeypatch):
    """A Sem-F1 model with "MiniLM" in its name beside roberta-large is not the packaged MiniLM."""
    asked = []
    monkeypatch.setattr(pairs, "resolve_backbones", lambda *args, **kwargs: asked.append((args, kwargs)))
    logged_backbones(str(PAPER) + LEXICAL)
    assert asked == [
        (
            ("paper",),
            {
                "bertscore_model": "roberta-large",
                "bertscore_layer": 17,
                "semf1_model": "sentence-transformers/paraphrase-MiniLM-L6-v2",
            },
        )
    ]


def test_a_signature_without_backbones_is_not_rescored():
    with pytest.raises(embedding.BackboneUnavailable, match="names no backbones"):
        logged_backbones("rouge1=rouge-score-0.1.2:no-stemmer")


def test_old_and_new_signatures_parse_to_one_record_and_render_back():
    """``scorers.signature`` reads every format a log holds: a metrics signature with its extraction
    rule (task version 2 on) or without (``None``: scored before the rule was recorded), a judge's
    ``judge_models`` with the rule named only when it is not the default."""
    lexical = "rouge1=rouge-score-0.1.2:no-stemmer | chrf=sacrebleu:nrefs:1"
    for text, extraction in ((f"{PAPER} | {lexical} | extraction=published", "published"), (f"{PAPER} | {lexical}", None)):
        parsed = MetricsSignature.parse(text)
        assert parsed == MetricsSignature(PAPER, lexical, extraction) and str(parsed) == text
    assert MetricsSignature.parse(None) == MetricsSignature(None, "", None)
    judged = {
        "grader=openai/gpt-4.1-mini": JudgeSignature({"grader": "openai/gpt-4.1-mini"}, "ours"),
        "a=openai/x, b=anthropic/y | extraction=published": JudgeSignature(
            {"a": "openai/x", "b": "anthropic/y"}, "published"
        ),
    }
    for text, record in judged.items():
        assert JudgeSignature.parse(text) == record and str(record) == text


def test_no_module_but_the_signature_module_reads_a_signature_by_hand():
    package = Path(__file__).resolve().parents[2] / "narrative_infill"
    by_hand = ("| extraction", 'split(" | "', "extraction=(")
    found = [
        f"{path.relative_to(package)}: {pattern}"
        for path in package.rglob("*.py")
        if path.name != "signature.py"
        for pattern in by_hand
        if pattern in path.read_text(encoding="utf-8")
    ]
    assert found == []
