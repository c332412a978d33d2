"""A throwaway Slurm cluster over the simulated nodes (nodes.py): munged on this
host, slurmctld on node 0 and one slurmd per node, every file (config, state,
logs, munge's socket and key) under the test's private folder. The daemons live
inside the nodes' namespaces, so Nodes.down() ends them by pid with the rest;
munged is stopped by its pid file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from nodes import Nodes

DAEMONS = ("slurmctld", "slurmd", "srun", "munged")


def available() -> str | None:
    """None when Slurm and munge are installed, else the one-line reason."""
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        return f"no Slurm here ({', '.join(missing)} not on PATH; .ci/run installs slurm-wlm and munge)"
    return None


@dataclass
class Slurm:
    nodes: Nodes

    @property
    def folder(self) -> Path:
        return self.nodes.root / "slurm"

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    def up(self, timeout_s: float = 60) -> Slurm:
        s = self.folder
        (s / "munge").mkdir(parents=True)
        (s / "state").mkdir()
        (s / "log").mkdir()
        # munged runs as user munge and wants every folder above its socket open to it
        for folder in (self.nodes.root, s):
            os.chmod(folder, 0o711)
        shutil.chown(s / "munge", "munge", "munge")
        os.chmod(s / "munge", 0o711)  # munged: execute for all on the socket's folder
        key = s / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        os.chmod(key, 0o400)
        sock = s / "munge" / "munge.sock"
        subprocess.run(
            ["runuser", "-u", "munge", "--", "munged", f"--socket={sock}", f"--key-file={key}",
             f"--log-file={s / 'munge' / 'munged.log'}", f"--pid-file={s / 'munge' / 'munged.pid'}",
             f"--seed-file={s / 'munge' / 'munged.seed'}"],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
        names = [self.nodes.name(i) for i in range(self.nodes.count)]
        lines = [
            "ClusterName=gd", f"SlurmctldHost={names[0]}({self.nodes.address(0)})", "SlurmctldPort=6917",
            "SlurmdPort=6918", "SlurmUser=root", "SlurmdUser=root", "AuthType=auth/munge",
            f"AuthInfo=socket={sock}", "CredType=cred/munge", f"StateSaveLocation={s / 'state'}",
            f"SlurmdSpoolDir={s}/spool-%n", f"SlurmctldPidFile={s}/slurmctld.pid", f"SlurmdPidFile={s}/slurmd-%n.pid",
            f"SlurmctldLogFile={s}/log/slurmctld.log", f"SlurmdLogFile={s}/log/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SwitchType=switch/none", "MpiDefault=none",
            "ReturnToService=2", "SchedulerType=sched/builtin", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "InactiveLimit=0", "KillWait=5", "MinJobAge=30",
            "SlurmctldTimeout=30", "SlurmdTimeout=30",
        ]  # fmt: skip
        lines += [
            f"NodeName={n} NodeHostname={n} NodeAddr={self.nodes.address(i)} CPUs=2 RealMemory=1000 State=UNKNOWN"
            for i, n in enumerate(names)
        ]
        lines.append(f"PartitionName=debug Nodes={','.join(names)} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES")
        self.conf.write_text("\n".join(lines) + "\n")
        self._daemon(0, ["slurmctld", "-f", str(self.conf)])
        for i, name in enumerate(names):
            self._daemon(i, ["slurmd", "-f", str(self.conf), "-N", name])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = self.run(0, ["sinfo", "-h", "-o", "%T %D"], timeout_s=15)
            if out.returncode == 0 and out.stdout.split()[:2] == ["idle", str(self.nodes.count)]:
                return self
            time.sleep(1)
        raise RuntimeError(f"Slurm did not come up: {self.logs()}")

    def _daemon(self, i: int, argv: list[str]) -> None:
        # a daemon forks away and stays in node i's namespaces, where Nodes.down() finds it
        subprocess.run(self.nodes.command(i, argv, cgroups=True), check=True, capture_output=True, timeout=30,
                       env={**os.environ, "SLURM_CONF": str(self.conf)})  # fmt: skip

    def run(self, i: int, argv: list[str], timeout_s: float = 240, env: dict[str, str] | None = None):
        """`argv` (srun, sinfo, ...) from node i, bounded; a CompletedProcess (returncode None past the bound)."""
        base = {**os.environ, **(env or {}), "SLURM_CONF": str(self.conf)}
        proc = subprocess.Popen(self.nodes.command(i, argv), env=base, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)  # fmt: skip
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            for k in range(self.nodes.count):  # srun's steps hold its pipes: end the job's processes
                for pid in self.nodes.pids(k):
                    if _is_job_process(pid):
                        os.kill(pid, signal.SIGKILL)
            proc.kill()
            out, err = proc.communicate(timeout=30)
            return subprocess.CompletedProcess(proc.args, None, out, err)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted((self.folder / "log").glob("*.log")))

    def down(self) -> None:
        pid_file = self.folder / "munge" / "munged.pid"
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def _is_job_process(pid: int) -> bool:
    """Not one of the cluster's own daemons."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return False
    return name not in ("slurmctld", "slurmd")
