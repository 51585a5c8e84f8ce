"""The platform's Inspect hooks, registered through the platform's own Inspect entry point
(pyproject's ``[project.entry-points.inspect_ai]``, ``narrative_infill_platform``): the key that
``serve`` gives the llama-cpp-python provider, the record of how each task ended that ``serve``
and the grid read back, and the filter that names why a model server Inspect started itself exited
(``local.server_failure``). Inspect loads every entry point of its group when it starts its hooks
(before a lazily started server starts), so the core's own entry point (``narrative_infill._registry``)
needs to import nothing of the platform. The key and the record are off unless a platform command set
their variable; the failure filter (which lowers a logger's level) is attached only where a platform
command started the process (``serve -- COMMAND``, the grid: the run-status variable is set), so a
user's own ``inspect eval`` keeps Inspect's loggers as Inspect set them. This module imports only
Inspect, the standard library and light core modules, so it loads where the platform's extras are not
installed."""

import os

from .local.provider_key import LocalServerKey
from .local.run_status import STATUS_VARIABLE, RunStatus
from .local.server_failure import install as install_server_failure_cause

__all__ = ["LocalServerKey", "RunStatus"]

if os.environ.get(STATUS_VARIABLE):
    install_server_failure_cause()
