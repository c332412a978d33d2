"""What the user pointed `diagnose` at: a file, standard input, or a folder.
Bad input is an `InputError` with one line to show (the CLI turns it into exit 2)."""

from __future__ import annotations

import importlib
import io
import os
from dataclasses import dataclass
from typing import BinaryIO

from gpudoctor.core.usage import MissingPathError, UsageError
from gpudoctor.core.user_file import FileRefused, open_regular, regular_stat


class InputError(UsageError):
    """A path that cannot be diagnosed: missing, unreadable, binary, a device."""


class MissingLog(InputError, MissingPathError):
    """No file of that name at all (a dangling link is an InputError only)."""


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
        raise (InputError if os.path.lexists(path) else MissingLog)(str(exc)) from None
    if not os.access(path, os.R_OK):
        raise InputError(f"cannot read {path}: permission denied")
    return Target("file", path)


# Compressed logs, told by their first bytes (users download rank logs as .gz, .bz2, .xz, .zst).
MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


class NotReadable(ValueError):
    """A log that cannot be read here; `str()` says why, without the path."""


def compression_of(head: bytes) -> str:
    return next((name for magic, name in MAGIC if head.startswith(magic)), "")


def open_log(path: str) -> BinaryIO | Salvaged:
    """A log file opened for streaming: a regular file only (user_file.open_regular), its
    bytes decompressed as they are read when it is gzip, bzip2, xz or zstd. NotReadable
    for zstd without a zstd module; FileRefused for what is no regular file."""
    return decompressed(open_regular(path))


def decompressed(raw: BinaryIO) -> BinaryIO | Salvaged:
    """`raw` (a buffered stream: a file, standard input), decompressed as it is read when
    its first bytes say it is compressed, else itself."""
    try:
        peek = getattr(raw, "peek", None)  # a buffered stream shows its first bytes without taking them
        kind = compression_of(peek(8)[:8]) if peek is not None else ""
        if not kind:
            return raw
        if kind == "gzip":
            import gzip

            return Salvaged(gzip.GzipFile(fileobj=raw))
        if kind == "bzip2":
            import bz2

            return Salvaged(bz2.BZ2File(raw))
        if kind == "xz":
            import lzma

            return Salvaged(lzma.LZMAFile(raw))
        # Python 3.14's standard library, or the zstandard package: neither is there for every
        # Python the type checker reads this for, so each is imported by name.
        try:
            return importlib.import_module("compression.zstd").ZstdFile(raw)
        except ImportError:
            pass
        try:
            return importlib.import_module("zstandard").ZstdDecompressor().stream_reader(raw)
        except ImportError:
            raise NotReadable(
                "zstd-compressed, and this Python has no zstd module (Python 3.14 has one; or pip install zstandard): "
                "decompress it first (zstd -d FILE)"
            ) from None
    except BaseException:
        raw.close()
        raise


class DamagedArchive(OSError):
    """A compressed log that ends early or holds bad data."""


class Salvaged:
    """A decompressing stream read in small pieces, so that an archive cut short (a
    download that stopped) gives what it holds before the damage, then ends: `error`
    then says why, for the caller to say the file was read only in part."""

    PIECE = 64 << 10
    # What is decompressed at most: a 1.5 MB .xz can expand to 10 GiB of nothing. Past it the
    # log is "read only in part", as for a damaged archive.
    LIMIT = 1 << 30

    def __init__(self, stream: io.BufferedIOBase | BinaryIO) -> None:
        self.stream = stream
        self.error: DamagedArchive | None = None
        self.total = 0

    def read(self, n: int) -> bytes:
        parts, got = [], 0
        if self.total >= self.LIMIT and self.error is None:
            self.error = DamagedArchive(f"decompressed to the {self.LIMIT >> 30} GiB limit; the rest was not read")
        n = min(n, self.LIMIT - self.total)
        while got < n and self.error is None:
            try:
                piece = self.stream.read(min(n - got, self.PIECE))
            except Exception as exc:  # noqa: BLE001 - OSError, EOFError, lzma.LZMAError: the archive is damaged
                self.error = DamagedArchive(str(exc)[:200] or type(exc).__name__)
                break
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        self.total += got
        return b"".join(parts)

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> Salvaged:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
