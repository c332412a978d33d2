"""Where the knowledge ends: a failure the log shows that no pattern explains.

The finding names what failed, where and when (from `signs`), and gives a next step that
is true whatever the cause: what to read, and which debug variable adds what. It never
guesses a fix.
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, Pattern
from gpudoctor.knowledge.signs import KIND, Sign

# Not in the registry (no line matches it): `Diagnosis` makes it from the signs of failure.
UNRECOGNISED = Pattern(
    id="unrecognised-failure",
    family="launcher",
    role=CAUSE,
    severity=Severity.ERROR,
    title="unrecognised failure",
    regex=re.compile(r"(?!)"),
    needles=(),
    why="",
    fix="",
    examples=(),
)

WHY = """The log shows that the job failed ({what}), but none of gpudoctor's failure patterns
explains this failure, so no cause is guessed. Later errors on other ranks (timeouts, lost
connections) are usually consequences of the first failure."""

DISTRIBUTED = re.compile(r"distributed|c10d|nccl|gloo|rendezvous|elastic|ProcessGroup|barrier", re.IGNORECASE)
CUDA = re.compile(r"cuda|cudnn|cublas|device-side|GPU", re.IGNORECASE)


def unrecognised_why(sign: Optional[Sign]) -> str:
    what = "a Python exception" if sign is None or sign.kind == "exception" else KIND.get(sign.kind, sign.kind)
    return " ".join(WHY.format(what=what).split())


def next_step(sign: Optional[Sign], exception: str = "", message: str = "") -> str:
    """What to look at next, and which debug variable adds what; true whatever the cause."""
    if sign is None:
        out = (f"find the traceback that ends in {exception or 'this exception'} (every rank's output: torchrun --tee 3 "
               "--log-dir DIR, srun --output=%t.log) and read its last frames")
        if CUDA.search(message):
            out += "; rerun with CUDA_LAUNCH_BLOCKING=1 so the failing kernel's own Python frame is reported"
        elif DISTRIBUTED.search(message):
            out += "; rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL and NCCL_DEBUG=INFO (gloo: check GLOO_SOCKET_IFNAME and that the address is not a loopback one)"
        return out
    text = f"{sign.what} {sign.message}"
    paths = " ".join(f.path for f in sign.frames[-3:])
    if sign.kind == "exception" and sign.what.endswith(("ProcessExitedException", "ProcessRaisedException")) and "Traceback" in sign.text:
        # an IPython traceback: mp.spawn was started from a notebook
        return ("mp.spawn re-imports the function it runs in each new process, which a notebook cannot provide: move the "
                "function into a .py module and import it, or run the training as a script (torchrun train.py)")
    if sign.kind == "exception":
        last, mine = sign.raised_in(), sign.user_frame()
        cut = sign.cut
        if last is None:
            where = ("the log does not show where it was raised: keep each rank's whole output (torchrun --log-dir DIR --tee 3, "
                     "srun --output=%t.log) and read the traceback above the exception")
        else:
            where = f"{'the last frame the log shows is' if cut else 'it was raised in'} {last.path}:{last.line}"
        if last is not None and mine is not None and mine is not last:
            where += f", called from your code at {mine.path}:{mine.line}: check what that call passes and the library's version"
        elif last is not None and last.user() and not cut:
            where += " (your code): the message says what it expected"
        if cut:
            where += "; the exception line itself was cut from the paste: the full output names it"
        extra = ""
        if CUDA.search(text) and not cut:
            extra = "; rerun with CUDA_LAUNCH_BLOCKING=1 so the failing kernel's own Python frame is reported"
        elif DISTRIBUTED.search(text + " " + paths):
            extra = "; rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL (checks every collective's shapes and order) and NCCL_DEBUG=INFO"
        return where + extra
    if sign.kind == "c10" and CUDA.search(sign.what):
        return next_step_for("cudastatus")
    if sign.kind == "stopped":
        return ("the process was stopped by a signal, which launchers send to the other ranks after one failed: find the rank "
                "that failed first (its own output, or torchrun's Root Cause block) and read its error")
    if sign.kind in ("signame", "glogsig", "shellsig", "fatal", "caught"):
        if "Killed" in sign.what or "SIGKILL" in sign.what:
            return "a SIGKILL is usually the host's OOM killer or the scheduler: check `dmesg -T | grep -i oom` and `sacct -j JOBID -o JobID,MaxRSS,State`"
        return ("a native crash: rerun with PYTHONFAULTHANDLER=1 (the Python stack of every thread at the crash) and "
                "TORCH_SHOW_CPP_STACKTRACES=1; `ulimit -c unlimited` and `gdb python core` give the native frame")
    return next_step_for(sign.kind)


def next_step_for(kind: str) -> str:
    if kind in ("terminate", "terminate_bare", "what", "c10"):
        return "a C++ exception ended the process: rerun with TORCH_SHOW_CPP_STACKTRACES=1 for its C++ stack, and NCCL_DEBUG=INFO if it came from a collective"
    if kind in ("assertion", "devassert", "cuda", "cudastatus"):
        return ("rerun with CUDA_LAUNCH_BLOCKING=1 so the error is raised at the kernel that failed (an assertion on an index or a label "
                "usually means a value out of range, e.g. a class id >= num_classes); TORCH_USE_CUDA_DSA=1 on builds that support it")
    if kind in ("ncclwarn", "ncclerror"):
        return "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: NCCL then prints the interface, transport and peer it failed on"
    if kind == "gloo":
        return "check GLOO_SOCKET_IFNAME names an interface every node can reach, and rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL"
    if kind == "barrier":
        return ("the barrier counts ranks as they arrive: check that every node started, that WORLD_SIZE (nnodes x nproc_per_node) "
                "is the number of ranks that really run, and that all use the same MASTER_ADDR:MASTER_PORT")
    return ("this log only shows that a process exited with an error: the failing rank's own output is not here; diagnose every "
            "rank's log (torchrun --tee 3 --log-dir DIR, srun --output=%t.log) or the run folder")
