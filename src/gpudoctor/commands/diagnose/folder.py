"""A job's run folder: gpudoctor's own (outcome.json: the live verdict, found
again by hang/folder.py), or per-rank logs, torchrun error files, Flight Recorder dumps.

torchrun's @record writes one error file per failed worker
(.../attempt_0/<local_rank>/error.json):
    {"message": {"message": "RuntimeError: ...",
                 "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1700000000"}}}
The earliest timestamp is the first failure: the root-cause rank.

A run folder is often someone else's (downloaded, sent by a colleague): it is walked to
MAX_FILES files and MAX_DEPTH levels, links followed once each, and everything not read is
kept with its reason for the report; dumps are read as plain data only (no code runs), and
a file whose contents do not have the shape they claim is `Malformed`, naming what is wrong.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from gpudoctor.core.user_file import open_regular

if TYPE_CHECKING:
    from gpudoctor.hang.folder import FolderVerdict

def gpudoctor_verdict(folder: str) -> FolderVerdict | None:
    """The verdict `gpudoctor run --nproc`, `allreduce` or `train-smoke` gave on the
    job that left `folder` (hang.folder.FolderVerdict), or None for any other folder."""
    from gpudoctor.hang.folder import folder_verdict

    return folder_verdict(folder)


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


@dataclass
class Walk:
    """What a folder holds for diagnose: the files to read, and what was left
    unread and why (said in the report, never silently dropped)."""

    files: list[str]
    not_read: list[tuple[str, str]]  # (path relative to the folder, why)
    past_limit: int = 0  # files seen after MAX_FILES (counted up to MAX_COUNTED)
    hidden: int = 0  # hidden entries (.git, .ipynb_checkpoints) skipped


MAX_COUNTED = 10_000  # how far past the file limit the walk still counts what it leaves


def walk(folder: str) -> Walk:
    """Regular files under `folder`, sorted, hidden entries skipped, at most
    MAX_FILES of them and MAX_DEPTH levels down. Symbolic links are followed,
    each file and folder once (a link loop or a second link to the same file ends there)."""
    out = Walk([], [])
    seen: set[tuple[int, int]] = set()
    try:
        st = os.stat(folder)
        seen.add((st.st_dev, st.st_ino))
    except OSError:
        pass
    todo: list[tuple[str, int]] = [(folder, 0)]
    while todo:
        here, depth = todo.pop()
        try:
            names = sorted(os.listdir(here))
        except OSError as exc:
            out.not_read.append((os.path.relpath(here, folder) + os.sep, f"folder not readable ({exc.strerror})"))
            continue
        subdirs = []
        for name in names:
            if name.startswith("."):
                out.hidden += 1
                continue
            path = os.path.join(here, name)
            rel = os.path.relpath(path, folder)
            try:
                st = os.stat(path)  # follows a link
            except OSError as exc:
                why = "broken symbolic link" if os.path.islink(path) else f"cannot be read ({exc.strerror})"
                out.not_read.append((rel, why))
                continue
            if os.path.islink(path) and system_path(os.path.realpath(path)):
                out.not_read.append((rel, f"a link to {os.path.realpath(path)}, not followed (a system path, not a log)"))
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue  # a second link to a file or folder already read (or a link loop)
            seen.add(key)
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > MAX_DEPTH:
                    out.not_read.append((rel + os.sep, f"deeper than {MAX_DEPTH} levels"))
                else:
                    subdirs.append(path)
            elif not stat.S_ISREG(st.st_mode):
                out.not_read.append((rel, "not a regular file (a pipe, a device or a socket)"))
            elif len(out.files) >= MAX_FILES:
                out.past_limit += 1
                if out.past_limit >= MAX_COUNTED:
                    return out
            else:
                out.files.append(path)
        # depth first, in name order: the stack takes them last to first
        todo.extend((d, depth + 1) for d in reversed(subdirs))
    return out


NUMBER = re.compile(r"[0-9]{1,18}")  # ASCII digits only ("²".isdigit() is true; int("²") raises)


def small_int(text: str) -> Optional[int]:
    """`text` as a number when it is one of at most 18 ASCII digits, else None."""
    return int(text) if NUMBER.fullmatch(text) else None


SYSTEM = ("/proc", "/sys", "/dev")  # a link there is no log: /proc/kmsg blocks, /proc/self/environ is secrets


def system_path(real: str) -> bool:
    return real == os.sep or any(real == s or real.startswith(s + os.sep) for s in SYSTEM)


def rank_of(path: str) -> Optional[int]:
    """rank3.stderr, worker-3.log -> 3; torchrun's .../attempt_0/3/error.json -> 3."""
    m = RANK_IN_NAME.search(os.path.basename(path))
    if m:
        return small_int(m.group(1))
    return small_int(os.path.basename(os.path.dirname(path)))


class Malformed(ValueError):
    """A file that is what it looks like (an error file, a dump) but whose contents do not
    have that shape; `str()` says what is wrong, without the path."""


def read_error_file(path: str) -> Optional[ErrorFile]:
    """A torchelastic error file, or None when `path` is not one. Malformed when it
    is JSON shaped like one but its fields are not text (or it nests too deeply to read)."""
    if not path.endswith(".json") or os.path.getsize(path) > MAX_ERROR_FILE:
        return None
    try:
        with open_regular(path) as f:
            data = json.loads(f.read(MAX_ERROR_FILE + 1).decode("utf-8", errors="replace"))
    except RecursionError:
        raise Malformed("JSON nested too deeply to read") from None
    except (OSError, ValueError):
        return None
    msg = data.get("message") if isinstance(data, dict) else None
    if isinstance(msg, str):  # the C++ variant: {"message": "...", "errorTraits": {...}}
        return ErrorFile(path, rank_of(path), None, msg, "")
    if not isinstance(msg, dict) or "message" not in msg:
        return None
    extra = msg.get("extraInfo") or {}
    if not isinstance(extra, dict):
        raise Malformed('"extraInfo" is not a mapping')
    text, callstack, stamp = msg.get("message"), extra.get("py_callstack", ""), extra.get("timestamp", "")
    if not isinstance(text, str) or not isinstance(callstack, str):
        raise Malformed('"message" and "py_callstack" must be text')
    when = small_int(stamp) if isinstance(stamp, str) else stamp if type(stamp) is int and 0 <= stamp < 1 << 62 else None
    return ErrorFile(path, rank_of(path), when, text, callstack)


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
    from gpudoctor.knowledge.story import Diagnosis

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
        with open_regular(path) as f:
            return b"\x00" in f.read(8192)
    except (OSError, ValueError):
        return True


def read_trace(path: str) -> Optional[list]:
    """A Flight Recorder dump file (pickle or JSON; the rank ends its name), or None
    when the file is not one. RefusedPickle for a pickle that names something to
    import (never loaded); Malformed for a dump whose contents have another shape."""
    from gpudoctor.knowledge.collectives import MalformedDump, read_fr_file
    from gpudoctor.knowledge.plain_pickle import RefusedPickle

    # Only files named like a dump (TORCH_FR_DUMP_TEMP_FILE + rank: nccl_trace_rank_3) that start
    # like a pickle or JSON. A pickle is read as plain data only (knowledge/plain_pickle.py).
    if os.path.getsize(path) > MAX_ERROR_FILE or not TRACE_NAME.search(os.path.basename(path)):
        return None
    with open_regular(path) as f:
        if f.read(1) not in (b"\x80", b"{"):
            return None
    try:
        return read_fr_file(path)
    except RefusedPickle as exc:
        raise RefusedPickle(str(exc).removeprefix(f"{path}: ")) from None
    except MalformedDump as exc:
        raise Malformed(str(exc).removeprefix(f"{path}: ")) from None
    except (ValueError, OSError, EOFError):
        return None


def starts_with(path: str, magic: bytes) -> bool:
    try:
        with open_regular(path) as f:
            return f.read(len(magic)) == magic
    except (OSError, ValueError):
        return False
