"""A local run listens on 127.0.0.1 only (issue 24, item 3): the rendezvous store
rank 0 hosts and gloo's sockets, looked at from inside the ranks with psutil
while the job is up."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from gpudoctor.launch.supervisor import launch_function
from gpudoctor.launch.store import free_port

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RANK_PATH = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
pytestmark = pytest.mark.slow

# Each rank, with the process group up and every rank still in it, lists the
# addresses its process listens on.
SCRIPT = textwrap.dedent(
    """
    import json, os, psutil, sys, torch.distributed as dist
    dist.init_process_group("gloo")
    dist.barrier()
    bound = sorted({c.laddr.ip for c in psutil.Process().net_connections("inet") if c.status == "LISTEN"})
    sys.stdout.write("LISTEN " + json.dumps(bound) + "\\n")  # one write: the ranks share stdout
    sys.stdout.flush()
    dist.barrier()
    dist.destroy_process_group()
    """
)


def test_run_nproc_listens_on_loopback_only(tmp_path):
    script = tmp_path / "listen.py"
    script.write_text(SCRIPT)
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", str(script)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line.split(" ", 1)[1]) for line in r.stdout.splitlines() if line.startswith("LISTEN ")]
    assert len(lines) == 2, r.stdout
    assert lines[0], "rank 0 hosts the store: it listens somewhere"
    for bound in lines:
        assert set(bound) <= {"127.0.0.1"}, bound


def test_the_launcher_s_ranks_listen_on_loopback_only():
    env = {"PYTHONPATH": RANK_PATH}
    result = launch_function("launch_targets:listening", {}, 2, timeout=120, env=env)
    assert result.ok, [r.stderr_tail for r in result.ranks]
    for rank in range(2):
        with open(os.path.join(result.run_dir, f"rank{rank}.stdout")) as fh:
            bound = json.loads(fh.read().split("LISTEN ", 1)[1])
        assert bound and set(bound) <= {"127.0.0.1"}, bound


def test_a_port_busy_on_another_address_is_not_chosen():
    """torch binds the store's port on every address: a port taken on any of them is not free."""
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        for _ in range(50):
            assert free_port() != taken
        from gpudoctor.launch.store import _free_everywhere

        assert not _free_everywhere(taken)


HEALTHY = textwrap.dedent(
    """
    import os, sys, time, torch, torch.distributed as dist
    dist.init_process_group("gloo")
    count_file, end = sys.argv[1], time.monotonic() + 90
    def forged():
        try:
            return int(open(count_file).read() or 0)
        except (OSError, ValueError):
            return 0
    while True:  # until the forger has been at it a while: every rank agrees when (MAX)
        stop = torch.tensor([float(forged() >= 20 or time.monotonic() > end)])
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item():
            break
        time.sleep(0.05)
    dist.barrier()
    print("healthy done", flush=True)
    """
)

# Another process that reaches the job's store: rewrites rank 1's published trace so
# that its last call disagrees with rank 0's (a broadcast where rank 0 all-reduces).
FORGER = textwrap.dedent(
    """
    import json, sys, time
    from datetime import timedelta
    from torch.distributed import TCPStore
    port, prefix, count_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    store = None
    forged = 0
    while True:
        try:
            store = store or TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=5), wait_for_workers=False)
            if store.check([prefix + "/trace/0"]):
                trace = json.loads(store.get(prefix + "/trace/0"))
                text = json.dumps(trace).replace('"all_reduce"', '"broadcast"')
                text = text.replace('"rank": 0', '"rank": 1')
                store.set(prefix + "/trace/1", text)
                forged += 1
                with open(count_file, "w") as fh:
                    fh.write(str(forged))
        except Exception:
            store = None
        time.sleep(0.05)
    """
)


def test_a_forged_trace_in_the_job_s_store_does_not_end_a_healthy_torchrun_job(tmp_path):
    (tmp_path / "healthy.py").write_text(HEALTHY)
    (tmp_path / "forger.py").write_text(FORGER)
    port = free_port()
    count = tmp_path / "forged"
    env = dict(os.environ)
    env.pop("GPUDOCTOR_RUN", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", "2",
           "--master-addr", "127.0.0.1", "--master-port", str(port), "--rdzv-id", "forged",
           "-m", "gpudoctor", "run", "--hang-timeout", "30", str(tmp_path / "healthy.py"), str(count)]  # fmt: skip
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    forger = subprocess.Popen([sys.executable, str(tmp_path / "forger.py"), str(port), "gpudoctor/forged/0", str(count)])
    try:
        out, err = job.communicate(timeout=150)
    finally:
        job.kill()
        forger.kill()
        forger.wait()
    assert job.returncode == 0, err[-3000:]
    assert int(count.read_text()) >= 20  # the forger did reach the store, again and again
    assert out.count("healthy done") == 2 and "stopped (mismatch)" not in err
