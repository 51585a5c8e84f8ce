"""Inspect registry entry point: importing this registers the tasks, solvers, scorers, the replay model,
the null baselines' provider (``baseline/<rule>``), the hook that gives the llama-cpp-python provider the
local server's key and the one that records how each task ended for the package's commands, and the
filter that names why a server Inspect started itself exited (``local.server_failure``). It imports
only those (tasks, solvers, scorers, providers, hooks), never analysis code: Inspect imports it whenever
it resolves a name."""

from .platform.local.provider_key import LocalServerKey  # noqa: F401
from .platform.local.run_status import RunStatus  # noqa: F401
from .platform.local.server_failure import install as install_server_failure_cause
from .scorers.judge.scorer import judge  # noqa: F401
from .scorers.metrics.scorer import metrics  # noqa: F401
from .solvers import generate_infill, infill_prompt  # noqa: F401
from .solvers.baseline_model import BaselineModel  # noqa: F401
from .solvers.replay import ReplayModel, replay_output  # noqa: F401
from .tasks import abductive, causal, cot, counterfactual, l0, l1, l2, l3, l4  # noqa: F401
from .tasks.judge_check import judge_check  # noqa: F401

install_server_failure_cause()
