"""Entry point of a rank started by `launch_function`:
`python -m gpudoctor.launch.child package.module:function SETUP CONFIG_TYPE`.

Runs fn(ctx, config), `config` read back as CONFIG_TYPE (launch/contract.py), and leaves the outcome in the run directory: the return
value (a frozen dataclass, or None for nothing) as rank<N>.result.json, or the
exception as rank<N>.error.json (the idea of torch elastic's @record: the parent
learns why a child died from a file, not by parsing its stderr).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
import threading
import time
import traceback
from dataclasses import is_dataclass

from gpudoctor.launch import rundir, store
from gpudoctor.launch.contract import RankError, read_config, write_contract
from gpudoctor.launch.rank import STAGE_IMPORTED, STAGE_STARTED, answer_stack_signal, join_context

SLOW_START_S = 10.0  # the `slowstart` fault (rundir.FAULT_ENV = "0:slowstart")
_EXIT = os._exit  # taken before the hang tracer wraps os._exit to record a script's own call


def _rank_setup(spec: str, ctx) -> None:
    """Run the caller's set-up ("module:function", given by gpudoctor's own launcher,
    never by a file) before torch is imported: the hang doctor's tracer is installed
    this way, so this plumbing does not import the doctor."""
    if not spec:
        return
    try:
        module_name, _, func_name = spec.partition(":")
        getattr(importlib.import_module(module_name), func_name)(ctx)
    except Exception:  # noqa: BLE001 - the rank must run even if its set-up cannot
        pass


def main(argv: list[str]) -> int:
    # A segfault prints the Python stack; SIGUSR1 from the supervisor prints every
    # thread's stack, which is how a hung rank shows where it is stuck.
    answer_stack_signal()
    ctx = join_context()  # the supervisor set RANK, WORLD_SIZE, ... and rundir.RUN_DIR_ENV
    if ctx is None or ctx.run_dir is None:
        raise RuntimeError(f"gpudoctor.launch.child runs only under gpudoctor's supervisor ({rundir.RUN_DIR_ENV} unset)")
    run_dir = ctx.run_dir
    ctx.progress(STAGE_STARTED, 0)
    module_name, _, func_name = argv[0].partition(":")
    config = read_config(rundir.config_path(run_dir), argv[2] if len(argv) > 2 else "")
    if ctx.fault == "slowstart":  # a rank whose start-up crawls, as importing torch does on a busy machine
        time.sleep(SLOW_START_S)
    _rank_setup(argv[1] if len(argv) > 1 else "", ctx)
    import torch  # noqa: F401 - every rank function uses it: its import is part of starting

    ctx.progress(STAGE_IMPORTED, 0)
    rundir.write_threads(run_dir, ctx.rank)  # the threads this rank's torch runs with, for the report
    store.host_if_asked()  # rank 0: the rendezvous store, on 127.0.0.1 only
    try:
        fn = getattr(importlib.import_module(module_name), func_name)
        result = fn(ctx, config)
        if result is not None and not is_dataclass(result):
            # The supervisor reads the result back as the command's dataclass: a dict
            # or a tensor here is a bug in the rank function, reported as its failure.
            raise TypeError(f"{argv[0]} returned a {type(result).__name__}, not a frozen dataclass or None")
    except BaseException as exc:  # noqa: BLE001 - every way a rank can fail is reported
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        write_contract(
            rundir.error_path(run_dir, ctx.rank),
            RankError(type(exc).__name__, str(exc), tb[-4000:]),
        )
        return 1
    if result is not None:
        write_contract(rundir.result_path(run_dir, ctx.rank), result)
    return 0


def leave(code: int) -> None:
    """End the rank as Python's exit would, less the interpreter's teardown: other
    threads are waited for, the exit handlers run (the hang tracer's last word,
    multiprocessing's children), the output is flushed; then os._exit. Tearing down
    the modules of torch (and torch._dynamo, which DDP and every optimizer import)
    and the final collections over their objects cost ~0.5 CPU-s a rank, a sixth
    of a short job's (benchmarks/rank_exit.py), and decide nothing: the rank's
    result or error is written by then."""
    # Python's own first step of its exit: the thread-exit hooks (a ThreadPoolExecutor
    # told to stop), then every non-daemon thread joined. A rank that never ends there
    # is the watchdog's, as under a plain exit.
    threading._shutdown()  # type: ignore[attr-defined]
    gc.freeze()  # what the exit handlers collect, if they do, is not torch's objects
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or gone: nothing more to lose
            pass
    _EXIT(code)


if __name__ == "__main__":
    leave(main(sys.argv[1:]))
