"""Inspect registry entry point: importing this registers the tasks, solvers, scorers, the replay model
and the null baselines' provider (``baseline/<rule>``). It imports only those, never the platform:
Inspect imports it whenever it resolves a name. The platform's hooks (the local server's key, how
each task ended) register through the platform's own entry point, ``platform/inspect_hooks.py``."""

from .scorers.judge.scorer import judge  # noqa: F401
from .scorers.metrics.scorer import metrics  # noqa: F401
from .solvers import generate_infill, infill_prompt  # noqa: F401
from .solvers.baseline_model import BaselineModel  # noqa: F401
from .solvers.replay import ReplayModel, replay_output  # noqa: F401
from .tasks import abductive, causal, cot, counterfactual, l0, l1, l2, l3, l4  # noqa: F401
from .tasks.judge_check import judge_check  # noqa: F401
