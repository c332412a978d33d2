"""Environment checks: NCCL/gloo interfaces, disabled transports, MASTER_*."""

from __future__ import annotations

import pytest

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, vary, with_env
from gpudoctor.checks.environment import (
    check_launch_env,
    check_master,
    check_socket_ifname,
    check_transports_disabled,
    interface_matches,
)
from gpudoctor.core.findings import Severity
from gpudoctor.probe.environment import AddressResolution
from gpudoctor.core.unavailable import Unavailable

NAMES = ["eth0", "ifb0", "ifb1", "lo"]  # the interfaces of the CPU snapshot


@pytest.mark.parametrize(
    "spec, chosen",
    [
        ("eth0", ["eth0"]),
        ("eth", ["eth0"]),  # a prefix
        ("=eth", []),  # exact names only
        ("=eth0", ["eth0"]),
        ("^lo,ifb", ["eth0"]),  # all but these prefixes
        ("^=lo", ["eth0", "ifb0", "ifb1"]),
        ("ib0", []),
        ("ens,eth", ["eth0"]),
    ],
)
def test_interface_matches(spec, chosen):
    assert interface_matches(spec, NAMES)[0] == chosen


def test_snapshot_interfaces_are_real():
    assert [i.name for i in cpu_facts().system.interfaces] == NAMES


def test_nccl_socket_ifname_missing():
    f = by_id(check_socket_ifname(with_env(gpu2_facts(), NCCL_SOCKET_IFNAME="ib0")), "nccl-socket-ifname-missing")
    assert f.severity is Severity.ERROR  # torch has NCCL here
    assert f.fix.startswith("export NCCL_SOCKET_IFNAME=eth0")
    on_cpu = by_id(check_socket_ifname(with_env(cpu_facts(), NCCL_SOCKET_IFNAME="ib0")), "nccl-socket-ifname-missing")
    assert on_cpu.severity is Severity.WARN


def test_nccl_socket_ifname_present_is_silent():
    assert check_socket_ifname(with_env(cpu_facts(), NCCL_SOCKET_IFNAME="eth")) == []


def test_gloo_socket_ifname_missing():
    facts = with_env(cpu_facts(), GLOO_SOCKET_IFNAME="eth0,ens5")
    f = by_id(check_socket_ifname(facts), "gloo-socket-ifname-missing")
    assert "ens5" in f.title and f.severity is Severity.ERROR


def test_transports_disabled():
    facts = with_env(gpu2_facts(), NCCL_P2P_DISABLE="1", NCCL_IB_DISABLE="1")
    findings = check_transports_disabled(facts)
    assert by_id(findings, "nccl-p2p-disabled").severity is Severity.WARN
    assert by_id(findings, "nccl-ib-disabled").severity is Severity.INFO
    assert check_transports_disabled(with_env(gpu2_facts(), NCCL_P2P_DISABLE="0")) == []


def test_master_addr_unresolvable():
    facts = with_env(cpu_facts(), MASTER_ADDR="node-17.invalid")
    facts = vary(facts, "environment.master_addr",
                 AddressResolution("node-17.invalid", Unavailable("does not resolve (gaierror: Name or service not known)")))
    f = by_id(check_master(facts), "master-addr-unresolvable")
    assert f.severity is Severity.ERROR and "does not resolve" in f.title


def test_master_addr_resolving_is_silent():
    facts = with_env(cpu_facts(), MASTER_ADDR="localhost", MASTER_PORT="29500")
    facts = vary(facts, "environment.master_addr", AddressResolution("localhost", ("127.0.0.1",)))
    assert check_master(facts) == []


@pytest.mark.parametrize("port", ["http", "0", "70000", ""])
def test_master_port_invalid(port):
    assert ids(check_master(with_env(cpu_facts(), MASTER_PORT=port))) == ["master-port-invalid"]


def test_plain_shell_has_no_launch_vars():
    assert by_id(check_launch_env(cpu_facts()), "distributed-env").severity is Severity.OK


def test_complete_launch_env_is_info():
    facts = with_env(cpu_facts(), RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500", LOCAL_RANK="0")
    f = by_id(check_launch_env(facts), "distributed-env")
    assert f.severity is Severity.INFO and f.evidence["WORLD_SIZE"] == "2"


def test_partial_launch_env_warns():
    facts = with_env(cpu_facts(), RANK="1")
    f = by_id(check_launch_env(facts), "distributed-env-incomplete")
    assert f.evidence["missing"] == ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE"]
