"""Running a command on the user's behalf (``serve -- CMD``, ``grid``) so that it can always
finish its log: a SIGINT or SIGTERM reaches it as SIGINT, on which Inspect cancels cleanly and
writes its log, and the caller waits for it before cleaning up."""

from __future__ import annotations

import signal
import subprocess
import time

#: Seconds a command is given to finish after it was asked to stop (Inspect writes its log).
STOP_GRACE_S = 60.0


def run_forwarding_signals(command: list[str], env: dict[str, str]) -> tuple[int, int | None]:
    """(exit status, the signal that asked it to stop or None).

    The command runs in its own session, so a Ctrl-C in the terminal reaches it once (through
    here), not twice. Handlers go in before it starts: a shell that ran the caller in the
    background leaves SIGINT ignored, and an ignored signal would be inherited by the command;
    a handled one is reset to the default in it. A command that has not ended ``STOP_GRACE_S``
    after the signal is terminated.
    """
    asked: list[tuple[int, float]] = []
    children: list[subprocess.Popen] = []

    def forward(signum, frame):
        if not asked and children and children[0].poll() is None:
            children[0].send_signal(signal.SIGINT)
        asked.append((signum, time.monotonic()))

    previous = {number: signal.signal(number, forward) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        child = subprocess.Popen(command, env=env, start_new_session=True)
        children.append(child)
        if asked:  # a signal came while it started
            child.send_signal(signal.SIGINT)
        while child.poll() is None:
            if asked and time.monotonic() - asked[0][1] > STOP_GRACE_S:
                child.terminate()
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
            time.sleep(0.1)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return child.returncode, (asked[0][0] if asked else None)
