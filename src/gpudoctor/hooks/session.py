"""What this process is within a `gpudoctor run`, and what its hooks saw.

`gpudoctor run` talks to the processes it watches through environment
variables, so that the ranks of `--nproc`, torchrun's ranks and the children of
`mp.spawn` (which inherit the environment) all know what to do:

    GPUDOCTOR_RUN=1                 the hooks are wanted (set by runtime.main)
    GPUDOCTOR_RUN_JSON=FILE         the top process writes the merged report there
    GPUDOCTOR_RUN_STRICT=1          a warning turns exit code 0 into 1
    GPUDOCTOR_RUN_TIMEOUT=S         the top process stops the script after S seconds
    GPUDOCTOR_RUN_FRAGMENTS=DIR     every process but the top leaves its facts there
    GPUDOCTOR_RUN_SUPERVISED=1      ranks of `gpudoctor run --nproc`: the supervisor
                                    prefixes their stderr and writes the JSON
    GPUDOCTOR_RUN_TARGET=train.py   what runs, for the report's header

No torch import here: the spawned-child bootstrap reads this module first.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from gpudoctor.launch import rundir

ENV_ON = rundir.RUN_ENV
ENV_JSON = rundir.RUN_JSON_ENV
ENV_STRICT = rundir.RUN_STRICT_ENV
ENV_TIMEOUT = rundir.RUN_TIMEOUT_ENV
ENV_FRAGMENTS = rundir.RUN_FRAGMENTS_ENV
ENV_SUPERVISED = rundir.RUN_SUPERVISED_ENV
ENV_TARGET = rundir.RUN_TARGET_ENV

# Roles: the process `gpudoctor run` started ("top"), a rank of `--nproc`
# ("rank"), or a process the script started with multiprocessing's spawn ("child").
TOP, RANK, CHILD = "top", "rank", "child"


@dataclass
class Session:
    role: str = TOP
    rank: int | None = None  # from init_process_group, else RANK, else mp.spawn's index
    world_size: int | None = None
    spawn_index: int | None = None  # set in a process started by torch.multiprocessing.spawn
    facts: list[Any] = field(default_factory=list)
    # Hooks that keep running tallies (per sampler, per loader) turn them into facts at the end.
    collectors: list[Callable[[], list[Any]]] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)  # a forked copy of this process is not this session
    fragments_dir: str | None = None  # the directory this (top) process made for its children's facts
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, fact: Any) -> None:
        with self._lock:
            self.facts.append(fact)

    def all_facts(self) -> list[Any]:
        out = list(self.facts)
        for collect in self.collectors:
            try:
                out += collect()
            except Exception:  # noqa: BLE001 - a broken tally must not lose the other facts
                pass
        return out

    def current_rank(self) -> int | None:
        if self.rank is not None:
            return self.rank
        env = os.environ.get("RANK", "")
        if env.isdigit():
            return int(env)
        return self.spawn_index

    def label(self) -> str:
        rank = self.current_rank()
        return f"rank {rank}" if rank is not None else ""


session = Session()


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")
