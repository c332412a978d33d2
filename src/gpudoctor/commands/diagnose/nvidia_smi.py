"""GPU health from a pasted `nvidia-smi` (the table), `nvidia-smi -q` (the
report, whole or a section of it, or its XML form `-q -x`) or `nvidia-smi nvlink
-s / -e`: read into the same `GpuHealth` facts NVML gives `check`, and judged by
the same checks (`checks.gpu_health.health_findings`; compute mode and MIG by
`checks.gpus`), so a paste in an issue and `gpudoctor check` on the node say the
same thing. Also what nvidia-smi prints instead of a GPU when the GPU is gone
("Unable to determine the device handle for GPU ...: GPU is lost", "No devices were
found"). ERR! in a field of the table is a reading that failed, not a lost GPU.

What the table (and `-q`, and gpustat's lines) shows the GPUs doing, their utilisation,
memory, power and process list, is judged by checks/gpu_activity.py; a pasted `dcgmi` report
by dcgmi.py; a pasted p2pBandwidthLatencyTest by p2p_matrix.py. `nvidia-smi topo -m`, a `--query-gpu` CSV and the driver line are only counted:
an input made of them is a snapshot (healthy when nothing in it fires), not a log cut short.

`NvidiaSmiReader` is fed the input's bytes as `diagnose` streams them (`tee`
wraps the stream) and parses only the lines around a few anchors (ANCHORS), so a
training log costs three `bytes.find` per block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from gpudoctor.catalog.findings.gpu_health import GPU_LOST, GPU_READING_FAILED, GPU_READING_UNSUPPORTED
from gpudoctor.commands.diagnose.dcgmi import ANCHORS as DCGM_ANCHORS, DcgmReport
from gpudoctor.commands.diagnose.p2p_matrix import ANCHORS as P2P_ANCHORS, P2pMatrix
from gpudoctor.checks.gpu_activity import GpuActivity, ProcessUse, activity_findings, process_on_every_gpu
from gpudoctor.checks.gpu_health import health_findings
from gpudoctor.checks.gpus import compute_mode_findings, mig_findings
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.nvml import ALL_LINKS, CLOCK_EVENTS, NOT_SHOWN, GpuHealth, NvLinkHealth, NvmlGpu
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.knowledge.lines import ENTITY, entity
from gpudoctor.knowledge.prefilter import may_hold

# Section and key names only nvidia-smi prints: a section pasted without its GPU header
# counts only when its names hold one of these.
TRIGGERS = (
    "nvsmi log", "nvidia-smi", "ecc errors", "retired pages", "remapped rows", "throttle reasons",
    "event reasons", "gpu current temp", "replays since reset", "device handle", "persistence-m",
    "pending page", "ecc mode", "link width", "pcie generation", "power readings", "gpu 00000000:",
    "gpu reset status", "gpu recovery action",
)
# What nvidia-smi output has, searched for case-sensitively in the raw bytes: the -q
# report's padded "Key        : value" lines, the table's memory column, "Unable to
# determine the device handle" (and nvlink's "Unable to retrieve"), "No devices were
# found". Four searches per block, so a training log costs little; a paste (an input under SMALL_INPUT) is also
# searched for the rarer forms: `nvidia-smi nvlink -s` and the XML of `-q -x`. Only the
# lines around a hit are parsed, and a section counts only when its names are nvidia-smi's
# (TRIGGERS).
# nvidia-smi with its driver loaded, but no GPU answering it (one that fell off the bus)
NO_DEVICES = "No devices were found"
ANCHORS = (b"    : ", b"MiB /", b"MiB &#", b"Unable to ", NO_DEVICES.encode())  # "&#x2F;": a page's escaped slash
PASTE_ANCHORS = ANCHORS + (b"Link 0: ", b"</", b"Processes:", b"MiB |", b"CPU Affinity", b" %, ", b"Driver Version", b"'C,", b"]----") + DCGM_ANCHORS + P2P_ANCHORS
SMALL_INPUT = 1 << 20
MIN_SCAN = 256 << 10  # reads smaller than this are gathered before they are searched
BEFORE, AFTER = 16 << 10, 64 << 10  # bytes around a hit that are parsed: a section's header, 8 GPUs' report


def windows(block: bytes, end: int, anchors: tuple[bytes, ...] = ANCHORS, begin: int = 0) -> list[tuple[int, int]]:
    """Line-aligned stretches of `block[begin:end]` around the anchors, merged."""
    spans = []
    for anchor in may_hold(block, anchors):
        pos = block.find(anchor, begin, end)
        while pos != -1:
            spans.append((max(begin, pos - BEFORE), min(end, pos + AFTER)))
            pos = block.find(anchor, pos + AFTER // 2, end)
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(spans):
        start = block.rfind(b"\n", begin, start) + 1 if start > begin else begin
        start = max(start, begin)
        nl = block.find(b"\n", stop, end)
        stop = end if nl == -1 else nl + 1
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return merged


# nvidia-smi's words for "no value": the value is then unavailable with that reason
NO_VALUE = ("N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown Error", "[Unknown Error]", "ERR!", "[GPU requires reset]")
GPU_HEADER = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][^:]*?)\s*:\s*(?P<value>.*?)\s*$")
# The table's two lines per GPU (drivers before and after 525 space them differently)
TABLE_1 = re.compile(
    r"^\|\s+(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persist>On|Off|WDDM|TCC)\s+\|\s+(?P<bus>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f:.]+)\s+\S+\s+\|\s+(?P<ecc>\S+)\s+\|"
)
TABLE_2 = re.compile(
    r"^\|\s*(?P<fan>\S+)\s+(?P<temp>\d+C|ERR!|N/A)\s+(?P<perf>\S+)\s+(?:\S+\s+)?(?P<use>\S+)\s*/\s*(?P<cap>\S+)\s+\|"
)
# The table's readings of a GPU (its second line), by TABLE_2's group names
TABLE_READINGS = (("fan", "fan"), ("temperature", "temp"), ("performance state", "perf"), ("power draw", "use"), ("power cap", "cap"))
# ERR! in both sensors and in one of the row's other readings is a GPU that answers nothing,
# though nvidia-smi still holds it (the fan is left out: GPUs without a fan show N/A there; a
# faulted GPU may still show a stale power figure, as in dcgm-exporter#46's "1W / N/A" row)
ALL_READINGS = {"temperature", "performance state"}
ROW_READINGS = {"power draw", "utilisation", "memory"}
# The table's memory and utilisation columns, on the same line as TABLE_2's readings
# ("Unknown Error" or ERR! where the driver could not read the GPU's memory; "Not Supported" or
# N/A where the GPU has no memory of its own to count: unified memory (GB10, Grace), MIG, vGPU.
# That is an unknown value, not a failure, and the utilisation beside it is still read)
TABLE_USE = re.compile(
    r"\|\s*(?:(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB|(?P<mem_err>Unknown Error|ERR!)|(?:(?P<mem_na>Not Supported)|\[?N/A\]?)(?:\s*/\s*\S+)?)"
    r"\s*\|\s*(?P<util>\d+%|ERR!|N/A)\s"
)
# The process list under the table: "GPU [GI CI] PID Type Name Memory" per row (drivers from
# 470 add the GI and CI columns), or its one line when there is none
TABLE_PROCESS = re.compile(
    r"^\|\s+(?P<gpu>\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d+)\s+(?P<type>C\+G|M\+C|C|G|M)\s+"
    r"(?P<name>.*?)\s+(?P<mib>\d+MiB|N/A)\s*\|$"
)
NO_PROCESSES = "No running processes found"
# gpustat's line per GPU (also pasted as a Markdown table): "[0] GeForce GTX 1080 Ti | 64'C, 100 %
# [, 71 / 300 W] | 11025 / 11178 MB | user(11021M) ..." (its MB are MiB, as nvidia-smi's)
GPUSTAT = re.compile(
    r"^\|?\s*\[(?P<index>\d+)\]\s*(?P<name>[^|]+?)\s*\|\s*(?P<temp>\d+)'C,\s*(?P<util>\d+|\?\?)\s*%"
    r"(?:,\s*(?P<w>\d+)\s*/\s*(?P<cap>\d+)\s*W)?\s*\|\s*(?P<used>\d+)\s*/\s*(?P<total>\d+)\s*MB\s*\|(?P<procs>.*)$"
)
GPUSTAT_PROCESS = re.compile(r"(?P<who>[^\s()|]+)\((?P<mib>\d+)M\)")
# What gpustat prints where NVML gives no value: "??" for the utilisation, "(Not Supported)" for the process list
# (wookayin/gpustat#122: a GeForce GT 650M on driver 390.144, "[0] GeForce GT 650M | 47'C,  ?? % | 0 / 1999 MB | (Not Supported)")
GPUSTAT_UNSUPPORTED = (("utilisation", "??"), ("processes", "(Not Supported)"))
# A GPU tool's other snapshots, counted (not judged) so that an input made of them is a
# snapshot, not a run's log cut short: `nvidia-smi topo -m`'s header and rows, a row of
# `nvidia-smi --query-gpu=... --format=csv` (two or more fields with nvidia-smi's units),
# the table's driver line, NCCL's topology dump, lspci's tree
TOPO_ROW = re.compile(r"^(?:GPU\d+|NIC\d+|mlx5_\d+)(?:\s+(?:X|NV\d+|SYS|NODE|PHB|PXB|PIX|SOC|PHB))+\b")
TOPO_HEADER = re.compile(r"^GPU0(?:\s+(?:GPU|NIC|mlx5_)\d+)*\s+CPU Affinity")
QUERY_ROW = re.compile(r"^[^,|]+(?:,[^,|]*)+$")  # comma-separated, no table rule; QUERY_UNIT counts the units
QUERY_UNIT = re.compile(r",\s*\d+(?:\.\d+)?\s*(?:%|MiB|W)(?=\s*(?:,|$))")
# NCCL's topology and graph dumps (NCCL_TOPO_DUMP_FILE, NCCL_GRAPH_DUMP_FILE) and `lspci -tv`'s tree
NCCL_TOPO = re.compile(r"^</?(?:system|cpu|pci|gpu|nvlink|nic|net|graphs?|channel|c2c|pcilink)\b[^<>]*>$")
LSPCI_TREE = re.compile(r"^[\s|]*[+\\]-(?:[0-9a-f]{2}\.[0-7]|\[[0-9a-f:]+\])")
DRIVER_LINE = re.compile(r"Driver Version:\s*[\d.]+\s+CUDA Version:\s*[\d.]+")
# The driver's CUDA version nvidia-smi could not read (the table's header, or `-q`'s "CUDA Version : ERR!"): it asks the
# user-mode CUDA driver (libcuda) for it, so the library CUDA programs start from did not answer. N/A there is no failed
# reading (a driver installed without libcuda, a tool that does not ask): not this.
CUDA_UNREAD = re.compile(r"\bCUDA Version\s*:\s*ERR!")
TABLE_COMPUTE = re.compile(r"\|\s+\S+\s+(?P<mode>Default|E\. Process|E\. Thread|Prohibited)\s+\|\s*$")
TABLE_MIG = re.compile(r"^\|\s+\|\s+\|\s+(?P<mig>Enabled|Disabled|N/A)\s+\|\s*$")
COMPUTE_MODES = {"Default": "Default", "E. Process": "Exclusive_Process", "E. Thread": "Exclusive_Thread", "Prohibited": "Prohibited"}
# `nvidia-smi nvlink -s` / `-e`: a GPU line, then one line per link
NVLINK_GPU = re.compile(r"^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: [^)]*\)\s*$")
NVLINK_LINE = re.compile(r"^Link (?P<link>\d+): (?P<rest>.+)$")
NVLINK_ERRORS = re.compile(r"^(?P<kind>Replay|Recovery|CRC) Errors: (?P<count>\d+)")
ALL_LINKS_DOWN = re.compile(r"all links are inactive", re.IGNORECASE)
# `nvidia-smi -q -x`: the same report as XML, read by naming its tags as the text report names them
XML_OPEN = re.compile(r'^<(?P<tag>[a-z0-9_]+)(?: id="(?P<id>[^"]*)")?>$')
XML_CLOSE = re.compile(r"^</(?P<tag>[a-z0-9_]+)>$")
XML_LEAF = re.compile(r"^<(?P<tag>[a-z0-9_]+)>(?P<value>[^<]*)</(?P=tag)>$")
XML_SECTIONS = {
    "retired_pages": "Retired Pages", "remapped_rows": "Remapped Rows", "temperature": "Temperature",
    "clocks_throttle_reasons": "Clocks Throttle Reasons", "clocks_event_reasons": "Clocks Event Reasons",
    "ecc_mode": "ECC Mode", "ecc_errors": "ECC Errors", "volatile": "Volatile", "aggregate": "Aggregate",
    "single_bit": "Single Bit", "double_bit": "Double Bit", "pcie_gen": "PCIe Generation", "link_widths": "Link Width",
    "power_readings": "Power Readings", "gpu_power_readings": "GPU Power Readings", "gpu_reset_status": "GPU Reset Status",
}
XML_KEYS = {
    "pending_blacklist": "Pending Page Blacklist", "pending_retirement": "Pending Page Blacklist",
    "remapped_row_corr": "Correctable Error", "remapped_row_unc": "Uncorrectable Error",
    "remapped_row_pending": "Pending", "remapped_row_failure": "Remapping Failure Occurred",
    "gpu_temp": "GPU Current Temp", "gpu_temp_max_threshold": "GPU Shutdown Temp",
    "gpu_temp_slow_threshold": "GPU Slowdown Temp", "gpu_temp_max_gpu_threshold": "GPU Max Operating Temp",
    "current_ecc": "Current", "pending_ecc": "Pending", "total": "Total",
    "dram_correctable": "DRAM Correctable", "dram_uncorrectable": "DRAM Uncorrectable",
    "sram_correctable": "SRAM Correctable", "sram_uncorrectable": "SRAM Uncorrectable",
    "max_link_gen": "Max", "current_link_gen": "Current", "device_current_link_gen": "Device Current",
    "max_link_width": "Max", "current_link_width": "Current", "replay_counter": "Replays Since Reset",
    "persistence_mode": "Persistence Mode", "power_draw": "Power Draw", "average_power_draw": "Average Power Draw",
    "enforced_power_limit": "Enforced Power Limit", "default_power_limit": "Default Power Limit",
    "reset_required": "Reset Required", "drain_and_reset_recommended": "Drain and Reset Recommended",
}
XML_REASONS = {  # clocks_throttle_reason_<x> / clocks_event_reason_<x>
    "gpu_idle": "Idle", "applications_clocks_setting": "Applications Clocks Setting", "sw_power_cap": "SW Power Cap",
    "hw_slowdown": "HW Slowdown", "hw_thermal_slowdown": "HW Thermal Slowdown",
    "hw_power_brake_slowdown": "HW Power Brake Slowdown", "sync_boost": "Sync Boost",
    "sw_thermal_slowdown": "SW Thermal Slowdown", "display_clocks_setting": "Display Clock Setting",
}
# The shape a paste puts around the tool's lines (tests/test_diagnose_pastes.py): colours, a
# reply's "> " quoting, a launcher's rank prefix, a Markdown code block's indent before the table
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PASTE_PREFIX = re.compile(r"^(?:> ?)+|^\[(?:rank|default)\d+\]: ?|^\d{1,4}: |^\(\w+ pid=\d+(?:, ip=[\d.]+)?\) ")


def unshaped(text: str) -> str:
    """A line of the tool's output as it printed it, from a line of a paste."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "&" in text:
        text = ENTITY.sub(entity, text)
    text = PASTE_PREFIX.sub("", text, count=1)
    stripped = text.lstrip()
    return stripped if stripped[:1] == "|" or stripped[:2] == "+-" else text


LOST = re.compile(r"Unable to (?:determine|detect) the device handle for (?i:GPU)\s*(?P<bus>[0-9A-Fa-f]+(?::[0-9A-Fa-f]+)*(?:\.[0-9A-Fa-f]+)?)?:?\s*(?P<why>.*)")
CLOCK_NAMES = {name.lower(): name for name in CLOCK_EVENTS.values()}


def _value(text: str) -> str | Unavailable:
    text = text.strip()
    return Unavailable(f"nvidia-smi: {text}") if text in NO_VALUE or not text else text


def _int(text: str) -> int | Unavailable:
    v = _value(text)
    if isinstance(v, Unavailable):
        return v
    m = re.match(r"^(\d+)", v.replace(",", ""))
    return int(m.group(1)) if m else Unavailable(f"nvidia-smi: {v}")


def _float(text: str) -> float | Unavailable:
    v = _value(text)
    if isinstance(v, Unavailable):
        return v
    m = re.match(r"^(\d+(?:\.\d+)?)", v)
    return float(m.group(1)) if m else Unavailable(f"nvidia-smi: {v}")


def _yes(text: str) -> bool | Unavailable:
    v = _value(text)
    return v if isinstance(v, Unavailable) else v.lower() in ("yes", "active", "enabled")


@dataclass
class PastedGpu:
    name: str
    bus: str  # "00000000:3b:00.0": the table writes the domain with 8 digits, the driver's messages with 4
    fields: dict[str, Any] = field(default_factory=dict)
    clocks: dict[str, bool] = field(default_factory=dict)
    ecc: dict[str, int] = field(default_factory=dict)  # "volatile corrected" -> count (summed over SRAM and DRAM)
    pcie: dict[str, int | Unavailable] = field(default_factory=dict)
    lost: str = ""  # why nvidia-smi could not reach it
    unread: tuple[str, ...] = ()  # the readings its table row shows as ERR!
    unsupported: tuple[str, ...] = ()  # the readings its table row shows as Not Supported (memory on a unified-memory GPU)
    links: dict[int, dict[str, Any]] = field(default_factory=dict)  # `nvidia-smi nvlink -s/-e`, per link
    compute_mode: str = ""  # as NVML names it: "Default", "Exclusive_Process", ...; "" when not shown
    mig_mode: str = ""  # "enabled" / "disabled"; "" when not shown
    all_links_down: bool = False  # "Unable to retrieve NVLink information as all links are inActive"
    index: int | None = None  # nvidia-smi's index, from the table's first line
    use: dict[str, int] = field(default_factory=dict)  # the table's "utilisation" %, "memory used" / "memory total" MiB
    readings: int = 0  # the times a table or gpustat read its use (a later snapshot replaces `use`)

    def health(self) -> GpuHealth:
        f = dict(self.fields)
        if self.all_links_down:
            f["nvlinks"] = (NvLinkHealth(ALL_LINKS, False),)
        elif self.links:
            f["nvlinks"] = tuple(NvLinkHealth(i, **v) for i, v in sorted(self.links.items()) if "active" in v)
        for scope in ("volatile", "aggregate"):
            for kind, target in (("corrected", "corrected"), ("uncorrected", "uncorrected")):
                key = f"{scope} {kind}"
                if key in self.ecc:
                    f[f"ecc_{scope}_{target}"] = self.ecc[key]
        if self.clocks:
            f["clock_events"] = tuple(CLOCK_NAMES[k] for k, on in self.clocks.items() if on)
        p = self.pcie
        if "current gen" in p:
            f["pcie_gen"] = p["current gen"]
        maxes = [gen for k in ("max gen", "device max", "host max") if isinstance(gen := p.get(k), int)]
        if maxes:  # the card's own "max gen" when given, else the lower of the device's and the host's
            f["pcie_max_gen"] = maxes[0] if isinstance(p.get("max gen"), int) else min(maxes)
        for key, target in (("current width", "pcie_width"), ("max width", "pcie_max_width")):
            if key in p:
                f[target] = p[key]
        return replace(GpuHealth(), **f)


MAX_CARRY = 64 * 1024  # bytes of an unfinished line kept between blocks


class NvidiaSmiReader:
    """Feed it the log's bytes (or wrap the stream with `tee`); then `findings()`."""

    def __init__(self) -> None:
        self.gpus: list[PastedGpu] = []
        self.current: PastedGpu | None = None
        self.path: list[tuple[int, str]] = []  # (indent, section) of the -q report
        self.table_gpu: PastedGpu | None = None
        self.table_mig: PastedGpu | None = None  # the GPU whose MIG column the next table line holds
        self.xml: list[str] = []  # the open tags of an `nvidia-smi -q -x` report
        self.paste: bool | None = None  # a short input: every form of nvidia-smi output is looked for
        self.offset = 0  # bytes of the input fed so far
        self.parsed_to = -1  # where the last parsed stretch ended, in the input
        self.carry = b""
        self.no_devices = ""  # nvidia-smi's "No devices were found" line, when the input has one
        self.cuda_unread = ""  # the line whose "CUDA Version: ERR!" says nvidia-smi could not read the driver's CUDA version
        # the table's process list: None until its "Processes:" header is read; then (GPU index, pid, name, MiB)
        self.processes: list[tuple[int, int, str, int | None]] | None = None
        self.in_processes = False  # the lines being read are the process list's
        # the list's header was read and neither a row, "No running processes found" nor its closing rule
        # followed: a paste cut inside the list, which shows no process list rather than an empty one
        self.processes_open = False
        # the list's rows were read without its header (a paste that starts inside it): the GPUs it shows are not all
        # of them, so memory no listed process holds is not judged from it
        self.processes_cut = False
        self.tool_lines = 0  # lines of a GPU tool's other snapshots (TOPO_ROW, QUERY_ROW, DRIVER_LINE)
        self.dcgm = DcgmReport()  # a pasted `dcgmi diag` / `dcgmi health -c`
        self.p2p = P2pMatrix()  # a pasted p2pBandwidthLatencyTest

    # -- input -------------------------------------------------------------
    def feed(self, chunk: bytes) -> None:
        """The next bytes of the input; b"" at its end."""
        if self.paste is None:
            self.paste = len(chunk) < SMALL_INPUT  # the first read of a paste holds all of it
        if chunk and len(self.carry) + len(chunk) < MIN_SCAN:
            self.carry += chunk  # small reads (a terminal, a test) are gathered: a window needs its context
            self.offset += len(chunk)
            return
        start = 0
        if self.carry:  # the line cut at the end of the last block: whole again, without copying this one
            cut = chunk.find(b"\n") + 1 if chunk else 0
            if chunk and not cut:
                # no line end in this block at all; nvidia-smi's lines are short, so an endless
                # line (tqdm's \r bars) is not one of them: keep only its tail, bounded
                self.carry = (self.carry + chunk)[-MAX_CARRY:]
                self.offset += len(chunk)
                return
            head, self.carry = self.carry + chunk[:cut], b""
            self._scan(head, 0, len(head), self.offset - len(head) + cut)
            start = cut
        end = chunk.rfind(b"\n") + 1 if chunk else 0
        if end > start:
            self._scan(chunk, start, end, self.offset)
        self.carry = chunk[max(end, start):]
        self.offset += len(chunk)

    def _scan(self, data: bytes, start: int, end: int, base: int) -> None:
        """The windows of data[start:end], which begins at byte `base` of the input."""
        anchors = PASTE_ANCHORS if self.paste else ANCHORS
        for a, b in windows(data, end, anchors, start):
            if base + a > self.parsed_to:  # not where the last stretch ended: a new stretch of the log
                self.current, self.path, self.table_gpu, self.xml = None, [], None, []
                self.in_processes = False
            self.parsed_to = base + b
            for raw in data[a:b].decode("utf-8", errors="replace").splitlines():
                self.line(raw)

    def line(self, raw: str) -> None:
        text = unshaped(raw.rstrip().replace("\t", "    "))
        if NO_DEVICES in text and not text.lstrip().startswith("|"):
            self.no_devices = text.strip()
            return
        if not self.cuda_unread and "ERR!" in text and CUDA_UNREAD.search(text):
            self.cuda_unread = text.strip(" |")
        lost = LOST.search(text)
        if lost:
            self._gpu(lost["bus"] or "?").lost = lost["why"].strip() or "unknown error"
            return
        if self._other_snapshot(text.strip().strip("`").strip()) or self._gpustat(text.strip()) or self.dcgm.line(text.strip()) or self.p2p.line(text):
            return
        if text.startswith("|"):
            self._table(text)
            return
        if not text.startswith("+"):
            self.in_processes = False  # the process list ends where the table's lines do
        elif self.in_processes:
            self.processes_open = False  # its closing rule
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        if self._nvlink(stripped) or (stripped.startswith("<") and self._xml(stripped)):
            return
        header = GPU_HEADER.match(stripped)
        if header:
            self.current = self._gpu(header["bus"])
            self.path = [(indent, "GPU")]
            return
        if not stripped:
            return
        while self.path and self.path[-1][0] >= indent:
            self.path.pop()
        kv = KEY_VALUE.match(stripped)
        if kv is None or not kv["value"]:
            key = (kv["key"] if kv else stripped).strip()
            if len(key) > 60:
                return  # prose, not a section name
            self.path.append((indent, key))
            return
        self._leaf([p for _, p in self.path], kv["key"].strip(), kv["value"])

    def _xml(self, text: str) -> bool:
        """A line of `nvidia-smi -q -x`, read as its text-report twin; False when it is not one."""
        m = XML_OPEN.match(text)
        if m:
            if m["tag"] == "gpu" and m["id"]:
                self.current, self.xml = self._gpu(m["id"]), []
            else:
                self.xml.append(m["tag"])
            return True
        m = XML_CLOSE.match(text)
        if m:
            if m["tag"] in self.xml:  # an excerpt may close sections it never opened
                del self.xml[self.xml.index(m["tag"]):]
            return True
        m = XML_LEAF.match(text)
        if m is None:
            return False
        tag, parents = m["tag"], self.xml
        if tag == "retired_count" and parents:
            section, key = ["Retired Pages"], "Single Bit ECC" if parents[-1].startswith("multiple_single") else "Double Bit ECC"
        elif "_reason_" in tag:
            section, key = ["Clocks Event Reasons"], XML_REASONS.get(tag.split("_reason_", 1)[1], tag)
        elif tag in XML_KEYS:
            section, key = [XML_SECTIONS[p] for p in parents if p in XML_SECTIONS], XML_KEYS[tag]
        else:
            return True
        self._leaf(section, key, m["value"])
        return True

    def _nvlink(self, text: str) -> bool:
        """A line of `nvidia-smi nvlink -s` / `-e`; False when it is not one."""
        m = NVLINK_GPU.match(text)
        if m:
            self.current = self._gpu(f"#{m['index']}")
            self.current.name = f"GPU {m['index']} ({m['name']})"
            self.path = []
            return True
        g = self.current
        if g is None or not g.bus.startswith("#"):
            return False
        if ALL_LINKS_DOWN.search(text):
            g.all_links_down = True
            return True
        m = NVLINK_LINE.match(text)
        if m is None:
            return False
        link, rest = g.links.setdefault(int(m["link"]), {}), m["rest"].strip()
        errors = NVLINK_ERRORS.match(rest)
        if errors:
            key = {"Replay": "replay", "Recovery": "recovery", "CRC": "crc_flit"}[errors["kind"]]
            link[key] = int(errors["count"])
            link.setdefault("active", True)  # a link that counts errors is up (-e lists only those)
        else:
            link["active"] = "inactive" not in rest
        return True

    def _gpu(self, bus: str) -> PastedGpu:
        """The GPU at this PCI address (the table and the -q report write the domain differently)."""
        domain, _, rest = bus.lower().rpartition(":")[0].partition(":")
        key = f"{domain.zfill(8)}:{rest}:{bus.lower().rsplit(':', 1)[-1]}" if bus.count(":") == 2 else bus.lower()
        # ("#3": a GPU that `nvidia-smi nvlink` names by index only)
        for g in self.gpus:
            if g.bus == key:
                return g
        g = PastedGpu(f"GPU {bus}" if bus != "?" else "a GPU", key)
        self.gpus.append(g)
        return g

    def _table(self, text: str) -> None:
        if self._process_line(text):
            return
        m = TABLE_1.match(text)
        if m:
            g = self._gpu(m["bus"])
            g.name = f"GPU {m['index']} ({m['name'].strip()}, {m['bus']})"
            g.index = int(m["index"])
            if m["persist"] in ("On", "Off"):  # Windows prints its driver model there instead (WDDM, TCC)
                g.fields["persistence_mode"] = "enabled" if m["persist"] == "On" else "disabled"
            ecc = m["ecc"]
            if ecc.isdigit():
                g.ecc["volatile uncorrected"] = int(ecc)
            self.table_gpu = g
            return
        m2 = TABLE_2.match(text)
        if m2 and self.table_gpu is not None:
            g, self.table_gpu = self.table_gpu, None
            g.unread = tuple(what for what, key in TABLE_READINGS if m2[key] == "ERR!")
            use = TABLE_USE.search(text, m2.end() - 1)
            g.readings += 1
            if use:
                g.unread += tuple(what for what, bad in (("memory", use["mem_err"]), ("utilisation", use["util"] == "ERR!")) if bad)
                g.unsupported = ("memory use",) if use["mem_na"] else ()
                g.use = {k: int(v) for k, v in (("memory used", use["used"]), ("memory total", use["total"]),
                                                   ("utilisation", use["util"].rstrip("%"))) if v and v.isdigit()}
            g.fields["temperature_c"] = _int(m2["temp"].rstrip("C"))
            g.fields["power_w"] = _float(m2["use"].rstrip("W"))
            g.fields["power_limit_w"] = _float(m2["cap"].rstrip("W"))
            compute = TABLE_COMPUTE.search(text)
            if compute:
                g.compute_mode = COMPUTE_MODES[compute["mode"]]
            self.table_mig = g
            return
        m3 = TABLE_MIG.match(text)
        if m3 and self.table_mig is not None:
            self.table_mig.mig_mode = m3["mig"].lower() if m3["mig"] != "N/A" else ""
        self.table_mig = None

    def _gpustat(self, text: str) -> bool:
        """A GPU's line of gpustat: its readings and its processes (user or command, and MiB)."""
        m = GPUSTAT.match(text)
        if m is None:
            return False
        g = self._gpu(f"#{m['index']}")
        g.name, g.index = f"GPU {m['index']} ({m['name'].strip()})", int(m["index"])
        g.use = {"memory used": int(m["used"]), "memory total": int(m["total"])} | ({"utilisation": int(m["util"])} if m["util"].isdigit() else {})
        g.unsupported = tuple(what for what, mark in GPUSTAT_UNSUPPORTED if mark in (m["util"], m["procs"].strip()))
        g.readings += 1
        g.fields["temperature_c"] = int(m["temp"])
        if m["w"]:
            g.fields["power_w"], g.fields["power_limit_w"] = float(m["w"]), float(m["cap"])
        if "processes" in g.unsupported:
            return True  # no process list shown (not an empty one: memory held without a process is not judged from it)
        if self.processes is None:
            self.processes = []
        self.processes = [p for p in self.processes if p[0] != g.index]  # a later snapshot replaces the GPU's list
        pid = re.compile(r"/(\d+)$")
        for who in GPUSTAT_PROCESS.finditer(m["procs"]):
            name, number = who["who"], pid.search(who["who"])
            self.processes.append((g.index, int(number.group(1)) if number else 0, pid.sub("", name), int(who["mib"])))
        return True

    def _other_snapshot(self, text: str) -> bool:
        """A line of `nvidia-smi topo -m`, of a --query-gpu CSV or the driver line: counted only."""
        if TOPO_HEADER.match(text) or TOPO_ROW.match(text) or NCCL_TOPO.match(text) or LSPCI_TREE.match(text) or (
            DRIVER_LINE.search(text) and not text.startswith("|")
        ) or (
            len(QUERY_UNIT.findall(text)) >= 2 and QUERY_ROW.match(text)
        ):
            self.tool_lines += 1
            return not text.startswith(("|", "<"))  # a table row or a tag is still read by _table or _xml
        return False

    def _process_line(self, text: str) -> bool:
        """A line of the process list under the table; False when it is not one. A new list
        (`nvidia-smi -l` prints one per snapshot) replaces the last."""
        body = text.strip("| ").strip()
        if body.startswith("Processes:"):
            self.processes, self.in_processes, self.processes_open = [], True, True
            return True
        if self.processes is None and TABLE_PROCESS.match(text):
            # a row of the list whose header the paste cut ("[turn 2 by ..., continued]", then the rows)
            self.processes, self.in_processes, self.processes_cut = [], True, True
        if not self.in_processes or self.processes is None:
            return False
        if body.startswith(NO_PROCESSES):
            self.processes_open = False
            return True
        m = TABLE_PROCESS.match(text)
        if m:
            self.processes_open = False
            mib = m["mib"].removesuffix("MiB")
            self.processes.append((int(m["gpu"]), int(m["pid"]), m["name"].strip(), int(mib) if mib.isdigit() else None))
            return True
        if TABLE_1.match(text):  # the next snapshot's table
            self.in_processes = False
            return False
        return True  # the list's own header and rules

    def _leaf(self, path: list[str], key: str, value: str) -> None:
        if "requires reset" in value.lower() and self.current is not None:
            self.current.fields["recovery_action"] = "reset"  # the driver refuses to answer until a reset
        if self.current is None:
            if not any(t in " ".join(path + [key]).lower() for t in TRIGGERS):
                return
            self.current = self._gpu("?")  # a section pasted without its GPU header
        g = self.current
        k = key.lower()
        sections = [p.lower() for p in path]
        where = sections[-1] if sections else ""
        if k == "compute mode" and len(sections) <= 1:
            g.compute_mode = value.strip() if value.strip() in COMPUTE_MODES.values() else ""
        elif where == "mig mode" and k == "current":
            g.mig_mode = value.strip().lower() if value.strip().lower() in ("enabled", "disabled") else ""
        elif k == "persistence mode" and len(sections) <= 1:
            g.fields["persistence_mode"] = str(_value(value)).lower() if not isinstance(_value(value), Unavailable) else _value(value)
        elif where == "ecc mode" and k in ("current", "pending"):
            v = _value(value)
            g.fields["ecc_mode" if k == "current" else "ecc_pending_mode"] = v.lower() if isinstance(v, str) else v
        elif "ecc errors" in sections:
            self._ecc(g, sections, k, value)
        elif where == "retired pages":
            if k == "single bit ecc":
                g.fields["retired_single_bit"] = _int(value)
            elif k == "double bit ecc":
                g.fields["retired_double_bit"] = _int(value)
            elif k.startswith("pending"):
                g.fields["retired_pending"] = _yes(value)
        elif where == "remapped rows":
            target = {"correctable error": ("remapped_corrected", _int), "uncorrectable error": ("remapped_uncorrected", _int),
                      "pending": ("remap_pending", _yes), "remapping failure occurred": ("remap_failure", _yes)}.get(k)
            if target:
                g.fields[target[0]] = target[1](value)
        elif where in ("clocks throttle reasons", "clocks event reasons") or (
            len(sections) >= 2 and sections[-2] in ("clocks throttle reasons", "clocks event reasons")
        ):
            if k in CLOCK_NAMES and not isinstance(_value(value), Unavailable):
                g.clocks[k] = value.strip().lower() == "active"
        elif where == "temperature":
            target2 = {"gpu current temp": "temperature_c", "gpu shutdown temp": "shutdown_c", "gpu slowdown temp": "slowdown_c",
                       "gpu max operating temp": "max_operating_c"}.get(k)
            if target2:
                g.fields[target2] = _int(value)
        elif where in ("power readings", "gpu power readings"):
            target3 = {"power draw": "power_w", "average power draw": "power_w", "enforced power limit": "power_limit_w",
                      "current power limit": "power_limit_w",  # drivers from 530 call the enforced limit so
                       "default power limit": "default_power_limit_w"}.get(k)
            if target3 and (target3 != "power_w" or "power_w" not in g.fields):
                g.fields[target3] = _float(value)
        elif where == "pcie generation":
            key2 = {"current": "current gen", "device current": "current gen", "max": "max gen", "device max": "device max", "host max": "host max"}.get(k)
            if key2:
                g.pcie[key2] = _int(value)
        elif where == "link width" and k in ("current", "max"):
            g.pcie[f"{k} width"] = _int(value.rstrip("x"))
        elif where == "gpu reset status" and k in ("reset required", "drain and reset recommended"):
            if _yes(value) is True:  # drain-and-reset is the stronger of the two
                g.fields["recovery_action"] = "drain-and-reset" if k.startswith("drain") else g.fields.get("recovery_action", "reset")
            else:
                g.fields.setdefault("recovery_action", "none")
        elif k == "gpu recovery action":
            v = _value(value)
            g.fields["recovery_action"] = v.lower().replace(" ", "-") if isinstance(v, str) else v
        elif where == "utilization" and k == "gpu" and isinstance(n := _int(value), int):
            g.use["utilisation"] = n  # the same readings as the table's, for checks/gpu_activity.py
        elif where == "fb memory usage" and k in ("used", "total") and isinstance(n := _int(value), int):
            g.use[f"memory {k}"] = n
        elif k == "replays since reset":
            g.fields["pcie_replays"] = _int(value)
        elif k == "remapped rows":  # "Remapped Rows : N/A" on GPUs without row remapping
            pass

    @staticmethod
    def _ecc(g: PastedGpu, sections: list[str], k: str, value: str) -> None:
        scope = "volatile" if "volatile" in sections else "aggregate" if "aggregate" in sections else ""
        if not scope:
            return
        n = _int(value)
        if not isinstance(n, int):
            return
        if k in ("sram correctable", "dram correctable", "sram uncorrectable", "dram uncorrectable"):
            kind = "uncorrected" if "uncorrectable" in k else "corrected"
        elif k == "total" and sections[-1] in ("single bit", "double bit"):
            kind = "corrected" if sections[-1] == "single bit" else "uncorrected"
        elif k in ("sram uncorrectable parity", "sram uncorrectable sec-ded"):
            kind = "uncorrected"
        else:
            return
        key = f"{scope} {kind}"
        g.ecc[key] = g.ecc.get(key, 0) + n

    # -- what it says --------------------------------------------------------
    def snapshot(self, lines: int) -> bool:
        """The input (`lines` long) is a GPU tool's snapshot: GPUs or nvidia-smi's process list
        read from it, or its other forms (topo -m, a --query-gpu CSV) on half its lines or more."""
        return bool(self.gpus) or self.processes is not None or self.dcgm.seen or bool(self.p2p.off_diagonal) or 0 < lines <= 2 * self.tool_lines

    def p2p_worked(self) -> str:
        """The pasted P2P test's reading where its copies flow and show no fault ('' otherwise: p2p_matrix.py `worked`),
        once the input's last lines are read."""
        self.feed(b"")
        return self.p2p.worked()

    def findings(self, hang_said: bool = False, unused_said: str = "", guest: tuple[str, str] = ("", "")) -> list[Finding]:
        """What the input's GPU tool output shows; `hang_said`: the input also says the run hangs (a reporter's words);
        `unused_said`: the reporter's sentence that the job does not use the GPU (knowledge/gpus_unused.py), or ''; `guest`:
        ("wsl" or "vm", the line that shows it) where the log shows nvidia-smi ran inside WSL or a virtual machine
        (knowledge/setting.py), and a GPU it cannot reach is Windows' or the hypervisor's to pass in."""
        self.feed(b"")
        out = self._lost(guest)
        judged = [(g.name, g.health()) for g in self.gpus if not g.lost]
        # NVLinks need another GPU to reach: the paste shows one, or numbers a GPU past 0
        peers = len(self.gpus) > 1 or any(_index(g.name, i) > 0 for i, g in enumerate(self.gpus))
        found = health_findings(judged, peers) + self._modes() + self._activity(hang_said, unused_said)
        out += [replace(f, evidence={**f.evidence, "source": "pasted nvidia-smi output"}) for f in found]
        out += self.dcgm.findings() + self.p2p.findings()
        return out + self._unsupported()

    def _unsupported(self) -> list[Finding]:
        """Not Supported in the table: a reading this GPU has none of (unified memory), said so that the
        answer shows it; no fault."""
        return [GPU_READING_UNSUPPORTED(case="memory" if "memory use" in g.unsupported else "nvml",
                                        evidence={"Not Supported": list(g.unsupported), "source": "pasted nvidia-smi output"},
                                        gpu=g.name, readings=", ".join(g.unsupported))
                for g in self.gpus if g.unsupported and not g.lost]

    def _activity(self, hang_said: bool = False, unused_said: str = "") -> list[Finding]:
        """What the table's rows show the GPUs doing (checks/gpu_activity.py)."""
        rows = [g for g in self.gpus if g.use and not g.lost]
        gpus = [
            GpuActivity(label=g.name, index=_index(g.name, self.gpus.index(g)) if g.index is None else g.index,
                        power_w=g.fields.get("power_w", NOT_SHOWN),
                        power_cap_w=g.fields.get("power_limit_w", NOT_SHOWN), readings=max(g.readings, 1),
                        **{key: g.use[name] for key, name in (("utilisation_pct", "utilisation"), ("memory_used_mib", "memory used"),
                                                               ("memory_total_mib", "memory total")) if name in g.use})
            for g in rows
        ]
        processes = NOT_SHOWN if self.processes is None or (self.processes_open and not self.processes) else [
            ProcessUse(gpu, pid, name, NOT_SHOWN if mib is None else mib) for gpu, pid, name, mib in self.processes
        ]
        if self.processes_cut and not isinstance(processes, Unavailable):
            return activity_findings(gpus, hang_said=hang_said, unused_said=unused_said) + process_on_every_gpu(processes)  # rows without their header: only who is where
        return activity_findings(gpus, processes, hang_said, unused_said)

    def _modes(self) -> list[Finding]:
        """MIG and compute mode, judged as `check` judges NVML's (checks/gpus.py)."""
        shown = Unavailable("not shown")
        gpus = [
            NvmlGpu(index=_index(g.name, i), name=g.name, uuid=shown, pci_bus_id=shown, capability=shown, memory_total_bytes=shown,
                    memory_used_bytes=shown, mig_mode=g.mig_mode or shown, compute_mode=g.compute_mode or shown,
                    processes=shown)
            for i, g in enumerate(self.gpus)
            if g.compute_mode or g.mig_mode
        ]
        return mig_findings(gpus) + compute_mode_findings(gpus)

    def _lost(self, guest: tuple[str, str] = ("", "")) -> list[Finding]:
        """gpu-lost only where nvidia-smi says the device itself is unreachable; ERR! in
        a reading of a GPU it reached is gpu-reading-failed (_unread)."""
        # "Not Found": the driver never brought the GPU up (patterns/classes.py's gpu-driver-unusable reads that line), not a lost one
        lost = [g for g in self.gpus if g.lost and g.lost.lower() != "not found"]
        evidence = {g.name: f"Unable to determine the device handle: {g.lost}" for g in lost}
        names = [g.name for g in lost]
        if self.no_devices:
            evidence["nvidia-smi"] = self.no_devices
            names.append("any GPU (No devices were found)")
        out = self._unread()
        if not names:
            return out
        if guest[0]:  # inside WSL or a VM: the handle is Windows' or the hypervisor's to give, and nothing shows the GPU lost
            return [GPU_LOST(case=guest[0], evidence=evidence | {"source": "pasted nvidia-smi output", "setting": guest[1]},
                             lost=", ".join(names))] + out
        return [GPU_LOST(case="nvidia-smi", evidence=evidence | {"source": "pasted nvidia-smi output"}, lost=", ".join(names))] + out

    def _unread(self) -> list[Finding]:
        """ERR! in the table: a reading nvidia-smi could not take. The GPU answered for
        the rest; a GPU whose every reading failed may be lost, which `nvidia-smi -q`
        and the kernel log decide."""
        out = []
        if self.cuda_unread:  # the driver's, not a GPU's: whatever the GPUs' rows show
            out.append(GPU_READING_FAILED(case="cuda", evidence={"ERR!": ["CUDA Version"], "line": self.cuda_unread, "source": "pasted nvidia-smi output"},
                                          severity=Severity.WARN, gpu="the driver", readings="CUDA Version", index=0))
        for g in self.gpus:
            if not g.unread or g.lost:
                continue
            every = ALL_READINGS <= set(g.unread) and bool(ROW_READINGS & set(g.unread))
            index = _index(g.name, self.gpus.index(g))
            out.append(GPU_READING_FAILED(
                case="every" if every else "some", evidence={"ERR!": list(g.unread), "source": "pasted nvidia-smi output"},
                severity=Severity.WARN if every else Severity.INFO, gpu=g.name, readings=", ".join(g.unread), index=index,
            ))
        return out


def _index(name: str, position: int) -> int:
    """nvidia-smi's index when the paste shows it ("GPU 3 (...)"), else the GPU's place in the paste."""
    m = re.match(r"GPU (\d+) ", name)
    return int(m.group(1)) if m else position
