"""Relays: a wrapper that re-raises or reports another process's, thread's or worker's error (issue 35 item 4).

The original error is the one to diagnose; the relay's line only says who handed it over. Each shape
below says how its line reads, what it names of the original (its class, where it ran) and where the
original's own traceback is: printed right after the relay's line (the next traceback the log holds,
under `Original Traceback`, between a pool's triple quotes, as the frames under a `ray::` line), or,
when the log cuts it, where to read it whole. The signs reader (knowledge/signs.py) names a cut
original through the relay that printed it; the relay pattern (patterns/classes8.py) and the answer's
next step use each shape's STEP.

An original printed whole is read as any traceback is (its exception line heads the answer); only an
original cut before its exception line, or not in the log at all, is told through its relay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Relay:
    key: str  # the shape (its named group in `line` for the ones that name where it ran)
    line: re.Pattern  # the relay's line (searched in the text after any rank prefix); `inner`: the original's class
    where: str  # where the original was raised, with `line`'s groups in braces
    step: str  # where the original is read whole, or how to have it raised where it happened


RELAYS = (
    Relay("worker", re.compile(r"\bCaught (?P<inner>\w+) in DataLoader worker process (?P<worker>\d+)"),
          "DataLoader worker process {worker}",
          "rerun with num_workers=0, so the dataset's error (its __getitem__, a decode, a path, the collate function) is "
          "raised in the main process with its own frames"),
    Relay("pin_device", re.compile(r"\bCaught (?P<inner>\w+) in pin memory thread for device (?P<pin_device>\d+)"),
          "the DataLoader's pin-memory thread (GPU {pin_device})",
          "rerun with pin_memory=False to see the error the pin-memory thread hit"),
    Relay("replica", re.compile(r"\bCaught (?P<inner>\w+) in replica (?P<replica>\d+) on device (?P<device>\d+)"),
          "DataParallel's replica {replica} (GPU {device})",
          "run the model on one GPU (CUDA_VISIBLE_DEVICES=0) to have it raised directly; an error only replicas 1 and up "
          "raise is usually a tensor created inside forward on a fixed device: create it on the input's device (x.device), "
          "or move to DistributedDataParallel (one process per GPU)"),
    # Ray's wrapper of a task's or an actor's exception, and an actor whose constructor raised
    Relay("task", re.compile(r"^(?:ray\.exceptions\.)?Ray\w*Error\((?P<inner>\w+)\): ray::(?P<task>[\w.]+)\(\) \(pid=(?P<pid>\d+)"
                             r"|died because of an error raised in its creation task, ray::(?P<actor>[\w.]+)\(\) \(pid=(?P<apid>\d+)"),
          "the Ray task or actor {task} (pid {pid})",
          "the task's or actor's own log on its node has the whole traceback: `ray logs worker --pid PID`, or "
          "/tmp/ray/session_latest/logs/ on that node"),
    # torch's distributed tests (MultiProcessTestCase) re-raise a child's failure with its traceback under the line
    Relay("process", re.compile(r"\bProcess (?P<process>\d+) exited with error code (?P<code>\d+) and exception:"),
          "the test's child process {process}",
          "the child's traceback follows this line in the test's output; run the test alone to read it whole"),
    # mp.spawn's join: the failed process's traceback follows the line
    Relay("spawned", re.compile(r"^-- Process (?P<spawned>\d+) terminated with the following error:"),
          "the process mp.spawn started as number {spawned}",
          "mp.spawn prints that process's whole traceback after this line; call the spawned function directly in one process "
          "(fn(0, *args)) to have it raised there"),
    # a process pool's worker (multiprocessing.pool, concurrent.futures, joblib's loky): its traceback is the text between
    # triple quotes under this line
    Relay("pool", re.compile(r"^(?:[A-Za-z_]\w*\.)*_?RemoteTraceback:\s*$"),
          "a process pool's worker",
          "the worker's traceback is the text between the triple quotes under this line; call the pooled function in the "
          "main process to have it raised directly"),
    # an old DataLoader's, dgl's and others' helpers: the child's traceback became the exception's message
    Relay("traceback", re.compile(r"^(?:[A-Za-z_]\w*\.)*(?P<inner>[A-Z]\w*(?:Error|Exception|Interrupt|Iteration|Exit)): Traceback \(most recent call last\):?\s*$"),
          "a worker or child process",
          "the child's traceback is the text after this line; call the child's function in the main process to have it raised directly"),
)
STEPS = {relay.key: relay.step for relay in RELAYS}
# Literal words one of which every relay's line holds: the searches above run only on those lines.
WORDS = ("Caught ", "ray::", "exited with error code", "-- Process ", "RemoteTraceback", "Traceback (most recent")
SPAN = 3  # lines from a relay's line to its original's first (a header, `Original Traceback`, a pool's quotes)


@dataclass(frozen=True)
class Relayed:
    """A relay seen in the log: its shape, its line, what it named of the original."""

    relay: Relay
    line: int
    inner: str  # the original's class, when the relay names it
    where: str  # the shape's WHERE with the names the line gave
    pid: str = ""

    def what(self) -> str:
        """'RuntimeError in DataParallel's replica 1 (GPU 1)', 'an exception in a process pool's worker'."""
        return f"{self.inner or 'an exception'} in {self.where}"

    def step(self) -> str:
        return self.relay.step.replace("PID", self.pid or "PID")


def relay_in(text: str, line: int) -> Optional[Relayed]:
    """The relay this line is, if it is one."""
    if not any(word in text for word in WORDS):
        return None
    for relay in RELAYS:
        m = relay.line.search(text)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        if relay.key == "task" and "actor" in groups:
            groups.update(task=groups["actor"], pid=groups["apid"])
        return Relayed(relay, line, groups.get("inner", ""), relay.where.format_map(_Missing(groups)), groups.get("pid", ""))
    return None


class _Missing(dict):
    """Format a shape's WHERE with the groups its line had; a group it lacked reads as '?'."""

    def __missing__(self, key: str) -> str:
        return "?"
