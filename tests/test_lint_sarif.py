"""`gpudoctor lint --format sarif` against the SARIF 2.1.0 JSON schema (the OASIS
file vendored in tests/fixtures/sarif/, so the test runs offline), validated with
`jsonschema`, as GitHub code scanning reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
BROKEN = ROOT / "examples" / "train_broken.py"


def validator():
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    return cls(SCHEMA, format_checker=cls.FORMAT_CHECKER)


def sarif(*paths: str, cwd: Path = ROOT) -> dict:
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "lint", "--format", "sarif", *paths],
        cwd=cwd, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_sarif_validates_for_diagnostics_syntax_errors_and_odd_paths(tmp_path):
    odd = tmp_path / "dir with space" / "100%.py"
    odd.parent.mkdir()
    # (two wraps at the module's top: one diagnostic, its other line a related location)
    odd.write_text("import torch.nn as nn\nmodel = nn.DataParallel(net)\nhead = nn.DataParallel(head)\n")
    (tmp_path / "bad.py").write_text("def f(:\n")
    doc = sarif(str(BROKEN.relative_to(ROOT)), str(odd), str(tmp_path / "bad.py"))
    validator().validate(doc)
    results = doc["runs"][0]["results"]
    assert {"deprecated-launch", "dataparallel", "syntax-error"} <= {r["ruleId"] for r in results}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "examples/train_broken.py" in uris and odd.as_uri() in uris
    wraps = [r for r in results if r["ruleId"] == "dataparallel"
             and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == odd.as_uri()]
    assert [[loc["physicalLocation"]["region"]["startLine"] for loc in r.get("relatedLocations", [])]
            for r in wraps] == [[3]]


def test_sarif_of_a_clean_run_validates():
    doc = sarif(str(ROOT / "examples" / "train_fixed.py"))
    validator().validate(doc)
    assert doc["runs"][0]["results"] == []


def test_the_schema_rejects_what_code_scanning_would():
    # The validator really checks: a level SARIF does not define is an error.
    doc = sarif(str(BROKEN))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(doc)


def test_every_rule_links_its_page_and_the_tool_links_the_project():
    import tomllib

    doc = sarif(str(BROKEN))
    driver = doc["runs"][0]["tool"]["driver"]
    homepage = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Homepage"]
    assert driver["informationUri"] == homepage  # the package index has no gpudoctor: not a page that exists
    prefix = homepage + "/blob/main/"
    for rule in driver["rules"]:
        assert rule["helpUri"].startswith(prefix)
        assert (ROOT / rule["helpUri"][len(prefix):]).is_file(), rule["helpUri"]
