"""allreduce's average bus bandwidth (nccl-tests' "# Avg bus bandwidth"), the
in-place / out-of-place word, and --csv."""

import csv
import io
import os
import subprocess
import sys

import pytest

from gpudoctor.commands.allreduce.bandwidth import make_row, public_row, summarize
from gpudoctor.commands.allreduce.table import average_line, results_csv


def _rows(op: str):
    # 2 ranks; 1 ms, 2 ms and 4 ms at 1 MB, 4 MB and 16 MB: busbw 1.0, 2.0, 4.0 GB/s for all_reduce (2(n-1)/n = 1)
    return [make_row(op, nbytes, nbytes // 4, "float32", 2, [0, 0], [[t], [t]]) for nbytes, t in
            ((1_000_000, 1000.0), (4_000_000, 2000.0), (16_000_000, 4000.0))]  # fmt: skip


def test_average_is_the_mean_of_every_size_not_the_peak():
    summary = summarize(_rows("all_reduce"), 3)
    assert summary["avg_busbw_gbps"] == pytest.approx((1.0 + 2.0 + 4.0) / 3, rel=1e-3)
    assert summary["peak_busbw_gbps"] == pytest.approx(4.0, rel=1e-3)
    assert summary["placement"] == "in-place"
    assert average_line(summary) == "Avg bus bandwidth: 2.3333 GB/s over 3 size(s), in-place"


def test_gather_is_out_of_place():
    assert summarize(_rows("all_gather"), 3)["placement"] == "out-of-place"


def test_no_size_ran_no_average():
    summary = summarize([], 3)
    assert "avg_busbw_gbps" not in summary and average_line(summary) == ""


def test_csv_rows_are_the_json_rows():
    rows = [public_row(r) for r in _rows("all_reduce")]
    parsed = list(csv.DictReader(io.StringIO(results_csv(rows, summarize(_rows("all_reduce"), 3)))))
    assert [int(r["bytes"]) for r in parsed] == [1_000_000, 4_000_000, 16_000_000]
    assert {r["placement"] for r in parsed} == {"in-place"} and float(parsed[2]["busbw_gbps"]) == rows[2]["busbw_gbps"]


@pytest.mark.slow
def test_csv_from_a_real_run():
    env = {k: v for k, v in os.environ.items() if k != "GPUDOCTOR_FAULT"}
    r = subprocess.run([sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", "2", "--sizes", "4K,8K", "--iters", "2",
                        "--warmup", "1", "--csv"], capture_output=True, text=True, timeout=180, env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "op,bytes,count,dtype,time_us,algbw_gbps,busbw_gbps,wrong,placement"
    assert [line.split(",")[1] for line in lines[1:]] == ["4096", "8192"]
    assert "allreduce: healthy" in r.stderr
