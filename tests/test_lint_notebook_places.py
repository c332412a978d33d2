"""A notebook's diagnostics in SARIF and GitHub annotations point at the line and
column of the .ipynb file itself (before: the line within the cell, which code
scanning and the pull request showed on an unrelated line of the JSON)."""

from __future__ import annotations

import json
import subprocess
import sys

CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# DDP in a notebook\n", "some words\n"]},
    {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [{"name": "stdout", "output_type": "stream", "text": ["\"source\": [\n"]}],
     "source": ["!pip install torch\n", "import torch.distributed as dist\n", "s = \"tab\\there\"; x = 1\n"]},
    {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
     "source": ["if dist.get_rank() == 0:\n", "    s = \"\\u00e9\"; dist.barrier()\n"]},
    {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [],
     "source": "import torch\nmodel = torch.nn.DataParallel(net)"},
]  # fmt: skip


def lint(path, fmt: str) -> str:
    r = subprocess.run([sys.executable, "-m", "gpudoctor", "lint", "--format", fmt, "--fail-on", "never", str(path)],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def _at(text: str, line: int, col: int) -> str:
    return text.split("\n")[line - 1][col - 1 :]


def test_sarif_and_github_point_into_the_ipynb_file(tmp_path):
    nb = tmp_path / "train.ipynb"
    text = json.dumps({"cells": CELLS, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)  # as Jupyter writes it
    nb.write_text(text)
    results = json.loads(lint(nb, "sarif"))["runs"][0]["results"]
    region = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"] for r in results}
    barrier = region["collective-under-rank-condition"]
    assert _at(text, barrier["startLine"], barrier["startColumn"]).startswith("dist.barrier()")
    dp = region["dataparallel"]
    assert _at(text, dp["startLine"], dp["startColumn"]).startswith("torch.nn.DataParallel(net)")
    github = {line.split("title=")[1].split("::")[0]: line for line in lint(nb, "github").splitlines()}
    assert f"line={barrier['startLine']},col={barrier['startColumn']}," in github["collective-under-rank-condition"]
    # The text report keeps the cell's own numbering (what a notebook shows).
    assert "train.ipynb:cell 3:2:" in lint(nb, "text")


def test_a_py_file_is_as_before(tmp_path):
    py = tmp_path / "train.py"
    py.write_text("import torch\nmodel = torch.nn.DataParallel(net)\n")
    [result] = json.loads(lint(py, "sarif"))["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 9}
