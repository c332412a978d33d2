"""Findings out of a watched process: to a fragment file for the process that
merges them, and to the `--json` file (render/run_text.py writes the stderr
lines). The script's own stdout is never touched."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence
from typing import Any

from gpudoctor.core.findings import Finding, Report
from gpudoctor.core.user_file import read_json
from gpudoctor.hooks.checks import runtime_findings
from gpudoctor.hooks.facts import fact_from_dict, fact_to_dict
from gpudoctor.launch import rundir

FRAGMENT_GLOB = rundir.FRAGMENT_GLOB


def write_fragment(directory: str, label: str, facts: list[Any], exit_code: int | None) -> None:
    """One process's facts, for the process that writes the merged JSON."""
    from gpudoctor.launch import scratch

    try:
        scratch.private_folder(directory)  # made by the first child that writes (hooks/runner.py)
    except scratch.FolderRefused:
        return  # a folder gpudoctor did not make: write nothing there
    name = rundir.fragment_name(label.replace(" ", "") or "main", os.getpid())
    path = os.path.join(directory, name)
    payload = {"label": label, "pid": os.getpid(), "exit_code": exit_code, "facts": [fact_to_dict(f) for f in facts]}
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as fh:
            json.dump(payload, fh, default=str)
        os.replace(tmp, path)
    except OSError:
        pass  # the run dir is gone (the supervisor gave up): nothing else to tell


def read_fragments(directory: str | None) -> list[dict[str, Any]]:
    out = []
    for path in sorted(glob.glob(os.path.join(directory, FRAGMENT_GLOB))) if directory else []:
        try:
            payload = read_json(path)
            if not isinstance(payload, dict):
                continue
            payload["facts"] = [fact_from_dict(d) for d in payload.get("facts", [])]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
        out.append(payload)
    return out


def run_report(
    facts: list[Any],
    processes: list[dict[str, Any]],
    target: list[str],
    exit_code: int | None,
    extra_findings: Sequence[Finding] = (),
) -> Report:
    findings = [*extra_findings, *runtime_findings(facts)]
    return Report(
        "run",
        tuple(findings),
        {"target": target, "exit_code": exit_code, "processes": processes},
    )


def write_json(path: str, report: Report, strict: bool) -> str | None:
    """Write the report; returns a one-line problem instead of raising."""
    from gpudoctor.render.json_out import report_json

    from gpudoctor.core.user_file import output_error, write_output

    try:
        write_output(path, report_json(report, strict) + "\n")
    except OSError as exc:
        return f"gpudoctor run: could not write --json: {output_error(path, exc)}"
    return None


def rank_json_path(path: str, rank: int | None, world_size: int | None) -> str:
    """Under torchrun every rank writes its own file: out.json -> out.rank1.json."""
    if rank is None or not world_size or world_size <= 1:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}.rank{rank}{ext or '.json'}"
