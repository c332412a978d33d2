"""The NVIDIA driver's Xid lines of this boot, read from the kernel log where an
ordinary user may read it: `dmesg` (refused when kernel.dmesg_restrict is set),
the journal (`journalctl -k -b`, for members of the adm / systemd-journal
groups), `/var/log/kern.log` (Debian, Ubuntu). The first source that answers is
used; each that does not is a reason kept with the facts. Never raises, never
waits more than a few seconds per source.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from gpudoctor.knowledge.xid import XidEvent, xid_events
from gpudoctor.core.unavailable import Unavailable, describe_error

TIMEOUT_S = 5.0
MAX_EVENTS = 200  # a GPU in a fault loop logs thousands; the first ones tell the story
KERN_LOG = "/var/log/kern.log"
READ_CAP = 64 << 20  # of kern.log, from its end: this boot is at the end
# A snapshot taken before the kernel log was read (or by a caller that did not read it)
NOT_READ = Unavailable("not read")


@dataclass(frozen=True)
class KernelLogFacts:
    source: str  # the source that answered: "dmesg", "journalctl -k -b", "/var/log/kern.log"
    xids: tuple[XidEvent, ...]  # this boot's, in log order
    refused: tuple[str, ...]  # the sources tried before it, each with why it did not answer


def _run(argv: list[str]) -> str | Unavailable:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Unavailable(f"no answer within {TIMEOUT_S:.0f} s")
    except OSError as exc:
        return Unavailable(describe_error(exc))
    text = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return Unavailable(err[-1][:200] if err else f"exit code {done.returncode}")
    if not text.strip():
        # journalctl prints nothing (exit 0) to a user who may not read the kernel's messages
        return Unavailable("no lines readable by this user")
    return text


def _kern_log() -> str | Unavailable:
    try:
        with open(KERN_LOG, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - READ_CAP))
            text = f.read().decode("utf-8", errors="replace")
    except OSError as exc:
        return Unavailable(exc.strerror or describe_error(exc))
    # this boot only: what follows the last kernel banner
    start = text.rfind("kernel: Linux version ")
    if start != -1:
        text = text[text.rfind("\n", 0, start) + 1 :]
    return text


def probe_kernel_log() -> KernelLogFacts | Unavailable:
    refused = []
    sources = (
        ("dmesg", lambda: _run(["dmesg"])),
        ("journalctl -k -b", lambda: _run(["journalctl", "-k", "-b", "--no-pager", "-q", "-o", "short"])),
        (KERN_LOG, _kern_log),
    )
    for name, read in sources:
        try:
            text = read()
        except Exception as exc:  # noqa: BLE001 - a probe never raises
            text = Unavailable(describe_error(exc))
        if isinstance(text, Unavailable):
            refused.append(f"{name}: {text.reason}")
            continue
        return KernelLogFacts(name, xid_events(text.splitlines(), MAX_EVENTS), tuple(refused))
    return Unavailable("; ".join(refused))
