"""Device errors explained after the fact, from the frames their traceback
keeps alive: nothing runs on the hot path for them.

Called where an exception ends something: the script (hooks/runner.py), a
thread (threading.excepthook), an mp.spawn rank (hooks/spawn.py), a
`gpudoctor.watch()` block (hooks/watch.py). A traceback holds every frame from
there down to the failing op, and the frames of `Module._call_impl` hold the
module and its inputs, so the explanation names the submodule, its tensors'
devices, the inputs' and the user's line (hooks/device_errors.py).
"""

from __future__ import annotations

from gpudoctor.hooks.device_errors import explain, is_device_mismatch
from gpudoctor.core.frames import traceback_frames
from gpudoctor.hooks.session import session

_MARK = "_gpudoctor_explained"


def explain_exception(exc: BaseException) -> bool:
    """Record a device error once, from its traceback. True when it was one."""
    if getattr(exc, _MARK, False) or not is_device_mismatch(exc):
        return False
    try:
        setattr(exc, _MARK, True)
    except AttributeError:
        pass
    from gpudoctor.hooks.module_calls import watch  # models given to gpudoctor.watch(): names start there

    session.record(explain(exc, traceback_frames(exc.__traceback__), session.current_rank(), watch.root()))
    return True


def explain_chain(exc: BaseException | None) -> None:
    """The exception, and those it chains to (`raise ... from`, or raised while handling)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        try:
            explain_exception(exc)
        except Exception:  # noqa: BLE001 - explaining must never hide the user's error
            pass
        exc = exc.__cause__ or exc.__context__
