"""`gpudoctor check` as a user runs it: a real subprocess, real probes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.probe.facts import Facts
from gpudoctor.probe.nvml import NvmlSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from session_jobs import run_once  # noqa: E402

pytestmark = pytest.mark.slow  # each run starts a torch child: about a second

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CMD = [sys.executable, "-m", "gpudoctor", "check"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("CUDA_VISIBLE_DEVICES", None)
    full_env.update(env or {})
    return subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=180, env=full_env)


def no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stdout and "Traceback" not in r.stderr, r.stderr[-2000:]


def _has_driver() -> bool:
    session = NvmlSession()
    try:
        return session.start()
    finally:
        session.close()


cpu_only = pytest.mark.skipif(_has_driver(), reason="describes a machine without an NVIDIA driver")


@pytest.fixture(scope="module")
def piped_json_run(tmp_path_factory) -> subprocess.CompletedProcess:
    """`gpudoctor check --json | python -m json.tool`: the pipe test_json_pipes_through_json_tool
    is about, and the document the other tests read (json.tool prints what it parsed), one run
    per session (the module's tests are often given to several xdist workers: tests/session_jobs.py)."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    pipeline = f'set -o pipefail; "{sys.executable}" -m gpudoctor check --json | "{sys.executable}" -m json.tool'
    start = lambda _: subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True, timeout=180, env=env)  # noqa: E731
    return run_once(tmp_path_factory, "check-json-piped", start)[0]


@pytest.fixture(scope="module")
def json_run(piped_json_run) -> dict:
    assert piped_json_run.returncode == 0, piped_json_run.stderr
    return json.loads(piped_json_run.stdout)


@cpu_only
def test_check_on_a_cpu_machine_says_it_plainly():
    r = run()
    no_traceback(r)
    assert r.returncode == 0
    out = " ".join(r.stdout.split())  # undo the terminal's line wrapping
    assert "No NVIDIA driver or GPU" in out
    assert "CPU build" in out
    assert "gloo is available" in out
    assert "`allreduce` and `train-smoke` will run on CPU with gloo" in out
    assert "check: healthy" in out


def test_json_parses_and_carries_the_facts(json_run):
    d = json_run
    assert d["command"] == "check" and d["ok"] is True and isinstance(d["gpudoctor"], str)
    for f in d["findings"]:
        assert set(f) >= {"id", "severity", "title", "evidence", "why", "fix"}
    assert "check-failed" not in [f["id"] for f in d["findings"]]
    facts = Facts.from_dict(d["facts"])
    assert facts.torch.status == "ok"


def test_json_pipes_through_json_tool(piped_json_run):
    r = piped_json_run
    assert r.returncode == 0 and r.stdout.lstrip().startswith("{"), r.stderr


def test_markdown_has_versions_gpus_findings():
    r = run("--markdown")
    assert r.returncode == 0
    assert r.stdout.startswith("## gpudoctor check")
    for section in ("### Versions", "### GPUs", "### Findings", "| torch |"):
        assert section in r.stdout


def test_facts_file_saved_with_json_reproduces_the_diagnosis(json_run, tmp_path):
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(json_run))
    r = run("--facts", str(saved), "--json")
    assert r.returncode == 0
    again = json.loads(r.stdout)
    assert [f["id"] for f in again["findings"]] == [f["id"] for f in json_run["findings"]]
    assert again["facts"] == json_run["facts"]


def test_facts_from_a_two_gpu_machine():
    r = run("--facts", str(FIXTURES / "facts_2gpu.json"), env={"COLUMNS": "160"})
    no_traceback(r)
    assert r.returncode == 0
    assert "cuda:1" in r.stdout and "GPU-c81f4b72-3d5e-4a90-b2c6-7e0d9f1a5b84" in r.stdout
    assert "torch sees all 2 GPUs" in r.stdout


def test_garbage_visible_devices_is_a_finding_not_a_crash():
    r = run("--json", env={"CUDA_VISIBLE_DEVICES": "garbage"})
    no_traceback(r)
    assert r.returncode == 0
    d = json.loads(r.stdout)
    [f] = [f for f in d["findings"] if f["id"] == "visible-devices-invalid"]
    assert f["severity"] == "warn" and f["evidence"]["CUDA_VISIBLE_DEVICES"] == "garbage"
    assert d["facts"]["torch"]["cuda_visible_devices"] == "garbage"
    assert run("--strict", env={"CUDA_VISIBLE_DEVICES": "garbage"}).returncode == 1


def test_broken_torch_is_an_error_finding_without_a_traceback(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        'raise ImportError("libcudart.so.12: cannot open shared object file: No such file or directory")\n'
    )
    r = run(env={"PYTHONPATH": str(tmp_path)})
    no_traceback(r)
    assert r.returncode == 1
    out = " ".join(r.stdout.split())
    assert "torch-import-failed" in out and "libcudart.so.12" in out
    assert "check: problems found" in out


@pytest.mark.parametrize("content", [None, "{ not json", '{"facts": {"torch": 3}}'])
def test_bad_facts_file_is_a_one_line_usage_error(tmp_path, content):
    path = tmp_path / "facts.json"
    if content is not None:
        path.write_text(content)
    r = run("--facts", str(path))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpudoctor: error: ") and str(path) in lines[0]


def test_visible_what_if(json_run):
    r = run("--visible", "1,0", "--json")
    no_traceback(r)
    assert r.returncode == 0
    d = json.loads(r.stdout)
    assert d["facts"]["visible_override"] == "1,0"
    assert d["facts"]["torch"]["cuda_visible_devices"] == "1,0"  # the child really ran with it
    assert d["facts"]["environment"]["variables"].get("CUDA_VISIBLE_DEVICES") is None
    [f] = [f for f in d["findings"] if f["id"] == "visible-override"]
    assert f["evidence"]["--visible"] == "1,0"


def test_visible_cannot_combine_with_facts():
    r = run("--facts", str(FIXTURES / "facts_cpu.json"), "--visible", "0")
    assert r.returncode == 2 and "--visible" in r.stderr


def test_ctrl_c_leaves_no_torch_child_behind():
    import signal
    import time

    import psutil

    env = dict(os.environ)
    proc = subprocess.Popen([*CMD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 30
        children = []
        while not children and time.monotonic() < deadline and proc.poll() is None:
            children = parent.children()
            time.sleep(0.02)
        assert children, "the torch probe child never started"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    # gpudoctor kills and reaps the child before it exits: none may still run now.
    assert [c.pid for c in children if c.is_running()] == []


def test_gpu_health_of_a_recorded_device():
    """The whole check, with NVML answering as the GB200 of NVSentinel#1666 (power brake
    asserted on GPU 0): the health finding, its place in the report, the exit code."""
    fake = str(FIXTURES.parent / "fake_pynvml")
    src = str(Path(__file__).resolve().parents[2] / "src")
    r = run("--json", env={"PYTHONPATH": os.pathsep.join([fake, src]), "GPUDOCTOR_TEST_NVML": "gb200_power_brake"})
    no_traceback(r)
    data = json.loads(r.stdout)
    health = [f for f in data["findings"] if f["area"] == "GPU health"]
    assert [f["id"] for f in health if f["severity"] != "info"] == ["gpu-clocks-slowdown"], health
    assert "HW Power Brake Slowdown" in health[0]["title"]
    assert data["facts"]["nvml"]["gpus"][0]["health"]["clock_events"] == ["HW Slowdown", "HW Power Brake Slowdown"]
