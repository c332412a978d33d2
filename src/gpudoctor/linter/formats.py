"""Diagnostics -> text (ruff-style), the shared JSON Report, SARIF 2.1.0,
GitHub workflow annotations. Strings only: the CLI prints them."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.linter.engine import LintResult
from gpudoctor.linter.explain import rule_page
from gpudoctor.checks.wording import plural
from gpudoctor.linter.rule import ERROR, Diagnostic, Rule
from gpudoctor.linter.rules import ALL, BY_ID
from gpudoctor.render.escape import terminal

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def summary(result: LintResult) -> str:
    if result.ok:
        return f"No diagnostics: {plural(result.files, 'file')} checked."
    files = len({d.path for d in result.diagnostics})
    errors = result.errors
    warnings = len(result.diagnostics) - errors
    return (
        f"Found {plural(len(result.diagnostics), 'diagnostic')} ({plural(errors, 'error')}, "
        f"{plural(warnings, 'warning')}) in {plural(files, 'file')} ({result.files} checked)."
    )


def text(result: LintResult) -> str:
    out = []
    for d in result.diagnostics:
        # a file's name and the code quoted in a message are the project's text: shown, never sent raw
        out.append(terminal(f"{d.where}: {d.rule} {d.severity}: {d.message}", one_line=True))
        out.append(terminal(f"    fix: {d.fix}"))
    out.append(summary(result))
    return "\n".join(out)


def report(result: LintResult) -> Report:
    """The JSON envelope every command shares; each diagnostic is also a Finding."""
    findings = tuple(
        Finding(
            id=d.rule,
            severity=Severity.ERROR if d.severity == ERROR else Severity.WARN,
            title=d.message,
            evidence={"path": d.path, "line": d.line, "col": d.col, **({"cell": d.cell} if d.cell else {}),
                      **({"also": list(d.also)} if d.also else {})},
            why=BY_ID[d.rule].why() if d.rule in BY_ID else "",
            fix=d.fix,
            area="lint",
        )
        for d in result.diagnostics
    )
    return Report(
        command="lint",
        findings=findings,
        data={"files_checked": result.files, "diagnostics": [d.to_dict() for d in result.diagnostics]},
    )


def result_of(report: Report) -> LintResult:
    """The LintResult a report() was made from: what text, SARIF and GitHub annotations print."""
    diagnostics = tuple(Diagnostic(**{**d, "also": tuple(d.get("also", ()))}) for d in report.data["diagnostics"])
    return LintResult(diagnostics, report.data["files_checked"])


def _escape_data(value: str) -> str:
    value = terminal(value)  # an escape sequence in a file name would reach the CI log raw
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(result: LintResult) -> str:
    """One `::error` / `::warning` workflow command per diagnostic: GitHub
    Actions shows them as annotations on the pull request's lines."""
    out = []
    for d in result.diagnostics:
        props = ",".join(
            [f"file={_escape_property(d.path)}", f"line={d.file_line or d.line}", f"col={d.file_col or d.col}",
             f"title={_escape_property(d.rule)}"]  # fmt: skip
        )
        out.append(f"::{d.severity} {props}::{_escape_data(d.message + chr(10) + 'fix: ' + d.fix)}")
    return "\n".join(out)


def artifact_uri(path: str) -> str:
    """A relative URI reference for a relative path, a file: URI otherwise."""
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(path.replace(os.sep, "/"))


def sarif(result: LintResult, rules: Sequence[Rule] = ALL) -> str:
    from gpudoctor.core.version import DOCS_URL, HOMEPAGE, __version__

    index = {rule.id: i for i, rule in enumerate(rules)}
    driver = {
        "name": "gpudoctor",
        "version": __version__,
        "informationUri": HOMEPAGE,
        "rules": [
            {
                "id": rule.id,
                "name": rule.id,
                "shortDescription": {"text": rule.message},
                "fullDescription": {"text": rule.why()},
                "help": {"text": f"fix: {rule.fix}", "markdown": rule_page(rule)},
                "helpUri": f"{DOCS_URL}rules/{rule.id}.md",
                "defaultConfiguration": {"level": rule.severity},
            }
            for rule in rules
        ],
    }
    results = []
    for d in result.diagnostics:
        item: dict[str, object] = {
            "ruleId": d.rule,
            "level": d.severity,
            "message": {"text": f"{d.message}. fix: {d.fix}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": artifact_uri(d.path)},
                        "region": {"startLine": d.file_line or d.line, "startColumn": d.file_col or d.col},
                    }
                }
            ],
        }
        if d.rule in index:
            item["ruleIndex"] = index[d.rule]
        if d.also and not d.cell:  # the other places of the same cause (in a notebook, lines of its cell: left to the message)
            item["relatedLocations"] = [
                {"id": i, "physicalLocation": {"artifactLocation": {"uri": artifact_uri(d.path)},
                                               "region": {"startLine": line}},
                 "message": {"text": "the same cause"}}
                for i, line in enumerate(d.also, 1)
            ]
        results.append(item)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }
    return json.dumps(doc, indent=2)
