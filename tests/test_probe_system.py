"""The host probe on this machine."""

from __future__ import annotations

import os
import resource

import psutil

from gpudoctor.probe.system import probe_system


def test_this_machine():
    s = probe_system()
    assert s.cpus_logical == psutil.cpu_count()
    assert s.cpu_affinity == tuple(sorted(os.sched_getaffinity(0)))
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert s.open_files_soft == (-1 if soft == resource.RLIM_INFINITY else soft)
    assert isinstance(s.shm_total_bytes, int) and s.shm_total_bytes > 0
    assert "lo" in [i.name for i in s.interfaces]
    # lspci or /sys/bus/pci: one of them answers on Linux
    assert s.display_source in ("lspci", "sysfs")
    assert isinstance(s.display_devices, tuple)
