"""Carry the doctor into processes the script starts with multiprocessing's
"spawn" (mp.spawn ranks, Lightning's ddp_spawn, spawn-started DataLoader workers).

A spawned child is a fresh interpreter that runs
`python -c "from multiprocessing.spawn import spawn_main; spawn_main(...)"`;
the command line gets one import in front, which sets up the same lazy hooks
there. In ranks started by torch.multiprocessing.spawn, the rank's function is
wrapped so a device error that ends the rank is explained before torch
formats its traceback for the parent.
"""

from __future__ import annotations

import multiprocessing.spawn as mp_spawn

from gpudoctor.hooks.session import session

# A child that cannot import gpudoctor (another interpreter set with
# multiprocessing.set_executable) must still run: the import is optional.
BOOTSTRAP = "try:\n    import gpudoctor.hooks.spawned_child\nexcept Exception:\n    pass\n"
_original_command_line = mp_spawn.get_command_line


def command_line(**kwds):
    cmd = _original_command_line(**kwds)
    if "-c" in cmd:
        i = cmd.index("-c") + 1
        if not cmd[i].startswith(BOOTSTRAP):
            cmd = [*cmd[:i], BOOTSTRAP + cmd[i], *cmd[i + 1 :]]
    return cmd


def install_command_line() -> None:
    """No torch needed: done as soon as the runtime starts."""
    mp_spawn.get_command_line = command_line


class _RankFunction:
    """fn(i, *args) as torch.multiprocessing.spawn calls it, with the rank's
    index remembered and a fatal device error explained first."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, index, *args):
        session.spawn_index = index
        try:
            return self.fn(index, *args)
        except BaseException as exc:
            from gpudoctor.core.frames import strip_exception
            from gpudoctor.hooks.post_mortem import explain_chain

            explain_chain(exc)
            strip_exception(exc)  # torch sends the parent this traceback: keep it the user's
            raise


def install_rank_wrapper() -> None:
    """Replace torch.multiprocessing.spawn._wrap (the target of every spawned rank).

    It keeps _wrap's module and name, so pickling the target by reference in
    the parent still names "torch.multiprocessing.spawn._wrap", which the child
    resolves to its own (wrapped) copy."""
    import importlib

    # Not `from torch.multiprocessing import spawn`: that name is the function.
    torch_spawn = importlib.import_module("torch.multiprocessing.spawn")

    original = torch_spawn._wrap
    if getattr(original, "_gpudoctor", False):
        return

    def _wrap(fn, i, args, error_file):
        return original(_RankFunction(fn), i, args, error_file)

    _wrap.__module__ = original.__module__
    _wrap.__qualname__ = original.__qualname__
    _wrap.__name__ = original.__name__
    setattr(_wrap, "_gpudoctor", True)
    setattr(torch_spawn, "_wrap", _wrap)
