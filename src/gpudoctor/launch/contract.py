"""What crosses between the supervisor and a rank it starts, each a frozen
dataclass written through the one codec (core/codec.encode, schema-versioned) and
read back the same way: the rank's options on the way in (allreduce's Sweep,
train-smoke's SmokeConfig), its return value or its exception on the way out. The
return value is the command's own dataclass (allreduce's SweepResult, train-smoke's
RankReport); the command names it to the launcher, which reads it back as that."""

from __future__ import annotations

import importlib
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


def write_config(path: str, config: Any) -> str:
    """Write a rank function's options; return what `read_config` needs to read them
    back as their type ("module:Class"). A plain dict (a test's tiny rank function)
    crosses as it is, and "" says so."""
    write_contract(path, config)
    if isinstance(config, dict):
        return ""
    cls = type(config)
    return f"{cls.__module__}:{cls.__qualname__}"


def read_config(path: str, config_type: str) -> Any:
    """The options `write_config` wrote, as the typed object (SnapshotError, a
    ValueError, if they do not fit it: a rank of another gpudoctor version)."""
    with open(path) as fh:
        payload = json.load(fh)
    if not config_type:
        return payload["data"]
    module_name, _, name = config_type.partition(":")
    return decode(getattr(importlib.import_module(module_name), name), payload, os.path.basename(path))
