"""gpudoctor's exit codes (documented in docs/json.md) and the one place each
command's code is chosen from what it found.

Imports nothing heavy: `python -m gpudoctor.hooks.main`, the half of `gpudoctor
run` that lives inside the user's process, decides its exit here too.
"""

from __future__ import annotations

from enum import IntEnum

from gpudoctor.core.findings import UNFINISHED, Report, Severity


class ExitCode(IntEnum):
    OK = 0
    PROBLEM = 1  # an error finding (with --strict: or a warning)
    USAGE = 2  # bad input: one line on stderr
    TIMEOUT = 124  # `gpudoctor run --timeout` expired (as timeout(1) does)
    HANGUP = 129  # SIGHUP (an ssh session dropped); every child was stopped (128 + SIGHUP)
    INTERRUPTED = 130  # Ctrl-C; every child was stopped (128 + SIGINT, as shells say)
    TERMINATED = 143  # SIGTERM; every child was stopped (128 + SIGTERM, the convention)


# A rank killed by signal N exits, in the shell's words, 128 + N.
SIGNAL_BASE = 128


def stopped_exit(stop_signal: int) -> ExitCode:
    """A run stopped by a signal exits 128 + its number, as a shell reports a
    process killed by it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), though gpudoctor
    itself was not killed: it stopped every rank and printed its report first."""
    by_signal = {ExitCode.HANGUP - SIGNAL_BASE: ExitCode.HANGUP, ExitCode.TERMINATED - SIGNAL_BASE: ExitCode.TERMINATED}
    return by_signal.get(stop_signal, ExitCode.INTERRUPTED)


# What a watchdog reports when it stops ranks that made no progress: such a run
# ends as timeout(1) ends one, whatever the command (`run --nproc` decides the same
# from its launch result, `ranks_exit`).
WATCHDOG_FINDINGS = frozenset({"rank-hung", "rank-never-joined", "rendezvous-hang"})


def report_exit(report: Report, strict: bool = False) -> ExitCode:
    """`check`, `allreduce`, `train-smoke`, `lint`: the worst finding decides (124
    when it is the watchdog's); an interrupted launch says so whatever it found."""
    if report.interrupted:
        return stopped_exit(report.stop_signal)
    if any(f.id in WATCHDOG_FINDINGS and f.severity is Severity.ERROR or f.id in UNFINISHED for f in report.findings):
        return ExitCode.TIMEOUT
    return ExitCode.PROBLEM if report.failed(strict) else ExitCode.OK


def steps_exit(results) -> ExitCode:
    """`report`: interrupted when Ctrl-C stopped a step; a problem when any step
    found an error or did not finish (its file is written either way)."""
    if any(r.interrupted for r in results):
        return ExitCode.INTERRUPTED
    return ExitCode.OK if all(r.ok for r in results) else ExitCode.PROBLEM


def script_exit(status: int, report: Report, strict: bool) -> int:
    """`run`: the script's own status; with --strict a script that exited 0
    leaves with 1 when a warning or an error was found."""
    if status == ExitCode.OK and strict and report.failed(strict=True):
        return ExitCode.PROBLEM
    return status


def python_exit(code: object) -> int:
    """What python does with SystemExit(code): None is 0, an int is itself,
    anything else is printed by the caller and is 1."""
    if code is None:
        return ExitCode.OK
    if isinstance(code, int):
        return code
    return ExitCode.PROBLEM


def _shell_status(code: int) -> int:
    return SIGNAL_BASE - code if code < 0 else code or ExitCode.PROBLEM


def ranks_exit(result, cause_exitcode: int | None = None) -> int:
    """One exit status for N ranks of `run --nproc`: 0 when all succeeded; else
    the root-cause rank's own (128+signal when it was killed; `cause_exitcode`,
    from the job's diagnosis), 1 when gpudoctor stopped the job for a collective
    mismatch or uneven work, 124 for a stall or on timeout, 130/143/129 stopped
    by SIGINT/SIGTERM/SIGHUP."""
    if result.interrupted:
        return stopped_exit(result.stop_signal)
    if result.ok:
        return ExitCode.OK
    if cause_exitcode is not None:
        return _shell_status(cause_exitcode)
    if result.diagnosed:
        return ExitCode.TIMEOUT if result.diagnosed == "stall" else ExitCode.PROBLEM
    # No rank failed on its own (its code would be `cause_exitcode`, hang/verdict.py).
    return ExitCode.TIMEOUT if result.timed_out else ExitCode.PROBLEM
