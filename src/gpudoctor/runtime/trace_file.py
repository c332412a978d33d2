"""Writing `run --trace FILE`: readable by its owner only, never through a link
someone left at FILE's name, never into a file another process is writing."""

from __future__ import annotations

import os


def write_private(path: str, text: str) -> str | None:
    """Write `text` to `path` (mode 0600); a one-line problem instead of raising.

    The text goes to a new file beside `path` (O_CREAT | O_EXCL | O_NOFOLLOW: not
    an existing file, not a symlink), which then replaces `path` itself: a symlink
    at `path` is replaced, not followed."""
    tmp = f"{path}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise
    except OSError as exc:
        return f"gpudoctor run: could not write the trace {path}: {exc.strerror or exc}"
    return None
