"""A dead server (or a signal) stops the whole command: serve and grid run it in its own process
group and stop every process of it, a shell script's grandchildren included (a shell defers a
signal sent to it alone until its foreground child ends, so they used to run on)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import free_port

from narrative_infill.platform.local import process_group
from narrative_infill.platform.local.server import port_in_use

#: Generous bounds on waiting for an event (never a measured duration).
BOUND_S = 60


def running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, ended and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def assert_stopped(*pids: int, what: str = "a process of the command") -> None:
    """Each of ``pids`` ends within the bound (it is killed here either way, so none outlives the test)."""
    deadline = time.monotonic() + BOUND_S
    try:
        while any(map(running, pids)):
            assert time.monotonic() < deadline, f"{what} runs on"
            time.sleep(0.05)
    finally:
        for pid in filter(running, pids):
            os.kill(pid, signal.SIGKILL)


#: The grandchild: writes its pid, asks the server for a completion (which kills the stand-in),
#: then waits as a long eval would; it writes the marker only if nothing stopped it.
GRANDCHILD = """
import os, sys, time, urllib.request
mark = sys.argv[1]
open(mark + ".pid", "w").write(str(os.getpid()))
base, key = os.environ["LLAMA_CPP_PYTHON_BASE_URL"], os.environ["LLAMA_CPP_PYTHON_API_KEY"]
auth = {"Authorization": "Bearer " + key}
request = urllib.request.Request(base + "/chat/completions", data=b"{}", headers=auth)
try:
    urllib.request.urlopen(request, timeout=5)
except Exception:
    pass
time.sleep(600)
open(mark, "a").write("CHILD-NOT-STOPPED")
"""


def test_a_dead_server_stops_the_grandchildren_of_a_served_script(standin, tmp_path):  # noqa: F811
    """The issue's reproduction: ``serve -- bash -c "...; echo CHILD-NOT-STOPPED"``."""
    mark, port = tmp_path / "mark", free_port()
    script = '"$0" -c "$1" "$2"; echo CHILD-NOT-STOPPED >> "$2"'
    command = [
        sys.executable,
        "-m",
        "narrative_infill.platform.cli",
        "serve",
        "--model",
        str(standin),
        "--port",
        str(port),
    ]
    # Output to a file, not a pipe: a grandchild left running would hold a pipe open.
    with open(tmp_path / "out", "w") as out:
        serve = subprocess.run(
            [*command, "--", "bash", "-c", script, sys.executable, GRANDCHILD, str(mark)],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=300,
            env=os.environ.copy(),
            check=False,
        )
    output = (tmp_path / "out").read_text()
    pid = int(Path(f"{mark}.pid").read_text())
    assert_stopped(pid, what="the grandchild")
    assert serve.returncode == 1, output
    assert "the model server was killed by SIGILL" in output
    assert "the command was asked to stop: SIGINT to its process group; " in output
    assert "all its processes have ended" in output
    assert not mark.exists()
    assert not port_in_use(port)
    Path(output.split("end of the server's log (")[1].split("):")[0]).unlink()


#: A command (run as a file) whose process and the one it starts ignore SIGINT and SIGTERM: only
#: SIGKILL stops them. Each writes its pid: the command to MARK.pid, its child to MARK.grand.
STUBBORN = """
import os, signal, subprocess, sys, time
mark, grand = sys.argv[1], len(sys.argv) > 2
for number in (signal.SIGINT, signal.SIGTERM):
    signal.signal(number, signal.SIG_IGN)
open(mark + (".grand" if grand else ".pid"), "w").write(str(os.getpid()))
if not grand:
    subprocess.Popen([sys.executable, __file__, mark, "grand"])
time.sleep(600)
"""


def test_a_group_that_ignores_the_stop_is_terminated_then_killed(monkeypatch, tmp_path):
    script, mark = tmp_path / "stubborn.py", tmp_path / "mark"
    script.write_text(STUBBORN)
    monkeypatch.setattr(process_group, "STOP_GRACE_S", 0.5)
    monkeypatch.setattr(process_group, "KILL_GRACE_S", 0.5)
    grand = Path(f"{mark}.grand")
    command = [sys.executable, str(script), str(mark)]
    ended = process_group.run_forwarding_signals(command, dict(os.environ), stop_when=grand.exists)
    pids = [int(Path(f"{mark}{suffix}").read_text()) for suffix in (".pid", ".grand")]
    assert_stopped(*pids, what="a process of the group")
    assert (ended.status, ended.asked, ended.signals) == (
        -signal.SIGKILL,
        None,
        "SIGINT then SIGTERM then SIGKILL",
    )
    assert [step.split(":")[0] for step in ended.escalations] == [
        "still running 0.5 s after SIGINT, sent SIGTERM",
        "still running 0.5 s after SIGTERM, sent SIGKILL",
    ]


def test_what_a_command_leaves_running_is_stopped_when_it_ends(tmp_path):
    """A background job outlives its shell: it is stopped with the group; the status is the command's."""
    mark = tmp_path / "mark"
    script = '"$0" -c "$1" "$2" & while [ ! -e "$2.pid" ]; do sleep 0.05; done; exit 3'
    background = (
        "import os, sys, time; open(sys.argv[1] + '.pid', 'w').write(str(os.getpid())); time.sleep(600)"
    )
    ended = process_group.run_forwarding_signals(
        ["bash", "-c", script, sys.executable, background, str(mark)], dict(os.environ)
    )
    pid = int(Path(f"{mark}.pid").read_text())
    assert_stopped(pid, what="the background job")
    assert (ended.status, ended.asked, ended.signals) == (3, None, "SIGTERM")
    [left] = ended.escalations
    assert left.startswith(f"left running when the command ended, sent SIGTERM: pid {pid} (")
    assert ended.account() == f"{left}; all its processes have ended (its exit status 3)"


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_reaches_the_whole_group_as_sigint(number, tmp_path):
    """Ctrl-C (or a SIGTERM) to the caller: the shell's foreground grandchild gets SIGINT too."""
    mark = tmp_path / "mark"
    script = '"$0" -c "$1" "$2"; echo CHILD-NOT-STOPPED >> "$2"'
    # The pid file appears whole (written aside, then renamed) and only inside the try: a SIGINT sent
    # once it exists always lands where the grandchild can record it, however loaded the machine.
    grandchild = (
        "import os, sys, time\ntry:\n"
        "    open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
        "    os.replace(sys.argv[1] + '.tmp', sys.argv[1] + '.pid')\n    time.sleep(600)\n"
        "except KeyboardInterrupt:\n    open(sys.argv[1] + '.int', 'w').write('1')\n    raise\n"
    )
    pid_file = Path(f"{mark}.pid")

    def signal_once_started() -> bool:
        if pid_file.exists() and not getattr(signal_once_started, "sent", False):
            signal_once_started.sent = True  # type: ignore[attr-defined]
            os.kill(os.getpid(), number)
        return False

    ended = process_group.run_forwarding_signals(
        ["bash", "-c", script, sys.executable, grandchild, str(mark)],
        dict(os.environ),
        stop_when=signal_once_started,
    )
    pid = int(pid_file.read_text())
    assert_stopped(pid)
    assert Path(f"{mark}.int").exists()  # it was interrupted (and could write its log), not killed
    assert not mark.exists()
    assert ended.asked == number and ended.signals.startswith("SIGINT")


@pytest.mark.parametrize(
    "script",
    [
        # a script with job control on (set -m) runs each background job in a group of its own
        'set -m; "$0" -c "$1" "$2" & wait',
        # a tool that moves itself into a group of its own (os.setpgid), still in the session
        '"$0" -c "import os; os.setpgid(0, 0); exec(\\"$1\\")" "$2"; true',
    ],
    ids=["set -m", "setpgid"],
)
def test_a_grandchild_in_a_process_group_of_its_own_is_stopped(script, tmp_path):
    """Failed before: only the command's process group was signalled, so a grandchild that left it
    (job control, setpgid) but stayed in the command's session ran on after the server died."""
    mark = tmp_path / "mark"
    grandchild = (
        "import os, sys, time; open(sys.argv[1] + '.pid', 'w').write(str(os.getpid())); time.sleep(600)"
    )
    pid_file = Path(f"{mark}.pid")
    command = ["bash", "-c", script, sys.executable, grandchild, str(mark)]
    process_group.run_forwarding_signals(command, dict(os.environ), stop_when=pid_file.exists)
    assert_stopped(int(pid_file.read_text()), what="the grandchild in a group of its own")


#: A command that counts the SIGINTs it gets, then ends as Inspect does after one Ctrl-C.
COUNTING = """
import os, signal, sys, time
mark = sys.argv[1]
def count(signum, frame):
    open(mark + ".ints", "a").write("SIGINT\\n")
signal.signal(signal.SIGINT, count)
open(mark + ".pid", "w").write(str(os.getpid()))
deadline = time.monotonic() + 60
while not os.path.exists(mark + ".ints") and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(1)  # a second SIGINT would come within this
sys.exit(130)
"""


def test_the_command_gets_one_sigint_not_one_per_way_of_reaching_it(tmp_path):
    """Failed before: the group was signalled, then each process of the session one by one, so the
    command got two SIGINTs; a second Ctrl-C makes Inspect abandon its log unfinished ("started")."""
    mark = tmp_path / "mark"
    command = [sys.executable, "-c", COUNTING, str(mark)]
    ended = process_group.run_forwarding_signals(command, dict(os.environ), stop_when=Path(f"{mark}.pid").exists)
    assert Path(f"{mark}.ints").read_text() == "SIGINT\n"
    assert ended == process_group.Ended(130, None, "SIGINT")
