"""Gold-side embeddings computed once: in memory across the tasks of one process, and
optionally on disk across processes.

In the paper's grid every gold span is scored 180 times (20 models x 9 settings); its
BERTScore token embeddings and its Sem-F1 sentence embeddings are the same each time. Entries
are keyed by the backbone signature (model, layer, library versions) and the text's SHA-256,
so a different backbone never reads another's vectors. Disk entries are written to a
temporary file and renamed into place, so concurrent writers (an eval-set's processes, a grid
on a shared disk) never expose a partial file; a reader that finds none computes it itself.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np

#: Entries kept in memory (least recently used dropped first): about 0.5 GB of MiniLM token
#: embeddings at the benchmark's gold lengths.
MEMORY_ENTRIES = 10_000
CACHE_DIR_VARIABLE = "NARRATIVE_INFILL_EMBEDDING_CACHE"


class EmbeddingCache:
    """Arrays by (signature, text); ``hits`` and ``misses`` count lookups."""

    def __init__(self, signature: str, directory: str | Path | None = None, capacity: int = MEMORY_ENTRIES):
        self.signature = signature
        self.directory = (
            Path(directory) / hashlib.sha256(signature.encode()).hexdigest()[:16] if directory else None
        )
        self.capacity = capacity
        self._memory: OrderedDict[str, tuple[np.ndarray, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.signature}\0{text}".encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return cast(Path, self.directory) / key[:2] / f"{key}.npz"  # called only with a disk layer

    def get(self, text: str) -> tuple[np.ndarray, ...] | None:
        key = self._key(text)
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                self.hits += 1
                return self._memory[key]
        if self.directory is not None and self._path(key).is_file():
            try:
                with np.load(self._path(key)) as stored:
                    value = tuple(stored[f"a{i}"] for i in range(len(stored.files)))
            except (OSError, ValueError):  # unreadable: recompute it
                value = None
            if value is not None:
                self._remember(key, value)
                with self._lock:
                    self.hits += 1
                return value
        with self._lock:
            self.misses += 1
        return None

    def put(self, text: str, *arrays: np.ndarray) -> None:
        key = self._key(text)
        self._remember(key, arrays)
        if self.directory is None:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".partial")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, **{f"a{i}": a for i, a in enumerate(arrays)})  # type: ignore[arg-type]
            os.replace(temporary, path)  # atomic: a reader sees the whole entry or none
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)

    def _remember(self, key: str, value: tuple[np.ndarray, ...]) -> None:
        with self._lock:
            self._memory[key] = value
            self._memory.move_to_end(key)
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)

    def lookup(
        self, texts: list[str], compute: Callable[[list[str]], list[tuple[np.ndarray, ...]]]
    ) -> dict[str, Any]:
        """Every text's arrays: cached ones read, the rest computed in one call and stored."""
        found = {text: self.get(text) for text in dict.fromkeys(texts)}
        missing = [text for text, value in found.items() if value is None]
        if missing:
            for text, value in zip(missing, compute(missing)):
                self.put(text, *value)
                found[text] = value
        return found


_caches: dict[tuple[str, str, str | None], EmbeddingCache] = {}
_caches_lock = threading.Lock()


def embedding_cache(kind: str, signature: str, directory: str | None = None) -> EmbeddingCache:
    """The process-wide cache of one kind (``bertscore``, ``semf1``) and backbone signature:
    every task of an eval-set shares it. ``directory`` (or $NARRATIVE_INFILL_EMBEDDING_CACHE)
    adds the disk layer."""
    directory = directory or os.environ.get(CACHE_DIR_VARIABLE) or None
    key = (kind, signature, directory)
    with _caches_lock:
        if key not in _caches:
            _caches[key] = EmbeddingCache(f"{kind}|{signature}", directory)
        return _caches[key]
