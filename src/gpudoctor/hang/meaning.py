"""Pure: what a rank's own output and ending mean, from the knowledge base
`diagnose` uses: a signal on this machine, an error it printed, a full disk."""

from __future__ import annotations

import os
from dataclasses import replace

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.launch.supervisor import RankOutcome

SIGNAL_CAUSES = {
    "SIGKILL": (
        "Killed from outside: most often the kernel's OOM killer (host RAM exhausted).",
        "dmesg -T | grep -i -E 'killed process|out of memory'   # then lower batch size / num_workers",
    ),
    "SIGSEGV": (
        "A native crash inside a C++/CUDA library: mismatched NCCL/CUDA/driver versions or a broken build.",
        "python -m gpudoctor check   # compare torch's CUDA/NCCL build with the driver",
    ),
    "SIGBUS": (
        "Shared memory ran out: /dev/shm is too small (Docker's default is 64 MB).",
        "docker run --shm-size=16g ...   # or --ipc=host",
    ),
    "SIGABRT": (
        "The process aborted: a C++ exception or the NCCL watchdog tearing down a stuck collective.",
        "rerun with NCCL_DEBUG=INFO TORCH_SHOW_CPP_STACKTRACES=1 and read the rank's log",
    ),
}

# SIGSEGV where no rank could have used a GPU: CUDA and NCCL were never loaded.
SIGSEGV_NO_GPU = (
    "A native crash inside a C/C++ extension; this machine has no usable CUDA GPU, so not CUDA/NCCL: "
    "a compiled package built for another torch/numpy/Python (mixed pip and conda wheels), a bug in a "
    "CPU kernel or gloo, or native memory corruption.",
    "python -X faulthandler SCRIPT   # the Python line of the crash; then: pip check; pip list | grep -i torch",
)

# SIGABRT after the script ran to its end, its default process group never destroyed: the
# group's C++ threads still hold work while the interpreter tears down (pytorch/pytorch#190489).
ABORT_AFTER_END = (
    "The script had run to its end; the process aborted afterwards, while the interpreter tore down. Its process "
    "group was never destroyed, so torch's process-group threads still held work then, and the C++ runtime aborted "
    "('terminate called without an active exception'): the rank's work was done, but its launcher sees a failed rank.",
    "dist.destroy_process_group()   # the script's last line, on every rank",
)

# Lines of a rank's stderr that say nothing about the user's problem.
NOISE = ("Extension modules:", "<frozen runpy>", "gpudoctor/launch/child.py", "<no Python frame>")


def readable_tail(lines, keep: int) -> list[str]:
    return [line for line in lines if line.strip() and not any(n in line for n in NOISE)][-keep:]



def signal_cause(name: str | None, gpus: int | None, log: str) -> tuple[str, str]:
    """(why, fix) for a rank killed by signal `name`, judged by the GPUs this machine has."""
    if name == "SIGSEGV" and gpus == 0:
        return SIGSEGV_NO_GPU
    return SIGNAL_CAUSES.get(name or "", ("The rank was killed by a signal.", f"read {log}"))


def explained(f: Finding, r: RankOutcome) -> Finding:
    """What the rank's own output means, from the knowledge base `diagnose` uses:
    the finding keeps its id and says the meaning instead of "read rankN.stderr"."""
    if f.id not in ("rank-crashed", "rank-raised", "rank-hung"):
        return f
    from gpudoctor.knowledge import explain_lines
    from gpudoctor.knowledge.story import GENERIC_FINDINGS

    lines = list(r.stderr_tail)
    if r.error:
        lines += [f"{r.error.type}: {r.error.message}", *r.error.traceback.splitlines()[-3:]]
    if not any(line.strip() for line in lines) and (full := _full_disk(os.path.dirname(r.stderr_path))):
        return replace(
            f,
            title=f"{f.title}: no space left on {full[0]}",
            evidence={**f.evidence, "folder": full[0], "free bytes": full[1]},
            why="The rank's log is empty and the disk holding the run folder is full: the rank could not write "
            "its heartbeat, its log or its traceback, so it ended without a word.",
            fix=f"df -h {full[0]}   # free space there, or start it with TMPDIR=<a folder on a disk with room>",
        )
    known = [m for m in explain_lines(lines) if m.evidence.get("role") != "harmless" and m.id not in GENERIC_FINDINGS]
    if not known:
        return f
    m = known[0]
    evidence = {**f.evidence, "diagnosis": m.id, "meaning": m.title}
    if f.severity is Severity.WARN:  # a victim: say what it suffered, keep pointing at the root cause
        return replace(f, evidence=evidence)
    signal = f.evidence.get("signal")
    if isinstance(signal, str) and m.id == f"launcher-{signal.lower()}":
        # the log only restates the signal the rank died of: the finding's own cause, judged
        # by what this machine has (no GPU: not CUDA), says more than the generic pattern
        return replace(f, evidence=evidence)
    return replace(f, title=f"{f.title}: {m.title}", evidence=evidence, why=m.why, fix=f"{m.fix}   (log: {r.stderr_path})")


FULL_BELOW = 1024 * 1024  # bytes free under which a disk counts as full for a rank's files


def _full_disk(folder: str) -> tuple[str, int] | None:
    """(folder, bytes free) when the disk holding it is full; None otherwise or unknown."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # gone, or no statvfs (Windows)
        return None
    free = st.f_bavail * st.f_frsize
    return (folder, free) if free < FULL_BELOW else None
