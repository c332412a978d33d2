"""The `[tool.gpudoctor.lint]` section of a project's pyproject.toml:

    [tool.gpudoctor.lint]
    select = ["collective-under-rank-condition", "ddp-forward-on-one-rank"]
    extend-select = ["spawn-num-workers"]   # run beside the selected (or default) rules
    ignore = ["dataparallel"]
    exclude = ["third_party/*", "*_pb2.py"]
    fail-on = "error"      # "error" (default), "warning" or "never"

The file is found from the current directory upwards (the first
pyproject.toml holding the section wins, as other linters do). Command-line
options win over the file. A bad section is a one-line `ConfigError`."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass

KEYS = {"select", "extend-select", "ignore", "exclude", "fail-on", "exit-zero"}
FAIL_ON = ("error", "warning", "never")
MAX_BYTES = 1 << 20
# The section's header, found without a TOML reader (to tell "no section" from "cannot read it").
_SECTION = re.compile(rb"^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*gpudoctor\b", re.MULTILINE)


class ConfigError(ValueError):
    """The section cannot be used; the message is one line."""


@dataclass(frozen=True)
class LintConfig:
    path: str = ""  # the pyproject.toml read; "" when none
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    fail_on: str = ""  # "" when the file does not say
    extend_select: tuple[str, ...] = ()

    def excluded(self, path: str) -> bool:
        """`path` matches an `exclude` pattern (relative to the pyproject's folder)."""
        if not self.exclude:
            return False
        base = os.path.dirname(self.path) or "."
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base)).replace(os.sep, "/")
        parts = rel.split("/")
        return any(
            fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(os.path.basename(rel), p)
            or any(fnmatch.fnmatch("/".join(parts[: i + 1]), p.rstrip("/")) for i in range(len(parts) - 1))
            for p in self.exclude
        )


def find(start: str = ".") -> LintConfig:
    """The nearest pyproject.toml above `start` with a [tool.gpudoctor.lint] section."""
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            found = load(candidate)
            if found is not None:
                return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return LintConfig()
        folder = parent


def load(path: str) -> LintConfig | None:
    """The section of one pyproject.toml, or None when it has none."""
    import importlib

    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES} bytes, not read")
    if b"gpudoctor" not in data:
        return None
    try:
        tomllib = importlib.import_module("tomllib")  # Python >= 3.11
    except ImportError:
        try:
            tomllib = importlib.import_module("tomli")  # Python 3.10: a declared dependency there
        except ImportError:
            # Never ignore the section in silence: that lints with settings the user did not choose.
            if _SECTION.search(data) is None:
                return None
            raise ConfigError(
                f"{path}: [tool.gpudoctor.lint] cannot be read: this Python has no tomllib and tomli "
                "is not installed (pip install tomli), or pass --no-config"
            ) from None
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {str(exc).splitlines()[0]}") from None
    except RecursionError:  # an array nested thousands deep
        raise ConfigError(f"{path}: not valid TOML: nested too deeply to read") from None
    tool = doc.get("tool", {})
    tables = tool.get("gpudoctor", {}) if isinstance(tool, dict) else None
    if not isinstance(tables, dict):  # `[tool] gpudoctor = 5`
        raise ConfigError(f"{path}: [tool.gpudoctor] must be a table")
    section = tables.get("lint")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.gpudoctor.lint] must be a table")
    unknown = sorted(set(section) - KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} in [tool.gpudoctor.lint] (known: {', '.join(sorted(KEYS))})")
    lists = {}
    for key in ("select", "extend-select", "ignore", "exclude"):
        value = section.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.gpudoctor.lint] {key} must be a list of strings")
        lists[key] = tuple(value)
    fail_on = section.get("fail-on", "")
    if section.get("exit-zero") is True:
        fail_on = "never"
    if fail_on and fail_on not in FAIL_ON:
        raise ConfigError(f"{path}: [tool.gpudoctor.lint] fail-on must be one of {', '.join(FAIL_ON)}")
    return LintConfig(path, lists["select"], lists["ignore"], lists["exclude"], str(fail_on), lists["extend-select"])
