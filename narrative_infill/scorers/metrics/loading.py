"""The metrics' models and NLTK data, loaded in the background while the first samples generate.

Loading them (torch, transformers, sentence-transformers, the encoder's weights, WordNet's index,
Punkt) takes tens of seconds on a small machine. Loaded at the first score, that time is added to
every eval: the first samples to finish wait for it, holding their sample slots, so generation
stalls too. The tasks' setup step (``load_metric_models``, run as each sample starts) starts the
loading in a thread instead, only when the sample will be scored (not under ``--no-score``), and
the scorer's first batch waits for it (``wait_loaded``). A failed load is raised there, at the
batch, as a load at the first score would be, and the next batch tries again.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from weakref import WeakKeyDictionary

from inspect_ai.solver import Generate, Solver, TaskState, solver

from ...inspect_compat import sample_scorers
from .embedding import Backbones

_lock = threading.Lock()
#: one serialised load at a time: the loaders are cached per process but not locked
_loading = threading.Lock()
_started: dict[Backbones, Future[None]] = {}
#: the backbones each metrics scorer scores with (its setup step starts their loading)
_scorer_backbones: WeakKeyDictionary[object, Backbones] = WeakKeyDictionary()


def start_loading(backbones: Backbones) -> Future[None]:
    """The load of ``backbones`` and the lexical metrics' data, started once per process."""
    with _lock:
        future = _started.get(backbones)
        if future is None:
            future = _started[backbones] = Future()
            threading.Thread(
                target=_load, args=(backbones, future), name="narrative-infill-metrics-load", daemon=True
            ).start()
    return future


def wait_loaded(backbones: Backbones) -> None:
    """Block until ``backbones`` are loaded (starting the load if nothing did); raise its error,
    and forget a failed load so that the next batch tries again."""
    future = start_loading(backbones)
    try:
        future.result()
    except BaseException:
        with _lock:
            if _started.get(backbones) is future:
                del _started[backbones]
        raise


def _load(backbones: Backbones, future: Future[None]) -> None:
    """Score one pair through the real path: whatever scoring loads (both encoders, Punkt,
    WordNet, the lexical scorers, the story-reuse guard's stemmer and stop words, which the
    scorer calls on the event loop) is loaded, and nothing is cached for a gold."""
    from . import pairs, reuse
    from .threads import budget

    try:
        with _loading:
            with budget.batch():  # the warm-up pass runs beside the first samples' generation
                pairs.score_pairs(["A warm-up answer."], ["A warm-up gold span."], backbones, use_cache=False)
            reuse.story_reuse("A warm-up answer.", "A warm-up story. ______ It ends.")
    except BaseException as err:
        future.set_exception(err)
    else:
        future.set_result(None)


def loads_for(scorer: object, backbones: Backbones) -> None:
    """Register that ``scorer`` scores with ``backbones`` (``load_metric_models`` starts them)."""
    _scorer_backbones[scorer] = backbones


@solver
def load_metric_models() -> Solver:
    """A setup step: start loading the models of the sample's metrics scorers, if it is scored."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for scorer in sample_scorers():
            backbones = _scorer_backbones.get(scorer)
            if backbones is not None:
                start_loading(backbones)
        return state

    return solve
