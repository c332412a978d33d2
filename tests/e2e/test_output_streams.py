"""Output paths and streams that are not what they seem (issue 24, item 7): a pipe
nothing reads, a full device, a closed stdout, a reader that leaves early, a
working directory that is gone, a full temp disk, a MASTER_ADDR that does not
resolve. Each ends in bounded time with one plain line, never a traceback."""

import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from gpudoctor.core.user_file import FileRefused, check_writable

pytestmark = pytest.mark.slow
GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]


def _env(**extra):
    env = dict(os.environ, **extra)
    env.pop("GPUDOCTOR_RUN", None)
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        if name not in extra:
            env.pop(name, None)
    return env


@pytest.fixture
def hi(tmp_path):
    path = tmp_path / "hi.py"
    path.write_text('print("hi")\n')
    return str(path)


def test_run_json_to_a_pipe_nothing_reads_does_not_hang(tmp_path, hi):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    r = subprocess.run([*GPUDOCTOR, "run", "--json", str(fifo), hi], capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode == 1, r.stderr
    assert "pipe (FIFO) that nothing reads" in r.stderr and "Traceback" not in r.stderr


def test_report_to_a_pipe_nothing_reads_does_not_hang(tmp_path):
    fifo = tmp_path / "report.md"
    os.mkfifo(fifo)
    cmd = [*GPUDOCTOR, "report", "-o", str(fifo), "--skip", "allreduce,train-smoke"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=_env())
    assert r.returncode == 1, r.stderr
    assert "pipe (FIFO) that nothing reads" in r.stderr and "Traceback" not in r.stderr


def test_a_socket_is_no_output_file(tmp_path):
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(path)
        with pytest.raises(FileRefused, match="a socket"):
            check_writable(path)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_run_json_to_a_full_device_fails_and_says_so(hi):
    r = subprocess.run([*GPUDOCTOR, "run", "--json", "/dev/full", hi], capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode != 0
    assert "no space left on /dev/full" in r.stderr and "Traceback" not in r.stderr


def test_run_with_stdout_closed(hi):
    r = subprocess.run(["bash", "-c", '"$@" >&-', "_", *GPUDOCTOR, "run", hi], capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr


def test_run_in_a_working_directory_that_is_gone(tmp_path, hi):
    gone = tmp_path / "gone"
    gone.mkdir()
    code = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    r = subprocess.run(["bash", "-c", code, "_", str(gone), *GPUDOCTOR, "run", hi], capture_output=True, text=True, timeout=60, env=_env())
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "gpudoctor: error: the current directory is gone (No such file or directory): cd to one that exists and run it again"
    ]


def test_ranks_writing_to_a_pipe_whose_reader_left_end_quietly(tmp_path):
    script = tmp_path / "many.py"
    # one write per line: both ranks share the pipe, and print's pieces would interleave
    script.write_text("import sys, time\nfor i in range(3000):\n    sys.stdout.write(f'line {i}\\n'); sys.stdout.flush()\n    time.sleep(0.01)\n")
    code = '"$@" | head -1; echo "status ${PIPESTATUS[0]}" >&2'
    r = subprocess.run(["bash", "-c", code, "_", *GPUDOCTOR, "run", "--nproc", "2", str(script)],
                       capture_output=True, text=True, timeout=120, env=_env())  # fmt: skip
    assert r.stdout.startswith("line 0")
    assert "status 141" in r.stderr, r.stderr
    assert "peer" not in r.stderr and "0 error(s)" not in r.stderr and "BrokenPipeError" not in r.stderr


def test_an_unresolvable_master_addr_is_said_at_once(hi):
    env = _env(RANK="0", WORLD_SIZE="2", MASTER_ADDR="nohost.invalid", MASTER_PORT="29999")
    start = time.monotonic()
    r = subprocess.run([*GPUDOCTOR, "run", hi], capture_output=True, text=True, timeout=60, env=env)
    assert time.monotonic() - start < 30
    assert r.returncode == 1
    assert "MASTER_ADDR='nohost.invalid'" in r.stderr and "[master-addr-unresolvable]" in r.stderr
    assert "hi" not in r.stdout


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (needs root and a kernel that lets this process mount)."""
    mount = shutil.which("mount")
    path = tmp_path / "small"
    path.mkdir()
    if mount is None or os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    if subprocess.run([mount, "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(path)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_a_full_temp_disk_is_named(tmp_path, small_disk):
    (small_disk / "fill").write_bytes(b"\0" * 200_000)
    script = tmp_path / "fill.py"
    script.write_text(
        "import os, tempfile\n"
        "with open(os.path.join(tempfile.gettempdir(), 'big' + os.environ['RANK']), 'wb') as fh:\n"
        "    fh.write(b'x' * 10_000_000)\n"
    )
    r = subprocess.run([*GPUDOCTOR, "run", "--nproc", "2", str(script)], capture_output=True, text=True, timeout=120,
                       env=_env(TMPDIR=str(small_disk)))  # fmt: skip
    assert r.returncode != 0
    assert f"no space left on {small_disk}" in r.stderr, r.stderr
