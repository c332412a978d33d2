"""The module-call watch: `nn.Module.__call__` wrapped for a short window.

A device error needs no hook: it is explained after the fact from its
traceback (hooks/post_mortem.py). What only a live call shows is a module
called with an input on another device than its own parameters that runs
anyway (it moves the input itself, paying a copy every call, or a later op
fails). So, while armed, every module call is compared with its module's
device. The window opens when the hooks install and when a model moves
(`.to()`, `.cuda()`: every `Module._apply`), which is when devices change, and
closes by itself once the calls stop showing new modules (a few training
steps). All windows together look at no more than LOOK_BUDGET calls per
process, so a long run pays nothing after its first steps — even one that
moves its model at every step — and `Module.__call__` is torch's own again.

Why wrap `__call__` instead of a global forward pre-hook: any global hook sends
every module call down `_call_impl`'s slow path while it is registered, and adds
torch frames to the user's tracebacks. The wrapper's one frame is unlinked from
the traceback before an exception goes on, so the user sees what plain python shows.
"""

from __future__ import annotations

import sys
import threading
import weakref

import torch
from torch.nn import Module

from gpudoctor.hooks.device_errors import qualified_name
from gpudoctor.hooks.facts import ModuleInputDevice
from gpudoctor.core.frames import caller_stack, drop_own_frame, user_source
from gpudoctor.hooks.session import session

ORIGINAL_CALL = Module.__call__
# The window closes after this many calls without a new module (and at least
# WINDOW_PASSES calls per module seen): a few forward/backward passes. It closes
# after MAX_WINDOW_CALLS whatever happens: code that makes new modules at every
# step (nn.DataParallel replicates its module each forward) never stops showing
# "new" ones.
MIN_WINDOW_CALLS = 64
WINDOW_PASSES = 3
MAX_WINDOW_CALLS = 20_000
# Calls looked at in all windows of a process: a few milliseconds' worth.
LOOK_BUDGET = 50_000


class CallWatch:
    def __init__(self) -> None:
        self.armed = False
        self.seen: set[int] = set()
        self.quiet = 0
        self.calls = 0  # since the window opened
        self.limit = MIN_WINDOW_CALLS
        self.budget = LOOK_BUDGET
        self.warned: set[tuple[int, str, str]] = set()
        self.roots: list[weakref.ref] = []  # models given to gpudoctor.watch(): names start there
        self.lock = threading.Lock()

    # -- the window --------------------------------------------------------
    def arm(self, refill: bool = False) -> None:
        """Open a window; `refill` (gpudoctor.watch(): the user asked) grants a fresh budget."""
        if refill:
            self.budget = max(self.budget, MAX_WINDOW_CALLS)
        if self.budget <= 0 or "torch._dynamo" in sys.modules and torch.compiler.is_compiling():
            return
        self.quiet = self.calls = 0
        if Module.__call__ is ORIGINAL_CALL:
            setattr(Module, "__call__", checked_call)
        self.armed = True

    def disarm(self) -> None:
        self.armed = False
        if Module.__call__ is checked_call:
            setattr(Module, "__call__", ORIGINAL_CALL)
        _unpatch_dynamo()

    # -- one call ----------------------------------------------------------
    def look(self, module: Module, args: tuple, kwargs: dict) -> None:
        if "torch._dynamo" in sys.modules and torch.compiler.is_compiling():
            return  # being traced by torch.compile: not a real call
        key = id(module)
        self.calls += 1
        self.budget -= 1
        if key in self.seen:
            self.quiet += 1
        else:
            if len(self.seen) > MAX_WINDOW_CALLS:
                self.seen.clear()  # modules made on the fly: remember a bounded number
            self.seen.add(key)
            self.quiet = 0
            self.limit = max(MIN_WINDOW_CALLS, WINDOW_PASSES * len(self.seen))
        if self.quiet > self.limit or self.calls > MAX_WINDOW_CALLS or self.budget <= 0:
            self.disarm()
        own = _first_tensor(module._parameters)
        if own is None:
            own = _first_tensor(module._buffers)
        if own is None or hasattr(module, "_hf_hook"):  # accelerate moves weights in its own hook
            return
        device = own.device
        name, value = _first_input(args, kwargs)
        if value is None or value.device == device or value.dim() == 0:
            return  # a 0-dim CPU tensor mixes with any device: not a problem
        if type(own).__name__ == "DTensor":
            return
        self.warn(module, name, str(value.device), str(device))

    def warn(self, module: Module, input_name: str, input_device: str, module_device: str) -> None:
        key = (id(module), input_device, module_device)
        with self.lock:
            if key in self.warned:
                return
            self.warned.add(key)
        stack = caller_stack(skip=3)  # warn <- look <- checked_call <- the caller
        session.record(
            ModuleInputDevice(
                rank=session.current_rank(),
                module=self.name_of(module, stack),
                module_type=type(module).__name__,
                module_device=module_device,
                input_name=input_name,
                input_device=input_device,
                source=user_source(stack),
            )
        )

    def name_of(self, module: Module, stack) -> str:
        roots = [r() for r in self.roots] + [f.f_locals.get("self") for f, _ in stack]
        for root in roots:
            if isinstance(root, Module):
                name = qualified_name(root, module)
                if name is not None:
                    return name
        return ""

    def root(self) -> Module | None:
        for r in self.roots:
            m = r()
            if m is not None:
                return m
        return None


watch = CallWatch()


def _first_tensor(named: dict) -> torch.Tensor | None:
    for t in named.values():
        if t is not None:
            return t
    return None


def _first_input(args: tuple, kwargs: dict) -> tuple[str, torch.Tensor | None]:
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            return ("input" if i == 0 else f"input #{i + 1}"), a
    for k, a in kwargs.items():
        if isinstance(a, torch.Tensor):
            return k, a
    return "input", None


def checked_call(self, *args, **kwargs):
    w = watch
    if w.armed:
        try:
            w.look(self, args, kwargs)
        except Exception:  # noqa: BLE001 - a check must never break the user's forward
            pass
    elif Module.__call__ is checked_call:
        setattr(Module, "__call__", ORIGINAL_CALL)  # someone restored us after the window closed
    try:
        return ORIGINAL_CALL(self, *args, **kwargs)
    except BaseException as exc:
        drop_own_frame(exc)  # explained, if it is a device error, where it is caught (post_mortem.py)
        raise


def _unpatch_dynamo() -> None:
    """torch._dynamo remembers Module.__call__ when it is first imported; if that
    happened inside the window it remembered the wrapper: give it the original."""
    for name in ("torch._dynamo.utils", "torch._dynamo.variables.nn_module"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "unpatched_nn_module_call", None) is checked_call:
            setattr(mod, "unpatched_nn_module_call", ORIGINAL_CALL)


def install() -> None:
    original_apply = Module._apply

    def _apply(self, *args, **kwargs):
        watch.arm()  # the model moves: look at the next calls again
        try:
            return original_apply(self, *args, **kwargs)
        except BaseException as exc:
            drop_own_frame(exc)
            raise

    setattr(Module, "_apply", _apply)
    watch.arm()


def attach(model: Module) -> None:
    """gpudoctor.watch(model): qualified names start at this model."""
    watch.roots.insert(0, weakref.ref(model))


def detach(model: Module) -> None:
    watch.roots[:] = [r for r in watch.roots if r() is not None and r() is not model]
