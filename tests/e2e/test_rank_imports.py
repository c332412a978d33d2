"""A rank of the user's job pays for the doctor only what it runs there: neither
rich (a report's drawing) nor the supervisor's side (launch/supervisor.py, the
hang doctor's watch) is imported in a rank of `gpudoctor run --nproc`, nor in a
rank that `train-smoke` or `allreduce` starts (launch/child.py). Each real rank
writes its sys.modules at exit (tests/rank_modules/sitecustomize.py)."""

import json
import os
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
from rank_imports import recorded, recording_env, supervisor_side  # noqa: E402

pytestmark = pytest.mark.slow


def _ranks_modules(tmp_path, *args):
    out = tmp_path / "modules"
    env = recording_env(out, dict(os.environ, COLUMNS="400"))
    for name in ("GPUDOCTOR_RUN", "RANK", "GPUDOCTOR_FAULT"):
        env.pop(name, None)
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    return r, recorded(out)


def test_run_nproc_ranks_import_neither_rich_nor_the_supervisor(tmp_path):
    # The script leaves a finding on each rank; the ranks hand it over and the one merged
    # report shows it. This job is also run's test of that merge (it was a second job).
    out = tmp_path / "report.json"
    script = os.path.join("tests", "scripts", "sampler_no_set_epoch.py")
    r, ranks = _ranks_modules(tmp_path, "run", "--nproc", "2", "--json", str(out), script)
    assert r.returncode == 0, r.stderr[-3000:]
    assert sorted(r.stdout.splitlines()) == ["rank 0: epochs differ: False", "rank 1: epochs differ: False"]
    # One merged report: the finding both ranks raised, once, with both ranks; no rank prints its own.
    assert r.stderr.count("DistributedSampler iterated 2 times") == 1, r.stderr[-3000:]
    assert "\n  ! DistributedSampler iterated 2 times" in r.stderr and "      ranks: 0, 1\n" in r.stderr
    assert not [line for line in r.stderr.splitlines() if line.startswith("[rank ") and "gpudoctor run" in line]
    assert "gpudoctor run: 2 rank(s) of tests/scripts/sampler_no_set_epoch.py: 0 error(s), 1 warning(s)" in r.stderr
    with open(out) as fh:
        report = json.load(fh)
    assert [f["id"] for f in report["findings"]] == ["sampler-without-set-epoch"]
    assert report["findings"][0]["evidence"]["ranks"] == [0, 1]
    assert [p["state"] for p in report["processes"]] == [x["state"] for x in report["ranks"]] == ["finished"] * 2
    assert sorted(rank["rank"] for rank in ranks) == ["0", "1"]
    for rank in ranks:
        assert "gpudoctor.hooks.runner" in rank["modules"] and "gpudoctor.hooks.checks" in rank["modules"]
        assert supervisor_side(rank["modules"]) == [], rank["rank"]


# train-smoke's ranks (it was a job of its own here): the JSON job of
# tests/e2e/test_train_smoke.py::test_default_run_passes_every_verification_and_json_matches_rich_output.
@pytest.mark.parametrize("command", [["allreduce", "--sizes", "1K"]])
def test_child_ranks_import_neither_rich_nor_the_supervisor(tmp_path, command):
    r, ranks = _ranks_modules(tmp_path, *command, "--nproc", "2")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    children = [rank for rank in ranks if rank["argv"][0].endswith(os.path.join("launch", "child.py"))]
    assert sorted(rank["rank"] for rank in children) == ["0", "1"]
    for rank in ranks:  # the ranks, and any process they started
        assert supervisor_side(rank["modules"]) == [], (rank["rank"], rank["argv"])
