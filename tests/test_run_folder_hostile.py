"""A run folder handed over by someone else (issue 39, high 1 and mediums 3, 8): each
file of it that gpudoctor reads, replaced by a link to /dev/zero, a FIFO no one
writes, a huge (sparse) file and JSON nested 100,000 deep. `diagnose DIR` answers
each in bounded time and memory (a child under a 2 GB address-space limit and a
timeout), says what it did not read, and never raises."""

import json
import os
import resource
import subprocess
import sys

import pytest

from gpudoctor.launch import rundir
from gpudoctor.launch.contract import RankError
from gpudoctor.launch.supervisor import LaunchResult, OutcomeUnreadable, RankOutcome, read_outcome, write_outcome

FILES = ["rank0.stacks.txt", "rank0.collectives.json", "rank0.current", "rank0.progress", "rank1.fatal.txt", "outcome.json"]
KINDS = ["link-to-dev-zero", "fifo", "huge", "deep"]
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = 300 << 20  # sparse: costs no disk
ANSWER_S = 60
# Run in a child: a reader that followed /dev/zero would grow ~700 MB/s; this stops it at 2 GB.
CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import gpudoctor
out = []
for path in sys.argv[1:]:
    report = gpudoctor.diagnose(path=path)
    out.append({"ids": [f.id for f in report.findings], "not_read": report.data.get("not_read", []),
                "failed": report.failed(False), "title": report.findings[0].title})
print(json.dumps(out))
"""


def folder(tmp_path, name="run"):
    run = tmp_path / name
    run.mkdir()
    ranks = (
        RankOutcome(0, "stopped", -15, "SIGTERM", "joined", 3, None, ("waiting",), "", None, None),
        RankOutcome(1, "raised", 1, None, "joined", 2, RankError("ValueError", "bad batch", "Traceback ..."),
                    ("ValueError: bad batch",), "", None, 1.5),
    )  # fmt: skip
    write_outcome(LaunchResult(ranks, False, False, 4.2, str(run), 30.0, {}, 0, "", False, 0.0, 0.0))
    (run / "rank0.stderr").write_text("waiting\n")
    (run / "rank1.stderr").write_text("Traceback (most recent call last):\nValueError: bad batch\n")
    return run


def spoil(path, kind):
    if path.exists():
        path.unlink()
    if kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as fh:
            fh.truncate(HUGE)
    else:
        path.write_text(DEEP)


def diagnose_child(*paths):
    """Each folder diagnosed in one child (one interpreter start for all of them)."""
    env = dict(os.environ, COLUMNS="200")
    r = subprocess.run([sys.executable, "-c", CHILD, *map(str, paths)], capture_output=True, text=True, timeout=ANSWER_S, env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    return json.loads(r.stdout)


@pytest.mark.timeout(2 * ANSWER_S)
@pytest.mark.parametrize("name", FILES)
def test_each_run_folder_file_spoilt_each_way_is_answered_and_never_healthy(tmp_path, name):
    runs = [folder(tmp_path, kind) for kind in KINDS]
    for kind, run in zip(KINDS, runs):
        spoil(run / name, kind)
    for kind, got in zip(KINDS, diagnose_child(*runs)):
        assert got["failed"], (kind, got)  # rank 1 raised: never "healthy", whatever else is spoilt
        said = {item["path"]: item["why"] for item in got["not_read"]}
        if name in ("rank0.current", "rank0.progress") or (name == "rank1.fatal.txt" and kind == "deep"):
            continue  # read only within a few KB, or text: nothing to say
        if name == "rank1.fatal.txt" or (name == "rank0.stacks.txt" and kind == "deep"):
            if kind in ("huge",):
                assert "read only its last 1 MB" in said.get(name, ""), (kind, said)
            continue
        assert name in said, (kind, said)
        expected = {"link-to-dev-zero": "/dev/zero", "fifo": "FIFO", "huge": "above the" if name.endswith(".json") else "read only its last", "deep": "nested too deeply"}[kind]
        assert expected in said[name], (kind, said)


def test_an_unreadable_outcome_is_said_not_taken_for_no_outcome(tmp_path):
    run = folder(tmp_path)
    spoil(run / "outcome.json", "deep")
    with pytest.raises(OutcomeUnreadable, match="nested too deeply"):
        read_outcome(str(run))
    (run / "outcome.json").unlink()
    assert read_outcome(str(run)) is None


def test_a_trace_of_too_many_records_keeps_the_last_and_says_so(tmp_path):
    run = folder(tmp_path)
    record = {"rank": 0, "pg": "0", "seq": 1, "kind": "allreduce", "input_shapes": [], "input_dtypes": [], "output_shapes": [],
              "output_dtypes": [], "state": "completed", "where": "", "function": "", "time_ns": 1}  # fmt: skip
    payload = {"schema": 1, "kind": "PublishedTrace", "data": {"rank": 0, "pid": 1, "flight_recorder": False, "time": 1.0,
               "records": [record] * (rundir.MAX_RECORDS + 5)}}  # fmt: skip
    (run / "rank0.collectives.json").write_text(json.dumps(payload))
    trace = rundir.read_trace(str(run), 0)
    assert len(trace.records) == rundir.MAX_RECORDS
    assert trace.unread == (("rank0.collectives.json", f"read its last {rundir.MAX_RECORDS:,} collectives (5 before them skipped)"),)


def _record(seq: int, state: str) -> dict:
    return {"rank": 1, "pg": "0", "seq": seq, "kind": "all_reduce", "input_shapes": [], "input_dtypes": [], "output_shapes": [],
            "output_dtypes": [], "state": state, "where": "train.py:9", "function": "main", "time_ns": seq}  # fmt: skip


@pytest.mark.parametrize("current_state, inside, reached", [("completed", None, 12), ("started", 12, 11)])
def test_a_call_published_as_started_that_the_current_call_file_shows_returned_is_completed(tmp_path, current_state, inside, reached):
    # A rank publishes its records every couple of seconds but writes its current call at every call:
    # killed right after all_reduce #12 returned, its last publication still shows #12 started. The
    # newer current-call file decides; its sibling, #12 still under way there, keeps the rank inside it.
    from gpudoctor.hang import verdict

    run = folder(tmp_path)
    payload = {"schema": 1, "kind": "PublishedTrace", "data": {"rank": 1, "pid": 1, "flight_recorder": False, "time": 1.0,
               "records": [_record(11, "completed"), _record(12, "started")]}}  # fmt: skip
    (run / "rank1.collectives.json").write_text(json.dumps(payload))
    current = rundir.decode(rundir.CollectiveRecord, {"schema": 1, "kind": "CollectiveRecord", "data": _record(12, "started")})
    data = rundir.encode_current(current)
    blob = bytearray(rundir.CURRENT_SIZE)
    blob[: rundir.CURRENT_HEADER] = len(data).to_bytes(4, "little") + (
        rundir.CURRENT_COMPLETED if current_state == "completed" else rundir.CURRENT_STARTED
    )
    blob[rundir.CURRENT_HEADER : rundir.CURRENT_HEADER + len(data)] = data
    (run / "rank1.current").write_bytes(bytes(blob))
    trace = rundir.read_trace(str(run), 1)
    open_call = verdict._in_collective(trace)
    assert (open_call.seq if open_call else None) == inside
    assert verdict._reached(trace) == reached
