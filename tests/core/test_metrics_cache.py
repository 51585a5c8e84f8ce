"""The golds' embedding cache (``scorers/metrics/cache.py``): hits, misses, signatures, disk, concurrent writers."""

from __future__ import annotations

import multiprocessing

import numpy as np

from narrative_infill.scorers.metrics.cache import EmbeddingCache


def vectors(text: str) -> tuple[np.ndarray, np.ndarray]:
    seed = sum(map(ord, text))
    return np.random.default_rng(seed).random((len(text), 8), dtype=np.float32), np.ones(
        len(text), dtype=np.float32
    )


def test_lookup_computes_only_the_misses_and_counts_hits():
    cache, computed = EmbeddingCache("sig-a"), []

    def compute(texts):
        computed.append(list(texts))
        return [vectors(t) for t in texts]

    first = cache.lookup(["gold one", "gold two", "gold one"], compute)
    second = cache.lookup(["gold two", "gold three"], compute)
    assert computed == [["gold one", "gold two"], ["gold three"]]
    assert np.array_equal(first["gold two"][0], second["gold two"][0])
    assert (cache.hits, cache.misses) == (1, 3)


def test_another_signature_never_reads_these_vectors(tmp_path):
    EmbeddingCache("minilm:L6", tmp_path).put("gold", *vectors("gold"))
    assert EmbeddingCache("roberta-large:L17", tmp_path).get("gold") is None
    assert EmbeddingCache("minilm:L6", tmp_path).get("gold") is not None  # a new process reads it from disk


def test_memory_is_bounded(tmp_path):
    cache = EmbeddingCache("sig", capacity=2)
    for text in ("a", "b", "c"):
        cache.put(text, *vectors(text))
    assert cache.get("a") is None and cache.get("c") is not None


def _writer(directory: str, start: int) -> None:
    cache = EmbeddingCache("shared", directory)
    for i in range(40):
        text = f"gold {(start + i) % 40}"
        cache.put(text, *vectors(text))


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path):
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_writer, args=(str(tmp_path), start)) for start in (0, 10, 20, 30)]
    for writer in writers:
        writer.start()
    reader = EmbeddingCache("shared", tmp_path, capacity=0)
    seen = 0
    while any(w.is_alive() for w in writers):
        for i in range(40):
            value = reader.get(f"gold {i}")
            if value is not None:  # whatever is found is whole
                assert np.array_equal(value[0], vectors(f"gold {i}")[0])
                seen += 1
    for writer in writers:
        writer.join(timeout=60)
        assert writer.exitcode == 0
    assert all(
        np.array_equal(EmbeddingCache("shared", tmp_path).get(f"gold {i}")[0], vectors(f"gold {i}")[0])
        for i in range(40)
    )
    assert not list(tmp_path.rglob("*.partial"))
