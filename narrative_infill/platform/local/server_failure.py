"""A self-started model server's failure, named: when Inspect starts a server itself (``inspect eval
--model vllm/FOLDER``) and the server exits before it is ready, Inspect's error says only "Server
process exited unexpectedly with code 1"; the cause (vLLM's own error, say that the CPU backend found
too little free memory) went to Inspect's log at info level, which the terminal does not show.

A logging filter on Inspect's local-server logger keeps the server's last stderr lines and adds the
ones that name an error to Inspect's message. Inspect has no hook for this; the logger's name is in
``inspect_compat``. Installed by the platform's Inspect entry point, which Inspect imports before a
lazily started server starts, in the Inspect processes a platform command started (``serve --
COMMAND``, the grid) and nowhere else: the filter lowers that logger's level.
"""

from __future__ import annotations

import logging
import re
from collections import deque

from ...inspect_compat import LOCAL_SERVER_LOGGER, SERVER_EXITED, SERVER_OUTPUT_READERS

KEPT_LINES = 40
LINE_CHARS = 500  # a server's line is untrusted output: each is kept cut to this
SHOWN_LINES = 4
ERROR_LINE = re.compile(r"Error|Exception|error:|failed|Failed|not enough|less than")


class ServerFailureCause(logging.Filter):
    """Keeps the server's last lines; adds the last ones that name an error to the exit message."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: deque[str] = deque(maxlen=KEPT_LINES)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.funcName in SERVER_OUTPUT_READERS:
            self.lines.append(_as_text(message[:LINE_CHARS]))
        elif message.startswith(SERVER_EXITED) and self.lines:
            record.msg, record.args = f"{message}\n{self.cause()}", ()
        return True

    def cause(self) -> str:
        """The server's last lines that name an error (else its last lines), as one block."""
        named = [line for line in self.lines if ERROR_LINE.search(line)] or list(self.lines)
        return "The server's last error lines:\n" + "\n".join(f"  {line}" for line in named[-SHOWN_LINES:])


def _as_text(line: str) -> str:
    """A server's line with its control characters escaped: an ANSI sequence or a carriage return
    must not clear the terminal or overwrite the error shown with it."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in line)


def install() -> None:
    """Attach the filter once, and let the server's lines (debug and info level) reach it."""
    logger = logging.getLogger(LOCAL_SERVER_LOGGER)
    if any(isinstance(existing, ServerFailureCause) for existing in logger.filters):
        return
    logger.addFilter(ServerFailureCause())
    if not logger.isEnabledFor(logging.DEBUG):
        logger.setLevel(logging.DEBUG)
