"""What a launcher's summary alone decides, when it is all a log holds of a failure.

torchrun's ChildFailedError and Root Cause block, `torch.distributed.launch`'s CalledProcessError,
DeepSpeed's and mp.spawn's exit reports say *that* a rank failed, not why: the rank's own error went
to the rank's own stderr, which the paste does not hold. The exit status decides a little more, and
only that is said: 1 is Python's status for an exception nobody caught (its traceback is on the
rank's stderr, and `error_file: <N/A>` says torchrun kept no copy of it), -6 an abort (a C++ exception,
a native check, the NCCL watchdog). -9, -11 and -7 have patterns of their own that name their cause
(patterns/launcher.py), and 2 is `rank-usage-error`. The fix is how to see the rank's own error.
"""

from __future__ import annotations

from typing import Optional

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
UNKNOWN_EXIT = "The launcher's summary says that a rank failed, not why: the rank's own error went to its own stderr, which this log does not hold"
# where the summary's exit code is not in the log (a ChildFailedError line alone): what it would decide
CODES = ("; the rank's exit code, in the summary's Root Cause block or its 'failed (exitcode: N)' line, says a little more: 1 "
         "an uncaught Python exception, -9 SIGKILL sent from outside (most often the host's OOM killer), -11 a segmentation fault "
         "in native code, -6 an abort")


def reading(exitcode: Optional[str], error_file: Optional[str] = None) -> str:
    """What the summary's exit status decides (never more), as a sentence for a finding's why."""
    code = (exitcode or "").strip()
    out = EXIT_1 if code == "1" else ABORT if code == "-6" else UNKNOWN_EXIT
    if not code:
        out += CODES
    if code in ("", "1") and (error_file or "").strip() in ("<N/A>", "N/A"):  # (a signal leaves no error file whatever the script does)
        out += NO_ERROR_FILE
    return out + "."


def why(exitcode: Optional[str], error_file: Optional[str] = None) -> str:
    """A launcher summary's why when the log holds nothing of the failing rank's own output."""
    return f"The launcher reports that a rank failed; this log holds none of that rank's own output. {reading(exitcode, error_file)}"


def how_to_see() -> str:
    """The fix: how to see the failing rank's own error."""
    return LOOK_ABOVE + SHOW_RANK


def step(exitcode: Optional[str] = None, error_file: Optional[str] = None) -> str:
    """The next step when a launcher's summary is all the log holds: what it decides, then how to see the rank's error."""
    return f"{reading(exitcode, error_file)} To see it: {LOOK_ABOVE}{SHOW_RANK}"
