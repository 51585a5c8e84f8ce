"""The fluency check's disk cache (``fluency.GainCache``): a gain read once is served to a later
process, never to a reading of another model, measure or bound, and a cache that cannot be used is
skipped, never an error (every gain can be recomputed)."""

from __future__ import annotations

import pytest

from narrative_infill.platform.analysis import fluency
from narrative_infill.platform.analysis.fluency import UNREAD_WHOLE, GainCache

SALAD = "went home the day friends felt great happy time suddenly decided finally"


def test_a_gain_is_served_to_a_later_reader_of_the_same_identity(tmp_path):
    GainCache(tmp_path / "gains.sqlite", "measure A").put(SALAD, 0.25)
    assert GainCache(tmp_path / "gains.sqlite", "measure A").get(SALAD) == (True, 0.25)


def test_a_short_answer_s_none_is_a_hit_not_a_miss(tmp_path):
    cache = GainCache(tmp_path / "gains.sqlite", "measure A")
    cache.put("Tom cried.", None)
    assert cache.get("Tom cried.") == (True, None)
    assert cache.get("never read") == (False, None)


def test_an_answer_too_long_to_read_is_remembered_as_unread(tmp_path):
    """``UNREAD_WHOLE`` is minus infinity: the file must hand it back as such, not as a number."""
    GainCache(tmp_path / "gains.sqlite", "measure A").put(SALAD, UNREAD_WHOLE)
    assert GainCache(tmp_path / "gains.sqlite", "measure A").get(SALAD) == (True, UNREAD_WHOLE)


def test_another_identity_never_reads_the_gain(tmp_path):
    GainCache(tmp_path / "gains.sqlite", "measure A").put(SALAD, 0.25)
    assert GainCache(tmp_path / "gains.sqlite", "measure B").get(SALAD) == (False, None)


def test_a_cache_that_cannot_be_opened_is_skipped(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    cache = GainCache(blocked / "gains.sqlite", "measure A")
    cache.put(SALAD, 0.25)  # no error
    assert cache.get(SALAD) == (False, None)


def test_a_corrupt_cache_file_is_skipped(tmp_path):
    path = tmp_path / "gains.sqlite"
    path.write_bytes(b"not a database" * 100)
    cache = GainCache(path, "measure A")
    cache.put(SALAD, 0.25)
    assert cache.get(SALAD) == (False, None)


@pytest.mark.heavy  # hashes the packaged SmolLM2 and imports llama-cpp-python
@pytest.mark.parametrize(
    "bound",
    [
        "FLUENCY_MIN_WORDS",
        "FLUENCY_MAX_WORDS",
        "FLUENCY_WINDOW_WORDS",
        "FLUENCY_MAX_LETTERS",
        "_CONTEXT_TOKENS",
    ],
)
def test_a_changed_reading_bound_is_another_identity(bound, monkeypatch):
    """Found by the attack pass: the bounds were not in the key, so changing one without a new
    MEASURE_VERSION would have served the old readings."""
    before = fluency._identity()
    monkeypatch.setattr(fluency, bound, getattr(fluency, bound) + 1)
    assert fluency._identity() != before
