"""diagnose: a target (file, stdin, folder) -> a Report, cause first."""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import BinaryIO, Optional

from gpudoctor.diagnose import folder as run_folder
from gpudoctor.diagnose.inputs import InputError, Target
from gpudoctor.diagnose.reader import BinaryInput, scan
from gpudoctor.findings import Finding, Report, Severity, ok
from gpudoctor.knowledge.diagnosis import Diagnosis

AREA = "diagnose"


def diagnose(target: Target, stream: Optional[BinaryIO] = None) -> Report:
    """`stream`: the log, already open, for a target that is not a path (standard
    input by default; the Python API's text)."""
    d = Diagnosis()
    data: dict = {"input": target.path, "kind": target.kind}
    extra: list[Finding] = []  # folder mode: what the dumps and error files say
    if target.kind == "folder":
        extra, data = diagnose_folder(target.path, d, data)
    else:
        read_log(target, d, stream)
        data["sources"] = [target.path]
    traced = next((f for f in extra if f.area == "collectives"), None)
    findings = extra + (explained_by_trace(d.findings(), traced) if traced else d.findings())
    data["root_cause"] = first_failure(d, traced, data.pop("error_file_root_cause", None))
    data["lines"] = d.lines
    if not any(f.severity in (Severity.ERROR, Severity.WARN) for f in findings):
        findings.append(ok("log-no-failure", f"no known failure in {d.lines} line(s)", AREA, lines=d.lines))
    return Report("diagnose", tuple(findings), data)


def read_log(target: Target, d: Diagnosis, stream: Optional[BinaryIO] = None) -> None:
    """A file or standard input, streamed through the diagnosis."""
    try:
        if target.kind != "file":
            scan(stream or sys.stdin.buffer, d, "")
        else:
            with open(target.path, "rb") as f:
                scan(f, d, "")
    except BinaryInput:
        what = "standard input is binary" if target.kind == "stdin" else f"{target.path} is a binary file"
        raise InputError(f"{what}, not a text log") from None
    except OSError as exc:
        raise InputError(f"cannot read {target.path}: {exc.strerror}") from None


def first_failure(d: Diagnosis, traced: Optional[Finding], from_files: Optional[dict]) -> Optional[dict]:
    """The first failing rank and node: from the log's story, unless the Flight
    Recorder dumps explain a log with no cause; the earliest error file names the rank."""
    root = d.root_cause()
    if traced is not None and (root is None or not d.has_cause()):
        root = {"id": traced.id, "reported_by": "Flight Recorder dumps"}
        held = str(traced.evidence.get("root cause", ""))
        if held.startswith("rank "):
            root["rank"] = int(held.split()[1])
    if from_files:
        # torchrun's error files date each rank's failure: the earliest names the rank
        root = {**(root or {}), **{k: v for k, v in from_files.items() if v is not None}}
    return root


def diagnose_folder(path: str, d: Diagnosis, data: dict) -> tuple[list[Finding], dict]:
    files = run_folder.walk(path)
    if not files:  # "healthy, 0 lines" would hide a wrong path
        raise InputError(f"{path}: no files in this folder (hidden ones are skipped); give a log file or a job's run folder")
    logs, errors, skipped = [], [], []
    traces: dict[int, list] = {}
    for file in files:
        err = run_folder.read_error_file(file)
        if err is not None:
            errors.append(err)
            continue
        binary = run_folder.looks_binary(file)
        if binary or file.endswith(".json"):
            records = run_folder.read_trace(file)
            if records is not None:
                traces[records[0].rank if records else len(traces)] = records
                continue
        if binary:
            skipped.append(os.path.relpath(file, path))
        else:
            logs.append(file)
    for file in logs:
        d.default_rank = run_folder.rank_of(file)
        try:
            with open(file, "rb") as f:
                scan(f, d, os.path.relpath(file, path))
        except (BinaryInput, OSError):
            skipped.append(os.path.relpath(file, path))
    extra: list[Finding] = []
    first = run_folder.first_failure(errors)
    for err in sorted(errors, key=lambda e: (e is not first, e.timestamp or 0)):
        d.default_rank = err.rank
        before = d.hits
        d.feed([err.message, *err.callstack.splitlines()], os.path.relpath(err.path, path))
        if d.hits == before:
            extra.append(rank_exception(err, path, err is first))
    d.default_rank = None
    if traces:
        extra = trace_findings(traces, d, errors) + extra
        data["flight_recorder_ranks"] = sorted(traces)
    data["sources"] = [os.path.relpath(f, path) for f in logs]
    data["error_files"] = [
        {"path": os.path.relpath(e.path, path), "rank": e.rank, "timestamp": e.timestamp, "message": e.message[:300]} for e in errors
    ]
    if skipped:
        data["skipped"] = skipped
    if first is not None:
        data["error_file_root_cause"] = {
            "rank": first.rank,
            "error_file": os.path.relpath(first.path, path),
            "timestamp": first.timestamp,
            "message": first.message[:300],
            "reported_by": "earliest torchrun error file",
        }
    return extra, data


def trace_findings(traces: dict[int, list], d: Diagnosis, errors: list) -> list[Finding]:
    """Flight Recorder dumps, one per rank, lined up by collective number (the
    hang doctor's analysis): a mismatch, a missing call, uneven work, a stall."""
    from gpudoctor.knowledge.collectives import RankState, analyze

    failed = {e.rank for e in errors if e.rank is not None} | d.ranks_with_cause()
    ranks = [RankState(r, tuple(recs), ended="failed" if r in failed else "") for r, recs in sorted(traces.items())]
    waited = d.timeout_seconds()
    found = analyze(ranks, stalled_s=waited if waited is not None else 0.0)
    if waited is None:  # the dumps do not say how long the job waited
        found = [dataclasses.replace(f, evidence={k: v for k, v in f.evidence.items() if k != "no progress for"}) for f in found]
    return found


def explained_by_trace(findings: list[Finding], traced: Finding) -> list[Finding]:
    """Consequences whose cause the log did not show are explained by what the traces show."""
    out = []
    for f in findings:
        if f.evidence.get("role") == "consequence" and "consequence_of" not in f.evidence:
            title = f.title.replace(" (its cause is not in this log: look at the other ranks' output)", "")
            ev = {**f.evidence, "consequence_of": traced.id}
            f = dataclasses.replace(f, title=f"{title} (a consequence of {traced.id})", evidence=ev,
                                    severity=Severity.WARN if f.severity is Severity.ERROR else f.severity)
        out.append(f)
    return out


def rank_exception(err: run_folder.ErrorFile, base: str, first: bool) -> Finding:
    """An error file whose exception no pattern knows: still the rank's own failure."""
    who = f"rank {err.rank}" if err.rank is not None else "a rank"
    tail = [line for line in err.callstack.strip().splitlines() if line.strip()][-8:]
    return Finding(
        id="rank-exception",
        severity=Severity.ERROR,
        title=f"{who} raised {err.message.split(':', 1)[0] or 'an exception'}" + (" (first failure)" if first else ""),
        evidence={
            "role": "cause" if first else "consequence",
            "rank": err.rank,
            "error_file": os.path.relpath(err.path, base),
            "message": err.message[:500],
            "traceback": "\n".join(tail),
        },
        why="The rank's own exception, as torchrun's @record wrote it; the earliest error file is where the job failed first.",
        fix=f"read the traceback in {os.path.relpath(err.path, base)}: its last frame in your code is the line to fix",
        area=AREA,
    )


def header(report: Report) -> Optional[str]:
    """One line naming the first failure, for the rich and Markdown views."""
    root = report.data.get("root_cause")
    if not root:
        return None
    who = []
    if root.get("rank") is not None:
        who.append(f"rank {root['rank']}")
    elif root.get("local_rank") is not None:
        who.append(f"local rank {root['local_rank']}")
    if root.get("node"):
        who.append(f"on {root['node']}")
    what = root.get("id") or root.get("message", "")
    # what failed (the exception or signal), in which of the user's frames, and when, when the log says
    detail = ", ".join(x for x in (root.get("what"), f"at {root['frame']}" if root.get("frame") else "", root.get("time")) if x)
    if detail and what:
        what = f"{what}: {detail}"
    where = f"{root['source']}:{root['line']}" if root.get("source") and root.get("line") else (f"line {root['line']}" if root.get("line") else root.get("error_file", ""))
    # a consequence that names no failing rank (no Root Cause block, no dump signal) is only
    # where the trouble first showed: the rank that printed it is a victim, not the culprit
    victim = root.get("role") == "consequence" and not root.get("reported_by")
    lead = "first sign of the failure (its cause is in another rank's output): " if victim else "first failure: "
    return lead + " ".join(who + ([f"— {what}"] if what and who else [what] if what else [])) + (f" ({where})" if where else "")
