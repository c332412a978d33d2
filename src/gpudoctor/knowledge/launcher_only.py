"""What a launcher's summary alone decides, when it is all a log holds of a failure.

torchrun's ChildFailedError and Root Cause block, `torch.distributed.launch`'s CalledProcessError,
DeepSpeed's and mp.spawn's exit reports say *that* a rank failed, not why: the rank's own error went
to the rank's own stderr, which the paste does not hold. The exit status decides a little more, and
only that is said: 1 is Python's status for an exception nobody caught (its traceback is on the
rank's stderr, and `error_file: <N/A>` says torchrun kept no copy of it), -6 an abort (a C++ exception,
a native check, the NCCL watchdog), -15/-2/-1 a stop sent from outside (the rank did not fail on its own). -9, -11 and -7 have patterns of their own that name their cause
(patterns/launcher.py), and 2 is `rank-usage-error`. The fix is how to see the rank's own error, in the words of the launcher the log shows (`LAUNCHERS`,
recognised by `LauncherSeen` as the input streams by): torchrun's --log-dir/--tee and @record, DeepSpeed's
--enable_each_rank_log, Paddle's workerlog files, mpirun's --output-filename, srun's --label. A log cut before
any failure gets the same step (commands/diagnose/analyse.py, log-inconclusive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gpudoctor.knowledge.prefilter import ZEROS, digest, digit_blind, lines_holding, may_hold

# How to see a rank's own output next time: torchrun keeps each rank's stdout/stderr in files, or
# copies them to the console with the rank's prefix; @record puts the traceback into the error file.
SHOW_RANK = ("run it again with `torchrun --redirects 3 --log-dir LOGS ...` (each rank's output then lies in "
             "LOGS/<run id>/attempt_0/<local rank>/stderr.log) or `torchrun --tee 3 ...` (each rank's output on the console, "
             "each line led by [rankN]:), and diagnose that (on Windows and macOS torchrun ignores both and each rank prints to the "
             "console itself: its traceback is in the console's output above the summary); or decorate the script's entry point with `@record` (from "
             "torch.distributed.elastic.multiprocessing.errors import record) so that torchrun's Root Cause block carries the "
             "rank's traceback in its error_file")
# The output may already be there: before the summary, in the same terminal, when the ranks share it.
LOOK_ABOVE = ("when the ranks printed to the same terminal, the rank's own output is above the launcher's summary in that "
              "output (diagnose the whole of it); else ")

EXIT_1 = ("Exit code 1 is Python's status for an exception nobody caught (or the script's own sys.exit(1)): the rank "
          "raised, and printed its traceback to its own stderr, which this log does not hold")
NO_ERROR_FILE = ("; the rank wrote no error file (torchrun's `error_file: <N/A>`, 'NO ERROR_FILE'), so torchrun holds no copy of "
                 "that traceback either (the script's entry point is not decorated with @record)")
ABORT = ("Exit code -6 is SIGABRT: the process aborted itself, after an uncaught C++ exception ('terminate called after "
         "throwing ...', 'what(): ...'), a failed check in native code, or the NCCL watchdog taking it down after a collective "
         "failed or timed out; the last lines the rank wrote to its own stderr say which, and this log does not hold them")
# A rank ended by a stop signal (torchrun's exitcode -15/-2/-1, "Signal 15 (SIGTERM) received by PID") did not fail on its own.
STOP_EXITS = {"-15": "SIGTERM", "-2": "SIGINT", "-1": "SIGHUP"}
STOPPED = ("Exit code {code} is {name}: the rank did not fail on its own, it was stopped from outside — by torchrun passing on a "
           "stop it received itself (its 'Received N death signal' line: Ctrl-C, a closed session, a scheduler's cancel or time "
           "limit), by a framework's failure handling stopping every rank after another one failed, or by someone's kill; when "
           "another rank or process failed first, that failure is the cause, and this rank's own output holds no error of its own")
UNKNOWN_EXIT = "The launcher's summary says that a rank failed, not why: the rank's own error went to its own stderr, which this log does not hold"
# where the summary's exit code is not in the log (a ChildFailedError line alone): what it would decide
CODES = ("; the rank's exit code (torchrun's Root Cause block or its 'failed (exitcode: N)' line, deepspeed's 'exits with return "
         "code = N', Paddle's 'code N') says a little more: 1 "
         "an uncaught Python exception, -9 SIGKILL sent from outside (most often the host's OOM killer), -11 a segmentation fault "
         "in native code, -6 an abort")


# Frameworks that print from rank 0 only: another rank's error is then absent from the console whatever the launcher.
RANK_ZERO_ONLY = ("; a framework that logs from rank 0 only (the Trainer's and Lightning's loggers, mmengine, Megatron's "
                  "print_rank_0) prints nothing of another rank, so a rank other than 0 that failed shows only in its own output")


@dataclass(frozen=True)
class Launcher:
    """A launcher as its lines show it in a log, and how to see the failing rank's own first error under it."""

    name: str
    words: tuple[bytes, ...]  # literals one of which each line the regex reads holds (the regex runs only then)
    regex: re.Pattern
    how: str


# Most specific first: accelerate and DeepSpeed run torch's elastic agent, mpirun may run under srun.
# Example lines (real, from the sampled threads): "LAUNCH ERROR 2022-10-25 15:17:31,067 Container failed !!!"
# (PaddlePaddle/Paddle#47326), "[2025-06-26 16:48:28,490] [ERROR] [launch.py:325:sigkill_handler] ..." (DeepSpeed),
# "srun: error: gpu-node-03: task 5: Exited with exit code 1", "mpirun noticed that process rank 7 ..." (horovod#469).
LAUNCHERS = (
    Launcher(
        "paddle.distributed.launch",
        (b"paddle.distributed", b"LAUNCH ", b"launch_utils.py", b"workerlog"),
        re.compile(r"paddle\.distributed\.(?:launch|spawn|fleet)|^LAUNCH (?:INFO|ERROR|WARNING)\b|\blaunch_utils\.py:\d+\]|\bworkerlog\.\d", re.M),
        "Paddle's launcher writes each rank's output to its own file, log/workerlog.N (the newer launcher: the file its "
        "'Container rank N status failed ... log FILE' line names; `python -m paddle.distributed.launch --log_dir LOGS ...` "
        "puts them in LOGS): `tail -n 100 log/workerlog.*` shows the failing rank's first error (the console may show rank 0's "
        "output only)",
    ),
    Launcher(
        "deepspeed",
        (b"deepspeed.launcher", b"launch.py:", b"runner.py:", b"sigkill_handler"),
        re.compile(r"deepspeed\.launcher|\[(?:launch|runner)\.py:\d+:(?:main|sigkill_handler|fetch_hostfile)\]"),
        "the deepspeed launcher prints every local rank to the same console without a prefix, so the first "
        "Traceback above its `exits with return code` line is the failing rank's; `deepspeed --enable_each_rank_log LOGS ...` "
        "writes each rank's output to its own file in LOGS" + RANK_ZERO_ONLY,
    ),
    Launcher(
        "accelerate launch",
        (b"accelerate", b"simple_launcher", b"multi_gpu_launcher", b"deepspeed_launcher"),
        re.compile(r"accelerate[/\\]commands[/\\]launch\.py|\baccelerate launch\b|accelerate_cli|\b(?:simple|multi_gpu|deepspeed)_launcher\b"),
        "accelerate launch prints every process to the same console: the first Traceback above its own is the failing "
        "process's; `accelerate launch --debug ...` prints torch.distributed's stack trace of the failure, and a multi-GPU "
        "run goes through torch's elastic agent, so `@record` on the script's entry point (from "
        "torch.distributed.elastic.multiprocessing.errors import record) puts the traceback in the failure's error_file"
        + RANK_ZERO_ONLY,
    ),
    Launcher(
        "mpirun",
        (b"mpirun", b"horovodrun", b"Open MPI", b"prterun", b"orterun", b"mpiexec", b">:", b"<std"),
        re.compile(r"\b(?:mpirun|horovodrun|prterun|orterun|mpiexec)\b|\bOpen MPI\b|\[\d+,\d+\]<std(?:out|err)>"),
        "`mpirun --tag-output ...` leads each line with [job,rank]<stderr> and `mpirun --output-filename LOGS ...` "
        "(`horovodrun --output-filename LOGS`) writes one file per rank: the failing rank's first error is in its own",
    ),
    Launcher(
        "srun",
        (b"srun", b"slurmstepd", b"sbatch"),
        re.compile(r"\bsrun: |\bslurmstepd(?:-[\w.-]+)?: |\bsbatch\b"),
        "`srun --label ...` leads each line with its task number and `srun --output=job-%j-%t.out ...` writes one file "
        "per task (%t: the task's rank); `sacct -j JOBID -o JobID,State,ExitCode` names the step that failed",
    ),
    Launcher(
        "torch.multiprocessing.spawn",
        (b"spawn", b"ProcessRaisedException", b"ProcessExitedException"),
        # (torch's own spawn.py: Python's multiprocessing/spawn.py frames are any spawned child's, a DataLoader worker's too)
        re.compile(r"torch\.multiprocessing\.spawn|torch[/\\]multiprocessing[/\\]spawn\.py|\bmp\.spawn\(|ProcessRaisedException|ProcessExitedException"),
        "mp.spawn prints the failing process's own traceback after `-- Process N terminated with the following error:`, "
        "at the end of the output (a process ended by a signal has none: mp.spawn names the signal); diagnose the "
        "output from that line to its end",
    ),
    Launcher(
        "torchrun",
        (b"torchrun", b"torch.distributed.", b"torch/distributed/", b"torch\\distributed\\", b"torch/distributed\\", b"torch\\distributed/",
         b"ChildFailedError", b"elastic", b"Root Cause"),
        re.compile(r"\btorchrun\b|torch\.distributed\.(?:run|launch|elastic)|torch[/\\]distributed[/\\](?:run|launch)\.py"
                   r"|torch[/\\]distributed[/\\]elastic|ChildFailedError|^Root Cause \(first observed failure\):", re.M),
        SHOW_RANK + "; TORCHELASTIC_ERROR_FILE is the file each worker's @record writes to"
        + RANK_ZERO_ONLY,
    ),
)
BY_NAME = {launcher.name: launcher for launcher in LAUNCHERS}
BLIND = {launcher.name: digit_blind(launcher.regex) for launcher in LAUNCHERS}

ALL_WORDS = tuple(dict.fromkeys(w for launcher in LAUNCHERS for w in launcher.words))


class LauncherSeen:
    """The launchers an input shows, fed its chunks as they stream by (commands/diagnose/analyse.py's tee)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.nccl_info = False  # the input shows NCCL's INFO lines (NCCL_DEBUG=INFO was set)

    def feed(self, chunk: bytes) -> None:
        self.nccl_info = self.nccl_info or bool(may_hold(chunk, (b"NCCL INFO",))) and b"NCCL INFO" in chunk
        if len(self.names) == len(LAUNCHERS):
            return
        digested = digest(chunk)
        present = {w for w in digested.may_hold(ALL_WORDS) if w in chunk}
        for launcher in LAUNCHERS:
            words = [w for w in launcher.words if w in present]
            if launcher.name in self.names or not words:
                continue
            # each line the regex reads holds one of the words: only those lines are searched, and only the
            # block's digest of them where the regex reads no digit (a line repeated with other numbers is read once)
            lines = lines_holding(digested.text, [w.translate(ZEROS) for w in words]) if BLIND[launcher.name] else lines_holding(chunk, words)
            if launcher.regex.search(lines.decode("utf-8", "replace")):
                self.names.add(launcher.name)

    def launcher(self) -> str:
        """The most specific launcher seen ('' when none)."""
        return next((launcher.name for launcher in LAUNCHERS if launcher.name in self.names), "")


# A cut log and a hang's log look alike: where the ranks' set-up is not in the log, what shows where they wait.
NCCL_STEP = ("; if the run stopped moving rather than failed, NCCL_DEBUG=INFO (with TORCH_DISTRIBUTED_DEBUG=DETAIL) prints "
             "each rank's communicator set-up and the collective it waits in")


def launcher_step(name: str) -> str:
    """How to see the failing rank's own first error under the launcher `name` ('' for none: then torchrun's way)."""
    launcher = BY_NAME.get(name)
    return launcher.how if launcher is not None else SHOW_RANK


def reading(exitcode: Optional[str], error_file: Optional[str] = None) -> str:
    """What the summary's exit status decides (never more), as a sentence for a finding's why."""
    code = (exitcode or "").strip()
    out = EXIT_1 if code == "1" else ABORT if code == "-6" else STOPPED.format(code=code, name=STOP_EXITS[code]) if code in STOP_EXITS else UNKNOWN_EXIT
    if not code:
        out += CODES
    if code in ("", "1") and (error_file or "").strip() in ("<N/A>", "N/A"):  # (a signal leaves no error file whatever the script does)
        out += NO_ERROR_FILE
    return out + "."


def first_failure(fields: dict) -> str:
    """Which rank the summary names as the first that failed, and its exit code, as a sentence ('' when it names none):
    torchrun's Root Cause block (rank, local_rank, host) or its agent's 'failed (exitcode: N) local_rank: K' line."""
    rank, local, host, code = (str(fields.get(k) or "") for k in ("rank", "local_rank", "host", "exitcode"))
    if not rank and not local:
        return ""
    who = f"rank {rank}" + (f" (local rank {local})" if local else "") if rank else f"local rank {local}"
    who += (f" on host {host}" if host else "") + (f", exit code {code}" if code else "")
    return f"The launcher names the rank that failed first: {who}. "


def why(exitcode: Optional[str], error_file: Optional[str] = None) -> str:
    """A launcher summary's why when the log holds nothing of the failing rank's own output."""
    return f"The launcher reports that a rank failed; this log holds none of that rank's own output. {reading(exitcode, error_file)}"


def how_to_see(launcher: str = "") -> str:
    """The fix: how to see the failing rank's own error (under the launcher the log shows, when it shows one)."""
    return LOOK_ABOVE + launcher_step(launcher)


def step(exitcode: Optional[str] = None, error_file: Optional[str] = None, launcher: str = "") -> str:
    """The next step when a launcher's summary is all the log holds: what it decides, then how to see the rank's error."""
    return f"{reading(exitcode, error_file)} To see it: {LOOK_ABOVE}{launcher_step(launcher)}"
