"""Putting the hooks in place — after the script imports torch, not before.

Importing torch ahead of the script would change what it runs: a script may
set OMP_NUM_THREADS, CUDA_VISIBLE_DEVICES or TORCH_* variables before its own
`import torch`, and a script that never imports torch should not pay for it.
So the runtime adds one finder to sys.meta_path that waits for the name
"torch", lets the normal loader import it, and installs the hooks the moment
torch has finished initialising.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import threading

_installed = False
_lock = threading.Lock()


def install_hooks() -> bool:
    """Every hook, once per process. Needs torch imported. Never raises."""
    global _installed
    with _lock:
        if _installed:
            return True
        _installed = True
    try:
        from gpudoctor.launch import store
        from gpudoctor.launch.rank import STAGE_IMPORTED
        from gpudoctor.hooks.process_group import progress

        progress(STAGE_IMPORTED)  # a rank of `run --nproc` has started: its watchdog counts from here
        _record_threads()
        store.host_if_asked()  # its rank 0: the rendezvous store, on 127.0.0.1 only
    except Exception:  # noqa: BLE001
        pass
    try:
        from gpudoctor.hooks import checkpoint
        from gpudoctor.hooks import data
        from gpudoctor.hooks import module_calls
        from gpudoctor.hooks import process_group
        from gpudoctor.hooks import spawn

        module_calls.install()
        data.install()
        process_group.install()
        checkpoint.install()
        spawn.install_rank_wrapper()
        _install_thread_hook()
        _install_collective_trace()
        _install_step_clock()
    except Exception as exc:  # noqa: BLE001 - the script must run even if a hook cannot
        print(f"gpudoctor: runtime hooks not installed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False
    return True


def _record_threads() -> None:
    """A rank of `run --nproc` leaves the torch threads it starts with, for the report."""
    from gpudoctor.hooks.session import ENV_SUPERVISED, RANK, session
    from gpudoctor.launch import rundir

    run_dir, rank = os.environ.get(rundir.RUN_DIR_ENV), os.environ.get("RANK", "")
    if session.role == RANK and os.environ.get(ENV_SUPERVISED) and run_dir and rank.isdigit():
        rundir.write_threads(run_dir, int(rank))


def _install_collective_trace() -> None:
    """Ranks of `gpudoctor run --nproc` publish their collectives to the run folder."""
    import os

    from gpudoctor.hooks.session import ENV_SUPERVISED, RANK, session
    from gpudoctor.launch import rundir

    run_dir = os.environ.get(rundir.RUN_DIR_ENV)
    rank = os.environ.get("RANK", "")
    off = os.environ.get(rundir.RUN_COLLECTIVES_ENV) == "0"  # benchmarks/hang_tracking.py compares with it off
    if off or not os.environ.get(rundir.RUN_ENV):
        return
    from gpudoctor.hang import tracer as collective_trace

    if session.role == RANK and os.environ.get(ENV_SUPERVISED) and run_dir and rank.isdigit():
        collective_trace.install(run_dir, int(rank))
        return
    joined = collective_trace.joined_rank() if session.role != RANK else None
    if joined is not None:  # a rank of torchrun / srun: the doctors talk over the job's store
        from gpudoctor.hang import joined as joined_watch

        tracker = collective_trace.install(joined_watch.joined_run_dir(), joined[0])
        hang = os.environ.get(collective_trace.HANG_TIMEOUT_ENV)
        if tracker is not None:
            joined_watch.start(tracker, joined[0], joined[1], float(hang) if hang else collective_trace.DEFAULT_HANG_TIMEOUT_S)


def _install_step_clock() -> None:
    """Ranks of `gpudoctor run --nproc` and of a joined job account for their steps
    (hooks/step_clock.py)."""
    from gpudoctor.hooks import step_clock
    from gpudoctor.launch import rundir

    if os.environ.get(rundir.RUN_ENV) and os.environ.get(step_clock.OFF_ENV) != "0":
        step_clock.install_for_run()


def _install_thread_hook() -> None:
    """A device error that ends a thread is explained like one that ends the script."""
    from gpudoctor.hooks.post_mortem import explain_chain

    original = threading.excepthook

    def excepthook(args):
        if args.exc_value is not None:
            explain_chain(args.exc_value)
        original(args)

    threading.excepthook = excepthook


class _TorchLoader(importlib.abc.Loader):
    """Delegates to torch's own loader; installs the hooks once torch is initialised."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        try:
            self.loader.exec_module(module)
        finally:
            # Leave no trace of this wrapper on the torch module.
            module.__loader__ = self.loader
            if module.__spec__ is not None:
                module.__spec__.loader = self.loader
        install_hooks()

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _TorchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _TorchLoader(spec.loader)
        return spec


def install_when_torch_imported() -> None:
    if "torch" in sys.modules:
        install_hooks()
    elif not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
