"""Host checks on the real CPU snapshot, one field varied per case."""

from __future__ import annotations

from facts_cases import by_id, cpu_facts, vary
from gpudoctor.checks.system import check_container, check_cpus, check_open_files, check_ram, check_shm
from gpudoctor.core.findings import Severity
from gpudoctor.core.unavailable import Unavailable

MIB = 1 << 20


def test_snapshot_machine_is_healthy():
    facts = cpu_facts()
    assert by_id(check_shm(facts), "shm-size").severity is Severity.OK
    assert by_id(check_open_files(facts), "open-files-limit").severity is Severity.OK
    assert by_id(check_ram(facts), "ram-size").severity is Severity.OK
    assert by_id(check_cpus(facts), "cpu-count").severity is Severity.OK


def test_docker_default_shm_is_too_small():
    facts = vary(cpu_facts(), "system.shm_total_bytes", 64 * MIB)
    f = by_id(check_shm(facts), "shm-too-small")
    assert f.severity is Severity.WARN and "64 MiB" in f.title and "--shm-size" in f.fix


def test_shm_unknown_says_nothing():
    assert check_shm(vary(cpu_facts(), "system.shm_total_bytes", Unavailable("no /dev/shm"))) == []


def test_low_open_files_limit():
    facts = vary(cpu_facts(), "system.open_files_soft", 1024)
    f = by_id(check_open_files(facts), "open-files-limit-low")
    assert f.severity is Severity.WARN and f.fix == "ulimit -n 20000"


def test_low_open_files_limit_with_low_hard_limit():
    facts = vary(vary(cpu_facts(), "system.open_files_soft", 256), "system.open_files_hard", 1024)
    assert "set_sharing_strategy('file_system')" in by_id(check_open_files(facts), "open-files-limit-low").fix


def test_unlimited_open_files():
    facts = vary(cpu_facts(), "system.open_files_soft", -1)
    assert by_id(check_open_files(facts), "open-files-limit").title == "Open-files limit is unlimited"


def test_restricted_affinity_is_info():
    facts = vary(cpu_facts(), "system.cpu_affinity", (0,))
    f = by_id(check_cpus(facts), "cpu-count")
    assert f.severity is Severity.INFO and "1 of 2" in f.title


def test_container_hint():
    assert by_id(check_container(cpu_facts()), "container-detected").evidence["hints"] == ["/.dockerenv"]
    assert check_container(vary(cpu_facts(), "system.container", ())) == []
