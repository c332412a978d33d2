"""Every output a user names goes through one writer (core/user_file.write_output):
for each flag (`run --json`, `run --trace`, `report -o`, `train-smoke --save`) a
character device made for the test, a FIFO, a directory and a dangling link. A
device or FIFO is written in place and stays what it was (`--save`: refused, its
checkpoint is read back); a directory or a dangling link is refused before any
work starts (exit 2, one line); a regular file is replaced by a private one."""

import os
import stat
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]
ROOT = os.geteuid() == 0
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)  # /dev/null's and /dev/full's numbers
STEPS = """import torch
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    opt.step()
"""


def _env():
    env = dict(os.environ)
    for name in ("GPUDOCTOR_RUN", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    return env


def _gpudoctor(*args, timeout=120):
    return subprocess.run([*GPUDOCTOR, *args], capture_output=True, text=True, timeout=timeout, env=_env())


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "hi.py"
    path.write_text('print("hi")\n')
    return str(path)


def _device(tmp_path, name, number=NULL):
    path = tmp_path / name
    os.mknod(path, 0o666 | stat.S_IFCHR, number)
    return path


def _is_device(path, number=NULL):
    st = os.lstat(path)
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == number


FLAGS = {
    "run --json": lambda out, script: ["run", "--json", out, script],
    "run --trace": lambda out, script: ["run", "--trace", out, script],
    "report -o": lambda out, script: ["report", "-o", out, "--skip", "allreduce,train-smoke"],
    "train-smoke --save": lambda out, script: ["train-smoke", "--save", out],
}


def _said_once(r, *words):
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert "Traceback" not in r.stderr and len(lines) == 1, r.stderr
    assert all(w in lines[0] for w in words), r.stderr


@pytest.mark.parametrize("flag", FLAGS)
def test_a_directory_is_refused_before_any_work(tmp_path, script, flag):
    target = tmp_path
    if flag == "train-smoke --save":  # --save DIR means DIR/train-smoke.pt: a directory there
        (tmp_path / "train-smoke.pt").mkdir()
    r = _gpudoctor(*FLAGS[flag](str(target), script), timeout=60)
    assert r.returncode == 2 and "hi" not in r.stdout
    _said_once(r, "directory")


@pytest.mark.parametrize("flag", FLAGS)
def test_a_dangling_link_is_refused_before_any_work(tmp_path, script, flag):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere" / "x")
    r = _gpudoctor(*FLAGS[flag](str(link), script), timeout=60)
    assert r.returncode == 2 and "hi" not in r.stdout
    _said_once(r, "broken symbolic link")
    assert os.path.islink(link) and not (tmp_path / "nowhere").exists()


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
@pytest.mark.parametrize("flag", ["run --json", "run --trace", "report -o"])
def test_a_device_is_written_in_place_never_replaced(tmp_path, script, flag):
    dev = _device(tmp_path, "out")
    r = _gpudoctor(*FLAGS[flag](str(dev), script))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    assert _is_device(dev), "the device node was replaced"
    assert not [p for p in os.listdir(tmp_path) if p not in ("out", "hi.py")], os.listdir(tmp_path)


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_trace_to_a_full_device_says_it_was_not_written(tmp_path, script):
    dev = _device(tmp_path, "full", FULL)
    steps = tmp_path / "steps.py"  # a script with steps, so there is a trace to write
    steps.write_text(STEPS)
    r = _gpudoctor("run", "--trace", str(dev), str(steps))
    assert "trace written" not in r.stderr and r.returncode == 1, r.stderr  # the trace asked for is not there
    assert f"could not write the trace: no space left on {dev}" in r.stderr, r.stderr
    assert _is_device(dev, FULL)


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_save_to_a_device_or_fifo_is_refused_before_any_rank(tmp_path, script):
    dev = _device(tmp_path, "ckpt")
    os.mkfifo(tmp_path / "fifo")
    for target in (dev, tmp_path / "fifo"):
        r = _gpudoctor(*FLAGS["train-smoke --save"](str(target), script), timeout=60)
        assert r.returncode == 2
        _said_once(r, "--save", "not a regular file")
    assert _is_device(dev) and stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


@pytest.mark.parametrize("flag", ["run --json", "run --trace"])
def test_a_fifo_is_written_in_place_when_read(tmp_path, script, flag):
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    if flag == "run --trace":  # a script with steps: there is a trace to write
        script = os.path.join(TESTS, "scripts", "straggler", "job.py")
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        r = _gpudoctor(*FLAGS[flag](str(fifo), script), *(["--steps", "3"] if flag == "run --trace" else []))
        got = reader.communicate(timeout=60)[0]
    finally:
        reader.kill()
    assert r.returncode in (0, 1) and "gpudoctor run: could not write" not in r.stderr, r.stderr
    assert got.lstrip().startswith(b"{") and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_regular_file_is_replaced_by_a_private_one(tmp_path, script):
    out = tmp_path / "out.json"
    out.write_text("old")
    os.chmod(out, 0o644)
    kept = tmp_path / "kept.json"
    link = tmp_path / "link.json"
    kept.write_text("old")
    link.symlink_to(kept)
    for target in (out, link):
        r = _gpudoctor("run", "--json", str(target), script)
        assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("{") and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert os.path.islink(link) and kept.read_text().startswith("{")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("form", [[], ["--json"], ["--markdown"]])
def test_a_full_stdout_is_said_on_stderr_not_lost_silently(form):
    log = os.path.join(TESTS, "fixtures", "logs", "cuda_fork.log")
    with open("/dev/full", "w") as full:
        r = subprocess.run([*GPUDOCTOR, "diagnose", log, *form], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60, env=_env())
    assert r.returncode == 1
    _said_once(r, "could not write the report to standard output", "No space left")
