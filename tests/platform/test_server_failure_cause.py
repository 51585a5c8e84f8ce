"""A server Inspect starts itself and that exits before it is ready: Inspect's error names only the
exit code; the package's filter (installed by its entry point) adds the server's own error lines.
Driven through Inspect's real start-up code with a stand-in server that writes vLLM's memory error
and exits once the test has seen that line logged (no race between the exit and the line)."""

from __future__ import annotations

import logging
import sys
import threading
import time

import pytest

from narrative_infill.inspect_compat import LOCAL_SERVER_LOGGER
from narrative_infill.platform.local.server_failure import ServerFailureCause, install

SERVER_EXITED_MESSAGE = "Server process exited unexpectedly with code 1. Try rerunning"
MEMORY_ERROR = (
    "ValueError: Available memory on node 0 (8.64/10.46 GiB) on startup is less than desired CPU "
    "memory utilization (0.92, 9.63 GiB)"
)
SERVER = f"""
import pathlib, sys, time
print("INFO starting engine", file=sys.stderr, flush=True)
print({MEMORY_ERROR!r}, file=sys.stderr, flush=True)
while not pathlib.Path(sys.argv[1]).exists():
    time.sleep(0.05)
sys.exit(1)
"""


def _cause_filter() -> ServerFailureCause:
    [found] = [f for f in logging.getLogger(LOCAL_SERVER_LOGGER).filters if isinstance(f, ServerFailureCause)]
    return found


def test_the_entry_point_installs_the_filter_once():
    import narrative_infill.platform.inspect_hooks  # noqa: F401  (what Inspect imports: the platform's entry point)

    install()
    assert isinstance(_cause_filter(), ServerFailureCause)


def test_a_server_that_exits_before_it_is_ready_is_named_by_its_own_error(tmp_path, caplog):
    from inspect_ai._util.local_server import start_local_server

    install()
    cause = _cause_filter()
    release = tmp_path / "exit-now"
    failure: list[BaseException] = []

    def start() -> None:
        try:
            start_local_server([sys.executable, "-c", SERVER, str(release)], host="127.0.0.1", timeout=120)
        except RuntimeError as error:
            failure.append(error)

    caplog.set_level(logging.INFO, logger=LOCAL_SERVER_LOGGER)
    starter = threading.Thread(target=start)
    starter.start()
    deadline = time.monotonic() + 60
    while not any(MEMORY_ERROR in line for line in cause.lines):  # the line was logged: now let it exit
        assert time.monotonic() < deadline, "the stand-in server's error line was never logged"
        time.sleep(0.05)
    release.touch()
    starter.join(timeout=60)
    assert failure and "exited unexpectedly with code 1" in str(failure[0])
    [shown] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    exit_message, _, cause_block = shown.partition("The server's last error lines:")
    assert "exited unexpectedly with code 1" in exit_message and MEMORY_ERROR in cause_block
    assert "INFO starting engine" not in cause_block  # the lines that name an error, not all of them


@pytest.mark.parametrize("line", ["x" * 100_000, "Error " * 20_000])
def test_a_servers_lines_are_kept_bounded(line):
    cause = ServerFailureCause()
    for _ in range(1_000):
        record = logging.LogRecord(
            LOCAL_SERVER_LOGGER, logging.INFO, "", 0, line, None, None, func="log_error"
        )
        cause.filter(record)
    assert len(cause.lines) == 40 and all(len(kept) <= 500 for kept in cause.lines)


def test_a_servers_control_characters_reach_the_terminal_as_text():
    """A line with ANSI escapes or a carriage return could clear the terminal or overwrite the error
    shown above it; the cause block shows them escaped, one server line to a line."""
    cause = ServerFailureCause()
    hostile = "\x1b[2J\x1b[1;1HValueError: fake\rError: hidden\x00\x07"
    for message, func in ((hostile, "log_error"), (SERVER_EXITED_MESSAGE, "wait_for_server")):
        record = logging.LogRecord(LOCAL_SERVER_LOGGER, logging.ERROR, "", 0, message, None, None, func=func)
        cause.filter(record)
        shown = record.getMessage()
    block = shown.partition("The server's last error lines:\n")[2]
    assert block == "  \\x1b[2J\\x1b[1;1HValueError: fake\\rError: hidden\\x00\\x07"


@pytest.mark.xfail(
    strict=True,
    reason="open: the filter keeps one window of lines for every server Inspect starts in the process; "
    "Inspect logs nothing that ties a reader's line to its server, so an earlier server's error lines "
    "can be shown as the cause of a later one's exit",
)
def test_a_second_servers_exit_is_not_named_by_the_first_servers_errors():
    cause = ServerFailureCause()
    lines = [
        ("ERROR request failed on the model server", "log_error"),  # the first server, still running
        ("Started server with command: vllm serve grader", "launch_server_cmd"),
        ("INFO loading weights", "log_error"),  # the second one, which then exits
    ]
    for message, func in lines:
        cause.filter(
            logging.LogRecord(LOCAL_SERVER_LOGGER, logging.INFO, "", 0, message, None, None, func=func)
        )
    exited = logging.LogRecord(
        LOCAL_SERVER_LOGGER, logging.ERROR, "", 0, SERVER_EXITED_MESSAGE, None, None, func="wait_for_server"
    )
    cause.filter(exited)
    assert "model server" not in exited.getMessage()
