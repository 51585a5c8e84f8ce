"""Running a command on the user's behalf (``serve -- CMD``, ``grid``) so that it can always
finish its log, and so that nothing it started outlives it: the command runs in its own session
(its own process group), and stopping it stops the whole group. A SIGINT or SIGTERM reaches the
group as SIGINT, on which Inspect cancels cleanly and writes its log; what has not ended
``STOP_GRACE_S`` later gets SIGTERM, then SIGKILL ``KILL_GRACE_S`` after that. A shell script's
grandchildren are stopped with it (a shell defers a signal sent to it alone until its foreground
child ends), and so is a process that left the group for one of its own but not the session (a
script's job control, ``setpgid``); one that starts a session of its own (``setsid``) is not."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ...errors import NarrativeInfillError

#: Seconds a command is given to finish after it was asked to stop (Inspect writes its log).
STOP_GRACE_S = 60.0
#: Seconds the processes left after SIGTERM are given before SIGKILL.
KILL_GRACE_S = 10.0


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


@dataclass(frozen=True)
class Ended:
    """How a command run by :func:`run_forwarding_signals` ended."""

    #: its exit status (negative: the signal that ended it)
    status: int
    #: the signal that asked it to stop, None when none came
    asked: int | None
    #: the signals its process group was sent, in order ("SIGINT then SIGTERM"); "" when none was
    signals: str
    #: each escalation, in order: which processes were still running and what they were then sent
    #: ("still running 60 s after SIGINT, sent SIGTERM: pid 12 (bash run.sh), pid 13 (sleep 100)")
    escalations: tuple[str, ...] = ()
    #: the processes of its session still running when it was given up on (none: all ended)
    still_running: tuple[str, ...] = ()

    def account(self) -> str:
        """What its processes were sent, which needed more than the first signal, and whether any
        still runs: it says that they ended only once none does."""
        if not self.signals:
            return f"its exit status {self.status}"
        asked_to_stop = ["SIGINT to its process group"] if self.signals.startswith("SIGINT") else []
        told = [*asked_to_stop, *self.escalations]
        if self.still_running:
            told.append(f"STILL RUNNING: {', '.join(self.still_running)}")
        else:
            told.append("all its processes have ended")
        return "; ".join(told) + f" (its exit status {self.status})"


@dataclass(frozen=True)
class _Member:
    pid: int
    in_group: bool  # False: it left the command's group for one of its own, not the session


def _session_members(pgid: int) -> list[_Member] | None:
    """The running processes of the command's session (its leader's pid is both the session's and
    the group's id): its group, and any process that left the group for one of its own (a script's
    job control, ``setpgid``) but not the session. Zombies, ended but not yet reaped, do not count:
    they run nothing. None where there is no /proc (not Linux)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    members = []
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "(command name)"
        except (OSError, IndexError):
            continue  # ended while we looked
        state, group, session = fields[0], fields[2], fields[3]
        if str(pgid) in (group, session) and state != "Z":
            members.append(_Member(int(stat.parent.name), in_group=group == str(pgid)))
    return members


def _command_line(pid: int) -> str:
    """``pid (command line)`` as /proc shows it, cut to 80 characters (the pid alone without /proc)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return f"pid {pid}"
    line = shlex.join(word.decode(errors="replace") for word in words)
    return f"pid {pid} ({line[:77] + '...' if len(line) > 80 else line})"


def _running(pgid: int) -> tuple[str, ...]:
    """The running processes of the command's session, each with its command line."""
    members = _session_members(pgid)
    if members is None:  # not Linux: the group as one
        return (f"process group {pgid}",) if _group_alive(pgid) else ()
    return tuple(_command_line(member.pid) for member in sorted(members, key=lambda m: m.pid))


def _group_alive(pgid: int) -> bool:
    """Whether a process of the command's session is still running (``_session_members``)."""
    members = _session_members(pgid)
    if members is None:  # not Linux: any process of the group, zombies included
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    return bool(members)


class _ProcessGroup:
    """The command's process group, signalled as one."""

    def __init__(self) -> None:
        self.pgid: int | None = None
        self.sent: list[str] = []
        self.escalations: list[str] = []
        self.interrupted_at: float | None = None

    def send(self, number: int) -> None:
        if self.pgid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, number)
        # Those that left the group but not the session, once each: the group's own have had it
        # (a second SIGINT is a second Ctrl-C, on which Inspect abandons its log unfinished).
        for member in _session_members(self.pgid) or ():
            if not member.in_group:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(member.pid, number)
        self.sent.append(signal.Signals(number).name)

    def interrupt(self) -> None:
        """Ask every process of the group to stop (once): SIGINT, as Ctrl-C in a terminal."""
        if self.interrupted_at is None and self.pgid is not None:
            self.interrupted_at = time.monotonic()
            self.send(signal.SIGINT)

    def overdue(self) -> bool:
        return self.interrupted_at is not None and time.monotonic() - self.interrupted_at > STOP_GRACE_S

    def end(self, when: str) -> None:
        """SIGTERM to whatever of the group still runs, SIGKILL to what is left ``KILL_GRACE_S``
        later; each time, which processes were still running (``when``) is recorded."""
        if self.pgid is None or not (running := _running(self.pgid)):
            return
        self.escalations.append(f"{when}, sent SIGTERM: {', '.join(running)}")
        self.send(signal.SIGTERM)
        deadline = time.monotonic() + KILL_GRACE_S
        while _group_alive(self.pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if running := _running(self.pgid):
            self.escalations.append(
                f"still running {KILL_GRACE_S:g} s after SIGTERM, sent SIGKILL: {', '.join(running)}"
            )
            self.send(signal.SIGKILL)
            deadline = time.monotonic() + KILL_GRACE_S
            while _group_alive(self.pgid) and time.monotonic() < deadline:
                time.sleep(0.1)


def run_forwarding_signals(
    command: list[str], env: dict[str, str], stop_when: Callable[[], bool] = lambda: False
) -> Ended:
    """Run ``command`` to its end, stopping its whole process group when asked.

    ``stop_when`` is asked every 0.1 s; once true (e.g. the model server it needs has died), the
    command is stopped as if a signal had come. The command runs in its own session, so a Ctrl-C
    in the terminal reaches it once (through here), not twice. Handlers go in before it starts:
    a shell that ran the caller in the background leaves SIGINT ignored, and an ignored signal
    would be inherited by the command; a handled one is reset to the default in it. Whatever the
    command started and left running when it ended is stopped too.
    """
    asked: list[int] = []
    group = _ProcessGroup()

    def forward(signum, frame):
        asked.append(signum)
        group.interrupt()

    previous = {number: signal.signal(number, forward) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            child = subprocess.Popen(command, env=env, start_new_session=True)
        except OSError as err:  # a typo, or a file that is not executable: the user's error
            raise NarrativeInfillError(f"cannot run {command[0]}: {err.strerror}") from err
        group.pgid = child.pid  # a new session's leader leads its process group
        if asked:  # a signal came while it started
            group.interrupt()
        while child.poll() is None:
            if group.interrupted_at is None and stop_when():
                group.interrupt()
            if group.overdue():
                first = group.sent[0] if group.sent else "the stop"
                group.end(f"still running {STOP_GRACE_S:g} s after {first}")
            time.sleep(0.1)
        group.end("left running when the command ended")  # what it started and left behind
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return Ended(
        child.returncode,
        asked[0] if asked else None,
        " then ".join(group.sent),
        tuple(group.escalations),
        _running(group.pgid) if group.pgid is not None else (),
    )
