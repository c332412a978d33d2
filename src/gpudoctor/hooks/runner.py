"""Run the user's script the way `python SCRIPT ARGS` would — same sys.argv,
`__main__`, sys.path[0], cwd, output and exit status — with the hooks set to
install themselves when it imports torch; then say what they saw.

Exit status: the script's own (SystemExit(3) -> 3; an uncaught exception -> its
traceback, as python prints it, and 1; Ctrl-C -> killed by SIGINT, as python
does). With GPUDOCTOR_RUN_STRICT, a script that exits 0 leaves with 1 when a
warning or error was found. After --timeout: the stacks of every thread and 124.
"""

from __future__ import annotations

import atexit
import builtins
import importlib.util
import io
import os
import runpy
import shutil
import signal
import sys
import tempfile
import threading
import types
import zipfile
from importlib.machinery import SourceFileLoader
from typing import NoReturn

from gpudoctor.core.exit_code import ExitCode, python_exit, script_exit
from gpudoctor.core.findings import Report
from gpudoctor.hooks.session import (
    CHILD,
    ENV_FRAGMENTS,
    ENV_JSON,
    ENV_ON,
    ENV_STRICT,
    ENV_SUPERVISED,
    ENV_TARGET,
    ENV_TIMEOUT,
    RANK,
    TOP,
    env_flag,
    session,
)
from gpudoctor.hooks.target import Target, TargetError, check_target, parse_target



def _exit_status(code: object) -> int:
    """What python does with SystemExit(code): a message is printed, then 1."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    return python_exit(code)


def _prefix() -> str:
    # Ranks of `gpudoctor run --nproc` get their prefix from the supervisor.
    label = session.label()
    return f"[{label}] " if label and session.role != RANK else ""


def report_at_exit(target_name: str, status: int | None, argv: list[str] | None = None, ended: str = "") -> int:
    """Say what the hooks saw; return the exit status to leave with.

    A rank of `--nproc` or a spawned child prints its findings and leaves its
    facts in the fragments directory for whoever merges them; the top process
    prints its own, merges its spawned children's into the `--json` file, and
    applies `--strict`."""
    from gpudoctor.hooks.checks import runtime_findings
    from gpudoctor.render.run_text import findings_text, header_line
    from gpudoctor.hooks.report import write_fragment

    facts = session.all_facts()
    own = runtime_findings(facts)
    fragments = os.environ.get(ENV_FRAGMENTS)
    if session.role in (RANK, CHILD):
        if fragments:
            write_fragment(fragments, session.label(), facts, status)
        # A rank of `run --nproc` stays silent: the supervisor merges every rank's facts
        # into the one report (a finding several ranks raised shown once, with its ranks).
        # A spawned child speaks for itself, with its label in front.
        if own and not (session.role == RANK and fragments):
            sys.stderr.write(findings_text(own, header_line(own, target_name, ended), _prefix()))
        sys.stderr.flush()
        return status or ExitCode.OK
    return _report_top(target_name, status, argv or [target_name], facts, own, ended)


def _report_top(target_name: str, status: int | None, argv: list[str], facts: list, own: list, ended: str = "") -> int:
    from gpudoctor.knowledge.stragglers import verdict_json
    from gpudoctor.hooks.checks import runtime_findings
    from gpudoctor.render.run_text import findings_text, header_line
    from gpudoctor.render.step_table import steps_table
    from gpudoctor.hooks.report import rank_json_path, read_fragments, run_report, write_json
    from gpudoctor.hooks.step_clock import joined_verdict, write_own_trace

    children = read_fragments(session.fragments_dir)
    child_facts = [f for c in children for f in c["facts"]]
    by_children = len(runtime_findings(child_facts))
    steps = joined_verdict()  # rank 0 of a torchrun / srun job: where every rank's step time went
    steps_data = verdict_json(steps) if steps else None
    own = [*own, *(steps.findings if steps else ())]
    text = steps_table(steps_data, _prefix())
    text += findings_text(own, header_line(own, target_name, ended), _prefix()) if own or not by_children else ""
    if by_children:
        text += f"{_prefix()}gpudoctor run: spawned processes reported {by_children} finding(s) above\n"
    processes = [{"label": session.label() or "main", "pid": os.getpid(), "exit_code": status}]
    processes += [
        {"label": c.get("label") or "child", "pid": c.get("pid"), "exit_code": c.get("exit_code")} for c in children
    ]
    strict = env_flag(ENV_STRICT)
    report = run_report(facts + child_facts, processes, argv, status, steps.findings if steps else ())
    if steps_data:
        report = Report(report.command, report.findings, dict(report.data, steps=steps_data))
    traced = write_own_trace()
    unwritten = False
    if traced:
        text += f"{_prefix()}{traced[0]}\n"
        unwritten = not traced[1]
    json_path = os.environ.get(ENV_JSON)
    if json_path:
        problem = write_json(rank_json_path(json_path, session.current_rank(), _world_size()), report, strict)
        if problem:
            text += f"{_prefix()}{problem}\n"
            unwritten = True
    sys.stderr.write(text)
    sys.stderr.flush()
    if session.fragments_dir:
        shutil.rmtree(session.fragments_dir, ignore_errors=True)
    if not status and "gpudoctor.hang.joined" in sys.modules:
        from gpudoctor.hang import joined as joined_watch

        joined_watch.ended_clean()  # a rank of torchrun / srun: its run folder files go at exit
    if unwritten:
        return status or ExitCode.PROBLEM  # the report asked for is not there: not a success
    return script_exit(status or ExitCode.OK, report, strict)


def _world_size() -> int | None:
    if session.world_size is not None:
        return session.world_size
    env = os.environ.get("WORLD_SIZE", "")
    return int(env) if env.isdigit() else None


def _start_watchdog(seconds: float, target_name: str) -> None:
    """--timeout: dump every thread's stack, report, stop the children, leave with 124."""

    def fire():
        sys.stderr.write(
            f"{_prefix()}gpudoctor run: {target_name} still running after {seconds:g} s (--timeout); stacks:\n"
        )
        sys.stderr.write(_stacks())
        sys.stderr.flush()
        try:
            report_at_exit(target_name, ExitCode.TIMEOUT, sys.argv, f"was stopped after {seconds:g} s (--timeout)")
        finally:
            _stop_children()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(ExitCode.TIMEOUT)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()


def _stacks() -> str:
    """Every thread's stack but the watchdog's, in the script's own frames."""
    import traceback

    from gpudoctor.core.frames import is_own

    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        entries = [e for e in traceback.extract_stack(frame) if not is_own(e.filename)]
        out.append(f"Thread {names.get(ident, ident)} (most recent call last):\n")
        out += traceback.format_list(entries)
    return "".join(out)


def _stop_children() -> None:
    try:
        import psutil

        children = psutil.Process().children(recursive=True)
        for child in children:
            child.terminate()
        _, alive = psutil.wait_procs(children, timeout=3)
        for child in alive:
            child.kill()
    except Exception:  # noqa: BLE001
        pass


def _prepare(target: Target) -> None:
    if target.kind == "script":
        sys.argv = [target.name, *target.args]
        # python puts the script's directory (symlinks resolved) first on sys.path.
        script_dir = os.path.dirname(os.path.realpath(target.name))
        if sys.path and sys.path[0] in ("", os.getcwd()):
            sys.path[0] = script_dir
        else:
            sys.path.insert(0, script_dir)
    else:
        sys.argv = ["-m", *target.args]  # python -m puts the module's file in argv[0]
    # A fresh __main__, as python starts with; it stays after the script ends
    # (atexit handlers and pickling may look things up in it).
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __annotations__={}, __package__=None, __spec__=None)
    sys.modules["__main__"] = main


def _run(target: Target) -> None:
    main = sys.modules["__main__"]
    if target.kind == "module":
        runpy._run_module_as_main(target.name, alter_argv=True)  # type: ignore[attr-defined]  # what `python -m` runs: private, not in typeshed
        return
    path = os.path.abspath(target.name)
    if os.path.isdir(path) or not path.endswith((".py", ".pyw")) and zipfile.is_zipfile(path) or path.endswith(".pyc"):
        runpy.run_path(target.name, run_name="__main__")  # a directory or zip with __main__.py, bytecode
        return
    with io.open_code(path) as fh:
        source = fh.read()
    code = compile(source, path, "exec", dont_inherit=True)
    main.__dict__.update(__file__=path, __cached__=None, __loader__=SourceFileLoader("__main__", path))
    exec(code, main.__dict__)


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):
        pass  # the script closed or replaced it


def _explain(exc: BaseException | None) -> None:
    """A device error that ended the script, explained from its traceback; any
    other error kept for the failure patterns (hooks/checks.py)."""
    if exc is not None and "torch" in sys.modules:  # a script without torch has nothing to explain
        from gpudoctor.hooks.post_mortem import explain_chain

        explain_chain(exc)
    if exc is not None and not isinstance(exc, KeyboardInterrupt):
        import traceback

        from gpudoctor.hooks.facts import UncaughtError

        try:
            text = "".join(traceback.format_exception_only(type(exc), exc))
        except Exception:  # noqa: BLE001 - a __str__ that raises must not hide the user's error
            return
        session.record(UncaughtError(session.current_rank(), text[-4000:]))


def _print_uncaught(exc: BaseException) -> None:
    from gpudoctor.core.frames import strip_exception

    strip_exception(exc)
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _torch_installed() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None  # finds it, does not import it
    except (ImportError, ValueError):  # an import hook that refuses torch
        return False


MASTER_LOOKUP_S = 10.0  # torch retries a name that does not resolve until its whole timeout


def _refuse_unreachable_master(target_name: str) -> None:
    """One rank of a torchrun/env:// job whose MASTER_ADDR does not resolve would
    retry the lookup for torch's whole timeout: looked up here once, in a bounded
    time, and said at once, naming the host."""
    from gpudoctor.hang.tracer import joined_rank

    master = os.environ.get("MASTER_ADDR", "").strip()
    if not master or joined_rank() is None:
        return
    from gpudoctor.checks.environment import master_findings
    from gpudoctor.probe.environment import EnvironmentFacts, relevant, resolve
    from gpudoctor.render.run_text import findings_text

    facts = EnvironmentFacts(relevant(os.environ), resolve(master, MASTER_LOOKUP_S))
    found = [f for f in master_findings(facts) if f.id == "master-addr-unresolvable"]
    if found:
        sys.stderr.write(findings_text(found, f"gpudoctor run: {target_name} not started"))
        sys.exit(ExitCode.PROBLEM)


def main(argv: list[str]) -> NoReturn:
    try:
        target = parse_target(argv)
        check_target(target)
    except TargetError as exc:
        print(f"gpudoctor: error: {exc}", file=sys.stderr)
        sys.exit(ExitCode.USAGE)
    if not env_flag(ENV_SUPERVISED):
        _refuse_unreachable_master(target.describe())

    os.environ[ENV_ON] = "1"
    os.environ[ENV_TARGET] = target.describe()
    session.role = RANK if env_flag(ENV_SUPERVISED) else TOP
    if session.role == TOP:
        # Children started with spawn (mp.spawn ranks) leave their facts here. Named,
        # not made: the first child to write makes it (private), so a run that spawns
        # nothing, or a rank that torchrun ends with SIGTERM, leaves no empty folder.
        import secrets

        session.fragments_dir = os.path.join(tempfile.gettempdir(), f"gpudoctor-run-{secrets.token_hex(8)}")
        os.environ[ENV_FRAGMENTS] = session.fragments_dir
    if session.role == RANK:
        from gpudoctor.launch.rank import STAGE_STARTED, answer_stack_signal

        answer_stack_signal()  # the supervisor's --timeout asks for stacks with SIGUSR1
        # Before the script imports torch (hooks/process_group.py would import it now):
        # from here to STAGE_IMPORTED the rank is starting, not hung.
        _reached(STAGE_STARTED)
    from gpudoctor.hang.tracer import joined_rank, prepare_environment

    if session.role == RANK or joined_rank() is not None:
        prepare_environment()  # before the script imports torch

    from gpudoctor.hooks import spawn
    from gpudoctor.hooks.install import install_when_torch_imported

    if not _torch_installed():  # asked before the import hook is in place: find_spec would trip it
        print(
            f"gpudoctor run: torch is not installed for {sys.executable}: {target.describe()} runs "
            "without the runtime checks (pip install torch)",
            file=sys.stderr,
        )
    spawn.install_command_line()
    install_when_torch_imported()
    timeout = os.environ.get(ENV_TIMEOUT)
    if timeout:
        _start_watchdog(float(timeout), target.describe())

    _prepare(target)
    if session.role == RANK:
        from gpudoctor.launch.rank import STAGE_SCRIPT

        _reached(STAGE_SCRIPT)  # the script runs: what the rank is doing before `import torch` is its own code
    status: int
    interrupted = False
    uncaught: BaseException | None = None
    try:
        _run(target)
        status = ExitCode.OK
    except SystemExit as exc:
        status = _exit_status(exc.code)
        if status:
            _explain(exc.__context__)  # sys.exit(1) in an `except` that caught a device error
            if "torch" in sys.modules:  # the hang doctor's trace says where the rank chose to leave
                from gpudoctor.hang.tracer import exited

                exited(status, exc.__traceback__)
    except BaseException as exc:  # noqa: BLE001 - whatever ends the script, python's way
        try:
            _explain(exc)
        finally:
            _print_uncaught(exc)
        interrupted = isinstance(exc, KeyboardInterrupt)
        uncaught = exc
        status = ExitCode.PROBLEM  # python's status after an uncaught exception
    finally:
        _flush(sys.stdout)

    from gpudoctor.render.run_text import ended_by

    status = report_at_exit(target.describe(), status, target.argv(), ended_by(uncaught, status))
    if interrupted:
        # python's own way out of an uncaught Ctrl-C: finish, then die of SIGINT.
        atexit._run_exitfuncs()
        _flush(sys.stdout)
        _flush(sys.stderr)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(status)


def _reached(stage: str) -> None:
    """Tell the supervisor this rank reached `stage` (its progress file). Never raises."""
    try:
        from gpudoctor.launch.rank import join_context

        ctx = join_context()
        if ctx is not None:
            ctx.progress(stage, 0)
    except Exception:  # noqa: BLE001 - a progress file must not stop the user's script
        pass
