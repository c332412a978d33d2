"""A pasted `p2pBandwidthLatencyTest` (CUDA samples): its P2P=Enabled matrices say whether GPU-to-GPU
copies work. With peer access enabled a write between two GPUs takes a few microseconds and moves tens of
GB/s; where the PCIe fabric drops or stalls peer traffic (ACS or the IOMMU redirecting it, a BIOS or
virtualisation setting) the enabled copies take tens of milliseconds or move almost nothing, while the
same test with P2P disabled (through the host) is fine. NCCL then hangs or crawls on that machine.

`NvidiaSmiReader` hands it the lines of its windows (the matrices' headers are anchors). Example, from
huggingface/transformers#20438 (https://github.com/huggingface/transformers/issues/20438), a node whose
multi-GPU training hung:

    P2P=Enabled Latency (P2P Writes) Matrix (us)
       GPU     0      1      2 ...
         0   4.95 49206.88 49206.64 ...
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from gpudoctor.catalog.findings.gpu_health import GPU_P2P_BROKEN
from gpudoctor.core.findings import Finding

# the enabled matrices' headers (the disabled ones are the comparison, not needed to judge)
HEADER = re.compile(r"^\s*(?:(?P<kind>Unidirectional|Bidirectional) P2P=Enabled Bandwidth(?: \(P2P Writes\))? Matrix \(GB/s\)"
                    r"|P2P=Enabled Latency \(P2P Writes\) Matrix \(us\))\s*$")
# a matrix's column line ("   GPU     0      1", "   D\\D     0      1"); the CPU's latency block that follows the GPUs' one
# ("   CPU     0      1") is another matrix, and ends it
COLUMNS = re.compile(r"^\s*(?:GPU|D\\D)(?:\s+\d+)+\s*$")
ROW = re.compile(r"^\s*(?P<gpu>\d+)\s+(?P<values>(?:-?\d+(?:\.\d+)?\s+)*-?\d+(?:\.\d+)?)\s*$")
ANCHORS = (b"P2P=Enabled",)
# an enabled P2P write takes microseconds (NVLink ~2, PCIe ~10-30): a median across pairs of a millisecond
# or more is traffic that stalls; an enabled copy moving under 1 GB/s is traffic that barely flows
STALLED_US = 1000.0
CRAWLING_GBS = 1.0


@dataclass
class P2pMatrix:
    kind: str = ""  # "latency", "uni", "bi": the enabled matrix being read ("" outside one)
    off_diagonal: dict[str, list[float]] = field(default_factory=dict)  # per matrix: the values between two GPUs
    diagonal: dict[str, list[float]] = field(default_factory=dict)

    def line(self, text: str) -> bool:
        """A line of the test's output; False when it is not one."""
        m = HEADER.match(text)
        if m:
            self.kind = {"Unidirectional": "uni", "Bidirectional": "bi"}.get(m["kind"] or "", "latency")
            self.off_diagonal.setdefault(self.kind, [])
            self.diagonal.setdefault(self.kind, [])
            return True
        if not self.kind:
            return False
        row = ROW.match(text)
        if row is None:
            if COLUMNS.match(text):
                return True
            self.kind = ""  # a blank line, the CPU's block or the next matrix: this one has ended
            return False
        me = int(row["gpu"])
        for peer, value in enumerate(float(v) for v in row["values"].split()):
            (self.diagonal if peer == me else self.off_diagonal)[self.kind].append(value)
        return True

    def worked(self) -> str:
        """The test's reading where its enabled matrices show peer copies flowing and no fault ('' otherwise): a run of it
        that worked (knowledge/paste_parts.py)."""
        values = self.off_diagonal.get("uni") or self.off_diagonal.get("bi") or []
        if not values or self.findings():
            return ""
        kind = "unidirectional" if self.off_diagonal.get("uni") else "bidirectional"
        return (f"pasted p2pBandwidthLatencyTest: {kind} P2P=Enabled copies between GPUs move {statistics.median(values):.2f} GB/s "
                f"(median of {len(values)} pairs)")

    def findings(self) -> list[Finding]:
        broken: dict[str, str] = {}
        latency = self.off_diagonal.get("latency") or []
        if latency and statistics.median(latency) >= STALLED_US:
            own = statistics.median(self.diagonal["latency"]) if self.diagonal.get("latency") else None
            broken["latency"] = (f"P2P writes between GPUs take {statistics.median(latency):,.0f} us (median of {len(latency)} pairs)"
                                 + (f", a GPU to itself {own:.1f} us" if own is not None else ""))
        for kind, name in (("uni", "unidirectional"), ("bi", "bidirectional")):
            values = self.off_diagonal.get(kind) or []
            if values and statistics.median(values) < CRAWLING_GBS:
                broken[kind] = f"{name} P2P copies between GPUs move {statistics.median(values):.2f} GB/s (median of {len(values)} pairs)"
        if not broken:
            return []
        return [GPU_P2P_BROKEN(evidence={"matrices": broken, "source": "pasted p2pBandwidthLatencyTest output"},
                               reading="; ".join(broken.values()))]
