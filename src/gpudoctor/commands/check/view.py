"""The header of `gpudoctor check`: versions, the driver, and the table that
maps each torch index to its physical GPU — as rich renderables for the
terminal and as Markdown sections for a bug report."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from gpudoctor.checks.visibility import DeviceRow, device_map
from gpudoctor.checks.wording import or_none, quoted, shown, size
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.software import Nvcc
from gpudoctor.render.markdown import table


def torch_line(facts: Facts) -> str:
    t = facts.torch
    if not t.imported:
        return f"torch: not importable ({t.error})"
    if isinstance(t.hip, str):
        build = f"ROCm {t.hip}"
    elif t.cuda is None:
        build = "CPU build"
    else:
        build = f"CUDA {t.cuda}"
    return f"torch {shown(t.version)} ({build})"


def driver_line(facts: Facts) -> str:
    nv = facts.nvml
    if not nv.available:
        return f"NVIDIA driver: none ({nv.error})"
    return f"NVIDIA driver {shown(nv.driver_version)} (CUDA {shown(nv.cuda_driver_version)})"


def versions(facts: Facts) -> list[tuple[str, str]]:
    t, nv, s = facts.torch, facts.nvml, facts.system
    backends = t.backends
    have = ", ".join(k for k, v in backends.items() if v) if isinstance(backends, dict) else shown(backends)
    return [
        ("gpudoctor", facts.gpudoctor),
        ("OS", s.platform),
        ("Python", s.python),
        ("torch", shown(t.version) if t.imported else f"import failed: {t.error}"),
        ("torch CUDA / cuDNN / NCCL", " / ".join(str(or_none(v)) for v in (t.cuda, t.cudnn, t.nccl))),
        ("torch.cuda.is_available() / device_count()", f"{shown(t.is_available)} / {shown(t.device_count)}"),
        ("distributed backends", have or "none"),
        (
            "NVIDIA driver / driver CUDA",
            f"{shown(nv.driver_version)} / {shown(nv.cuda_driver_version)}" if nv.available else f"none ({nv.error})",
        ),
        ("CUDA_VISIBLE_DEVICES", quoted(facts.visible_devices) + (" (--visible)" if facts.visible_override is not None else "")),
        ("CUDA_DEVICE_ORDER", quoted(facts.environment.get("CUDA_DEVICE_ORDER"))),
        ("CPUs / RAM / /dev/shm", f"{shown(s.cpus_logical)} / {size(s.ram_total_bytes)} / {size(s.shm_total_bytes)}"),
        *software_versions(facts),
    ]


def software_versions(facts: Facts) -> list[tuple[str, str]]:
    """The collect_env fields beyond torch and the driver (probe/software.py)."""
    sw = facts.software
    if isinstance(sw, Unavailable):
        return [("OS, CPU, compilers, packages", str(sw))]
    nvcc = sw.nvcc
    if isinstance(nvcc, Nvcc):
        nvcc_text = f"{shown(nvcc.release)} ({nvcc.path}, by {nvcc.found_by})"
    else:
        nvcc_text = "none (no CUDA_HOME, no nvcc on PATH or in /usr/local/cuda)" if nvcc is None else str(nvcc)
    return [
        ("OS / kernel", f"{shown(sw.os_name)} / {shown(sw.kernel)}"),
        ("CPU", str(shown(sw.cpu_model))),
        ("gcc / glibc", f"{or_none(sw.gcc)} / {or_none(sw.glibc)}"),
        ("nvcc (CUDA toolkit for extension builds)", nvcc_text),
    ]


def packages_section(facts: Facts) -> str:
    """Every installed package that matters to a distributed job, as `pip list` names it."""
    sw = facts.software
    packages = sw.packages if not isinstance(sw, Unavailable) else sw
    if isinstance(packages, Unavailable):
        return f"### Packages\n\n{packages}"
    rows = ((p.name, p.version, p.reason) for p in packages)
    return "### Packages\n\n" + table(["package", "version", "why listed"], rows)


def _row_cells(r: DeviceRow) -> list[str]:
    g = r.gpu
    memory = f"{size(g.memory_used_bytes)} / {size(g.memory_total_bytes)}" if g else size(r.memory_total_bytes)
    return [
        "hidden" if r.torch_index is None else f"cuda:{r.torch_index}",
        "?" if g is None else str(g.index),
        r.name,
        "?" if g is None else str(shown(g.uuid)),
        "?" if g is None else str(shown(g.pci_bus_id)),
        memory,
        "?" if g is None else str(shown(g.mig_mode)),
    ]


HEADERS = ["torch", "GPU", "name", "UUID", "PCI bus", "memory used / total", "MIG"]
# The terminal table leaves out the PCI bus and MIG columns (unless MIG is on):
# the UUID already ties torch's index to nvidia-smi's, and width is scarce.
RICH_COLUMNS = (0, 1, 2, 3, 5)


def rich_header(facts: Facts) -> list[RenderableType]:
    parts: list[RenderableType] = [
        Text.assemble(("gpudoctor check", "bold"), "  ", torch_line(facts), "  ·  ", driver_line(facts)),
    ]
    if facts.visible_override is not None:
        parts.append(Text(f"what-if: torch probed with CUDA_VISIBLE_DEVICES={facts.visible_override!r}", style="cyan"))
    rows = device_map(facts)
    if rows:
        columns = RICH_COLUMNS + ((6,) if any(r.gpu and r.gpu.mig_mode == "enabled" for r in rows) else ())
        grid = Table(box=None, pad_edge=False, header_style="bold")
        for i in columns:
            grid.add_column(HEADERS[i], no_wrap=HEADERS[i] in ("torch", "GPU", "UUID"))
        for r in rows:
            cells = _row_cells(r)
            # Text, not str: a snapshot's GPU name is not rich markup (no hidden [link=...])
            grid.add_row(*(Text(cells[i]) for i in columns), style="dim" if r.torch_index is None else "")
        parts.append(grid)
    elif not facts.nvml.available:
        parts.append(Text("GPUs: none visible to NVML or torch", style="dim"))
    parts.append(Text(""))
    return parts


def markdown_sections(facts: Facts) -> list[str]:
    sections = ["### Versions\n\n" + table(["", "value"], versions(facts)), packages_section(facts)]
    rows = device_map(facts)
    if rows:
        sections.append("### GPUs\n\n" + table(HEADERS, (_row_cells(r) for r in rows)))
    else:
        sections.append(f"### GPUs\n\nNone visible to NVML or torch ({facts.nvml.error or 'no devices'}).")
    return sections
