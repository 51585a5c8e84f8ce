"""Running a command on the user's behalf (``serve -- CMD``, ``grid``) so that it can always
finish its log: a SIGINT or SIGTERM reaches it as SIGINT, on which Inspect cancels cleanly and
writes its log, and the caller waits for it before cleaning up."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

from ..definitions import NarrativeInfillError

#: Seconds a command is given to finish after it was asked to stop (Inspect writes its log).
STOP_GRACE_S = 60.0


@contextlib.contextmanager
def interrupted_by_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt inside the block, as Ctrl-C does, even where a
    shell that started this process in the background handed it SIGINT ignored. Outside the main
    thread (where Python cannot install handlers) the block runs with the handlers as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run_forwarding_signals(
    command: list[str], env: dict[str, str], stop_when: Callable[[], bool] = lambda: False
) -> tuple[int, int | None]:
    """(exit status, the signal that asked it to stop or None).

    ``stop_when`` is asked every 0.1 s; once true (e.g. the model server it needs has died), the
    command is stopped as if a signal had come.

    The command runs in its own session, so a Ctrl-C in the terminal reaches it once (through
    here), not twice. Handlers go in before it starts: a shell that ran the caller in the
    background leaves SIGINT ignored, and an ignored signal would be inherited by the command;
    a handled one is reset to the default in it. A command that has not ended ``STOP_GRACE_S``
    after the signal is terminated.
    """
    asked: list[int] = []
    stopping_since: list[float] = []
    children: list[subprocess.Popen] = []

    def stop_child() -> None:
        if not stopping_since and children and children[0].poll() is None:
            children[0].send_signal(signal.SIGINT)
            stopping_since.append(time.monotonic())

    def forward(signum, frame):
        stop_child()
        asked.append(signum)

    previous = {number: signal.signal(number, forward) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            child = subprocess.Popen(command, env=env, start_new_session=True)
        except OSError as err:  # a typo, or a file that is not executable: the user's error
            raise NarrativeInfillError(f"cannot run {command[0]}: {err.strerror}") from err
        children.append(child)
        if asked:  # a signal came while it started
            stop_child()
        while child.poll() is None:
            if not stopping_since and stop_when():
                stop_child()
            if stopping_since and time.monotonic() - stopping_since[0] > STOP_GRACE_S:
                child.terminate()
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
            time.sleep(0.1)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return child.returncode, (asked[0] if asked else None)
