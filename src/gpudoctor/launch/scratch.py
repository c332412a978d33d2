"""The folders and files gpudoctor makes for itself (not the user's outputs):
private, never through a link another user planted.

Most of its folders are `tempfile.mkdtemp`'s (a random name, mode 0700). A few
must be found again by every local rank of a torchrun/SLURM job without a word
between them, so their names are predictable: `/tmp/gpudoctor-run-<job>-<port>`,
`/tmp/gpudoctor-smoke-<job>`. In a /tmp that every user shares, another user
can create that name first, as a link to the victim's files or as a folder of
their own. So such a folder is made 0700 and, when it is already there, used
only when it is a real folder (not a link), owned by us and closed to others;
and the job's id in its name is reduced to a plain word (no '/', no '..').
No torch.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile

from gpudoctor.catalog.findings.launch import TEMP_FOLDER_REFUSED
from gpudoctor.core.findings import Finding
from gpudoctor.core.user_file import no_space

ID_LIMIT = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class FolderRefused(OSError):
    """A folder gpudoctor would use is not safely ours; str() is one line naming it."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path} {reason}")
        self.path, self.reason = path, reason


def safe_id(text: str) -> str:
    """A launcher's id as one plain word for a file name: what is not a letter,
    digit, '_', '-' or '.' becomes '_', no leading dot (so never '.' or '..')."""
    word = _UNSAFE.sub("_", text)[:ID_LIMIT].lstrip(".")
    return word or "job"


def shared_path(kind: str, *ids: str) -> str:
    """/tmp/gpudoctor-<kind>-<id>-<id>: the name every local rank of one job computes alike."""
    return os.path.join(tempfile.gettempdir(), "-".join(["gpudoctor", kind, *(safe_id(i) for i in ids)]))


def private_folder(path: str) -> bool:
    """Make `path` a folder only this user can enter (0700), or accept the one
    there if it is a plain folder, owned by this user and closed to others.
    True when this call created it. Raises FolderRefused otherwise (a link, a
    file, someone else's folder, one others can write to)."""
    try:
        os.mkdir(path, 0o700)
        return True
    except FileExistsError:
        pass
    except OSError as exc:
        raise FolderRefused(path, f"cannot be created ({no_space(exc, path) or exc.strerror or exc})") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise FolderRefused(path, f"cannot be examined ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise FolderRefused(path, f"is a symbolic link (to {_link_target(path)}), not a folder gpudoctor made")
    if not stat.S_ISDIR(st.st_mode):
        raise FolderRefused(path, "is already there and is not a folder")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise FolderRefused(path, f"belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        raise FolderRefused(path, f"is open to other users (mode {stat.S_IMODE(st.st_mode):o}, not 700)")
    return False


def _link_target(path: str) -> str:
    try:
        return ascii(os.readlink(path))  # a name another user chose: never raw on a terminal
    except OSError:
        return "?"


def private_fallback(kind: str) -> str:
    """A fresh private folder with a random name, for when the shared one is refused."""
    return tempfile.mkdtemp(prefix=f"gpudoctor-{kind}-")


def write_file(path: str, text: str) -> None:
    """Replace `path` with `text` at once (readers see the old or the new file,
    never half of one). The temporary file is created anew (O_EXCL) and never
    through a link (O_NOFOLLOW); the rename replaces a link at `path` itself,
    never the file it points to."""
    tmp = f"{path}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:  # left by a process of ours that died mid-write, with our pid before
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def temp_folder_refused(exc: FolderRefused, used: str, rerun: str) -> Finding:
    evidence = {"folder": exc.path, "problem": exc.reason, "used instead": used}
    return TEMP_FOLDER_REFUSED(evidence=evidence, path=exc.path, reason=exc.reason, rerun=rerun)
