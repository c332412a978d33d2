"""torch.save, watched: the DDP wrapper (or its `module.`-prefixed state_dict)
saved as a checkpoint, and the same file saved by several ranks.

Who else saved a path is asked of the process group's own store (one counter
per path), so the rank that saves second knows at once, under torchrun as
under mp.spawn, without waiting for the others at exit.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import torch

from gpudoctor.hooks.facts import CheckpointSave
from gpudoctor.core.frames import caller_source, drop_own_frame
from gpudoctor.hooks.session import session

_KEY = "gpudoctor/torch.save/"
_saved_here: set[str] = set()


def _path(f: Any) -> str | None:
    if isinstance(f, (str, os.PathLike)):
        return os.path.abspath(os.fspath(f))
    name = getattr(f, "name", None)
    return os.path.abspath(name) if isinstance(name, str) and not name.startswith("<") else None


def _ddp_state_dict(obj: Any) -> str | None:
    """A state_dict whose every key starts with 'module.': what DDP.state_dict() returns."""
    if not isinstance(obj, Mapping) or not obj:
        return None
    keys = list(obj.keys())
    if all(isinstance(k, str) and k.startswith("module.") for k in keys) and any(
        isinstance(v, torch.Tensor) for v in obj.values()
    ):
        return keys[0]
    return None


def find_ddp(obj: Any) -> tuple[str, str, str | None] | None:
    """(where, "wrapper" | "state_dict", example key) for a DDP wrapper or its
    state_dict in what is being saved: the object itself or one level into it."""
    from torch.nn.parallel import DistributedDataParallel

    candidates: list[tuple[str, Any]] = [("obj", obj)]
    if isinstance(obj, Mapping):
        candidates += [(f"obj[{k!r}]", v) for k, v in list(obj.items())[:64]]
    elif isinstance(obj, (list, tuple)):
        candidates += [(f"obj[{i}]", v) for i, v in enumerate(obj[:64])]
    for where, value in candidates:
        if isinstance(value, DistributedDataParallel):
            return where, "wrapper", None
        key = _ddp_state_dict(value)
        if key:
            return where, "state_dict", key
    return None


# File systems one path names the same file on every node. On any other (ext4, xfs,
# tmpfs, overlay) the path is node-local: the same name on two nodes is two files.
NETWORK_FS = frozenset({
    "nfs", "nfs4", "lustre", "gpfs", "beegfs", "cifs", "smb3", "smbfs", "ceph", "fuse.ceph", "glusterfs",
    "fuse.glusterfs", "fuse.sshfs", "9p", "virtiofs", "wekafs", "fuse.juicefs", "juicefs", "panfs", "orangefs",
    "fuse.gcsfuse", "fuse.s3fs", "fuse.mountpoint-s3", "fuse.rclone", "fuse.blobfuse2", "afs", "ocfs2", "gfs2",
})  # fmt: skip


def fs_type(path: str, mounts: str) -> str:
    """The file system type of the mount holding `path`, from /proc/mounts text ("" unknown)."""
    best, kind = "", ""
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, parts[2]
    return kind


def save_scope(path: str, mounts: str, host: str) -> str:
    """Who shares this path: "" every node (a network file system, or unknown: judged as
    shared), else `host` alone (a node-local disk)."""
    kind = fs_type(path, mounts)
    return "" if not kind or kind in NETWORK_FS else host


def _scope(path: str) -> str:
    import socket

    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            mounts = f.read(1 << 20)
    except OSError:
        return ""
    return save_scope(path, mounts, socket.gethostname())


def _writers(path: str, scope: str) -> int | None:
    """How many ranks have saved this path (on this node, for a node-local one) so far,
    counted in the process group's store."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() <= 1:
        return None
    store = dist.distributed_c10d._get_default_store()
    first_time = path not in _saved_here
    _saved_here.add(path)
    return int(store.add(f"{_KEY}{scope}:{path}", 1 if first_time else 0))


def note_save(obj: Any, f: Any) -> None:
    import torch.distributed as dist

    path = _path(f)
    ddp = find_ddp(obj)
    world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
    writers = None
    scope = _scope(path) if path is not None and world > 1 else ""
    if path is not None and world > 1:
        try:
            writers = _writers(path, scope)
        except Exception:  # noqa: BLE001 - no store: the merged report still compares ranks
            writers = None
    if ddp is None and world <= 1:
        return
    session.record(
        CheckpointSave(
            rank=session.current_rank(),
            world_size=world,
            path=path,
            ddp_wrapper=ddp[0] if ddp else None,
            ddp_kind=ddp[1] if ddp else None,
            example_key=ddp[2] if ddp else None,
            writers=writers,
            source=caller_source(skip=2),
            scope=scope,
        )
    )


def install() -> None:
    original_save = torch.save

    @functools.wraps(original_save)
    def save(obj, f, *args, **kwargs):
        try:
            note_save(obj, f)
        except Exception:  # noqa: BLE001 - watching must never break a checkpoint
            pass
        try:
            return original_save(obj, f, *args, **kwargs)
        except BaseException as exc:
            drop_own_frame(exc)
            raise

    torch.save = save
    torch.serialization.save = save
