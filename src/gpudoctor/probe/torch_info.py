"""torch's view of the machine, taken in a fresh child interpreter.

The child (torch_child.py) runs with the environment we give it, so the
answer is what a new training process would see, whatever the doctor's own
process has imported or initialised; `check --visible 1,0` gives it another
CUDA_VISIBLE_DEVICES. A torch that fails to import, a child that crashes or
hangs: each is a TorchFacts with a status and a reason, never an exception.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gpudoctor.core.codec import SnapshotError, from_plain
from gpudoctor.core.unavailable import Unavailable, describe_error

CHILD_SOURCE = Path(__file__).with_name("torch_child.py")
MARKER = "GPUDOCTOR-TORCH-FACTS "  # must match torch_child.MARKER
DEFAULT_TIMEOUT_S = 90.0  # CUDA initialisation on a many-GPU box can take tens of seconds


@dataclass(frozen=True)
class TorchDevice:
    index: int
    name: str | Unavailable
    capability: str | Unavailable  # "9.0"
    total_memory_bytes: int | Unavailable
    uuid: str | Unavailable  # as torch reports it; NVML adds a "GPU-" prefix
    pci_bus_id: str | Unavailable  # "0000:3b:00.0"


@dataclass(frozen=True)
class TorchFacts:
    """torch as a fresh process sees it. `status` is "ok", "import-failed",
    "probe-failed" (the child crashed or printed no answer) or "timeout"."""

    status: str
    error: str  # one line; "" when status is "ok"
    detail: str  # the end of a traceback, for evidence
    python: str | Unavailable
    executable: str | Unavailable
    cuda_visible_devices: str | None  # the value the child ran with
    version: str | Unavailable
    path: str | Unavailable
    cuda: str | None | Unavailable  # None: a CPU build
    hip: str | None | Unavailable
    cudnn: str | None | Unavailable
    nccl: str | None | Unavailable
    is_available: bool | Unavailable
    device_count: int | Unavailable
    devices: tuple[TorchDevice, ...]
    arch_list: tuple[str, ...] | Unavailable
    distributed: bool | Unavailable
    backends: dict[str, bool] | Unavailable
    cuda_warnings: tuple[str, ...] = ()

    @property
    def imported(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class InProcessTorch:
    """torch in the process that is running gpudoctor, if it imported torch
    and initialised CUDA before: then CUDA_VISIBLE_DEVICES is frozen for it,
    and a fresh child with the current value may see other devices."""

    cuda_initialized: bool | Unavailable
    device_count: int | Unavailable
    device_uuids: tuple[str, ...] | Unavailable
    cuda_visible_devices: str | None  # the value now, read when the facts were taken


def failed(status: str, error: str, visible: str | None, detail: str = "") -> TorchFacts:
    reason = Unavailable(f"torch probe {status}: {error}")
    return TorchFacts(
        status=status,
        error=error,
        detail=detail,
        python=reason,
        executable=reason,
        cuda_visible_devices=visible,
        version=reason,
        path=reason,
        cuda=reason,
        hip=reason,
        cudnn=reason,
        nccl=reason,
        is_available=reason,
        device_count=reason,
        devices=(),
        arch_list=reason,
        distributed=reason,
        backends=reason,
    )


def child_env(visible: str | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the child: ours, with CUDA_VISIBLE_DEVICES replaced
    when a what-if value is given."""
    env = dict(os.environ if base is None else base)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    # Warnings must reach the child's catch_warnings, not be turned into errors.
    env.pop("PYTHONWARNINGS", None)
    return env


class TorchChild:
    """A torch probe running in its own interpreter: start it, do other work,
    then read its answer. The child is killed at the deadline, and on any
    exception (Ctrl-C included) while we wait, so it is never left behind."""

    def __init__(self, visible: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        env = child_env(visible)
        self.visible = env.get("CUDA_VISIBLE_DEVICES")
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.proc: subprocess.Popen[str] | None = None
        self.failure: TorchFacts | None = None
        try:
            source = CHILD_SOURCE.read_text(encoding="utf-8")
        except OSError as exc:
            self.failure = failed("probe-failed", f"cannot read {CHILD_SOURCE}: {describe_error(exc)}", self.visible)
            return
        # `python -c` puts the working directory first on sys.path, as the
        # user's own `python -c "import torch"` would.
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", source],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            self.failure = failed("probe-failed", f"cannot start {sys.executable}: {describe_error(exc)}", self.visible)

    def result(self) -> TorchFacts:
        if self.failure is not None or self.proc is None:
            return self.failure or failed("probe-failed", "the torch probe did not start", self.visible)
        try:
            out, err = self.proc.communicate(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            return failed(
                "timeout",
                f"a fresh `python -c 'import torch; torch.cuda.device_count()'` did not finish in {self.timeout:.0f} s",
                self.visible,
            )
        except BaseException:
            self.kill()
            raise
        return parse_child_output(out, err, self.proc.returncode, self.visible)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:  # a process stuck in the driver (D state) may never be reaped: do not wait on it forever
                self.proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                pass


_early: TorchChild | None = None


def start_early() -> None:
    """Start the probe of this environment now, before the CLI has imported
    and parsed anything: its `import torch` is most of `check`'s time, and it
    runs meanwhile. torch_child() hands it over; one never claimed is killed at exit."""
    global _early
    if _early is None:
        _early = TorchChild()
        atexit.register(_early.kill)


def stop_early() -> None:
    """Kill a probe started early and not claimed yet (the CLI was interrupted)."""
    if _early is not None:
        _early.kill()


def torch_child(visible: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> TorchChild:
    """A running probe: the one started early when it probes what is asked, else a new one."""
    global _early
    early, _early = _early, None
    if early is not None:
        if visible is None and timeout == early.timeout:
            return early
        early.kill()
    return TorchChild(visible, timeout)


def probe_torch(visible: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> TorchFacts:
    """torch's view from a fresh child; `visible` replaces CUDA_VISIBLE_DEVICES."""
    return TorchChild(visible, timeout).result()


def parse_child_output(out: str, err: str, returncode: int, visible: str | None) -> TorchFacts:
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith(MARKER)), None)
    if line is None:
        tail = "\n".join(err.strip().splitlines()[-4:])
        how = f"exit code {returncode}" if returncode >= 0 else f"killed by signal {-returncode}"
        return failed("probe-failed", f"the torch probe printed no answer ({how})", visible, tail)
    try:
        data = json.loads(line[len(MARKER):])
        if data.get("status") == "probe-failed" and "version" not in data:
            return failed("probe-failed", data.get("error", "unknown"), visible, data.get("detail", ""))
        return from_plain(TorchFacts, data, "torch")
    except (ValueError, SnapshotError, AttributeError) as exc:
        return failed("probe-failed", f"unreadable answer from the torch probe: {describe_error(exc)}", visible)


def in_process_view() -> InProcessTorch:
    """torch in this process, read without importing it or initialising CUDA."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    torch = sys.modules.get("torch")
    if torch is None:
        reason = Unavailable("torch is not imported in this process")
        return InProcessTorch(reason, reason, reason, visible)
    try:
        initialized = bool(torch.cuda.is_initialized())
    except Exception as exc:
        reason = Unavailable(describe_error(exc))
        return InProcessTorch(reason, reason, reason, visible)
    if not initialized:
        reason = Unavailable("CUDA is not initialised in this process")
        return InProcessTorch(False, reason, reason, visible)
    try:
        count = int(torch.cuda.device_count())
    except Exception as exc:
        count_or = Unavailable(describe_error(exc))
        return InProcessTorch(True, count_or, count_or, visible)
    try:
        uuids: tuple[str, ...] | Unavailable = tuple(
            str(torch.cuda.get_device_properties(i).uuid) for i in range(count)
        )
    except Exception as exc:
        uuids = Unavailable(describe_error(exc))
    return InProcessTorch(True, count, uuids, visible)
