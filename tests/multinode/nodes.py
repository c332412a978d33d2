"""Simulated nodes for the multi-node tier: each node is a Linux network
namespace with its own address, hostname (a UTS namespace), /etc/hosts, NIC
name, TMPDIR and /dev/shm, joined to the others by a veth pair into a bridge
that lives in a namespace of its own, so the host's network is never touched.

Every name carries this process's pid (`gd<pid>n0`, `gd<pid>hub`), so two runs
of the tier never meet, and `down()` removes exactly what `up()` made: the
processes still inside each namespace (by pid), then the namespaces, and with
them the veths, the bridge and any qdisc."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SUBNET = "10.232.{}"  # the third octet is chosen per run from the pid: runs never share addresses


def available() -> str | None:
    """None when this machine can run the tier, else the one-line reason."""
    if os.geteuid() != 0:
        return "the multi-node tier needs root (ip netns, unshare, tc)"
    for tool in ("ip", "unshare", "tc"):
        if shutil.which(tool) is None:
            return f"the multi-node tier needs `{tool}` on PATH"
    probe = f"gdprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        return f"`ip netns add` is refused here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=10)


@dataclass
class Nodes:
    """N simulated nodes under `root` (a private folder of the test's)."""

    count: int
    root: Path
    nic_names: list[str] | None = None  # one per node; default: every node's NIC is `gdeth`
    tag: str = field(default_factory=lambda: f"gd{os.getpid() % 100000}")
    octet: int = field(default_factory=lambda: 1 + os.getpid() % 250)

    @property
    def hub(self) -> str:
        return f"{self.tag}hub"

    def name(self, i: int) -> str:
        return f"{self.tag}n{i}"

    def address(self, i: int) -> str:
        return SUBNET.format(self.octet) + f".{i + 1}"

    def nic(self, i: int) -> str:
        return self.nic_names[i] if self.nic_names else "gdeth"

    def up(self) -> Nodes:
        _ip("netns", "add", self.hub)
        _ip("-n", self.hub, "link", "set", "lo", "up")
        _ip("-n", self.hub, "link", "add", "gdbr", "type", "bridge")
        _ip("-n", self.hub, "link", "set", "gdbr", "up")
        hosts = ["127.0.0.1 localhost"] + [f"{self.address(i)} {self.name(i)}" for i in range(self.count)]
        (self.root / "hosts").write_text("\n".join(hosts) + "\n")
        for i in range(self.count):
            ns = self.name(i)
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", self.hub, "link", "add", f"h{i}", "type", "veth", "peer", "name", f"v{i}")
            _ip("-n", self.hub, "link", "set", f"v{i}", "netns", ns)
            _ip("-n", self.hub, "link", "set", f"h{i}", "master", "gdbr")
            _ip("-n", self.hub, "link", "set", f"h{i}", "up")
            _ip("-n", ns, "link", "set", f"v{i}", "name", self.nic(i))
            _ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", self.nic(i))
            _ip("-n", ns, "link", "set", self.nic(i), "up")
            (self.root / ns / "tmp").mkdir(parents=True)
        (self.root / "tmp").mkdir(exist_ok=True)
        return self

    def command(self, i: int, argv: list[str], shm: str = "", cgroups: bool = False) -> list[str]:
        """`argv` as run on node i: in its network namespace, with its own hostname,
        /etc/hosts and TMPDIR (the same path on every node, node-local behind it, as
        a real node's /tmp), GLOO_SOCKET_IFNAME set to its NIC, /dev/shm its own.
        `cgroups`: the host's cgroup v1 hierarchies mounted again (`ip netns exec`
        gives a fresh /sys without them, and slurmd will not start without them)."""
        remount = (
            "mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup; "
            "for c in cpu cpuacct cpuset memory devices freezer pids; do "
            "mkdir -p /sys/fs/cgroup/$c; mount -t cgroup -o $c cgroup /sys/fs/cgroup/$c || true; done; "
            "mkdir -p /sys/fs/cgroup/systemd; mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd || true; "
        )
        script = (
            'set -e; hostname "$1"; mount --bind "$2" /etc/hosts; '
            'mount -t tmpfs -o size="$3" tmpfs /dev/shm; ' + (remount if cgroups else "") +
            'mount --bind "$4" "$5"; export TMPDIR="$5" GLOO_SOCKET_IFNAME="$6"; shift 6; exec "$@"'
        )
        return [
            "ip", "netns", "exec", self.name(i), "unshare", "--uts", "--mount", "--propagation", "private",
            "bash", "-c", script, "_", self.name(i), str(self.root / "hosts"), shm or "2g",
            str(self.root / self.name(i) / "tmp"), str(self.root / "tmp"), self.nic(i), *argv,
        ]  # fmt: skip

    def shape(self, i: int, *qdisc: str) -> None:
        """A root qdisc on node i's NIC (this kernel has tbf and htb, not netem): its link slowed."""
        subprocess.run(["tc", "-n", self.name(i), "qdisc", "replace", "dev", self.nic(i), "root", *qdisc],
                       check=True, capture_output=True, timeout=10)  # fmt: skip

    def pids(self, i: int) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.name(i)], capture_output=True, text=True, timeout=10)
        return [int(p) for p in out.stdout.split()]

    def kill_node(self, i: int) -> list[int]:
        """SIGKILL every process of node i (the node died); the pids killed."""
        pids = self.pids(i)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return pids

    def leftovers(self, settle_s: float = 5.0) -> dict[str, list[int]]:
        """Processes still inside any node, after up to settle_s for them to end."""
        deadline = time.monotonic() + settle_s
        while True:
            left = {self.name(i): self.pids(i) for i in range(self.count)}
            left = {ns: pids for ns, pids in left.items() if pids}
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def down(self) -> None:
        for i in range(self.count):
            self.kill_node(i)
        for ns in [self.name(i) for i in range(self.count)] + [self.hub]:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
