"""A one-node Slurm cluster on 127.0.0.1 for the ``slurm`` tier (not a test module).

Everything lives in one folder: the config, a munge key and socket of its own, state and spool,
logs and pid files, on ports chosen free, so a second cluster (or a system one) is left alone. The
daemons are Debian's ``slurm-wlm`` and ``munge`` (``scripts/setup-slurm.sh`` installs them);
they must run as root (slurmd starts jobs as their users). ``SLURM_CONF`` points the command line
tools (and the jobs, which inherit it) at this cluster.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
READY_TIMEOUT_S = 60


def missing() -> str | None:
    """Why no cluster can start here, or None."""
    absent = [name for name in (*DAEMONS, "sbatch", "squeue", "scontrol") if not shutil.which(name)]
    if absent:
        return f"{', '.join(absent)} not installed (bash scripts/setup-slurm.sh)"
    if os.geteuid() != 0:
        return "slurmd runs jobs as their users and must start as root"
    return None


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def _memory_mb() -> int:
    with open("/proc/meminfo") as meminfo:
        total_kb = int(next(line for line in meminfo if line.startswith("MemTotal")).split()[1])
    return total_kb // 1024 * 8 // 10  # leave the machine a fifth


def _config(root: Path, ports: list[int]) -> str:
    """The slurm.conf: no cgroups (containers), no accounting database (sacct then answers only
    from the completion file, so the package reads job states from squeue and scontrol too)."""
    return "\n".join(
        [
            "ClusterName=narrative-infill-test",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={ports[0]}",
            f"SlurmdPort={ports[1]}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            f"AuthInfo=socket={root}/munge/munge.socket",
            "CredType=cred/munge",
            f"StateSaveLocation={root}/state",
            f"SlurmdSpoolDir={root}/spool",
            f"SlurmctldPidFile={root}/slurmctld.pid",
            f"SlurmdPidFile={root}/slurmd.pid",
            f"SlurmctldLogFile={root}/slurmctld.log",
            f"SlurmdLogFile={root}/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={root}/jobcomp.txt",
            "ReturnToService=2",
            "MinJobAge=600",
            "SchedulerType=sched/backfill",
            "MpiDefault=none",
            f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={_memory_mb()}",
            "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4",
            "",
        ]
    )


@dataclass
class Cluster:
    root: Path
    env: dict[str, str] = field(default_factory=dict)
    processes: list[subprocess.Popen] = field(default_factory=list)

    def start(self) -> Cluster:
        for folder in ("munge", "state", "spool"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        (self.root / "munge").chmod(0o700)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (self.root / "slurm.conf").write_text(_config(self.root, _free_ports(2)))
        self.env = {**os.environ, "SLURM_CONF": str(self.root / "slurm.conf")}
        munge = self.root / "munge"
        self._spawn(
            "munged",
            "--foreground",
            "--force",
            f"--socket={munge}/munge.socket",
            f"--key-file={key}",
            f"--pid-file={munge}/munged.pid",
            f"--log-file={munge}/munged.log",
            f"--seed-file={munge}/munged.seed",
        )
        self._wait(lambda: (munge / "munge.socket").exists(), "munged's socket")
        self._spawn("slurmctld", "-D", "-i")
        self._spawn("slurmd", "-D", "-N", "localhost")
        self._wait(self._node_idle, "the node to come up idle")
        return self

    def _spawn(self, *command: str) -> None:
        with open(self.root / f"{command[0]}.out", "ab") as log:  # the daemon keeps its own copy
            self.processes.append(
                subprocess.Popen(
                    command, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
            )

    def _node_idle(self) -> bool:
        shown = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True, text=True, timeout=30
        )
        return shown.stdout.strip() == "idle"

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready():
            dead = [p.args[0] for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = "\n".join(p.read_text()[-2000:] for p in sorted(self.root.glob("*.out")))
                self.stop()
                raise RuntimeError(f"waiting for {what}: {dead or 'timed out'}\n{logs}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Stops the daemons this cluster started, slurmd first, each by its own process."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
