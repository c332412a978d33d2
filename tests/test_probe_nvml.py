"""NVML: on this machine (no driver) a fact with its reason, never an exception;
the GPU path through a stand-in pynvml (see below)."""

from __future__ import annotations

import os
import sys
import types

import psutil
import pytest

from gpudoctor.probe.nvml import LIBRARY_NOT_FOUND, NvmlSession, probe_nvml
from gpudoctor.core.unavailable import Unavailable


def _has_driver() -> bool:
    session = NvmlSession()
    try:
        return session.start()
    finally:
        session.close()


@pytest.mark.skipif(_has_driver(), reason="this machine has an NVIDIA driver")
def test_no_driver_is_a_fact():
    nv = probe_nvml()
    assert nv.available is False
    assert nv.error_kind == LIBRARY_NOT_FOUND
    assert "Not Found" in nv.error
    assert isinstance(nv.driver_version, Unavailable) and nv.driver_version.reason == nv.error
    assert nv.gpus == () and nv.links == ()


@pytest.mark.skipif(_has_driver(), reason="this machine has an NVIDIA driver")
def test_query_without_nvml_returns_the_reason():
    session = NvmlSession()
    got = session.query(lambda n: n.nvmlDeviceGetCount())
    assert isinstance(got, Unavailable) and "Not Found" in got.reason
    session.close()  # closing a session that never started is harmless


@pytest.mark.skipif(not _has_driver(), reason="no NVIDIA driver on this machine")
def test_driver_lists_gpus():
    nv = probe_nvml()
    assert nv.available and nv.gpus
    assert all(isinstance(g.uuid, str) and g.uuid.startswith(("GPU-", "MIG-")) for g in nv.gpus)
    assert len(nv.links) == len(nv.gpus) * (len(nv.gpus) - 1) // 2


# --- the GPU path, through a stand-in pynvml -----------------------------------
# This machine has no NVIDIA driver, so the real library cannot answer; the
# stand-in below has pynvml's names and return shapes for a 2-GPU NVSwitch box
# (GPU 1 without MIG support, one foreign process on GPU 1).

class _NVMLError(Exception):
    def __init__(self, value=999, text="Unknown Error"):
        super().__init__(text)
        self.value = value


class _NotSupported(_NVMLError):
    def __init__(self):
        super().__init__(3, "Not Supported")


def fake_pynvml(init_error: _NVMLError | None = None) -> types.ModuleType:
    n = types.ModuleType("pynvml")
    n.NVMLError, n.NVMLError_NotSupported = _NVMLError, _NotSupported
    n.NVML_ERROR_LIBRARY_NOT_FOUND, n.NVML_ERROR_DRIVER_NOT_LOADED = 12, 9
    n.NVML_NVLINK_MAX_LINKS, n.NVML_FEATURE_ENABLED, n.NVML_P2P_CAPS_INDEX_READ = 4, 1, 0
    buses = ["00000000:18:00.0", "00000000:2A:00.0"]
    switch = "00000000:A0:00.0"
    ns = types.SimpleNamespace
    state = {"shutdown": 0}

    def init():
        if init_error is not None:
            raise init_error

    n.nvmlInit = init
    n.nvmlShutdown = lambda: state.__setitem__("shutdown", state["shutdown"] + 1)
    n.state = state
    n.nvmlSystemGetDriverVersion = lambda: "570.124.06"
    n.nvmlSystemGetCudaDriverVersion = lambda: 12080
    n.nvmlDeviceGetCount = lambda: 2
    n.nvmlDeviceGetHandleByIndex = lambda i: i
    n.nvmlDeviceGetName = lambda h: b"NVIDIA H100 80GB HBM3"  # old pynvml returned bytes
    n.nvmlDeviceGetUUID = lambda h: f"GPU-{h}000000-0000-0000-0000-000000000000"
    n.nvmlDeviceGetPciInfo = lambda h: ns(busId=buses[h])
    n.nvmlDeviceGetCudaComputeCapability = lambda h: (9, 0)
    n.nvmlDeviceGetMemoryInfo = lambda h: ns(total=81559 << 20, used=(1 << 20) if h == 0 else (30 << 30))

    def mig(h):
        if h == 1:
            raise _NotSupported()
        return (0, 0)

    n.nvmlDeviceGetMigMode = mig
    n.nvmlDeviceGetComputeMode = lambda h: 0
    n.nvmlDeviceGetComputeRunningProcesses = lambda h: [ns(pid=os.getpid(), usedGpuMemory=30 << 30)] if h == 1 else []
    n.nvmlDeviceGetGraphicsRunningProcesses = lambda h: [ns(pid=os.getpid(), usedGpuMemory=None)] if h == 1 else []
    n.nvmlDeviceGetNvLinkState = lambda h, link: 1
    n.nvmlDeviceGetNvLinkRemotePciInfo = lambda h, link: ns(busId=switch)
    n.nvmlDeviceGetP2PStatus = lambda a, b, idx: 0
    n.nvmlDeviceGetTopologyCommonAncestor = lambda a, b: 40
    return n


def test_gpu_facts_from_nvml(monkeypatch):
    fake = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nv = probe_nvml()
    assert nv.available and nv.driver_version == "570.124.06" and nv.cuda_driver_version == "12.8"
    g0, g1 = nv.gpus
    assert g0.name == "NVIDIA H100 80GB HBM3" and g0.pci_bus_id == "00000000:18:00.0" and g0.capability == "9.0"
    assert g0.mig_mode == "disabled" and g0.compute_mode == "Default" and g0.processes == ()
    assert isinstance(g1.mig_mode, Unavailable) and g1.mig_mode.reason == "Not Supported"
    [proc] = g1.processes  # listed as compute and graphics: once
    assert proc.pid == os.getpid() and proc.used_memory_bytes == 30 << 30 and proc.kind == "compute"
    assert proc.name == psutil.Process().name()
    [link] = nv.links
    assert (link.a, link.b, link.p2p_read, link.topology, link.nvlinks) == (0, 1, "ok", "NODE", 4)
    assert fake.state["shutdown"] == 1


@pytest.mark.parametrize(
    "value, kind",
    [(12, LIBRARY_NOT_FOUND), (9, "driver-not-loaded"), (18, "init-failed")],
)
def test_init_failures_become_kinds(monkeypatch, value, kind):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(_NVMLError(value, "Driver/library version mismatch")))
    nv = probe_nvml()
    assert not nv.available and nv.error_kind == kind and nv.gpus == ()
    assert nv.error == "Driver/library version mismatch"


def test_a_driver_that_never_answers_is_a_fact_not_a_hang(monkeypatch):
    import threading
    import time

    fake = fake_pynvml()
    release = threading.Event()
    fake.nvmlDeviceGetCount = lambda: release.wait(30) and 2  # a wedged driver: the call blocks
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    started = time.monotonic()
    try:
        nv = probe_nvml(timeout=0.5)
    finally:
        release.set()
    assert time.monotonic() - started < 5
    assert not nv.available and nv.error_kind == "init-failed"
    assert "did not answer within" in nv.error
