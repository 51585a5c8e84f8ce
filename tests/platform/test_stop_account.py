"""``serve`` and ``grid`` say what happened when they stop a command (issue 44, finding 8): which of
its processes were still running when the grace ran out and what they were sent, and that they
ended only once none runs. The reproduction: a shell script whose SIGINT landed in a command
substitution ran on until SIGTERM 60 s later, while ``serve`` reported "the command and every
process it started were stopped"."""

from __future__ import annotations

import os
from pathlib import Path

from narrative_infill.platform.local import process_group

#: The substitution's background job ignores SIGINT (as every background job of a non-interactive
#: shell does) and holds the substitution's output open, so the script waits on, past the SIGINT.
SCRIPT = 'x=$(touch "$1.in"; sleep 300 & wait); echo "ran on" > "$1.after"; sleep 300'


def test_a_script_interrupted_in_a_command_substitution_is_named_with_what_it_was_sent(monkeypatch, tmp_path):
    """Failed before: the account said only "SIGINT then SIGTERM", not which processes ran on."""
    monkeypatch.setattr(process_group, "STOP_GRACE_S", 1.0)
    mark = tmp_path / "mark"
    command = ["bash", "-c", SCRIPT, "bash", str(mark)]
    ended = process_group.run_forwarding_signals(command, dict(os.environ), stop_when=Path(f"{mark}.in").exists)
    assert ended.signals == "SIGINT then SIGTERM"
    [escalation] = ended.escalations
    assert escalation.startswith("still running 1 s after SIGINT, sent SIGTERM: pid ")
    assert "(bash -c " in escalation and "(sleep 300)" in escalation
    assert ended.still_running == ()
    ended_well = f"all its processes have ended (its exit status {ended.status})"
    assert ended.account() == f"SIGINT to its process group; {escalation}; {ended_well}"


def test_an_account_names_what_still_runs_instead_of_claiming_it_ended():
    ended = process_group.Ended(-15, None, "SIGINT then SIGTERM", ("still running ...",), ("pid 7 (sleep 300)",))
    assert ended.account().endswith("STILL RUNNING: pid 7 (sleep 300) (its exit status -15)")
    assert "ended" not in ended.account().replace("its exit status", "")
