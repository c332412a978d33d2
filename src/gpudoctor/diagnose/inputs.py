"""What the user pointed `diagnose` at: a file, standard input, or a folder.
Bad input is an `InputError` with one line to show (the CLI turns it into exit 2)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gpudoctor.user_file import FileRefused, regular_stat


class InputError(ValueError):
    """A path that cannot be diagnosed: missing, unreadable, binary, a device."""


@dataclass(frozen=True)
class Target:
    kind: str  # "stdin" | "file" | "folder" | "text" (a str given to gpudoctor.diagnose())
    path: str


def resolve(path: str) -> Target:
    if path == "-":
        return Target("stdin", "-")
    try:
        regular_stat(path)  # the same refusals as lint, run and check --facts
    except FileRefused as exc:
        if exc.kind == "directory":
            return Target("folder", path)
        raise InputError(str(exc)) from None
    if not os.access(path, os.R_OK):
        raise InputError(f"cannot read {path}: permission denied")
    return Target("file", path)
