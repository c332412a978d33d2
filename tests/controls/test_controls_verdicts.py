"""Controls and siblings for the verdicts of issue 34, items 3, 5, 6 and 7 (branch
verdicts): for each verdict id, the healthy input that looks most like the failure
(test_control_*) must not get it, and the nearest input that needs another verdict
(test_sibling_*) gets its own."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from dataclasses import replace

import pytest

from facts_cases import by_id, gpu2_facts, ids, vary, with_env
from gpudoctor import api
from gpudoctor.checks.fleet import check_fleet, fleet_columns
from gpudoctor.checks.node import node_facts
from gpudoctor.core.findings import Severity
from gpudoctor.launch.join_env import join_decision
from gpudoctor.probe.environment import probe_environment
from gpudoctor.probe.host import HostFacts

# The table nvidia-smi prints, two GPUs; {row1} is GPU 1's readings line.
SMI_TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  On   | 00000000:3B:00.0 Off |                  N/A |
| 30%   41C    P8    21W / 250W |      5MiB / 11019MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA GeForce ...  On   | 00000000:5E:00.0 Off |                  N/A |
{row1}
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""
ONE_ERR = "| 30%   45C    P2   ERR! / 250W |   9871MiB / 11019MiB |     97%      Default |"
FAN_ERR = "| ERR!  45C    P2   180W / 250W |   9871MiB / 11019MiB |     97%      Default |"
ALL_ERR = "|ERR!   ERR! ERR!    ERR! / ERR! |   9871MiB / 11019MiB |     97%      Default |"
LOST_LINE = "Unable to determine the device handle for GPU 0000:5E:00.0: GPU is lost.  Reboot the system to recover this GPU"


def _smi(text: str) -> dict[str, str]:
    """diagnose of a paste: finding id -> severity."""
    return {f.id: f.severity.value for f in api.diagnose(text).findings}


class TestGpuLost:
    def test_control_one_err_in_a_power_field_is_not_a_lost_gpu(self):
        got = _smi(SMI_TABLE.format(row1=ONE_ERR))
        assert "gpu-lost" not in got and got["gpu-reading-failed"] == "info"

    def test_control_a_fan_that_reads_err_is_not_a_lost_gpu(self):
        assert "gpu-lost" not in _smi(SMI_TABLE.format(row1=FAN_ERR))

    def test_sibling_unable_to_determine_the_device_handle_is_lost(self):
        got = _smi(SMI_TABLE.format(row1=ONE_ERR).replace("+---", LOST_LINE + "\n+---", 1))
        assert got["gpu-lost"] == "error"

    def test_sibling_no_devices_were_found_is_lost(self):
        assert _smi("$ nvidia-smi\nNo devices were found\n")["gpu-lost"] == "error"


class TestGpuReadingFailed:
    def test_control_a_healthy_table_has_no_failed_reading(self):
        assert "gpu-reading-failed" not in _smi(SMI_TABLE.format(row1=ONE_ERR.replace("ERR!", "180W")))

    def test_sibling_every_reading_failed_is_a_warning_that_says_what_decides(self):
        [f] = [f for f in api.diagnose(SMI_TABLE.format(row1=ALL_ERR)).findings if f.id == "gpu-reading-failed"]
        assert f.severity.value == "warn" and "nvidia-smi -q -i 1" in f.fix
        assert "gpu-lost" not in _smi(SMI_TABLE.format(row1=ALL_ERR))


def _node(name: str, nic: str, **env: str | None):
    """The recorded 2-GPU facts on host `name`, its eth0 renamed `nic`, with `env` set."""
    facts = with_env(gpu2_facts(), **env)
    renamed = tuple(replace(i, name=nic) if i.name == "eth0" else i for i in facts.system.interfaces)
    facts = vary(vary(facts, "system.interfaces", renamed), "host", HostFacts(hostname=name, name=name, infiniband=()))
    return facts


def _fleet(*facts):
    return [node_facts(f, None, (2 * i, 2 * i + 1)) for i, f in enumerate(facts)]


class TestFleetEnvMismatchInterfaces:
    def test_control_nic_names_that_differ_per_node_but_exist_there_are_not_an_error(self):
        nodes = _fleet(_node("a", "eth0", NCCL_SOCKET_IFNAME="eth0"), _node("b", "ens5", NCCL_SOCKET_IFNAME="ens5"))
        findings = check_fleet(nodes)
        f = by_id(findings, "fleet-env-mismatch")
        assert f.severity is Severity.INFO and "fleet-socket-ifname-missing" not in ids(findings)
        assert f.fix.startswith("gpudoctor allreduce") and "export" not in f.fix
        column = next(c for c in fleet_columns(nodes) if c.label == "NCCL interface")
        assert column.values == ("eth0 -> eth0", "ens5 -> ens5") and column.severity is Severity.INFO

    def test_control_gloo_exact_names_per_node(self):
        nodes = _fleet(_node("a", "eth0", GLOO_SOCKET_IFNAME="eth0"), _node("b", "enp1s0", GLOO_SOCKET_IFNAME="enp1s0"))
        assert max(f.severity.rank for f in check_fleet(nodes)) == Severity.INFO.rank

    def test_sibling_set_on_one_node_only_is_a_warning_that_says_what_decides(self):
        nodes = _fleet(_node("a", "eth0", NCCL_SOCKET_IFNAME="eth0"), _node("b", "ens5"))
        f = by_id(check_fleet(nodes), "fleet-env-mismatch")
        assert f.severity is Severity.WARN and f.fix.startswith("ip -br addr  # on b")


class TestFleetSocketIfnameMissing:
    def test_control_each_node_its_own_nic(self):
        nodes = _fleet(_node("a", "eth0", NCCL_SOCKET_IFNAME="eth"), _node("b", "eth1", NCCL_SOCKET_IFNAME="eth"))
        assert "fleet-socket-ifname-missing" not in ids(check_fleet(nodes))

    def test_sibling_a_value_naming_an_interface_missing_on_its_own_node_is_an_error(self):
        # the same value everywhere, but node b's NIC is ens5: broken there
        nodes = _fleet(_node("a", "eth0", NCCL_SOCKET_IFNAME="eth0"), _node("b", "ens5", NCCL_SOCKET_IFNAME="eth0"))
        f = by_id(check_fleet(nodes), "fleet-socket-ifname-missing")
        assert f.severity is Severity.ERROR and "names no interface on ranks 2-3 (b)" in f.title


def _srun(ntasks: int = 2, procid: int = 0, **extra: str) -> dict[str, str]:
    """The variables srun gives one task of a step (no MASTER_*: the batch script exported none)."""
    return {"SLURM_PROCID": str(procid), "SLURM_NTASKS": str(ntasks), "SLURM_LOCALID": str(procid), "SLURM_STEP_ID": "0",
            "SLURM_JOB_ID": "4512345", "SLURM_STEP_NODELIST": "gpu[07-09,12]", "SLURM_JOB_NODELIST": "gpu[01-09,12]", **extra}


def _decide(env: dict[str, str], command: str = "allreduce"):
    return join_decision(probe_environment(env), command, False)


class TestSlurmRendezvousDerived:
    def test_control_master_addr_and_port_exported_by_the_script_are_kept(self):
        d = _decide(_srun(MASTER_ADDR="gpu07", MASTER_PORT="29500"))
        assert d.join and d.exports == () and not d.findings

    def test_control_one_task_joins_nothing(self):
        d = _decide(_srun(ntasks=1))
        assert not d.join and not d.findings and d.exports == ()

    def test_sibling_without_master_the_first_host_of_the_step_and_a_port_from_the_job_id(self):
        d = _decide(_srun(procid=1))
        assert d.join and dict(d.exports) == {"MASTER_ADDR": "gpu07", "MASTER_PORT": str(15000 + 2345)}
        [f] = d.findings
        assert f.id == "slurm-rendezvous-derived" and f.severity is Severity.INFO and "gpu07:17345" in f.title

    def test_sibling_only_the_missing_one_is_derived(self):
        d = _decide(_srun(MASTER_ADDR="10.0.0.5"))
        assert dict(d.exports) == {"MASTER_PORT": "17345"}

    @pytest.mark.slow
    def test_sibling_two_srun_like_tasks_on_127_0_0_1_meet_there(self):
        """Real processes, real gloo: two tasks with srun's variables and no MASTER_*."""
        port = _free_port_in(15000, 24999)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "MASTER_", "RANK", "WORLD_SIZE", "LOCAL_", "TORCHELASTIC_", "GPUDOCTOR_"))}
        cmd = [sys.executable, "-m", "gpudoctor", "allreduce", "--sizes", "4K", "--iters", "2", "--warmup", "1", "--timeout", "60", "--json"]
        procs = [
            subprocess.Popen(cmd, env={**base, **_srun(procid=r, SLURM_JOB_ID=f"9{port - 15000:04d}", SLURM_STEP_NODELIST="127.0.0.1", SLURM_NNODES="1")},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for r in range(2)
        ]
        outs = []
        try:
            outs = [p.communicate(timeout=150) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        assert [p.returncode for p in procs] == [0, 0], outs
        report = json.loads(outs[0][0])
        assert "KeyError" not in outs[0][1] + outs[1][1]
        derived = [f for f in report["findings"] if f["id"] == "slurm-rendezvous-derived"]
        assert derived and f"127.0.0.1:{port}" in derived[0]["title"] and report["summary"]["mode"] == "slurm"


class TestDistributedEnvIncompleteSlurm:
    def test_control_an_srun_step_with_its_node_list_and_job_id_is_not_incomplete(self):
        assert "distributed-env-incomplete" not in ids(_decide(_srun()).findings)

    def test_sibling_no_node_list_or_job_id_gives_the_two_lines_to_add(self):
        env = {k: v for k, v in _srun().items() if not k.endswith("NODELIST")}
        d = _decide(env, "train-smoke")
        [f] = d.findings
        assert not d.join and f.id == "distributed-env-incomplete" and f.severity is Severity.ERROR
        assert "export MASTER_ADDR=" in f.fix and "export MASTER_PORT=" in f.fix and "SLURM_PROCID=0 SLURM_NTASKS=2" in f.title

    def test_sibling_the_batch_scripts_own_shell_is_not_a_step(self):
        env = {k: v for k, v in _srun().items() if k not in ("SLURM_STEP_ID", "SLURM_STEP_NODELIST")}
        assert ids(_decide(env).findings) == ["distributed-env-incomplete"]


def _free_port_in(low: int, high: int) -> int:
    for port in random.sample(range(low, high + 1), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")
