"""What `gpudoctor run` is asked to run: `SCRIPT ARGS...` or `-m MODULE ARGS...`,
and whether that can be run at all (checked before anything starts, so a typo
is a one-line usage error, exit 2). No torch import here."""

from __future__ import annotations

import importlib.machinery
import os
import zipfile
from dataclasses import dataclass

from gpudoctor.core.user_file import SOURCE_CAP, FileRefused, open_regular, read_capped


class TargetError(ValueError):
    """The target cannot be run: the message is one line for the user."""


@dataclass(frozen=True)
class Target:
    kind: str  # "script" | "module"
    name: str  # the path as given, or the module name
    args: tuple[str, ...]

    def argv(self) -> list[str]:
        """The arguments of `python -m gpudoctor.hooks.main`, which are python's own."""
        return ["-m", self.name, *self.args] if self.kind == "module" else [self.name, *self.args]

    def describe(self) -> str:
        return f"-m {self.name}" if self.kind == "module" else self.name


def parse_target(argv: list[str]) -> Target:
    """python's own syntax: `SCRIPT ARGS...`, `-m MODULE ARGS...`, `-mMODULE`, `--` first is skipped."""
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise TargetError("give a script to run: gpudoctor run SCRIPT [ARGS...] or gpudoctor run -m MODULE [ARGS...]")
    first = argv[0]
    if first == "-m":
        if len(argv) < 2 or not argv[1]:
            raise TargetError("-m needs a module name: gpudoctor run -m MODULE [ARGS...]")
        return Target("module", argv[1], tuple(argv[2:]))
    if first.startswith("-m") and len(first) > 2:
        return Target("module", first[2:], tuple(argv[1:]))
    return Target("script", first, tuple(argv[1:]))


def check_target(target: Target, cwd: str | None = None) -> None:
    """Raise TargetError when the target plainly cannot run."""
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError as exc:  # deleted or unmounted under us
            raise TargetError(
                f"the current directory is gone ({exc.strerror or exc}): cd to one that exists and run it again"
            ) from None
    if target.kind == "module":
        if target.name.endswith(".py"):
            raise TargetError(f"-m takes a module name, not a file: gpudoctor run {target.name}")
        top = target.name.split(".")[0]
        if not top.isidentifier() or not all(p.isidentifier() for p in target.name.split(".")):
            raise TargetError(f"not a module name: {target.name}")
        # Only the top-level package, found without importing anything; python -m
        # searches the current directory first.
        if importlib.machinery.PathFinder.find_spec(top, [cwd, *_sys_path()]) is None and not _builtin(top):
            raise TargetError(f"no module named {top!r} (looked in {cwd} and sys.path)")
        return
    path = target.name if os.path.isabs(target.name) else os.path.join(cwd, target.name)
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, "__main__.py")):
            raise TargetError(f"{target.name} is a directory without __main__.py: give the script inside it")
        return
    try:
        # A regular file only: python would wait forever on a FIFO and never
        # finish reading /dev/zero. The open proves it readable (root or not).
        open_regular(path).close()
    except FileRefused as exc:
        if exc.kind == "missing" and exc.reason == "no such file":
            raise TargetError(f"no such script: {target.name}") from None
        raise TargetError(f"cannot run {target.name}: {exc.reason}") from None
    if path.endswith((".py", ".pyw", ".pyc")):
        return
    if zipfile.is_zipfile(path):
        return
    # python runs any file of Python source, whatever its name (a `train` with a
    # shebang); look at no more of it than the linter would.
    try:
        source = read_capped(path, SOURCE_CAP)
        compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, FileRefused):
            raise TargetError(
                f"{target.name} has no .py suffix and is too large to check as a Python script ({exc.reason}); "
                "rename it to .py to run it anyway"
            ) from None
        raise TargetError(f"{target.name} is not a Python script ({type(exc).__name__})") from None


def _sys_path() -> list[str]:
    import sys

    return [p for p in sys.path if p]


def _builtin(name: str) -> bool:
    import sys

    return name in sys.builtin_module_names or importlib.machinery.FrozenImporter.find_spec(name) is not None
