"""The supervisor with real child processes on 127.0.0.1 (gloo), including every
failure kind: each must name the right rank, end in bounded time, and leave no
process behind."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from gpudoctor.launch.supervisor import launch
from gpudoctor.launch.supervisor import launch_function
from gpudoctor.hang.failures import launch_findings
from gpudoctor.hang.meaning import readable_tail
from gpudoctor.hang.verdict import root_cause
from launch_targets import Summed
from orphans import TAG_ENV, kill_all, leftovers, new_tag

HERE = os.path.dirname(os.path.abspath(__file__))
# The ranks import launch_targets from here and gpudoctor from where this test's did.
RANK_PATH = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
pytestmark = pytest.mark.slow


def run(target, config, nproc, timeout=60, fault=None, tag=None):
    env = {"PYTHONPATH": RANK_PATH, TAG_ENV: tag or new_tag()}
    if fault:
        env["GPUDOCTOR_FAULT"] = fault
    return launch_function(f"launch_targets:{target}", config, nproc, timeout=timeout, env=env, result_type=Summed)


# One rank and two: three ranks through the same supervisor are test_plain_command_runs_with_env_rendezvous's.
@pytest.mark.parametrize("nproc", [1, 2])
def test_all_ranks_succeed_and_return_results(nproc):
    result = run("allreduce_sum", {}, nproc)
    assert result.ok, launch_findings(result)
    expected = sum(range(nproc))
    assert [r.sum for r in result.results] == [expected] * nproc
    assert len({r.pid for r in result.results}) == nproc
    assert launch_findings(result) == []


def test_a_rank_function_that_returns_a_dict_fails_its_rank():
    result = run("returns_a_dict", {}, 1)
    assert [r.state for r in result.ranks] == ["raised"]
    assert result.ranks[0].error.type == "TypeError" and "not a frozen dataclass" in result.ranks[0].error.message


def test_nonzero_exit_is_reported_by_rank_with_its_code():
    tag = new_tag()
    result = run("sleep_then_exit", {"bad": 1, "code": 7, "sleep": 0.2}, 2, tag=tag)
    assert not result.ok
    assert root_cause(result, {}).rank == 1
    assert result.ranks[1].state == "exited" and result.ranks[1].exitcode == 7
    first = launch_findings(result)[0]
    assert first.id == "rank-crashed" and "rank 1" in first.title and "code 7" in first.title
    assert leftovers(tag) == []


@pytest.mark.parametrize(
    "fault, state, finding_id",
    [
        # The launcher's own view of a crash (its signal, the stack it kept) and of a hang
        # (the stack dumped on SIGUSR1). A rank that raises, one that never joins and a
        # hang on rank 0 take the same paths; tests/e2e/test_allreduce.py runs all six
        # faults through the command that users type and asserts the same (the root rank
        # and state, one error and its peers as victims, bounded time, no orphans).
        ("1:crash", "signaled", "rank-crashed"),
        ("1:hang", "hung", "rank-hung"),
    ],
)
def test_fault_names_the_failing_rank_in_bounded_time_without_orphans(fault, state, finding_id):
    bad = int(fault.split(":")[0])
    # A rank's start (python, import torch) must fit in the watchdog, even on a busy CI machine.
    timeout = 10
    tag = new_tag()
    started = time.monotonic()
    result = run("allreduce_sum", {"pg_timeout": 120}, 2, timeout=timeout, fault=fault, tag=tag)
    elapsed = time.monotonic() - started
    assert elapsed < timeout + result.startup_s + 10  # the ranks' start-up is not the watchdog's to count
    assert not result.ok
    cause = root_cause(result, {})
    assert cause.rank == bad and result.ranks[bad].state == state
    findings = launch_findings(result)
    assert findings[0].id == finding_id
    assert f"rank {bad}" in findings[0].title
    assert findings[0].severity.value == "error"
    assert findings[0].fix and findings[0].why
    # Only the root cause is an error: its peers are reported as victims.
    assert all(f.severity.value != "error" for f in findings[1:])
    assert leftovers(tag) == []
    # What the same job shows of the failing rank itself (once two jobs of their own).
    if state == "signaled":  # named by its signal, and the stack it had kept
        crashed = result.ranks[bad]
        assert crashed.signal == "SIGSEGV" and crashed.exitcode == -signal.SIGSEGV
        assert any("fault_point" in line for line in crashed.stderr_tail)
    if state == "hung":  # where it is stuck: the Python stack dumped on SIGUSR1
        assert "_sleep_forever" in "\n".join(readable_tail(result.ranks[bad].stderr_tail, 30))


def test_grandchildren_of_a_hung_rank_are_killed_too(tmp_path):
    tag = new_tag()
    result = run("spawn_grandchild", {"dir": str(tmp_path)}, 2, timeout=10, tag=tag)  # room for a slow start
    assert result.timed_out
    pids = [int((tmp_path / f"grandchild{r}.pid").read_text()) for r in range(2)]
    assert len(set(pids)) == 2  # each rank started its own grandchild
    assert leftovers(tag) == []
    assert [p for p in pids if _alive(p)] == []  # by pid too, in case one lost its tag


def _daemon_pids(folder, nproc: int, limit_s: float = 60.0) -> list[int]:
    deadline = time.monotonic() + limit_s
    while len(list(folder.glob("daemon*.pid"))) < nproc:
        assert time.monotonic() < deadline, "the ranks never started their daemons"
        time.sleep(0.1)
    return [int((folder / f"daemon{r}.pid").read_text()) for r in range(nproc)]


def _gone(pids: list[int], limit_s: float) -> list[int]:
    """The pids still alive after up to limit_s."""
    deadline = time.monotonic() + limit_s
    while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def test_a_daemon_a_rank_double_forked_is_swept_when_the_job_ends(tmp_path):
    tag = new_tag()
    try:
        result = run("double_fork_daemon", {"dir": str(tmp_path)}, 2, timeout=10, tag=tag)
        assert result.timed_out
        pids = _daemon_pids(tmp_path, 2, limit_s=0)
        assert _gone(pids, 5.0) == []  # gone by the time launch returned, or at once after
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


DAEMON_DRIVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {here!r})
    from gpudoctor.launch.supervisor import launch_function
    launch_function("launch_targets:double_fork_daemon", {{"dir": {dir!r}}}, 2, timeout=300,
                    env={{"PYTHONPATH": {rank_path!r}}})
    """
)


def test_a_double_forked_daemon_is_swept_even_when_the_supervisor_is_sigkilled(tmp_path):
    """Nothing runs in a SIGKILLed supervisor: its ranks die by PR_SET_PDEATHSIG, and the
    daemon one of them left behind (its own session, a child of init) by the sweeper."""
    tag = new_tag()
    pids: list[int] = []
    driver = subprocess.Popen(
        [sys.executable, "-c", DAEMON_DRIVER.format(here=HERE, rank_path=RANK_PATH, dir=str(tmp_path))],
        env=dict(os.environ, **{TAG_ENV: tag}),
    )
    try:
        pids += _daemon_pids(tmp_path, 2)
        # Each left the job's session, so every rank's process group too (a group lives in one session).
        assert all(os.getsid(p) != os.getsid(driver.pid) for p in pids)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        assert _gone(pids, 15.0) == []
        assert leftovers(tag, settle_s=10) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_plain_command_runs_with_env_rendezvous():
    # A plain script using env:// init: the supervisor's store serves it, as torchrun's does.
    code = textwrap.dedent(
        """
        import torch, torch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.ones(3) * dist.get_rank()
        dist.all_reduce(t)
        print(int(t.sum().item()))
        dist.destroy_process_group()
        """
    )
    # Two ranks: a third (each imports torch) met over the same store says nothing more.
    result = launch([sys.executable, "-c", code], 2, timeout=60)
    assert result.ok
    outputs = [open(os.path.join(result.run_dir, f"rank{r}.stdout")).read().strip() for r in range(2)]
    assert outputs == ["3"] * 2  # (0 + 1) * 3 elements, on every rank


DRIVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {here!r})
    from gpudoctor.launch.supervisor import launch_function
    r = launch_function("launch_targets:spawn_grandchild", {{"dir": {dir!r}}}, 2, timeout=120,
                        env={{"PYTHONPATH": {rank_path!r}}})
    print("interrupted" if r.interrupted else "not interrupted", flush=True)
    sys.exit(130 if r.interrupted else 0)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_supervisor_tears_everything_down(tmp_path, sig):
    tag = new_tag()
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER.format(here=HERE, rank_path=RANK_PATH, dir=str(tmp_path))],
        env=dict(os.environ, **{TAG_ENV: tag}),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("grandchild*.pid"))) < 2:
            assert time.monotonic() < deadline, "ranks never started"
            time.sleep(0.1)
        driver.send_signal(sig)
        out, _ = driver.communicate(timeout=30)
        assert driver.returncode == 130
        assert "interrupted" in out
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
        if driver.poll() is None:
            driver.kill()


def test_the_supervisor_wakes_when_a_rank_exits_not_at_its_next_poll():
    from gpudoctor.launch.supervisor import _Exits

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    exits = _Exits([proc])
    try:
        started = time.monotonic()
        exits.wait([proc], 30.0)
        assert time.monotonic() - started < 15.0
    finally:
        exits.close()
        proc.wait(timeout=30)


def test_rank_0_s_store_port_is_free_and_outside_the_ports_the_kernel_hands_out():
    """Rank 0 binds the port a moment after the supervisor chose it: in that window no
    outgoing connection or bind(0) anywhere on the machine may be given it."""
    import socket

    from gpudoctor.launch.store import TORCH_DEFAULT_PORTS, _ephemeral_low, listen_loopback

    low = _ephemeral_low()
    for _ in range(20):
        with listen_loopback() as held:
            port = held.getsockname()[1]
        assert 20000 <= port < low and port not in TORCH_DEFAULT_PORTS
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free again once let go



def _first_rank_signals_the_supervisor(monkeypatch, tmp_path, sig):
    """The first rank, between fork and exec, signals the supervisor: the signal lands
    while the supervisor is inside subprocess.Popen, waiting for that rank's exec."""
    from gpudoctor.launch import lifeline

    real, supervisor, flag = lifeline.child_setup, os.getpid(), str(tmp_path / "signalled")

    def child_setup(parent_pid, *, own_group):
        setup = real(parent_pid, own_group=own_group)

        def setup_then_signal():
            setup()
            try:
                os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # the first rank only
            except FileExistsError:
                return
            os.kill(supervisor, sig)

        return setup_then_signal

    monkeypatch.setattr(lifeline, "child_setup", child_setup)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_while_the_ranks_start_stops_every_rank_it_started(monkeypatch, tmp_path, sig):
    """Raised inside Popen, the signal would lose the rank being started (reported as
    'all 0 ranks were stopped'): it is held until every started rank is known."""
    _first_rank_signals_the_supervisor(monkeypatch, tmp_path, sig)
    tag = new_tag()
    try:
        result = launch([sys.executable, "-c", "import time; time.sleep(60)"], 2, timeout=60, env={TAG_ENV: tag})
        assert result.interrupted and result.stop_signal == sig
        assert len(result.ranks) == 2
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


def test_a_hangup_the_caller_ignores_stays_ignored_while_the_ranks_start(monkeypatch, tmp_path):
    """nohup: SIGHUP is SIG_IGN before the job, so a hang-up during it is not a stop."""
    _first_rank_signals_the_supervisor(monkeypatch, tmp_path, signal.SIGHUP)
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        result = launch([sys.executable, "-c", "pass"], 2, timeout=60, env={TAG_ENV: new_tag()})
    finally:
        signal.signal(signal.SIGHUP, before)
    assert not result.interrupted and result.ok
