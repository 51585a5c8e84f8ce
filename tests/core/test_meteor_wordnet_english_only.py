"""METEOR's WordNet reader loads English WordNet only (issue 49, the scorer's start-up): NLTK's
stock reader also builds, at every start, the map from WordNet 3.0's synsets to another release's
for the Open Multilingual Wordnet (reading ``index.sense``, 206,941 lines, twice), which only
other languages' lemmas use. It was about 60% of WordNet's load, the largest single part of the
metrics' start-up. METEOR's English synonyms, and so its values, are the same without it."""

from __future__ import annotations

import pytest

from narrative_infill.paper_protocol import METEOR_PARAMS
from narrative_infill.scorers.metrics import lexical

PAIRS = [
    ("The kids spent the afternoon splashing at the lake.", "The children swam in the lake all afternoon."),
    ("He finally called his brother back.", "He telephoned his sibling at last."),
    ("She ran to the bus, but the driver had left.", "She hurried toward the coach; it had departed."),
]


def test_meteor_wordnet_builds_no_multilingual_version_map():
    """Failed before: the reader held the OMW map (``map30``), built from index.sense at load."""
    reader = lexical._meteor()[2]
    assert reader.map30 is None


@pytest.mark.parametrize("prediction, reference", PAIRS)
def test_meteor_matches_nltks_stock_wordnet(prediction, reference):
    from nltk.corpus import wordnet
    from nltk.translate.meteor_score import single_meteor_score

    tokenize = lexical._meteor()[0]
    stock = single_meteor_score(tokenize(reference), tokenize(prediction), wordnet=wordnet, **METEOR_PARAMS)
    assert lexical.meteor(prediction, reference) == stock
