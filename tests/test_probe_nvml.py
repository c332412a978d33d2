"""NVML on this machine (no driver): a fact with its reason, never an exception."""

from __future__ import annotations

import pytest

from gpudoctor.probe.nvml import LIBRARY_NOT_FOUND, NvmlSession, probe_nvml
from gpudoctor.probe.unavailable import Unavailable


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
