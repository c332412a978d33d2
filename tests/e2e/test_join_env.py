"""The environment around a distributed job, end to end: stray or malformed
launcher variables, a MASTER_ADDR that does not resolve, a join whose peers
never come, and --nproc out of range or crowding the cores. The real command
in a subprocess, every wait bounded."""

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402

LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GPUDOCTOR_FAULT")
LAUNCH_VARS += ("TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE", "GPUDOCTOR_RUN_DIR", "SLURM_PROCID", "SLURM_NTASKS")


def gpudoctor(*args, env=None, timeout=60, tag=None, prefix=()):
    full = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS}
    full.update({TAG_ENV: tag or new_tag()}, **(env or {}))
    start = time.monotonic()
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "gpudoctor", *args], env=full, capture_output=True, text=True, timeout=timeout
    )
    return proc, time.monotonic() - start


def free_port() -> int:
    # below the kernel's ephemeral range, free on every interface: an outgoing connection of a
    # parallel test is never handed it in between (a port the kernel picked from that range can be)
    from gpudoctor.launch.store import free_port as unused_port

    return unused_port()


@pytest.mark.parametrize(
    "command, env, finding_id, named",
    [
        ("allreduce", {"RANK": "0", "WORLD_SIZE": "abc"}, "distributed-env-malformed", "WORLD_SIZE='abc'"),
        ("train-smoke", {"WORLD_SIZE": "2", "RANK": "x"}, "distributed-env-malformed", "RANK='x'"),
        ("train-smoke", {"RANK": "1", "WORLD_SIZE": "2"}, "distributed-env-incomplete", "RANK=1 WORLD_SIZE=2"),
        ("allreduce", {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "nohost.invalid", "MASTER_PORT": "29500"},
         "master-addr-unresolvable", "nohost.invalid"),
        ("train-smoke", {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "http"},
         "master-port-invalid", "'http'"),
        ("check", {"RANK": "0", "WORLD_SIZE": "abc"}, "distributed-env-malformed", "WORLD_SIZE='abc'"),
    ],
)
def test_a_bad_launch_environment_is_a_finding_at_once(command, env, finding_id, named):
    proc, took = gpudoctor(command, "--json", env=env)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [f["id"] for f in findings] == [finding_id]
    assert named in findings[0]["title"] and findings[0]["fix"]
    assert took < 20  # no rendezvous was tried: nothing waits for a timeout


@pytest.mark.slow
def test_stray_rank_variables_are_ignored_when_nproc_is_given():
    tag = new_tag()
    proc, _ = gpudoctor(
        "allreduce", "--nproc", "2", "--sizes", "4K", "--iters", "2", "--warmup", "1", "--json",
        env={"RANK": "1", "WORLD_SIZE": "2"}, tag=tag, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    ignored = [f for f in report["findings"] if f["id"] == "distributed-env-ignored"]
    assert ignored and "--nproc was given" in ignored[0]["title"] and report["summary"]["mode"] == "local"
    assert leftovers(tag) == []


@pytest.mark.slow
@pytest.mark.parametrize("command", ["allreduce", "train-smoke", "check"])
def test_a_join_whose_peers_never_come_names_the_address_and_the_missing_rank(command):
    tag = new_tag()
    try:
        for _ in range(3):  # a free port can be taken by a parallel test before rank 0 binds it: another port then
            port = free_port()
            env = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
            proc, took = gpudoctor(command, "--timeout", "6", "--json", env=env, tag=tag, timeout=90)
            assert proc.returncode == 1, proc.stderr
            finding = json.loads(proc.stdout)["findings"][0]
            if finding["evidence"].get("diagnosis") != "store-address-in-use":
                break
        assert finding["id"] == "rendezvous-incomplete"
        assert f"127.0.0.1:{port}" in finding["title"] and "rank 1 missing" in finding["title"]
        assert finding["evidence"]["joined"] == [0] and finding["evidence"]["missing"] == [1]
        assert "Traceback" not in json.dumps(finding)
        assert f"waiting at 127.0.0.1:{port} for 1 of 2 ranks" in proc.stderr
        assert took < 60
    finally:
        kill_all(leftovers(tag, settle_s=0))


@pytest.mark.slow
@pytest.mark.parametrize("command", ["allreduce", "train-smoke", "check"])
def test_rank_0_finding_its_port_taken_reports_it_in_json(command):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        proc, _ = gpudoctor(command, "--timeout", "6", "--json", env=env, timeout=90)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    finding = json.loads(proc.stdout)["findings"][0]
    assert finding["id"] == "joined-rank-failed" and finding["severity"] == "error"
    assert finding["evidence"]["diagnosis"] == "store-address-in-use" and "EADDRINUSE" in finding["evidence"]["exception"]


@pytest.mark.parametrize(
    "args", [["allreduce", "--nproc", "10000"], ["train-smoke", "--nproc", "257"], ["run", "--nproc", "10000", "x.py"]]
)
def test_nproc_has_one_limit_and_message_for_every_command(args):
    proc, _ = gpudoctor(*args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"gpudoctor: error: --nproc must be between 1 and 256 (got {args[2]})"]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_ranks_crowding_one_core_are_warned_about_before_they_start(tmp_path):
    script = tmp_path / "forever.py"
    script.write_text("import time\nwhile True:\n    time.sleep(0.1)\n")
    tag = new_tag()
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS}
    env[TAG_ENV] = tag
    one_core = ["taskset", "-c", str(min(os.sched_getaffinity(0)))]
    proc = subprocess.Popen(
        [*one_core, sys.executable, "-m", "gpudoctor", "run", "--nproc", "4", str(script)],
        env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
    )
    try:
        seen, deadline = "", time.monotonic() + 60
        while "[ranks-outnumber-cores]" not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen
            if select.select([proc.stderr], [], [], 0.5)[0]:
                seen += os.read(proc.stderr.fileno(), 65536).decode(errors="replace")  # what is there, unbuffered
        assert "4 ranks on 1 CPU core" in seen
        proc.terminate()
        proc.communicate(timeout=30)
        assert proc.returncode in (-15, 143)  # killed before its ranks started, or stopped them
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_a_joined_rank_whose_store_port_is_held_by_a_silent_listener_ends_at_its_timeout():
    """Issue 39 high 2: a port clash. torch's client would wait in its handshake forever."""
    tag = new_tag()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts (the kernel does), never answers
        port = silent.getsockname()[1]
        try:
            env = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
            proc, took = gpudoctor("allreduce", "--timeout", "4", env=env, tag=tag, timeout=120)
            assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
            assert f"something else answers on port {port}" in proc.stderr, proc.stderr[-2000:]
            assert took < 4 + 45  # its timeout, the start-up and the shut-down on a busy machine
            agent = {**env, "RANK": "0", "TORCHELASTIC_USE_AGENT_STORE": "True"}  # rank 0 reports it as a finding
            proc, _ = gpudoctor("allreduce", "--timeout", "4", "--json", env=agent, tag=tag, timeout=120)
            finding = json.loads(proc.stdout)["findings"][0]
            assert finding["id"] == "rendezvous-store-silent" and finding["evidence"]["port accepts connections"] is True
        finally:
            kill_all(leftovers(tag, settle_s=0))
