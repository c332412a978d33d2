"""Reading and writing the files a user names, bounded and never blocking.

Every command that reads a file the user gave (a lint source, a script for
`run`, a `check --facts` snapshot, a log for `diagnose`) goes through here, so
the same bad inputs get the same true one-line answers:

- only regular files are read: a FIFO (`mkfifo x.py`, `/dev/stdin` fed by a
  pipe) would block forever, a device (`/dev/zero`) never ends, a socket or a
  directory has no contents; each is refused, naming what it is;
- what is read is capped (`read_capped`): above the cap nothing is read at all;
- permission denied, a symlink loop, a missing file each say so (not an
  encoding hint, not "no such file" for a loop).

`open_regular` is the streaming form (no size cap), for logs read line by line.
Nothing here imports anything heavy; every failure is a `FileRefused`.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from typing import BinaryIO

MB = 1024 * 1024

# The caps, one per use; an environment variable overrides each (tests set
# small ones, a user with a really large generated file can raise one).
SOURCE_CAP = ("GPUDOCTOR_MAX_SOURCE_BYTES", 5 * MB)  # one lint source, one script `run` inspects
FACTS_CAP = ("GPUDOCTOR_MAX_FACTS_BYTES", 4 * MB)  # a `check --json` snapshot is ~20 KB
# Not bytes: the lines, `;` and `,` of one source `lint` parses (a syntax tree costs ~2.5 KB
# a statement; a 10,000-line module counts ~20,000).
PARSE_CAP = ("GPUDOCTOR_MAX_SOURCE_ITEMS", 200_000)
# A run folder's files (launch/rundir.py names them): its JSON (outcome.json, a rank's
# collectives, result, error, steps, timeline) is read whole up to this; a healthy one is
# under 2 MB (a rank's --trace timeline of 40,000 slices).
RUN_JSON_CAP = ("GPUDOCTOR_MAX_RUN_FILE_BYTES", 8 * MB)
# A rank's text (stacks, faulthandler's dump, its stderr): only the end is read.
RUN_TEXT_TAIL = 1 * MB
# What any number in an environment variable may be: a cap past this is not a cap.
_LARGEST = 1 << 62


class FileRefused(ValueError):
    """The file cannot be read (or written) as asked. `str()` is one line for the
    user, naming the path and what is wrong; `reason` is the same without the path."""

    def __init__(self, path: str, reason: str, kind: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.kind = kind  # missing | denied | loop | directory | not-regular | too-large | malformed | error


def cap(use: tuple[str, int]) -> int:
    """The byte cap for one use: its environment variable when set to a number, else the default."""
    name, default = use
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return min(value, _LARGEST) if value >= 0 else default


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO), not a regular file: reading it could wait forever for a writer"
    if stat.S_ISCHR(mode):
        return "a character device, not a regular file"
    if stat.S_ISBLK(mode):
        return "a block device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "not a regular file"


def _refused(path: str, exc: OSError) -> FileRefused:
    if exc.errno == errno.ENOENT:
        # A dangling symlink exists but leads nowhere: say which.
        if os.path.islink(path):
            return FileRefused(path, f"broken symbolic link (points to {os.readlink(path)}, which does not exist)", "missing")
        return FileRefused(path, "no such file", "missing")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileRefused(path, "permission denied (check the file's owner and mode: ls -l)", "denied")
    if exc.errno == errno.ELOOP:
        return FileRefused(path, "symbolic link loop (too many levels of symbolic links: ls -l to follow it)", "loop")
    if exc.errno == errno.EISDIR:
        return FileRefused(path, "a directory, not a file", "directory")
    if exc.errno == errno.ENOTDIR:
        return FileRefused(path, "a path component is not a directory", "missing")
    return FileRefused(path, f"cannot read ({exc.strerror or exc})", "error")


def _nul_name(path: str) -> FileRefused:  # os.stat's "embedded null byte"
    return FileRefused(path.replace("\x00", "\\x00"), "the name holds a NUL byte, which no file name can", "error")


def regular_stat(path: str) -> os.stat_result:
    """stat(path), raising FileRefused unless it is a regular file."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _refused(path, exc) from None
    except ValueError:  # os.stat's "embedded null byte"
        raise _nul_name(path) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "not-regular"
        through = f" (a link to {os.path.realpath(path)})" if os.path.islink(path) else ""
        raise FileRefused(path, file_kind(st.st_mode) + through, kind)
    return st


SYSTEM_FOLDERS = ("/proc", "/sys")  # their "regular" files are the kernel's: /proc/kmsg blocks, /proc/self/environ is secrets


def _system_file(path: str) -> bool:
    """Whether `path` leads (through links) into /proc or /sys. /dev holds no regular
    file but in /dev/shm, a real folder: its devices are refused as devices."""
    real = os.path.realpath(path)
    return any(real == s or real.startswith(s + os.sep) for s in SYSTEM_FOLDERS)


def open_regular(path: str) -> BinaryIO:
    """Open a regular file for reading, without blocking: checked before opening
    (opening a device can itself do something) and again on the open descriptor
    (the path may have been swapped in between). No size cap: for streaming."""
    regular_stat(path)
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat must not hang the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _refused(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(path, file_kind(mode), "not-regular")
        if _system_file(path):
            raise FileRefused(path, f"leads to {os.path.realpath(path)}, a file of the kernel's, not one to read", "not-regular")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str, use: tuple[str, int]) -> bytes:
    """A regular file's bytes, at most `cap(use)` of them: a larger file is refused
    before anything is read (kind "too-large"), naming its size and the cap."""
    limit = cap(use)
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise FileRefused(path, f"{_size(size)}, above the {_size(limit)} limit (set {use[0]} to raise it)", "too-large")
        try:
            data = _read_up_to(fh, limit + 1)  # the file may have grown since the stat
        except OSError as exc:
            raise _refused(path, exc) from None
    if len(data) > limit:
        raise FileRefused(path, f"more than the {_size(limit)} limit (set {use[0]} to raise it)", "too-large")
    return data


def _read_up_to(fh: BinaryIO, n: int) -> bytes:
    """At most n bytes, in pieces: read(n) with a huge n allocates n at once."""
    chunks, got = [], 0
    while got < n and (chunk := fh.read(min(n - got, 8 * MB))):
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_tail(path: str, limit: int = RUN_TEXT_TAIL) -> tuple[bytes, int]:
    """A regular file's last `limit` bytes and how many came before them (0: the
    whole file): for text whose end is what matters (a rank's stacks, its stderr)."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        skipped = max(0, size - limit)
        try:
            fh.seek(skipped)
            return fh.read(limit), skipped
        except OSError as exc:
            raise _refused(path, exc) from None


def read_json(path: str, use: tuple[str, int] = RUN_JSON_CAP) -> object:
    """A regular file's JSON, capped like read_capped; FileRefused (kind "malformed")
    for text that is not JSON, or nests deeper than the parser can follow."""
    import json

    data = read_capped(path, use)
    try:
        return json.loads(data)
    except RecursionError:
        raise FileRefused(path, "JSON nested too deeply to read", "malformed") from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise FileRefused(path, f"not valid JSON ({str(exc).splitlines()[0][:80]})", "malformed") from None


def _size(n: int) -> str:
    if n >= MB:
        return f"{n / MB:.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n} bytes"


# The one writer of the outputs a user names (`run --json FILE`, `run --trace FILE`,
# `report -o FILE`, `train-smoke --save FILE`): `check_writable` before any work starts,
# `write_output` at the end, both deciding by what is at the path now:
#   nothing, or a regular file   -> a new file beside it (0600), renamed over it at once;
#   a link to a regular file     -> the same, at the file the link leads to (the link stays);
#   a FIFO or a character/block device (`/dev/null`, `>(jq .)`) -> written in place, never
#                                   replaced (a rename would swap the device node for a file);
#   a directory, a dangling link, a socket -> refused (FileRefused), before any work.
# Internal run-folder files are written by launch/scratch.write_file instead.


def _output_kind(path: str) -> tuple[str, str]:
    """(what is at `path`, the path to write): "new", "regular", "in-place", or refused."""
    target = os.path.abspath(os.path.expanduser(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        if os.path.islink(target):
            raise FileRefused(path, f"broken symbolic link (points to {os.readlink(target)}, which does not exist)", "missing") from None
        parent = os.path.dirname(target)
        if not os.path.isdir(parent):
            what = "does not exist" if not os.path.exists(parent) else "is not a directory"
            raise FileRefused(path, f"directory {parent} {what}", "missing") from None
        return "new", target
    except OSError as exc:
        raise _refused(path, exc) from None
    except ValueError:
        raise _nul_name(path) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileRefused(path, "a directory: give a file name to write", "directory")
    if stat.S_ISSOCK(st.st_mode):
        raise FileRefused(path, "a socket, not a file: give a file name to write", "not-regular")
    if not stat.S_ISREG(st.st_mode):
        return "in-place", target  # /dev/null, a FIFO: written where it is, never renamed over
    if os.path.islink(target):
        real = os.path.realpath(target)
        # /dev/stdout redirected to a file: the shell holds that file open; replacing it
        # would lose what else goes there. Written in place, as `>` would.
        return ("in-place", target) if _through_system(target) else ("regular", real)
    return "regular", target


def _through_system(path: str) -> bool:
    """Whether `path` lies in /dev or /proc (/dev/stdout, /proc/self/fd/1)."""
    return any(path == s or path.startswith(s + os.sep) for s in ("/dev", "/proc"))


def check_writable(path: str) -> None:
    """Raise FileRefused unless `path` can be written as an output now: checked
    before the work starts, so a typo in an output path fails at once (exit 2),
    not after a whole run. Creates nothing that stays."""
    kind, target = _output_kind(path)
    if kind == "in-place":
        # A FIFO (`--json >(jq .)`) is not opened here: opening and closing its writing
        # end would end the reader's input. write_output never waits on it.
        return
    try:
        # os.access says yes to root even where nothing can be created (/proc,
        # a read-only mount): try the real thing, next to the target.
        with tempfile.NamedTemporaryFile(dir=os.path.dirname(target), prefix=".gpudoctor-probe-"):
            pass
    except OSError as exc:
        raise FileRefused(path, f"cannot create a file in {os.path.dirname(target)} ({exc.strerror or exc})", "denied") from None


def write_output(path: str, content: str | bytes) -> None:
    """Write an output the user named, by the rules above: never waiting on a pipe
    that nothing reads, never renaming over anything but a regular file. Raises
    OSError (a FileRefused is turned into one); `output_error` words it."""
    try:
        kind, target = _output_kind(path)
    except FileRefused as exc:
        raise OSError(errno.EINVAL, exc.reason) from None
    data = content.encode("utf-8") if isinstance(content, str) else content
    if kind == "in-place":
        _write_in_place(target, data)
    else:
        _replace(target, data)


def _write_in_place(target: str, data: bytes) -> None:
    # No O_CREAT, no O_TRUNC: the node is there and stays what it is. O_NONBLOCK: a FIFO
    # nothing reads is ENXIO at once; once open, it is written as any file.
    fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except (ImportError, OSError):
        pass
    try:
        view = memoryview(data)
        while view:  # a short write (a pipe, a signal) goes on; /dev/full raises ENOSPC
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _replace(target: str, data: bytes) -> None:
    tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{os.getpid()}.gpudoctor-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        # Looked at again just before the rename: something other than a regular file
        # put there meanwhile is never renamed over.
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise OSError(errno.EEXIST, f"{file_kind(mode)} appeared at the path while writing; not replaced")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def output_error(path: str, exc: OSError) -> str:
    """One line on why an output could not be written."""
    if exc.errno == errno.ENXIO:
        return f"{path} is a pipe (FIFO) that nothing reads"
    return no_space(exc, path) or f"{path}: {exc.strerror or exc}"


def no_space(exc: BaseException, path: str) -> str:
    """'no space left on <path>' for a full disk or quota (ENOSPC, EDQUOT), else ''."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return f"no space left on {path}"
    return ""
