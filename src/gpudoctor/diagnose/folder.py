"""A job's run folder: per-rank logs, torchrun error files, Flight Recorder dumps.

torchrun's @record writes one error file per failed worker
(.../attempt_0/<local_rank>/error.json):
    {"message": {"message": "RuntimeError: ...",
                 "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1700000000"}}}
The earliest timestamp is the first failure: the root-cause rank.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Optional

MAX_FILES = 2000
MAX_DEPTH = 6
MAX_ERROR_FILE = 16 << 20
TRACE_NAME = re.compile(r"\d+(?:\.(?:json|pkl|pickle))?$")
RANK_IN_NAME = re.compile(r"(?:rank|worker|proc|process)[_\-.]?(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class ErrorFile:
    path: str
    rank: Optional[int]
    timestamp: Optional[int]
    message: str
    callstack: str


def walk(folder: str) -> list[str]:
    """Regular files under `folder`, sorted, hidden entries skipped."""
    out: list[str] = []
    base = folder.rstrip(os.sep).count(os.sep)
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and root.count(os.sep) - base < MAX_DEPTH)
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                out.append(path)
            if len(out) >= MAX_FILES:
                return out
    return out


def rank_of(path: str) -> Optional[int]:
    """rank3.stderr, worker-3.log -> 3; torchrun's .../attempt_0/3/error.json -> 3."""
    m = RANK_IN_NAME.search(os.path.basename(path))
    if m:
        return int(m.group(1))
    parent = os.path.basename(os.path.dirname(path))
    return int(parent) if parent.isdigit() else None


def read_error_file(path: str) -> Optional[ErrorFile]:
    """A torchelastic error file, or None when `path` is not one."""
    if not path.endswith(".json") or os.path.getsize(path) > MAX_ERROR_FILE:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    msg = data.get("message") if isinstance(data, dict) else None
    if isinstance(msg, str):  # the C++ variant: {"message": "...", "errorTraits": {...}}
        return ErrorFile(path, rank_of(path), None, msg, "")
    if not isinstance(msg, dict) or "message" not in msg:
        return None
    extra = msg.get("extraInfo") or {}
    stamp = str(extra.get("timestamp", ""))
    return ErrorFile(
        path,
        rank_of(path),
        int(stamp) if stamp.isdigit() else None,
        str(msg.get("message", "")),
        str(extra.get("py_callstack", "")),
    )


def first_failure(errors: list[ErrorFile]) -> Optional[ErrorFile]:
    """The earliest error file. Its timestamp counts whole seconds, and the rank that
    failed and the peers that lost it usually fail within one: then a rank whose
    error is a failure of its own beats one that only reports a lost peer, and the
    file written first (its mtime, finer than seconds) beats the later ones."""
    dated = [e for e in errors if e.timestamp is not None]
    if dated:
        return min(dated, key=lambda e: (e.timestamp, not own_failure(e), mtime(e.path), e.rank if e.rank is not None else 1 << 30))
    return errors[0] if errors else None


def own_failure(err: ErrorFile) -> bool:
    """Whether the error file's exception is a cause, not a consequence of another rank's."""
    from gpudoctor.knowledge.diagnosis import Diagnosis

    d = Diagnosis()
    d.feed([err.message, *err.callstack.splitlines()])
    return d.has_cause() or not d.hits  # unknown to the patterns: the rank's own exception


def mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return float("inf")


def looks_binary(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return b"\x00" in f.read(8192)
    except OSError:
        return True


def read_trace(path: str) -> Optional[list]:
    """A Flight Recorder dump file (pickle or JSON; the rank ends its name), or None."""
    from gpudoctor.knowledge.collectives import read_fr_file

    # Only files named like a dump (TORCH_FR_DUMP_TEMP_FILE + rank: nccl_trace_rank_3) that start
    # like a pickle or JSON: a run folder can hold checkpoints and other pickles, never unpickled here.
    if os.path.getsize(path) > MAX_ERROR_FILE or not TRACE_NAME.search(os.path.basename(path)):
        return None
    with open(path, "rb") as f:
        if f.read(1) not in (b"\x80", b"{"):
            return None
    try:
        return read_fr_file(path)
    except (ValueError, OSError, EOFError):
        return None
