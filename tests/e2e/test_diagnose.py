"""`gpudoctor diagnose` as users run it: a real subprocess on real files, a paste
on stdin, a real torchrun job's run folder, and the bad inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "logs"


def gpudoctor(*args: str, stdin: bytes | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", "diagnose", *args], input=stdin, capture_output=True, timeout=timeout
    )


def assert_usage_error(proc: subprocess.CompletedProcess, words: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.startswith("gpudoctor: error:") and words in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert proc.stdout == b""


def test_file_names_the_cause_first_and_exits_1():
    proc = gpudoctor(str(LOGS / "nccl_shm_container.log"))
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr
    assert "first failure" in out and "nccl-shm-segment" in out
    assert out.index("[nccl-shm-segment]") < out.index("[nccl-unhandled-system-error]")
    assert "--shm-size" in out


def test_json_is_one_object_with_the_root_cause():
    proc = gpudoctor("--json", str(LOGS / "launcher_sigkill.log"))
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["command"] == "diagnose" and data["ok"] is False
    assert data["findings"][0]["id"] == "launcher-sigkill"
    assert data["root_cause"]["rank"] == 0 and data["root_cause"]["exitcode"] == "-9"
    assert data["lines"] == 19  # every line of the file, comment included


def test_markdown_report():
    proc = gpudoctor("--markdown", str(LOGS / "dataloader_bus_error.log"))
    out = proc.stdout.decode()
    assert proc.returncode == 1 and out.startswith("## gpudoctor diagnose — problems found")
    assert "`dataloader-shm-bus-error`" in out


def test_stdin_paste_with_prefixes():
    paste = (LOGS / "slurm_labelled_crlf.log").read_bytes()
    proc = gpudoctor("--json", "-", stdin=paste)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert data["findings"][0]["id"] == "cuda-oom"
    assert data["root_cause"]["rank"] == 3 and data["root_cause"]["node"] == "gpu-node-03"


def test_healthy_log_exits_0():
    proc = gpudoctor(str(LOGS / "healthy_training.log"))
    assert proc.returncode == 0, proc.stdout.decode()
    assert "safe to ignore" in proc.stdout.decode()


def test_odd_but_valid_inputs(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    # an empty log is said to be empty, not healthy (issue 24): a file, tests/test_doors.py's
    # "diagnose empty.log" (the CLI's one line, no output, the API's same words); a paste here
    assert_usage_error(gpudoctor("-", stdin=b""), "standard input is empty")
    # a one-line paste, no newline at the end
    proc = gpudoctor("--json", "-", stdin=b"[rank6]: RuntimeError: CUDA error: invalid device ordinal")
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["root_cause"] == {"id": "cuda-invalid-device-ordinal", "line": 1, "role": "cause", "rank": 6}
    # UTF-16 without a BOM is text, not a binary file
    utf16 = tmp_path / "win.log"
    utf16.write_bytes((LOGS / "platform_libuv_built.log").read_text(encoding="utf-8").encode("utf-16-le"))
    proc = gpudoctor("--json", str(utf16))
    assert proc.returncode == 1 and json.loads(proc.stdout)["findings"][0]["id"] == "libuv-missing"


def test_explain_prints_one_pattern_and_rejects_unknown_ids():
    proc = gpudoctor("--explain", "nccl-duplicate-gpu")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("# nccl-duplicate-gpu")
    assert_usage_error(gpudoctor("--explain", "no-such-pattern"), "unknown pattern id")


def test_bad_inputs_are_one_line_usage_errors(tmp_path):
    # A missing file and no file at all: tests/test_doors.py's "diagnose no/such.log" and "diagnose"
    # (the same one line from the CLI, nothing on stdout, and the API's same words).
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    assert_usage_error(gpudoctor(str(binary)), "binary")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert_usage_error(gpudoctor(str(fifo)), "not a regular file")
    assert_usage_error(gpudoctor("--json", "--markdown", str(LOGS / "cuda_fork.log")), "choose one of")


def test_diagnose_does_not_import_torch():
    code = (
        "import sys\n"
        "from gpudoctor.cli.app import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')\n"
    )
    for args in (["diagnose", "--help"], ["diagnose", str(LOGS / "nccl_ib_remote.log")], ["diagnose", "--explain", "cuda-oom"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
        assert r.stdout.strip().endswith("NO-TORCH"), (args, r.stderr[-500:])


JOB = """
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    dist.init_process_group("gloo")
    if dist.get_rank() == 1:
        torch.zeros(1, device="cuda")  # a real failure on a CPU-only torch, or a GPU that is not there
    dist.barrier()

if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_folder_of_a_real_torchrun_job_names_the_root_cause_rank(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(JOB)
    logs = tmp_path / "logs"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # rank 1 fails the same way with or without GPUs
    launched = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", "--log-dir", str(logs), "--redirects", "3", str(script)],
        capture_output=True, timeout=240, env=env, cwd=tmp_path,
    )
    assert launched.returncode != 0
    assert list(logs.rglob("error.json")), launched.stderr.decode()[-2000:]
    proc = gpudoctor("--json", str(logs))
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert data["root_cause"]["rank"] == 1
    assert data["root_cause"]["reported_by"] == "earliest torchrun error file"
    head = data["findings"][0]
    assert head["evidence"]["role"] == "cause" and 1 in head["evidence"]["ranks"]
    assert all(f["evidence"].get("role") != "cause" or 0 not in f["evidence"].get("ranks", []) for f in data["findings"])


FR_JOB = """
import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for _ in range(2):
    dist.all_reduce(t)
if rank == 0:  # the bug: a collective that differs by rank
    work = dist.all_reduce(t, async_op=True)
else:
    work = dist.broadcast(t, src=0, async_op=True)
trace = torch._C._distributed_c10d._dump_fr_trace(includeCollectives=True, includeStackTraces=True, onlyActive=False)
with open(os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(rank), "wb") as f:
    f.write(trace)
os._exit(0)  # do not wait for the mismatched collective
"""


@pytest.mark.slow
def test_folder_with_flight_recorder_dumps_of_a_real_gloo_job(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(FR_JOB)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "TORCH_FR_BUFFER_SIZE": "2000", "TORCH_FR_DUMP_TEMP_FILE": str(run_dir / "fr_trace_rank_")}
    launched = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", str(script)],
        capture_output=True, timeout=240, env=env, cwd=tmp_path,
    )
    (run_dir / "torchrun.log").write_bytes(launched.stdout + launched.stderr)
    assert sorted(p.name for p in run_dir.glob("fr_trace_rank_*")) == ["fr_trace_rank_0", "fr_trace_rank_1"], launched.stderr[-2000:]
    proc = gpudoctor("--json", str(run_dir))
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert data["flight_recorder_ranks"] == [0, 1]
    head = data["findings"][0]
    assert head["id"] == "collective-mismatch"
    assert "rank 0 called all_reduce at" in head["title"] and "rank 1 called broadcast at" in head["title"]
    assert head["evidence"]["rank 0"].endswith("job.py:12") and head["evidence"]["rank 1"].endswith("job.py:14")
    assert data["root_cause"]["id"] == "collective-mismatch"


def test_stdin_on_a_terminal_says_how_to_end_the_paste():
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpudoctor", "diagnose", "-"],
            stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        os.close(follower)
        # One Ctrl-D at the start of a line ends the paste (a terminal's end is not
        # sticky: reading again after it waited for more typing).
        os.write(leader, b"[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n\x04")
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    finally:
        os.close(leader)
    assert "paste the log, then press Ctrl-D" in err, err
    assert proc.returncode == 1 and "cuda-oom" in out, (out, err)
