"""A rank that is slow to start (Python, import torch: seconds on a busy machine) is
starting, not hung and not missing from the rendezvous (issue 24, item 9). These
make the start slow on purpose, so they hold on an idle machine and a busy one alike."""

import os
import subprocess
import sys

import pytest

from gpudoctor.launch.supervisor import launch_function
from gpudoctor.hang.failures import launch_findings
from launch_targets import Summed

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RANK_PATH = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
pytestmark = pytest.mark.slow


def run_nproc(tmp_path, source: str, *options: str):
    """`gpudoctor run --nproc 2 OPTIONS script` for a script of `source`."""
    script = tmp_path / "script.py"
    script.write_text(source)
    env = dict(os.environ)
    env.pop("GPUDOCTOR_RUN", None)
    cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", *options, str(script)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_the_watchdog_counts_from_when_every_rank_has_started():
    """Rank 0 spends 10 s starting (the `slowstart` fault, before `import torch`); the
    9 s watchdog would have fired with rank 1 waiting in the rendezvous for it."""
    env = {"PYTHONPATH": RANK_PATH, "GPUDOCTOR_FAULT": "0:slowstart"}
    result = launch_function("launch_targets:allreduce_sum", {}, 2, timeout=9, env=env, result_type=Summed)
    assert result.ok, launch_findings(result)
    assert result.startup_s >= 10
    assert [r.sum for r in result.results] == [1.0, 1.0]


def test_a_rank_still_importing_when_the_timeout_fires_is_starting(tmp_path):
    """`run --timeout` is wall-clock time: a rank that has not imported torch by then
    is named as starting, not as one that never joined."""
    r = run_nproc(
        tmp_path,
        "import os, time\n"
        "if os.environ['RANK'] == '1':\n"
        "    time.sleep(60)  # as a crawling import would\n"
        "import torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n",
        # 15 s, not less: rank 0 must have imported torch and reached the rendezvous by then, which on a
        # busy machine (a load of 10 on 2 cores) took over 8 s, and it was then called never-joined itself
        "--timeout", "15",
    )  # fmt: skip
    assert r.returncode == 124, r.stderr
    assert "[rank-still-starting]" in r.stderr and "rank 1 had not imported torch" in r.stderr, r.stderr
    for wrong in ("[rank-never-joined]", "[rank-hung]", "[rank-crashed]", "[rendezvous-hang]"):
        assert wrong not in r.stderr, r.stderr


def test_the_hang_doctor_does_not_count_a_rank_that_is_still_starting(tmp_path):
    """Rank 0 waits in the rendezvous while rank 1 has not imported torch yet: with a
    1 s --hang-timeout that is not a stall, and the job runs to its end."""
    r = run_nproc(
        tmp_path,
        "import os, time\n"
        "if os.environ['RANK'] == '1':\n"
        "    time.sleep(5)  # as a crawling import would\n"
        "import torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "dist.all_reduce(torch.ones(2))\n"
        "print('done', flush=True)\n"
        # without it, gloo's threads can abort the process at teardown now and then (SIGABRT,
        # 'terminate called without an active exception'): a real failure, not this test's
        "dist.destroy_process_group()\n",
        "--hang-timeout", "1",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("done") == 2
