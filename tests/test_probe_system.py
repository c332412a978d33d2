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


LSPCI_OUTPUT = """\
0000:00:02.0 "VGA compatible controller [0300]" "Intel Corporation [8086]" "CometLake-S GT2 [UHD Graphics 630] [9bc5]" -r05 "Dell [1028]" "Device [09a4]"
0000:00:1f.3 "Audio device [0403]" "Intel Corporation [8086]" "Comet Lake PCH cAVS [06c8]" "Dell [1028]" "Device [09a4]"
0000:01:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" "GH100 [H100 SXM5 80GB] [2330]" -ra1 "NVIDIA Corporation [10de]" "Device [16c1]"
"""


def test_display_devices_from_lspci(tmp_path, monkeypatch):
    # A real `lspci` executable on PATH that prints what lspci -mm -D -nn prints on a workstation.
    (tmp_path / "listing").write_text(LSPCI_OUTPUT)
    script = tmp_path / "lspci"
    script.write_text(f'#!/bin/sh\n[ "$*" = "-mm -D -nn" ] || exit 9\ncat "{tmp_path / "listing"}"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    s = probe_system()
    assert s.display_source == "lspci"
    intel, nvidia = s.display_devices
    assert (intel.slot, intel.kind, intel.vendor, intel.name, intel.nvidia) == (
        "0000:00:02.0", "VGA compatible controller", "Intel Corporation", "CometLake-S GT2 [UHD Graphics 630]", False)
    assert nvidia.kind == "3D controller" and nvidia.nvidia and nvidia.name == "GH100 [H100 SXM5 80GB]"


def test_shm_is_linux_only():
    from gpudoctor.probe.system import shm_usage
    from gpudoctor.core.unavailable import Unavailable

    assert shm_usage("linux").total > 0
    for platform in ("win32", "darwin"):
        assert shm_usage(platform) == Unavailable(f"no /dev/shm on {platform}")
