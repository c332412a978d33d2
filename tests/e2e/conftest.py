"""Every `--json` document an end-to-end test reads is checked against its command's
JSON Schema (render/json_schema.py, docs/schemas/): a test that parses gpudoctor's
output with json.loads / json.load validates it on the way, so the schemas cannot
drift from what the commands print. Saved snapshots from before `schema_version`
existed (test fixtures) are read as they are."""

from __future__ import annotations

import json

import pytest

from gpudoctor.render.json_schema import COMMANDS, schema

_loads = json.loads
_validators: dict = {}
validated = {"documents": 0}


def _validator(command: str):
    if command not in _validators:
        import jsonschema

        _validators[command] = jsonschema.Draft202012Validator(schema(command))
    return _validators[command]


def checked_loads(text, *args, **kwargs):
    doc = _loads(text, *args, **kwargs)
    if isinstance(doc, dict) and doc.get("command") in COMMANDS and "schema_version" in doc:
        errors = sorted(_validator(doc["command"]).iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(top)"
            raise AssertionError(f"`{doc['command']} --json` breaks docs/schemas/{doc['command']}.schema.json at {where}: {first.message}")
        validated["documents"] += 1
    return doc


@pytest.fixture(autouse=True)
def _json_documents_match_their_schema(monkeypatch):
    monkeypatch.setattr(json, "loads", checked_loads)  # json.load reads through json.loads too


def pytest_terminal_summary(terminalreporter):
    if validated["documents"]:
        terminalreporter.write_line(f"gpudoctor: {validated['documents']} --json documents validated against docs/schemas/")


@pytest.fixture(scope="session")
def doctor_jobs(tmp_path_factory):
    """`gpudoctor run --nproc 2` jobs several tests read, each started once (tests/doctor_jobs.py)."""
    import os

    from doctor_jobs import DoctorJobs

    # xdist gives each worker a basetemp of its own inside the session's: the jobs are shared there
    shared = tmp_path_factory.getbasetemp().parent / "doctor-jobs" if os.environ.get("PYTEST_XDIST_WORKER") else None
    return DoctorJobs(tmp_path_factory.mktemp("doctor-jobs"), shared)
