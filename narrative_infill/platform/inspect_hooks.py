"""The platform's Inspect hooks, registered through the platform's own Inspect entry point
(pyproject's ``[project.entry-points.inspect_ai]``, ``narrative_infill_platform``): the key that
``serve`` gives the llama-cpp-python provider, the record of how each task ended that ``serve``
and the grid read back, and the filter that names why a model server Inspect started itself exited
(``local.server_failure``). Inspect loads every entry point of its group when it starts its hooks
(before a lazily started server starts), so the core's own entry point (``narrative_infill._registry``)
needs to import nothing of the platform. The key and the record are off unless a platform command set
their variable; the failure filter is attached in every Inspect run (it only adds the cause to the exit
message of a server Inspect started itself). This module imports only Inspect, the standard library
and light core modules, so it loads even where the platform's extras are not installed."""

from .local.provider_key import LocalServerKey
from .local.run_status import RunStatus
from .local.server_failure import install as install_server_failure_cause

__all__ = ["LocalServerKey", "RunStatus"]

install_server_failure_cause()
