"""Stack frames: which line is the user's, and tracebacks without gpudoctor in them.

The hooks wrap a few torch functions; when an exception passes through one of
those wrappers, or through runpy on the way to the script, the frames are
taken out again so the user sees the traceback plain `python` would print.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass
from types import FrameType, TracebackType


_GPUDOCTOR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The code that runs inside the user's process: the hooks and the rank side of the hang doctor.
_IN_PROCESS = tuple(_GPUDOCTOR + name + os.sep for name in ("hooks", "hang"))


@dataclass(frozen=True)
class Source:
    """A line of the user's code: where a hook was reached from."""

    path: str
    line: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def _dir(path: str | None) -> str | None:
    return os.path.realpath(path) + os.sep if path else None


def _torch_dir() -> str | None:
    path = getattr(sys.modules.get("torch"), "__file__", None)
    return _dir(os.path.dirname(path)) if path else None


_STDLIB = {d for k in ("stdlib", "platstdlib") if (d := _dir(sysconfig.get_paths().get(k))) is not None}
_SITE = {d for k in ("purelib", "platlib") if (d := _dir(sysconfig.get_paths().get(k))) is not None}


def _real(filename: str) -> str:
    return os.path.realpath(filename) if not filename.startswith("<") else filename


def is_own(filename: str) -> bool:
    """A frame of the runtime hooks themselves (or of runpy, which they run the script with)."""
    return filename.startswith(_IN_PROCESS) or filename == "<frozen runpy>" or filename.endswith(f"{os.sep}runpy.py")


@functools.lru_cache(maxsize=4096)
def is_library(filename: str, strict: bool = True) -> bool:
    """torch, the standard library, gpudoctor; with strict, every installed package too."""
    if filename.startswith("<frozen") or filename.startswith(_GPUDOCTOR):
        return True
    real = _real(filename)
    roots = set(_STDLIB)
    torch = _torch_dir()
    if torch:
        roots.add(torch)
    if strict:
        roots |= _SITE
    return any(real.startswith(r) for r in roots)


def source_of(frame: FrameType, lineno: int | None = None) -> Source:
    filename = frame.f_code.co_filename
    line = lineno if lineno is not None else frame.f_lineno
    text = linecache.getline(filename, line).strip()
    return Source(_short(filename), line, text)


def _short(filename: str) -> str:
    """Relative to the current directory when below it: how the user named the script."""
    if filename.startswith("<"):
        return filename
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def user_source(frames: list[tuple[FrameType, int]]) -> Source | None:
    """The innermost frame of the user's own code (outside torch, the standard
    library and installed packages); failing that, outside torch and the stdlib."""
    for strict in (True, False):
        for frame, lineno in reversed(frames):
            if not is_library(frame.f_code.co_filename, strict):
                return source_of(frame, lineno)
    return None


def caller_stack(skip: int = 1) -> list[tuple[FrameType, int]]:
    """The current stack, outermost first, without the caller's own `skip` frames."""
    frame: FrameType | None = sys._getframe(skip + 1)
    stack: list[tuple[FrameType, int]] = []
    while frame is not None:
        stack.append((frame, frame.f_lineno))
        frame = frame.f_back
    return stack[::-1]


def caller_source(skip: int = 1) -> Source | None:
    return user_source(caller_stack(skip + 1))


def traceback_frames(tb: TracebackType | None) -> list[tuple[FrameType, int]]:
    out = []
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out


def without_own_frames(tb: TracebackType | None) -> TracebackType | None:
    """The same traceback with the runtime's frames (and runpy's) unlinked."""
    kept: list[TracebackType] = []
    while tb is not None:
        if not is_own(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    for a, b in zip(kept, kept[1:]):
        a.tb_next = b
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def drop_own_frame(exc: BaseException) -> None:
    """In a wrapper's `except`: unlink the wrapper's own frame, so that a bare
    `raise` sends on the traceback the user would have seen without it."""
    tb = exc.__traceback__
    if tb is not None and is_own(tb.tb_frame.f_code.co_filename):
        exc.__traceback__ = tb.tb_next


def strip_exception(exc: BaseException) -> None:
    """Unlink gpudoctor's frames from an exception and the ones chained to it."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = without_own_frames(e.__traceback__)
        todo += [e.__cause__, e.__context__]
        todo += list(getattr(e, "exceptions", ()) or ())
