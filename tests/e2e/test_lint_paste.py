"""`gpudoctor lint` on pasted snippets that are not valid Python (issue 41): the
rules read them repaired, each diagnostic says so, and `syntax-error` is still
given. Real files through the real command (a subprocess) and the API's door."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gpudoctor

ROOT = Path(__file__).resolve().parents[2]

COMPLETE = '''\
import os
import torch.multiprocessing as mp


def train(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"


if __name__ == "__main__":
    mp.spawn(train, args=(2,), nprocs=2)
'''
# The same script as pasted into a question: cut off inside the spawn call, after a whole argument
# (the repair closes the call on its last line) or inside one (the repair cannot know the rest: it cuts).
CUT_OFF = COMPLETE.replace("    mp.spawn(train, args=(2,), nprocs=2)\n", "    mp.spawn(\n        train, args=(2,),\n")
CUT_INSIDE = COMPLETE.replace("    mp.spawn(train, args=(2,), nprocs=2)\n", "    mp.spawn(\n        train, args=(2\n")


def lint_json(*paths: Path) -> tuple[int, list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "gpudoctor", "lint", "--no-config", "--format", "json",
                           *map(str, paths)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)["diagnostics"]


def repaired(tmp_path: Path, text: str, lines: str) -> dict:
    """lint on a pasted snippet: its one pitfall is reported, marked as read after repairing `lines`,
    beside Python's own syntax error; returns that syntax error."""
    (tmp_path / "question.py").write_text(text)
    code, found = lint_json(tmp_path / "question.py")
    assert code == 1
    by_rule = {d["rule"]: d for d in found}
    assert set(by_rule) == {"hardcoded-master-port", "syntax-error"}
    port, syntax = by_rule["hardcoded-master-port"], by_rule["syntax-error"]
    assert (port["line"], port["col"], port["severity"]) == (7, 5, "warning")
    assert port["message"].endswith(f"(read after repairing {lines} of a snippet that is not valid Python)")
    assert syntax["severity"] == "error" and syntax["message"].startswith("not valid Python 3.")
    return syntax


def test_a_cut_off_snippet_gets_its_pitfall_marked_repaired_and_its_syntax_error(tmp_path):
    syntax = repaired(tmp_path, CUT_OFF, "line 12")
    assert syntax["line"] == 11  # Python's own error, where Python puts it, and what the other rules read instead
    assert "an unfinished statement at the end closed (line 12)" in syntax["message"]


def test_a_snippet_cut_inside_an_argument_is_cut_and_its_body_completed(tmp_path):
    syntax = repaired(tmp_path, CUT_INSIDE, "lines 10-12")
    assert "an unfinished statement at the end cut (lines 11-12)" in syntax["message"]
    assert "`pass` added to a body cut off (line 10)" in syntax["message"]


def test_control_the_complete_script_is_read_as_before(tmp_path):
    (tmp_path / "complete.py").write_text(COMPLETE)
    (tmp_path / "question.py").write_text(CUT_OFF)
    code, found = lint_json(tmp_path / "complete.py")
    assert code == 0  # a warning alone does not fail the run
    (port,) = found
    assert port["rule"] == "hardcoded-master-port" and "repair" not in port["message"]
    _, pasted = lint_json(tmp_path / "question.py")
    (repaired,) = [d for d in pasted if d["rule"] == port["rule"]]
    same = ("line", "col", "severity", "fix")
    assert [repaired[k] for k in same] == [port[k] for k in same]
    assert repaired["message"].startswith(port["message"] + " (read after repairing")


def test_sibling_a_snippet_past_the_bound_keeps_only_its_syntax_error(tmp_path):
    # the bracket opened on line 2 is never closed: repairing it would cut most of the file
    broken = 'import os\nsetup(rank=0,\nos.environ["MASTER_PORT"] = "12355"\n' + "x = 1\n" * 8
    (tmp_path / "broken.py").write_text(broken)
    code, found = lint_json(tmp_path / "broken.py")
    assert code == 1
    (syntax,) = found
    assert syntax["rule"] == "syntax-error" and "repaired" not in syntax["message"]


def test_no_rule_rests_on_a_line_repair_wrote_on(tmp_path):
    # cut inside the epoch loop: the loop's line gets `pass`, and whether set_epoch
    # followed is not in the paste
    (tmp_path / "loop.py").write_text(
        "import torch.distributed as dist\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        'dist.init_process_group("gloo")\n'
        "sampler = DistributedSampler(dataset)\n"
        "loader = DataLoader(dataset, sampler=sampler)\n"
        "for epoch in range(10):\n"
        "    for batch in loader:\n"
        "        step(batch\n")
    _, found = lint_json(tmp_path / "loop.py")
    assert [d["rule"] for d in found] == ["syntax-error"]


def test_no_rule_fires_where_the_cut_text_may_hold_its_fix(tmp_path):
    # torch.load with no map_location; the cut-off last line may pass it on
    (tmp_path / "load.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n"
        'dist.init_process_group("nccl")\n'
        "state = torch.load(path)\n"
        'model.load_state_dict(torch.load(path, map_location={"cuda:0": f"cuda:{\n')
    (tmp_path / "complete.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n"
        'dist.init_process_group("nccl")\n'
        "state = torch.load(path)\n")
    _, pasted = lint_json(tmp_path / "load.py")
    _, complete = lint_json(tmp_path / "complete.py")
    assert "torch-load-no-map-location" in {d["rule"] for d in complete}
    assert [d["rule"] for d in pasted] == ["syntax-error"]


def test_a_markdown_question_through_the_api_door(tmp_path):
    question = tmp_path / "question.py"
    question.write_text(
        "My DDP job hangs at init, code below:\n\n"
        "```python\n"
        "import torch.nn as nn\n"
        "model = nn.DataParallel(nn.Linear(2, 2))\n"
        "```\n")
    report = gpudoctor.lint(question)
    found = {d["rule"]: d for d in report.data["diagnostics"]}
    assert set(found) == {"dataparallel", "syntax-error"}
    assert (found["dataparallel"]["line"], found["dataparallel"]["col"]) == (5, 9)
    assert "read after repairing lines 1, 3, 6" in found["dataparallel"]["message"]
    assert "markdown fences and the text outside them blanked" in found["syntax-error"]["message"]
    # the CLI says the same
    _, cli = lint_json(question)
    assert cli == report.data["diagnostics"]
