"""What a rank started by the supervisor leaves for it: its return value or its
exception, each a frozen dataclass written through the one codec
(probe/codec.encode, schema-versioned) and read back the same way. The return
value is the command's own dataclass (allreduce's SweepResult, train-smoke's
RankReport); the command names it to the launcher, which reads it back as that."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, TypeVar

from gpudoctor.core.codec import decode, encode

T = TypeVar("T")


@dataclass(frozen=True)
class RankError:
    """The exception a rank's function raised."""

    type: str  # the exception's class name
    message: str
    traceback: str  # its last 4000 characters


def write_contract(path: str, value: Any) -> None:
    """Write atomically: the supervisor never reads half a file."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as fh:
        json.dump(encode(value), fh, default=str)
    os.replace(tmp, path)


def read_contract(cls: type[T], path: str) -> T | None:
    """The contract in `path`, or None when there is none or it cannot be read
    (a rank killed mid-write, or written by another gpudoctor version)."""
    from gpudoctor.core.user_file import read_json

    try:
        return decode(cls, read_json(path), os.path.basename(path))
    except (OSError, ValueError, RecursionError):  # SnapshotError and FileRefused are ValueErrors
        return None
