"""Pasted nvidia-smi output -> GPU health findings: real pastes from public threads
(tests/fixtures/gpu_health/corpus.json, the development three quarters; the
held-out quarter is scored only by benchmarks/gpu_health_corpus.py)."""

from __future__ import annotations

import json

import pytest

from gpudoctor import api
from gpudoctor.knowledge.nvidia_smi import NvidiaSmiReader
from gpudoctor.probe.nvml import NOT_SHOWN
from gpudoctor.probe.unavailable import Unavailable
from recorded_nvml import FIXTURES

CASES = [c for c in json.loads((FIXTURES.parent / "corpus.json").read_text())["cases"] if c["split"] == "dev"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_dev_corpus(case):
    report = api.diagnose(case["text"])
    got = sorted({f.id for f in report.findings if f.severity.value in ("warn", "error")})
    assert got == case["expected"], case["source"]


def read(text: str) -> NvidiaSmiReader:
    reader = NvidiaSmiReader()
    reader.feed(text.encode())
    return reader


def case(id: str) -> str:
    return next(c["text"] for c in CASES if c["id"] == id)


def test_the_table_reads_each_gpu():
    reader = read(case("instructlab-2341-a100-table"))
    g0, g1 = reader.gpus
    assert g0.name == "GPU 0 (NVIDIA A100-SXM4-40GB, 00000001:00:00.0)"
    h = g0.health()
    assert (h.temperature_c, h.power_w, h.power_limit_w, h.persistence_mode, h.ecc_volatile_uncorrected) == (37, 56.0, 400.0, "enabled", 0)
    assert g1.health().temperature_c == 36


def test_the_q_report_reads_sections_and_says_what_it_did_not_show():
    h = read(case("dcgm-120-ecc-zero")).gpus[0].health()
    assert (h.ecc_mode, h.ecc_volatile_uncorrected, h.ecc_volatile_corrected, h.ecc_aggregate_corrected) == ("enabled", 0, 0, 0)
    assert h.temperature_c == NOT_SHOWN
    h = read(case("nvidia-docker-1090-idle-pcie")).gpus[0].health()
    assert (h.pcie_width, h.pcie_max_width, h.pcie_replays, h.clock_events) == (16, 16, 0, ())
    h = read(case("open-clip-703-sw-power-cap")).gpus[0].health()
    assert h.clock_events == ("SW Power Cap",)
    h = read(case("dcgm-exporter-16-healthy")).gpus[0].health()
    assert h.remapped_corrected == NOT_SHOWN  # "Remapped Rows : N/A" has no counts to read


def test_a_gpu_header_names_the_gpu_and_na_is_unavailable():
    h = read("GPU 00000000:01:00.0\n    Product Name                    : Quadro P2000\n    Persistence Mode                : Disabled\n")
    assert [g.name for g in h.gpus] == ["GPU 00000000:01:00.0"]
    assert h.gpus[0].health().persistence_mode == "disabled"
    text = ("    Retired Pages\n        Single Bit ECC              : N/A\n        Double Bit ECC              : 2\n"
            "        Pending Page Blacklist      : Yes\n")
    h2 = read(text).gpus[0].health()
    assert h2.retired_single_bit == Unavailable("nvidia-smi: N/A") and h2.retired_double_bit == 2 and h2.retired_pending is True
    assert [f.id for f in read(text).findings()] == ["gpu-pages-pending-retirement"]


def test_a_training_log_is_not_read_as_nvidia_smi():
    log = "epoch 1\n  loss        : 0.3\n  Pending     : Yes\nTemperature\n  Current     : 99 C\n"
    assert read(log).findings() == []
