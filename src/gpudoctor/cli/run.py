"""gpudoctor run: run a training script under the doctor (runtime hooks), as
`python SCRIPT ARGS` would, and say what went wrong where.

One process: the command checks the target and execs
`python -m gpudoctor.runtime.main SCRIPT ARGS` in its own place (same pid, so
torchrun's and the shell's signals reach the script directly). `--nproc N`:
N ranks through the supervised launcher, then one merged report.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from gpudoctor.cli.output import usage_error

RUN_CONTEXT = {
    # The script's own options pass through untouched: everything from the
    # script (or -m MODULE) on belongs to it, even `--json` or `-h`.
    "allow_extra_args": True,
    "ignore_unknown_options": True,
    "allow_interspersed_args": False,
}


def register(app: typer.Typer) -> None:
    @app.command("run", context_settings=RUN_CONTEXT)
    def run(
        target: Optional[List[str]] = typer.Argument(
            None, metavar="SCRIPT [ARGS]... | -m MODULE [ARGS]...", help="What python would run, as python takes it."
        ),
        nproc: Optional[int] = typer.Option(
            None, "--nproc", min=1, metavar="N", help="Start N ranks (gloo/NCCL env:// rendezvous on 127.0.0.1)."
        ),
        json_file: Optional[str] = typer.Option(
            None, "--json", metavar="FILE", help="Also write the findings as JSON to FILE (stdout stays the script's)."
        ),
        strict: bool = typer.Option(
            False, "--strict", help="Exit 1 when the script exits 0 but a warning or an error was found."
        ),
        timeout: Optional[float] = typer.Option(
            None,
            "--timeout",
            metavar="S",
            min=0.1,
            help="Stop the script after S seconds, printing every thread's stack.",
        ),
    ) -> None:
        """Run a script under the doctor: device-mismatch errors explained, DDP pitfalls caught at run time.

        Findings go to stderr at exit, prefixed by rank; the exit code is the script's.
        """
        from gpudoctor.runtime.target import TargetError, check_target, parse_target

        try:
            parsed = parse_target(list(target or []))
            check_target(parsed)
        except TargetError as exc:
            usage_error(str(exc))
        from gpudoctor.runtime import session as names

        env = {names.ENV_ON: "1", names.ENV_TARGET: parsed.describe()}
        if json_file:
            env[names.ENV_JSON] = os.path.abspath(json_file)
        if strict:
            env[names.ENV_STRICT] = "1"
        if nproc is None:
            if timeout:
                env[names.ENV_TIMEOUT] = str(timeout)
            _exec_runtime(parsed.argv(), env)
        raise typer.Exit(_run_ranks(parsed, nproc, env, timeout, json_file, strict))


def _exec_runtime(argv: list[str], env: dict[str, str]) -> None:
    os.environ.update(env)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "gpudoctor.runtime.main", *argv])


def _run_ranks(parsed, nproc: int, env: dict[str, str], timeout, json_file, strict: bool) -> int:
    """--nproc: each rank prints its own findings (echoed with its prefix); here
    come how the ranks ended, one summary line, and the merged JSON."""
    from gpudoctor.backend_choice import probe_cuda
    from gpudoctor.checks.torch_build import torch_import_failed
    from gpudoctor.runtime.ranks import run_ranks
    from gpudoctor.runtime.report import findings_text, write_json

    cuda = probe_cuda()  # the launcher hosts its rendezvous with torch: it must import
    if cuda.import_error:
        broken = torch_import_failed(cuda.import_error, python=sys.executable, PYTHONPATH=os.environ.get("PYTHONPATH"))
        sys.stderr.write(findings_text([broken], f"gpudoctor run: no rank started for {parsed.describe()}"))
        return 1
    done = run_ranks(parsed, nproc, env, timeout)
    report = done.report
    ended = [f for f in report.findings if f.area == "ranks"]
    counts = report.counts()
    summary = (
        f"gpudoctor run: {nproc} rank(s) of {parsed.describe()}: "
        f"{counts['error']} error(s), {counts['warn']} warning(s) in all"
    )
    sys.stderr.write(findings_text(ended, summary) if ended else summary + "\n")
    if json_file:
        problem = write_json(os.path.abspath(json_file), report, strict)
        if problem:
            sys.stderr.write(problem + "\n")
    if done.status == 0 and strict and report.failed(strict=True):
        return 1
    return done.status
