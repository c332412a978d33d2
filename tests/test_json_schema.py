"""render/json_schema.py: each command's schema is a valid JSON Schema, accepts what
the command's report gives, and refuses a document that breaks the envelope."""

import json

import jsonschema
import pytest

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.render.json_out import report_json
from gpudoctor.render.json_schema import COMMANDS, schema


@pytest.mark.parametrize("command", COMMANDS)
def test_schema_is_valid_draft_2020_12(command):
    jsonschema.Draft202012Validator.check_schema(schema(command))


def _lint_doc(**change):
    report = Report("lint", (Finding("dataparallel", Severity.WARN, "t", {"line": 3}, why="w", fix="f", area="lint"),),
                    {"files_checked": 1, "diagnostics": []})  # fmt: skip
    doc = json.JSONDecoder().decode(report_json(report))
    doc.update(change)
    return doc


def test_a_report_is_accepted_and_a_broken_one_refused():
    validator = jsonschema.Draft202012Validator(schema("lint"))
    assert list(validator.iter_errors(_lint_doc())) == []
    broken = _lint_doc()
    broken["findings"][0]["severity"] = "warning"  # the findings' word is "warn"
    assert list(validator.iter_errors(broken))
    assert list(validator.iter_errors(_lint_doc(schema_version=2)))
    assert list(validator.iter_errors(_lint_doc(command="check")))


def test_check_is_either_one_node_or_a_fleet():
    validator = jsonschema.Draft202012Validator(schema("check"))
    base = {"gpudoctor": "0.1.0", "schema_version": 1, "command": "check", "ok": True, "findings": []}
    assert list(validator.iter_errors(base))  # neither facts nor nodes
    fleet = {**base, "nodes": [{"name": "a"}], "differs": []}
    assert list(validator.iter_errors(fleet)) == []
