"""Writing `run --trace FILE`: readable by its owner only, never through a link
someone left at FILE's name, never into a file another process is writing."""

from __future__ import annotations

from gpudoctor.launch.scratch import write_file


def write_private(path: str, text: str) -> str | None:
    """Write `text` to `path` (mode 0600, launch/scratch.write_file: a new file beside
    it, never a link, then renamed over it); a one-line problem instead of raising."""
    try:
        write_file(path, text)
    except OSError as exc:
        return f"gpudoctor run: could not write the trace {path}: {exc.strerror or exc}"
    return None
