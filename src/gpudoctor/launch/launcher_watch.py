"""A joined rank notices when its launcher is gone.

Under torchrun (or srun) a rank's parent is the launcher's agent. When the agent
is killed (`kill -9`, an OOM kill, a node agent restarted), its workers are not:
they run on alone, holding the job's other nodes in collectives and torchrun's
exit barrier. A rank that watches its parent can say what happened and stop, so
that the other nodes see a lost peer at once and report it."""

from __future__ import annotations

import os
import sys
import threading
import time

from gpudoctor.core.exit_code import ExitCode
from gpudoctor.launch.rank import RankContext

WATCHED = ("torchrun", "slurm")  # launchers that are this process's parent
POLL_S = 1.0


def gone_message(ctx: RankContext, parent: int) -> str:
    launcher = "torchrun agent" if ctx.joined_by == "torchrun" else "srun step (slurmstepd)"
    return (
        f"gpudoctor: rank {ctx.rank}: its launcher ({launcher}, pid {parent}) is gone; "
        "this rank stops now rather than run on alone (the other ranks will see it leave)"
    )


def watch_launcher(ctx: RankContext | None, poll_s: float = POLL_S) -> threading.Thread | None:
    """Start a daemon thread that ends this rank (exit 1, a problem; one line on stderr) once
    its parent, the launcher, is gone; None when the rank has no launcher to watch."""
    if ctx is None or ctx.joined_by not in WATCHED:
        return None
    parent = os.getppid()
    if parent <= 1:  # already orphaned, or the launcher is pid 1 in a container: nothing to watch
        return None

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        try:
            print(gone_message(ctx, parent), file=sys.stderr, flush=True)
        finally:
            os._exit(ExitCode.PROBLEM)  # collectives may be blocked in C++: a normal exit would wait on them

    thread = threading.Thread(target=watch, name="gpudoctor-launcher-watch", daemon=True)
    thread.start()
    return thread
