"""The one module that talks to NVML (through pynvml).

Every call goes through `NvmlSession.query`, which initialises NVML on first
use and turns a failing field into `Unavailable(reason)`; `probe_nvml` shuts
NVML down when done. NVML ignores CUDA_VISIBLE_DEVICES: it sees every
physical GPU, numbered as nvidia-smi numbers them (PCI bus order).
No library, no driver, a driver/library mismatch: each is a fact with its
reason, never an exception.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from gpudoctor.core.unavailable import Unavailable, describe_error

T = TypeVar("T")

# Why NVML is missing, as a kind the checks can branch on.
LIBRARY_NOT_FOUND = "library-not-found"  # no NVIDIA driver installed (or not mounted)
DRIVER_NOT_LOADED = "driver-not-loaded"
PYNVML_MISSING = "pynvml-missing"
INIT_FAILED = "init-failed"  # e.g. "Driver/library version mismatch" after an upgrade

COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}
P2P_STATUS = {
    0: "ok",
    1: "chipset not supported",
    2: "GPU not supported",
    3: "IOH topology not supported",
    4: "disabled by regkey",
    5: "not supported",
    6: "unknown",
}
# nvidia-smi topo -m names for the closest common ancestor of two GPUs.
TOPOLOGY = {0: "SAME-BOARD", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    name: str | Unavailable
    used_memory_bytes: int | Unavailable
    kind: str  # "compute" or "graphics"


# A value the source did not show: a pasted `nvidia-smi -q` section left out, a field
# an older snapshot lacks. NVML's own refusals keep NVML's reason ("Not Supported").
NOT_SHOWN = Unavailable("not shown")

# NVML's clock event (throttle) reason bits, named as `nvidia-smi -q` names them, so a
# reading from NVML and one from a pasted nvidia-smi say the same words.
CLOCK_EVENTS = {
    0x1: "Idle",
    0x2: "Applications Clocks Setting",
    0x4: "SW Power Cap",
    0x8: "HW Slowdown",
    0x10: "Sync Boost",
    0x20: "SW Thermal Slowdown",
    0x40: "HW Thermal Slowdown",
    0x80: "HW Power Brake Slowdown",
    0x100: "Display Clock Setting",
}


ALL_LINKS = -1  # NvLinkHealth.link of "every link" (nvidia-smi: "all links are inActive", no count given)


@dataclass(frozen=True)
class NvLinkHealth:
    """One NVLink of a GPU: up or down, and its error counters since the driver loaded."""

    link: int
    active: bool
    replay: int | Unavailable = NOT_SHOWN  # data-link replays (a flit resent)
    recovery: int | Unavailable = NOT_SHOWN  # the link went down and was retrained
    crc_flit: int | Unavailable = NOT_SHOWN
    crc_data: int | Unavailable = NOT_SHOWN


@dataclass(frozen=True)
class GpuHealth:
    """The hardware state that breaks multi-GPU jobs, as NVML (or nvidia-smi -q) reports
    it; any user may read it. Every field may be unavailable: consumer GPUs have no ECC
    or row remapping, older ones no remapping, a paste shows only some sections."""

    ecc_mode: str | Unavailable = NOT_SHOWN  # "enabled" / "disabled"
    ecc_pending_mode: str | Unavailable = NOT_SHOWN  # what the next reboot sets
    ecc_volatile_corrected: int | Unavailable = NOT_SHOWN  # since the driver loaded
    ecc_volatile_uncorrected: int | Unavailable = NOT_SHOWN
    ecc_aggregate_corrected: int | Unavailable = NOT_SHOWN  # lifetime of the board
    ecc_aggregate_uncorrected: int | Unavailable = NOT_SHOWN
    retired_single_bit: int | Unavailable = NOT_SHOWN  # pages retired for repeated single-bit errors
    retired_double_bit: int | Unavailable = NOT_SHOWN
    retired_pending: bool | Unavailable = NOT_SHOWN  # a page waits for a GPU reset to be retired
    remapped_corrected: int | Unavailable = NOT_SHOWN  # rows remapped (A100 and later)
    remapped_uncorrected: int | Unavailable = NOT_SHOWN
    remap_pending: bool | Unavailable = NOT_SHOWN  # a remap waits for a GPU reset
    remap_failure: bool | Unavailable = NOT_SHOWN  # no spare row was left: the GPU needs replacing
    clock_events: tuple[str, ...] | Unavailable = NOT_SHOWN  # active reasons, CLOCK_EVENTS names
    temperature_c: int | Unavailable = NOT_SHOWN
    slowdown_c: int | Unavailable = NOT_SHOWN  # the GPU slows its clocks from here
    shutdown_c: int | Unavailable = NOT_SHOWN
    max_operating_c: int | Unavailable = NOT_SHOWN  # the GPU lowers its clocks to stay below this
    power_w: float | Unavailable = NOT_SHOWN
    power_limit_w: float | Unavailable = NOT_SHOWN  # the enforced limit
    default_power_limit_w: float | Unavailable = NOT_SHOWN
    pcie_gen: int | Unavailable = NOT_SHOWN
    pcie_max_gen: int | Unavailable = NOT_SHOWN  # of this GPU in this slot
    pcie_width: int | Unavailable = NOT_SHOWN
    pcie_max_width: int | Unavailable = NOT_SHOWN
    pcie_replays: int | Unavailable = NOT_SHOWN  # PCIe packets resent since the driver loaded
    nvlinks: tuple[NvLinkHealth, ...] | Unavailable = NOT_SHOWN
    persistence_mode: str | Unavailable = NOT_SHOWN  # "enabled" / "disabled"
    # What the driver says the GPU needs after a fault: "none", "reset", "node-reboot",
    # "drain-p2p", "drain-and-reset", ... (NVML's GPU recovery action; nvidia-smi -q
    # "GPU Reset Status" before driver 570, "[GPU requires reset]" as a field's value)
    recovery_action: str | Unavailable = NOT_SHOWN


@dataclass(frozen=True)
class NvmlGpu:
    index: int  # nvidia-smi's index
    name: str | Unavailable
    uuid: str | Unavailable  # "GPU-8-4-4-4-12"
    pci_bus_id: str | Unavailable  # NVML's form: "00000000:3B:00.0"
    capability: str | Unavailable  # "9.0"
    memory_total_bytes: int | Unavailable
    memory_used_bytes: int | Unavailable
    mig_mode: str | Unavailable  # "enabled" / "disabled"
    compute_mode: str | Unavailable
    processes: tuple[GpuProcess, ...] | Unavailable
    health: GpuHealth | Unavailable = NOT_SHOWN


@dataclass(frozen=True)
class GpuLink:
    """How two GPUs reach each other (NVML indices a < b)."""

    a: int
    b: int
    p2p_read: str | Unavailable  # "ok" or why not
    topology: str | Unavailable  # PIX, PXB, PHB, NODE, SYS, SAME-BOARD
    nvlinks: int | Unavailable  # active NVLinks from a that reach b (directly or via NVSwitch)


# Why NVML counts a GPU but gives no handle for it (UnreachableGpu.kind).
NOT_PERMITTED = "not-permitted"  # NoPermission: a cgroup or container gives this process other GPUs (another job's)
LOST = "lost"  # any other failure: "GPU is lost" (Xid 79), "Unknown Error", ... nvidia-smi's "Unable to determine the device handle"


@dataclass(frozen=True)
class UnreachableGpu:
    """A GPU NVML counts (nvmlDeviceGetCount counts every GPU of the node) but gives
    no handle for; NVML's documentation says the count includes GPUs whose handle
    answers NoPermission."""

    index: int  # NVML's index
    kind: str  # NOT_PERMITTED or LOST
    reason: str  # NVML's words


@dataclass(frozen=True)
class NvmlFacts:
    available: bool
    error_kind: str  # "" when available, else one of the kinds above
    error: str  # "" when available
    driver_version: str | Unavailable
    cuda_driver_version: str | Unavailable  # the newest CUDA the driver supports: "12.4"
    gpus: tuple[NvmlGpu, ...]  # the GPUs NVML gave a handle for
    links: tuple[GpuLink, ...]
    device_count: int | Unavailable = NOT_SHOWN  # nvmlDeviceGetCount: gpus + unreachable
    unreachable: tuple[UnreachableGpu, ...] = ()


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class NvmlSession:
    """Lazy NVML: initialised by the first query, shut down by close()."""

    def __init__(self) -> None:
        self._nvml: Any = None
        self._ready = False
        self.error_kind = ""
        self.error = ""

    def start(self) -> bool:
        if self._ready or self.error:
            return self._ready
        try:
            import pynvml
        except Exception as exc:
            self.error_kind, self.error = PYNVML_MISSING, f"pynvml cannot be imported ({describe_error(exc)})"
            return False
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            self.error_kind = self._kind(pynvml, exc)
            self.error = _text(exc) or type(exc).__name__
            return False
        except Exception as exc:  # e.g. an OSError from a broken libnvidia-ml
            self.error_kind, self.error = INIT_FAILED, describe_error(exc)
            return False
        self._nvml, self._ready = pynvml, True
        return True

    @staticmethod
    def _kind(pynvml: Any, exc: Exception) -> str:
        value = getattr(exc, "value", None)
        if value == getattr(pynvml, "NVML_ERROR_LIBRARY_NOT_FOUND", 12):
            return LIBRARY_NOT_FOUND
        if value == getattr(pynvml, "NVML_ERROR_DRIVER_NOT_LOADED", 9):
            return DRIVER_NOT_LOADED
        return INIT_FAILED

    def query(self, fn: Callable[[Any], T]) -> T | Unavailable:
        """fn(pynvml), or Unavailable with NVML's reason."""
        if not self.start():
            return Unavailable(self.error)
        try:
            return fn(self._nvml)
        except self._nvml.NVMLError as exc:
            return Unavailable(_text(exc) or type(exc).__name__)
        except Exception as exc:
            return Unavailable(describe_error(exc))

    def handle(self, index: int) -> Any:
        """NVML's handle for GPU `index`, or an UnreachableGpu saying why there is none."""
        if not self.start():
            return UnreachableGpu(index, LOST, self.error)
        n = self._nvml
        try:
            return n.nvmlDeviceGetHandleByIndex(index)
        except n.NVMLError as exc:
            refused = getattr(exc, "value", None) == getattr(n, "NVML_ERROR_NO_PERMISSION", 4)
            return UnreachableGpu(index, NOT_PERMITTED if refused else LOST, _text(exc) or type(exc).__name__)
        except Exception as exc:
            return UnreachableGpu(index, LOST, describe_error(exc))

    def close(self) -> None:
        if self._ready:
            try:
                self._nvml.nvmlShutdown()
            except Exception:
                pass  # shutting down is best effort; the facts are already read
            self._ready = False


def _driver_cuda(n: Any) -> str:
    v = n.nvmlSystemGetCudaDriverVersion()
    return f"{v // 1000}.{(v % 1000) // 10}"


def _processes(session: NvmlSession, handle: Any) -> tuple[GpuProcess, ...] | Unavailable:
    found: dict[int, GpuProcess] = {}
    for kind, getter in (
        ("compute", "nvmlDeviceGetComputeRunningProcesses"),
        ("graphics", "nvmlDeviceGetGraphicsRunningProcesses"),
    ):
        procs = session.query(lambda n: getattr(n, getter)(handle))  # query calls it at once
        if isinstance(procs, Unavailable):
            if kind == "compute":
                return procs
            continue
        for p in procs:
            if p.pid in found:
                continue
            used = getattr(p, "usedGpuMemory", None)
            found[p.pid] = GpuProcess(
                pid=int(p.pid),
                name=_process_name(int(p.pid)),
                used_memory_bytes=int(used) if isinstance(used, int) else Unavailable("not reported by the driver"),
                kind=kind,
            )
    return tuple(found.values())


def _process_name(pid: int) -> str | Unavailable:
    try:
        import psutil

        return psutil.Process(pid).name()
    except Exception as exc:
        # Typically another container's PID namespace, or no permission.
        return Unavailable(f"process {pid} not visible here ({type(exc).__name__})")


def _gpu(session: NvmlSession, index: int, handle: Any) -> NvmlGpu:
    q = session.query

    def mig(n: Any) -> str:
        current, _pending = n.nvmlDeviceGetMigMode(handle)
        return "enabled" if current == 1 else "disabled"

    def mem(n: Any) -> Any:
        return n.nvmlDeviceGetMemoryInfo(handle)

    memory = q(mem)
    cap = q(lambda n: "%d.%d" % tuple(n.nvmlDeviceGetCudaComputeCapability(handle)))
    return NvmlGpu(
        index=index,
        name=q(lambda n: _text(n.nvmlDeviceGetName(handle))),
        uuid=q(lambda n: _text(n.nvmlDeviceGetUUID(handle))),
        pci_bus_id=q(lambda n: _text(n.nvmlDeviceGetPciInfo(handle).busId)),
        capability=cap,
        memory_total_bytes=memory if isinstance(memory, Unavailable) else int(memory.total),
        memory_used_bytes=memory if isinstance(memory, Unavailable) else int(memory.used),
        mig_mode=q(mig),
        compute_mode=q(lambda n: COMPUTE_MODES.get(n.nvmlDeviceGetComputeMode(handle), "unknown")),
        processes=_processes(session, handle),
        health=_health(session, handle),
    )


# NVML_GPU_RECOVERY_ACTION_*, read through field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (230)
RECOVERY_ACTIONS = {
    0: "none", 1: "reset", 2: "node-reboot", 3: "drain-p2p", 4: "drain-and-reset",
    5: "recover-imex-domain", 6: "bus-reset", 7: "system-reboot",
}
RECOVERY_ACTION_FIELD = 230
# NVML's text for NVML_ERROR_RESET_REQUIRED ("GPU requires restart"; nvidia-smi prints "[GPU requires reset]")
RESET_REQUIRED = ("requires restart", "requires reset")


def _recovery_action(n: Any, handle: Any) -> str:
    [value] = n.nvmlDeviceGetFieldValues(handle, [RECOVERY_ACTION_FIELD])
    if value.nvmlReturn != 0:
        raise n.NVMLError(value.nvmlReturn)
    return RECOVERY_ACTIONS.get(int(value.value.uiVal), f"action {int(value.value.uiVal)}")


def _enabled(value: Any) -> str:
    return "enabled" if value == 1 else "disabled"


FUNCTION_NOT_FOUND = 13  # NVML_ERROR_FUNCTION_NOT_FOUND: the driver's library lacks the call


def _clock_events(n: Any, handle: Any) -> tuple[str, ...]:
    # The newer name first; drivers before 535 only know the "throttle" one. A pynvml that
    # has the new name still finds no such function in an older driver's library: it
    # raises FunctionNotFound, and the old call answers.
    try:
        mask = int(n.nvmlDeviceGetCurrentClocksEventReasons(handle))
    except AttributeError:  # a pynvml older than the new name
        mask = int(n.nvmlDeviceGetCurrentClocksThrottleReasons(handle))
    except n.NVMLError as exc:
        if getattr(exc, "value", None) != getattr(n, "NVML_ERROR_FUNCTION_NOT_FOUND", FUNCTION_NOT_FOUND):
            raise
        mask = int(n.nvmlDeviceGetCurrentClocksThrottleReasons(handle))
    return tuple(name for bit, name in CLOCK_EVENTS.items() if mask & bit)


NVLINK_LINK_COUNT_FIELD = 91  # NVML_FI_DEV_NVLINK_LINK_COUNT


def _link_count(n: Any, handle: Any) -> int:
    """How many NVLinks this part has (H100 and H200: 18). NVML_NVLINK_MAX_LINKS is the
    most any part has (36 in nvidia-ml-py 13): links past the part's own are not links."""
    most = int(n.NVML_NVLINK_MAX_LINKS)
    try:
        [value] = n.nvmlDeviceGetFieldValues(handle, [NVLINK_LINK_COUNT_FIELD])
        if value.nvmlReturn == 0:
            return min(most, int(value.value.uiVal))
    except Exception:
        pass  # an older driver: probe up to the most, stopping where NVML says no more links
    return most


def _nvlink_health(session: NvmlSession, handle: Any) -> tuple[NvLinkHealth, ...] | Unavailable:
    def read(n: Any) -> tuple[NvLinkHealth, ...]:
        links = []
        for link in range(_link_count(n, handle)):
            try:
                active = n.nvmlDeviceGetNvLinkState(handle, link) == n.NVML_FEATURE_ENABLED
            except n.NVMLError_NotSupported:
                break  # no NVLink on this GPU, or no more links
            except n.NVMLError:
                continue

            def counter(kind: int, link: int = link) -> int | Unavailable:
                return session.query(lambda n: int(n.nvmlDeviceGetNvLinkErrorCounter(handle, link, kind)))

            links.append(
                NvLinkHealth(
                    link=link,
                    active=active,
                    replay=counter(0),  # NVML_NVLINK_ERROR_DL_REPLAY
                    recovery=counter(1),  # NVML_NVLINK_ERROR_DL_RECOVERY
                    crc_flit=counter(2),
                    crc_data=counter(3),
                )
            )
        return tuple(links)

    return session.query(read)


def _health(session: NvmlSession, handle: Any) -> GpuHealth:
    """Each field read on its own: one the GPU does not support is Unavailable, the rest stand."""
    q = session.query
    ecc = q(lambda n: tuple(n.nvmlDeviceGetEccMode(handle)))
    remap = q(lambda n: tuple(n.nvmlDeviceGetRemappedRows(handle)))

    def ecc_count(errors: int, counter: int) -> int | Unavailable:
        return q(lambda n: int(n.nvmlDeviceGetTotalEccErrors(handle, errors, counter)))

    def watts(getter: str) -> float | Unavailable:
        return q(lambda n: getattr(n, getter)(handle) / 1000.0)  # NVML answers in milliwatts

    def remap_field(i: int, kind: type) -> Any:
        return remap if isinstance(remap, Unavailable) else kind(remap[i])

    def ecc_field(i: int) -> str | Unavailable:
        return ecc if isinstance(ecc, Unavailable) else _enabled(ecc[i])

    health = GpuHealth(
        ecc_mode=ecc_field(0),
        ecc_pending_mode=ecc_field(1),
        ecc_volatile_corrected=ecc_count(0, 0),  # NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC
        ecc_volatile_uncorrected=ecc_count(1, 0),
        ecc_aggregate_corrected=ecc_count(0, 1),  # NVML_AGGREGATE_ECC
        ecc_aggregate_uncorrected=ecc_count(1, 1),
        retired_single_bit=q(lambda n: len(n.nvmlDeviceGetRetiredPages(handle, 0))),
        retired_double_bit=q(lambda n: len(n.nvmlDeviceGetRetiredPages(handle, 1))),
        retired_pending=q(lambda n: n.nvmlDeviceGetRetiredPagesPendingStatus(handle) == 1),
        remapped_corrected=remap_field(0, int),
        remapped_uncorrected=remap_field(1, int),
        remap_pending=remap_field(2, bool),
        remap_failure=remap_field(3, bool),
        clock_events=q(lambda n: _clock_events(n, handle)),
        temperature_c=q(lambda n: int(n.nvmlDeviceGetTemperature(handle, 0))),  # NVML_TEMPERATURE_GPU
        slowdown_c=q(lambda n: int(n.nvmlDeviceGetTemperatureThreshold(handle, 1))),  # ..._SLOWDOWN
        shutdown_c=q(lambda n: int(n.nvmlDeviceGetTemperatureThreshold(handle, 0))),  # ..._SHUTDOWN
        max_operating_c=q(lambda n: int(n.nvmlDeviceGetTemperatureThreshold(handle, 3))),  # ..._GPU_MAX
        power_w=watts("nvmlDeviceGetPowerUsage"),
        power_limit_w=watts("nvmlDeviceGetEnforcedPowerLimit"),
        default_power_limit_w=watts("nvmlDeviceGetPowerManagementDefaultLimit"),
        pcie_gen=q(lambda n: int(n.nvmlDeviceGetCurrPcieLinkGeneration(handle))),
        pcie_max_gen=q(lambda n: int(n.nvmlDeviceGetMaxPcieLinkGeneration(handle))),
        pcie_width=q(lambda n: int(n.nvmlDeviceGetCurrPcieLinkWidth(handle))),
        pcie_max_width=q(lambda n: int(n.nvmlDeviceGetMaxPcieLinkWidth(handle))),
        pcie_replays=q(lambda n: int(n.nvmlDeviceGetPcieReplayCounter(handle))),
        nvlinks=_nvlink_health(session, handle),
        persistence_mode=q(lambda n: _enabled(n.nvmlDeviceGetPersistenceMode(handle))),
        recovery_action=q(lambda n: _recovery_action(n, handle)),
    )
    if not isinstance(health.recovery_action, str) and _reset_refused(health):
        # the driver refuses queries until the GPU is reset: that is the recovery action
        return replace(health, recovery_action="reset")
    return health


def _reset_refused(health: GpuHealth) -> bool:
    return any(
        isinstance(v, Unavailable) and any(r in v.reason.lower() for r in RESET_REQUIRED)
        for v in (getattr(health, f.name) for f in fields(health))
    )


# What is at the far end of an NVLink (nvmlDeviceGetNvLinkRemoteDeviceType), or "" when NVML does not say.
REMOTE_GPU, REMOTE_SWITCH, REMOTE_OTHER, REMOTE_UNKNOWN = "gpu", "switch", "other", ""


def _remote_kind(n: Any, handle: Any, link: int) -> str:
    try:
        kind = n.nvmlDeviceGetNvLinkRemoteDeviceType(handle, link)
    except Exception:
        return REMOTE_UNKNOWN  # a driver without the call
    if kind == getattr(n, "NVML_NVLINK_DEVICE_TYPE_GPU", 0):
        return REMOTE_GPU
    if kind == getattr(n, "NVML_NVLINK_DEVICE_TYPE_SWITCH", 2):
        return REMOTE_SWITCH
    return REMOTE_OTHER


def _remote_bus(n: Any, handle: Any, link: int) -> str | None:
    try:
        return _text(n.nvmlDeviceGetNvLinkRemotePciInfo(handle, link).busId).lower()
    except Exception:
        return None  # NVSwitch links may not report a PCI id: the remote type still tells what is there


def _nvlink_remotes(session: NvmlSession, handle: Any) -> list[tuple[str, str | None]] | Unavailable:
    """(what, PCI bus id) at the far end of each active NVLink of one GPU."""

    def read(n: Any) -> list[tuple[str, str | None]]:
        remotes = []
        for link in range(_link_count(n, handle)):
            try:
                if n.nvmlDeviceGetNvLinkState(handle, link) != n.NVML_FEATURE_ENABLED:
                    continue
            except n.NVMLError_NotSupported:
                break  # no NVLink on this GPU, or no more links
            except n.NVMLError:
                continue
            remotes.append((_remote_kind(n, handle, link), _remote_bus(n, handle, link)))
        return remotes

    return session.query(read)


def _switch_links(remotes: list[tuple[str, str | None]], ours: set[str]) -> int:
    # Without the remote type (older drivers), a link to a PCI id that is none of our GPUs goes to an NVSwitch.
    return sum(1 for kind, bus in remotes if kind == REMOTE_SWITCH or (kind == REMOTE_UNKNOWN and bus not in ours))


def _links(session: NvmlSession, handles: list[Any], gpus: list[NvmlGpu]) -> tuple[GpuLink, ...]:
    bus_ids = [g.pci_bus_id.lower() if isinstance(g.pci_bus_id, str) else None for g in gpus]
    ours = {b for b in bus_ids if b is not None}
    remotes = [_nvlink_remotes(session, h) for h in handles]
    links = []
    for a in range(len(handles)):
        for b in range(a + 1, len(handles)):
            ha, hb = handles[a], handles[b]
            p2p = session.query(
                lambda n: P2P_STATUS.get(n.nvmlDeviceGetP2PStatus(ha, hb, n.NVML_P2P_CAPS_INDEX_READ), "unknown")
            )
            topo = session.query(lambda n: TOPOLOGY.get(n.nvmlDeviceGetTopologyCommonAncestor(ha, hb), "unknown"))
            ra, rb = remotes[a], remotes[b]
            if isinstance(ra, Unavailable):
                nvlinks: int | Unavailable = ra
            else:
                direct = sum(1 for kind, bus in ra if bus is not None and bus == bus_ids[b] and kind in (REMOTE_GPU, REMOTE_UNKNOWN))
                # two GPUs on the switch fabric reach each other through it
                switch_a = _switch_links(ra, ours)
                switch_b = 0 if isinstance(rb, Unavailable) else _switch_links(rb, ours)
                nvlinks = direct + (min(switch_a, switch_b) if switch_a and switch_b else 0)
            links.append(GpuLink(a=gpus[a].index, b=gpus[b].index, p2p_read=p2p, topology=topo, nvlinks=nvlinks))
    return tuple(links)


NVML_TIMEOUT_S = 30.0


def probe_nvml(timeout: float = NVML_TIMEOUT_S) -> NvmlFacts:
    """NVML's view, read in a daemon thread with a deadline: on a wedged driver an
    NVML call can block for ever, and that is exactly where `check` must answer."""
    result: list[NvmlFacts] = []

    def read() -> None:
        try:
            result.append(_read_nvml())
        except Exception as exc:  # noqa: BLE001 - a probe never raises
            result.append(_failed(INIT_FAILED, describe_error(exc)))

    worker = threading.Thread(target=read, name="gpudoctor-nvml", daemon=True)
    worker.start()
    worker.join(timeout)
    if not result:
        return _failed(INIT_FAILED, f"NVML did not answer within {timeout:.0f} s (a hung driver?)")
    return result[0]


def _failed(kind: str, error: str) -> NvmlFacts:
    reason = Unavailable(error)
    return NvmlFacts(False, kind, error, reason, reason, (), ())


def _read_nvml() -> NvmlFacts:
    session = NvmlSession()
    try:
        if not session.start():
            return _failed(session.error_kind, session.error)
        count = session.query(lambda n: int(n.nvmlDeviceGetCount()))
        handles = []
        gpus = []
        unreachable = []
        for i in range(count if isinstance(count, int) else 0):
            handle = session.handle(i)
            if isinstance(handle, UnreachableGpu):
                unreachable.append(handle)  # kept: a lost GPU is a finding, another job's GPU keeps its index
                continue
            handles.append(handle)
            gpus.append(_gpu(session, i, handle))
        return NvmlFacts(
            available=True,
            error_kind="",
            error="",
            driver_version=session.query(lambda n: _text(n.nvmlSystemGetDriverVersion())),
            cuda_driver_version=session.query(_driver_cuda),
            gpus=tuple(gpus),
            links=_links(session, handles, gpus),
            device_count=count,
            unreachable=tuple(unreachable),
        )
    finally:
        session.close()
