"""Output as it is read in a log (srun, torchrun, CI): stdout is a pipe and COLUMNS is
not set, as there. Before, rich cut every table to 80 columns (`to…`, `NC…` for the
fleet's headers) and COLUMNS=0 printed nothing at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each run starts a torch child or reads snapshots: about a second

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
THREE_NODES = ("--facts", str(FIXTURES / "facts_2gpu.json"), "--facts", str(FIXTURES / "facts_cpu.json"),
               "--facts", str(FIXTURES / "facts_2gpu.json"))  # fmt: skip
HEADERS = ("node", "ranks", "torch", "NCCL", "driver", "GPU model", "GPUs (torch of NVML)", "InfiniBand", "/dev/shm")


def check(*args: str, columns: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "CUDA_VISIBLE_DEVICES")}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "gpudoctor", "check", *args], capture_output=True, text=True,
                          timeout=180, env=env)  # fmt: skip


def test_fleet_table_in_a_log_keeps_every_header_whole():
    r = check(*THREE_NODES)
    assert r.returncode == 1, r.stderr  # the CPU node differs
    header = next(line for line in r.stdout.splitlines() if "ranks" in line)
    assert all(h in header for h in HEADERS), header
    table = r.stdout.split("[✗]")[0]
    assert "…" not in table
    row = next(line for line in r.stdout.splitlines() if "facts_cpu" in line)
    assert "2.13.0+cpu (CPU build) *" in row and "not in this torch *" in row  # one row per node, uncut


def test_fleet_too_wide_for_columns_is_one_block_per_node():
    # The sibling: a width the table cannot fit (a narrow terminal, COLUMNS in a log) gets
    # one block per node, each fact whole on its own line, rather than a squeezed table.
    r = check(*THREE_NODES, columns="60")
    assert r.returncode == 1, r.stderr
    assert "…" not in r.stdout and "┃" not in r.stdout
    assert "node facts_cpu  ranks -" in r.stdout
    assert "    torch: 2.13.0+cpu (CPU build) *" in r.stdout and "    GPUs (torch of NVML): 0 of 0 *" in r.stdout


@pytest.mark.parametrize("columns", ["0", "3", "junk"])
def test_columns_zero_or_tiny_still_prints_the_report(columns):
    r = check("--facts", str(FIXTURES / "facts_cpu.json"), columns=columns)
    assert r.returncode == 0, r.stderr
    assert "check: healthy" in r.stdout and "[torch-build]" in r.stdout
    assert "Traceback" not in r.stderr
