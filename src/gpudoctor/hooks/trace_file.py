"""Writing `run --trace FILE`: through the one writer of the outputs a user names
(core/user_file.write_output: a regular file replaced at once with a private one,
a device or FIFO written in place, never renamed over)."""

from __future__ import annotations

from gpudoctor.core.user_file import output_error, write_output


def write_private(path: str, text: str) -> str | None:
    """Write `text` to `path`; a one-line problem instead of raising."""
    try:
        write_output(path, text)
    except OSError as exc:
        return f"gpudoctor run: could not write the trace: {output_error(path, exc)}"
    return None
