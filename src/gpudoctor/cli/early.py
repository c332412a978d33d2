"""What `gpudoctor` does before its own CLI is even imported.

Importing typer (and with it pydantic) and rich, then parsing the options,
costs about a tenth of a second of CPU: a tenth of `import torch`. Two command
lines need none of it, or not first:

- `gpudoctor check` spends most of its time in a child process importing torch
  (probe/torch_info.py): started first, the child runs meanwhile, and `check`
  costs about what `python -c "import torch"` does. Only for a plain `check` of
  this environment: with --facts nothing is probed, with --visible the child
  needs another environment, --help probes nothing, and in the ranks of a
  torchrun/SLURM job only some ranks probe their node.
- `gpudoctor run SCRIPT ARGS` (or `run -m MODULE ARGS`) without options of its
  own only execs `python -m gpudoctor.hooks.main SCRIPT ARGS`, which checks
  the target itself (same one-line usage errors): it does so at once.

No typer, rich or torch import here.

A Ctrl-C before main() runs would interrupt an import with a traceback; until
main() takes over (cli_ready), it is answered as main() answers it: the child
stopped, one line, exit 130.
"""

from __future__ import annotations

import os
import signal
import sys

from gpudoctor.core.exit_code import ExitCode

# `check` options that leave what torch's probe sees unchanged.
PLAIN_CHECK_OPTIONS = {"--json", "--markdown", "--strict"}


def _is_gpudoctor(program: str) -> bool:
    """sys.argv[0] of the gpudoctor program: its script, or gpudoctor/__main__.py
    under `python -m gpudoctor` (not a test runner that imported the CLI)."""
    return os.path.basename(program) == "gpudoctor" or program.endswith(os.path.join("gpudoctor", "__main__.py"))


def _in_a_job() -> bool:
    """A rank of torchrun or SLURM (launch/rank.py's join_context, read without
    importing the launcher): N ranks importing torch at once for nothing would
    slow the node down."""
    env = os.environ
    return ("RANK" in env and "WORLD_SIZE" in env) or "SLURM_PROCID" in env


def is_plain_check(argv: list[str]) -> bool:
    """argv as sys.argv: `gpudoctor check` and nothing that changes the probe."""
    if len(argv) < 2 or argv[1] != "check" or not set(argv[2:]) <= PLAIN_CHECK_OPTIONS:
        return False
    return _is_gpudoctor(argv[0]) and not _in_a_job()


def is_plain_run(argv: list[str]) -> bool:
    """argv as sys.argv: `gpudoctor run` then the target at once (a script, or -m):
    everything from there on is the script's, as cli/run.py takes it too."""
    if len(argv) < 3 or argv[1] != "run" or (argv[2].startswith("-") and argv[2] != "-m"):
        return False
    return _is_gpudoctor(argv[0])


def bare_explain(args: list[str]) -> list[str]:
    """The arguments (without the program name) with `lint --explain` given no rule,
    last on the line or before another option, asking for the list: `--explain all`.
    Otherwise the option parser would refuse it ("requires an argument")."""
    if not args or args[0] != "lint" or "--explain" not in args:
        return args
    at = args.index("--explain")
    if at + 1 < len(args) and not args[at + 1].startswith("-"):
        return args
    return [*args[: at + 1], "all", *args[at + 1 :]]


def fill_closed_streams() -> None:
    """`gpudoctor run hi.py >&-`: a closed stdin, stdout or stderr becomes /dev/null.
    Python leaves sys.stdout None for a closed fd 1 (and our print would crash), and
    the next file opened would take the number 1: a rank's log, a report, written
    to as if it were stdout by every child that inherits it."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:  # a lower fd was closed too and took this one: move it
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False))  # noqa: SIM115 - the process's own


def before_cli(argv: list[str]) -> None:
    """Called with sys.argv before the CLI's imports (cli/app.py)."""
    fill_closed_streams()
    # With a gpudoctor variable inherited (a shell left over from a run), the whole CLI
    # runs first: commands/run drops those only gpudoctor may set (launch/rundir.CHILD_ONLY_ENV).
    if is_plain_run(argv) and not any(name.startswith("GPUDOCTOR_") for name in os.environ):
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, "-m", "gpudoctor.hooks.main", *argv[2:]])
    start_probe_early(argv)


def start_probe_early(argv: list[str]) -> None:
    if is_plain_check(argv):
        from gpudoctor.probe.torch_info import start_early

        start_early()
        signal.signal(signal.SIGINT, _interrupted_before_main)


def cli_ready() -> None:
    """main() runs: a Ctrl-C is a KeyboardInterrupt again, which main() answers."""
    if signal.getsignal(signal.SIGINT) is _interrupted_before_main:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupted_before_main(signum, frame) -> None:
    from gpudoctor.probe.torch_info import stop_early

    stop_early()
    sys.stderr.write("gpudoctor: interrupted\n")
    sys.stderr.flush()
    os._exit(ExitCode.INTERRUPTED)
