"""JSON Schemas (draft 2020-12) of the `--json` documents, one per command: the
envelope every command shares (docs/json.md), strict about a finding and a rank
record, and the top-level keys each command adds. A key may be added without a new
`schema_version` (core/findings.py), so objects stay open to new keys.

`python -m gpudoctor.docs` writes them to docs/schemas/<command>.schema.json;
tests/e2e/conftest.py validates every document the end-to-end tests read."""

from __future__ import annotations

import json
from typing import Any

from gpudoctor.core.findings import SCHEMA_VERSION, Severity
from gpudoctor.core.version import DOCS_URL

COMMANDS = ("check", "allreduce", "train-smoke", "lint", "diagnose", "run")
BASE_URI = DOCS_URL + "schemas/"
RANK_STATES = ("finished", "failed", "lost-peer", "waiting", "running", "starting", "never-joined", "interrupted")

Schema = dict[str, Any]


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


STRING: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
OBJECT: Schema = {"type": "object"}
ARRAY: Schema = {"type": "array"}
UNAVAILABLE: Schema = {
    "type": "object",
    "required": ["unavailable"],
    "properties": {"unavailable": STRING},
    "additionalProperties": False,
}

DEFS: dict[str, Schema] = {
    "finding": {
        "type": "object",
        "required": ["id", "severity", "title", "evidence", "why", "fix", "area"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
            "severity": {"enum": [s.value for s in Severity]},
            "title": STRING,
            "evidence": OBJECT,
            "why": STRING,
            "fix": STRING,
            "area": STRING,
        },
    },
    "rank": {
        "description": "one record per rank (hang/verdict.py RankRecord; docs/json.md#ranks-one-record-per-rank)",
        "type": "object",
        "required": ["rank", "state"],
        "properties": {
            "rank": {"type": "integer", "minimum": 0},
            "state": {"enum": list(RANK_STATES)},
            "where": _nullable(STRING),
            "collective": _nullable(OBJECT),
            "reached": INT,
            "exit_code": _nullable(INT),
            "signal": _nullable(STRING),
            "error": _nullable(STRING),
            "log": STRING,
        },
    },
    "root_cause": _nullable(OBJECT),
    "unavailable": UNAVAILABLE,
}
RANKS: Schema = {"type": "array", "items": {"$ref": "#/$defs/rank"}}
MEASURE: Schema = _nullable(NUMBER)  # a measurement that could not be taken is null

# Each command's own top-level keys: (properties, required, alternatives the document must match one of).
EXTRA: dict[str, tuple[dict[str, Schema], list[str], list[Schema]]] = {
    "check": (
        {
            "facts": {
                "type": "object",
                "required": ["schema", "gpudoctor", "collected_at", "torch", "nvml", "environment", "system"],
            },
            "nodes": {"type": "array", "items": {"type": "object", "required": ["name"]}},
            "differs": {"type": "array", "items": STRING},
            "snapshots": ARRAY,
        },
        [],
        # a joined check that failed before the nodes were compared (a malformed launch
        # environment, a rendezvous that never completed) carries neither: its findings say why
        [{"required": ["facts"]}, {"required": ["nodes", "differs"]}, {"properties": {"ok": {"const": False}}}],
    ),
    "allreduce": (
        {
            "backend": STRING,
            "device": STRING,
            "nproc": {"type": "integer", "minimum": 1},
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["op", "bytes", "dtype", "time_us", "algbw_gbps", "busbw_gbps", "wrong"],
                    "properties": {
                        "op": STRING,
                        "bytes": INT,
                        "count": INT,
                        "dtype": STRING,
                        "time_us": MEASURE,
                        "algbw_gbps": MEASURE,
                        "busbw_gbps": MEASURE,
                        "wrong": _nullable(INT),
                    },
                },
            },
            "summary": {"type": "object", "required": ["sizes_run", "sizes_planned", "wrong"]},
            "ranks": RANKS,
            "root_cause": {"$ref": "#/$defs/root_cause"},
            "fleet": OBJECT,
            "bisect": ARRAY,
            "per_node": {
                "type": "object",
                "required": ["bytes", "nodes", "sends"],
                "properties": {
                    "bytes": INT,
                    "nodes": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["node", "ranks", "intra_busbw_gbps", "inter_send_gbps", "inter_receive_gbps"],
                            "properties": {
                                "node": STRING,
                                "ranks": {"type": "array", "items": INT},
                                "intra_us": MEASURE,
                                "intra_busbw_gbps": MEASURE,
                                "inter_send_us": MEASURE,
                                "inter_send_gbps": MEASURE,
                                "inter_receive_us": MEASURE,
                                "inter_receive_gbps": MEASURE,
                            },
                        },
                    },
                    "sends": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["from", "to", "us", "repeat_us"],
                            "properties": {"from": INT, "to": INT, "us": MEASURE, "repeat_us": MEASURE},
                        },
                    },
                },
            },
        },
        [],
        [],
    ),
    "train-smoke": (
        {
            "config": OBJECT,
            "verifications": {
                "type": "array",
                "items": {"type": "object", "required": ["name", "passed"], "properties": {"name": STRING, "detail": STRING}},
            },
            "throughput": OBJECT,
            "logs": _nullable(STRING),
            "ranks": RANKS,
            "root_cause": {"$ref": "#/$defs/root_cause"},
            "fleet": OBJECT,
        },
        [],
        [],
    ),
    "lint": (
        {
            "files_checked": {"type": "integer", "minimum": 0},
            "diagnostics": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["path", "line", "col", "rule", "severity", "message", "fix"],
                    "additionalProperties": False,
                    "properties": {
                        "path": STRING,
                        "line": {"type": "integer", "minimum": 1},
                        "col": {"type": "integer", "minimum": 1},
                        "rule": STRING,
                        "severity": {"enum": ["error", "warning"]},
                        "message": STRING,
                        "fix": STRING,
                        "cell": {"type": "integer", "minimum": 1},
                        "file_line": {"type": "integer", "minimum": 1},
                        "file_col": {"type": "integer", "minimum": 1},
                        "also": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
        ["files_checked", "diagnostics"],
        [],
    ),
    "diagnose": (
        {
            "input": STRING,
            "kind": STRING,
            "lines": INT,
            "sources": {"type": "array", "items": STRING},
            "root_cause": {"$ref": "#/$defs/root_cause"},
            "error_files": ARRAY,
            "not_read": ARRAY,
            "outcome": {"type": ["object", "string"]},  # a run folder's outcome file, by name
            "ranks": RANKS,
        },
        ["input", "kind"],
        [],
    ),
    "run": (
        {
            "target": {"type": "array", "items": STRING},
            "exit_code": INT,
            # `state` with --nproc (the same as in `ranks`); a plain run's one process has none
            "processes": {"type": "array", "items": {"type": "object", "required": ["label"]}},
            "run_dir": _nullable(STRING),
            "root_cause": {"$ref": "#/$defs/root_cause"},
            "ranks": RANKS,
            "steps": OBJECT,
        },
        ["target", "exit_code", "processes"],
        [],
    ),
}


def schema(command: str) -> Schema:
    """The JSON Schema of `gpudoctor COMMAND --json`'s document (KeyError for another name)."""
    properties, required, alternatives = EXTRA[command]
    doc: Schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE_URI}{command}.schema.json",
        "title": f"gpudoctor {command} --json",
        "description": f"The document `gpudoctor {command}` prints with --json (docs/json.md).",
        "type": "object",
        "required": ["gpudoctor", "schema_version", "command", "ok", "findings", *required],
        "properties": {
            "gpudoctor": STRING,
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"const": command},
            "ok": {"type": "boolean"},
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
            **properties,
        },
        "$defs": DEFS,
    }
    if alternatives:
        doc["anyOf"] = alternatives
    return doc


def schema_text(command: str) -> str:
    return json.dumps(schema(command), indent=2, ensure_ascii=False) + "\n"
