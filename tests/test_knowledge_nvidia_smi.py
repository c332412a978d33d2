"""Pasted nvidia-smi output -> GPU health findings: real pastes from public threads
(tests/fixtures/gpu_health/corpus.json, the development three quarters; the
held-out quarter is scored only by benchmarks/gpu_health_corpus.py)."""

from __future__ import annotations

import json

import pytest

from gpudoctor import api

# The input's own verdict, not a GPU reading: a snapshot with no fault in it does not
# decide whether the run was healthy (log-inconclusive, case "snapshot").
UNDECIDED = "log-inconclusive"
from gpudoctor.commands.diagnose.nvidia_smi import NvidiaSmiReader
from gpudoctor.probe.nvml import NOT_SHOWN
from gpudoctor.core.unavailable import Unavailable
from recorded_nvml import FIXTURES

CASES = [c for c in json.loads((FIXTURES.parent / "corpus.json").read_text())["cases"] if c["split"] == "dev"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_dev_corpus(case):
    report = api.diagnose(case["text"])
    got = sorted({f.id for f in report.findings if f.severity.value in ("warn", "error") and f.id != UNDECIDED})
    assert got == case["expected"], case["source"]


def read(text: str) -> NvidiaSmiReader:
    reader = NvidiaSmiReader()
    reader.feed(text.encode())
    reader.feed(b"")  # the end of the input
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


def test_the_xml_report_is_read_as_its_text_twin():
    h = read(case("netdata-2922-xml-idle")).gpus[0].health()
    assert h.clock_events == ("Idle",)
    # the tags of `nvidia-smi -q -x` (a made-up device, in the real report's layout)
    xml = "\n".join([
        '<nvidia_smi_log>', '\t<gpu id="00000000:07:00.0">', "\t\t<persistence_mode>Enabled</persistence_mode>",
        "\t\t<retired_pages>", "\t\t\t<double_bit_retirement>", "\t\t\t\t<retired_count>1</retired_count>",
        "\t\t\t</double_bit_retirement>", "\t\t\t<pending_blacklist>Yes</pending_blacklist>", "\t\t</retired_pages>",
        "\t\t<temperature>", "\t\t\t<gpu_temp>44 C</gpu_temp>", "\t\t\t<gpu_temp_max_threshold>92 C</gpu_temp_max_threshold>",
        "\t\t</temperature>", "\t</gpu>", "</nvidia_smi_log>", "",
    ])
    reader = read(xml)
    [g] = reader.gpus
    h = g.health()
    assert (g.name, h.retired_double_bit, h.retired_pending, h.temperature_c, h.shutdown_c, h.persistence_mode) == (
        "GPU 00000000:07:00.0", 1, True, 44, 92, "enabled")
    assert [f.id for f in reader.findings()] == ["gpu-pages-pending-retirement"]


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_the_input_may_arrive_in_pieces(size):
    text = case("dcgm-exporter-16-healthy").encode() + case("instructlab-2341-a100-table").encode()
    whole = read(text.decode())
    pieces = NvidiaSmiReader()
    for i in range(0, len(text), size):
        pieces.feed(text[i:i + size])
    pieces.feed(b"")
    assert [(g.name, g.health()) for g in pieces.gpus] == [(g.name, g.health()) for g in whole.gpus]
    assert len(whole.gpus) == 3


def test_compute_and_mig_mode_are_judged_as_check_judges_them():
    reader = read(case("jade-73-v100-exclusive-process"))
    [f] = [f for f in reader.findings() if f.id == "gpu-compute-mode-restricted"]
    assert f.evidence["GPU 0"] == "Exclusive_Process" and f.evidence["GPU 1"] == "Exclusive_Process"
    assert "nvidia-smi -i 0,1 -c DEFAULT" in f.fix and f.evidence["source"] == "pasted nvidia-smi output"
    table = case("instructlab-2341-a100-table")  # its MIG column says Disabled
    assert [g.mig_mode for g in read(table).gpus] == ["disabled", ""]  # the paste ends before GPU 1's MIG line
    enabled = table.replace("|             Disabled |", "|              Enabled |")
    # (both GPUs idle with 1 MiB used: gpu-not-used, an info finding diagB17 added, is true of this snapshot too)
    assert [f.id for f in read(enabled).findings() if f.id != "gpu-not-used"] == ["mig-enabled"]


TOPO = """\
        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity
GPU0     X      PIX     NODE    NODE    0-23,48-71      0
GPU1    PIX      X      NODE    NODE    0-23,48-71      0
GPU2    NODE    NODE     X      PIX     0-23,48-71      0
GPU3    NODE    NODE    PIX      X      0-23,48-71      0
"""
QUERY = "NVIDIA A100-SXM4-80GB, 98 %, 41 %, 81920 MiB, 61234 MiB\nNVIDIA A100-SXM4-80GB, 97 %, 40 %, 81920 MiB, 61230 MiB\n"
CUT_LOG = """\
[rank0]: Driver Version: 535.104.05   CUDA Version: 12.2
[rank0]:[W305 10:12:41] loading checkpoint shards: 50%
[rank0]: step 1/1000 loss 2.31
[rank1]: step 1/1000 loss 2.30
"""


NCCL_TOPO_DUMP = """\
<system version="1">
  <cpu numaid="0" affinity="00000000,0000ffff" arch="x86_64" vendor="AuthenticAMD" familyid="23" modelid="49">
    <pci busid="0000:07:00.0" class="0x030200" vendor="0x10de" device="0x20b0" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1">
        <nvlink target="0000:c7:00.0" count="2" tclass="0x068000"/>
      </gpu>
    </pci>
  </cpu>
</system>
"""
LSPCI_TREE_PASTE = """\
 +-[0000:3a]-+-00.0-[3b-3f]----00.0-[3c-3f]--+-00.0-[3d]----00.0  NVIDIA Corporation GV100GL [Tesla V100 PCIe 32GB]
 |           |                               +-04.0-[3e]----00.0  NVIDIA Corporation GV100GL [Tesla V100 PCIe 32GB]
 |           |                               \\-08.0-[3f]----00.0  Mellanox Technologies MT27800 Family [ConnectX-5]
"""


@pytest.mark.parametrize(
    "text", [TOPO, QUERY, "```Driver Version: 570.133.20     CUDA Version: 12.8```\n", NCCL_TOPO_DUMP, LSPCI_TREE_PASTE],
    ids=["topo-m", "query-csv", "driver-line", "nccl-topo-dump", "lspci-tree"],
)
def test_a_gpu_tools_snapshot_with_no_signature_does_not_decide_the_run(text):
    # a snapshot shows no fault, and no job either: not healthy (exit 0), not an error; it says so
    report = api.diagnose(text)
    [verdict] = [f for f in report.findings if f.id == "log-inconclusive"]
    assert not report.ok and "shows the GPUs, not the job" in verdict.title
    assert not any(f.severity.value == "error" for f in report.findings)


def test_a_cut_log_that_quotes_a_driver_line_is_still_not_decided():
    # the sibling: one tool line in a run's log cut before its end makes it no snapshot: the log's own words
    report = api.diagnose(CUT_LOG)
    [verdict] = [f for f in report.findings if f.id == "log-inconclusive"]
    assert not report.ok and "the log does not decide" in verdict.title


def test_the_table_reads_memory_utilisation_and_the_process_list():
    reader = read(case("instructlab-2341-a100-table"))
    assert reader.gpus[0].use == {"memory used": 1, "memory total": 40960, "utilisation": 0} and reader.gpus[0].index == 0
    listed = read("| Processes:  |\n|    0   N/A  N/A     31794      C   Unknown Error       5371MiB |\n")
    assert listed.processes == [(0, 31794, "Unknown Error", 5371)] and listed.snapshot(2)


WINDOWS_TABLE = """\
| GPU  Name                     TCC/WDDM  | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 3060 ...  WDDM  | 00000000:01:00.0 Off |                  N/A |
| N/A   46C    P8              10W /  80W |    113MiB /  6144MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
"""


def test_windows_prints_its_driver_model_where_persistence_would_be():
    g = read(WINDOWS_TABLE).gpus[0]
    assert g.use == {"memory used": 113, "memory total": 6144, "utilisation": 0} and "persistence_mode" not in g.fields
    assert {f.id for f in api.diagnose(WINDOWS_TABLE).findings if f.severity.value in ("warn", "error")} == {"log-inconclusive"}


def test_a_lost_gpu_in_lower_case_names_its_bus_without_the_colon():
    # NVIDIA/open-gpu-kernel-modules#246: nvidia-smi's line in lower case as that driver printed it (its "Not Found", a GPU
    # the driver never brought up, is gpu-driver-unusable: tests/controls/test_controls_diagC10.py; the reason here is a lost one)
    from gpudoctor import api

    [f] = [f for f in api.diagnose("Unable to determine the device handle for gpu 0000:01:00.0: Unknown Error\n").findings if f.id == "gpu-lost"]
    assert f.title.endswith("GPU 0000:01:00.0") and f.evidence["GPU 0000:01:00.0"] == "Unable to determine the device handle: Unknown Error"
