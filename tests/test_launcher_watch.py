"""A joined rank whose launcher is killed stops and says so (launch/launcher_watch.py),
with real processes: a stand-in agent starts a rank, the agent is SIGKILLed, the
rank must end within seconds with one line on stderr."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from gpudoctor.launch.launcher_watch import watch_launcher
from gpudoctor.launch.rank import RankContext

RANK = textwrap.dedent(
    """
    import sys, time
    from gpudoctor.launch.launcher_watch import watch_launcher
    from gpudoctor.launch.rank import RankContext
    watch_launcher(RankContext(1, 2, 1, 2, joined_by=sys.argv[1]), poll_s=0.1)
    print("ready", flush=True)
    time.sleep(60)
    """
)
AGENT = textwrap.dedent(
    """
    import subprocess, sys, time
    rank = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], stdout=subprocess.PIPE,
                            stderr=open(sys.argv[3], "w"), text=True)
    assert rank.stdout.readline() == "ready\\n"
    print(rank.pid, flush=True)
    time.sleep(60)
    """
)


def start_agent(tmp_path, joined_by: str) -> tuple[subprocess.Popen, int]:
    err = tmp_path / "rank.err"
    agent = subprocess.Popen([sys.executable, "-c", AGENT, RANK, joined_by, str(err)], stdout=subprocess.PIPE, text=True)
    line = agent.stdout.readline()
    assert line.strip().isdigit(), line
    return agent, int(line)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (reaped by nobody yet) has ended too
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ")[-1][0] != "Z"


def ended_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_a_torchrun_rank_stops_when_its_agent_is_killed(tmp_path):
    agent, rank = start_agent(tmp_path, "torchrun")
    try:
        agent.kill()
        agent.wait(10)
        assert ended_within(rank, 20)
        said = (tmp_path / "rank.err").read_text()
        assert "rank 1: its launcher (torchrun agent, pid" in said and "is gone" in said
    finally:
        if alive(rank):
            os.kill(rank, signal.SIGKILL)


def test_a_rank_without_a_launcher_to_watch_is_left_alone(tmp_path):
    # started by hand with RANK/WORLD_SIZE ("env"): its parent is a shell, not a launcher
    assert watch_launcher(RankContext(0, 2, 0, 2, joined_by="env")) is None
    assert watch_launcher(None) is None
    agent, rank = start_agent(tmp_path, "env")
    try:
        agent.kill()
        agent.wait(10)
        assert not ended_within(rank, 1.5)
        assert (tmp_path / "rank.err").read_text() == ""
    finally:
        os.kill(rank, signal.SIGKILL)
