"""A stand-in `pynvml` that answers from a device recorded in a public thread
(tests/fixtures/gpu_health/nvml/*.json), so gpudoctor's own NVML code runs
unchanged against values a real GPU reported. Put in place with
`monkeypatch.setitem(sys.modules, "pynvml", recorded("name"))`.

A recording holds, per GPU, the answer of each NVML function by its name
(arguments after the handle joined by "," when the answer depends on them:
`"nvmlDeviceGetTotalEccErrors": {"1,0": 0}`). What the thread did not show is
not in the recording, and NVML answers it as a GPU without that feature does:
NVMLError_NotSupported. A GPU whose `nvmlDeviceGetHandleByIndex` is recorded as an
error (`{"nvml_error": 15, "text": "GPU is lost"}`) is counted by nvmlDeviceGetCount
and refuses its handle, as NVML does for a lost GPU or another job's.
Constants are nvidia-ml-py 13's (NVML_NVLINK_MAX_LINKS = 36).
"""

from __future__ import annotations

import json
import pathlib
import types
from typing import Any

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "gpu_health" / "nvml"


class NVMLError(Exception):
    def __init__(self, value: int = 999, text: str = "Unknown Error"):
        super().__init__(text)
        self.value = value


class NVMLError_NotSupported(NVMLError):
    def __init__(self) -> None:
        super().__init__(3, "Not Supported")


def _fields(gpu: dict, ids: list) -> list:
    """nvmlDeviceGetFieldValues: one value per field id, each with its own return code."""
    recorded_fields = gpu.get("nvmlDeviceGetFieldValues", {})
    return [
        types.SimpleNamespace(nvmlReturn=0, value=types.SimpleNamespace(uiVal=recorded_fields[str(i)]))
        if str(i) in recorded_fields
        else types.SimpleNamespace(nvmlReturn=3, value=types.SimpleNamespace(uiVal=0))
        for i in ids
    ]


def _answer(gpu: dict, name: str, args: tuple) -> Any:
    if name == "nvmlDeviceGetFieldValues":
        return _fields(gpu, args[0])
    if name not in gpu:
        raise NVMLError_NotSupported()
    value = gpu[name]
    if isinstance(value, dict) and args:
        key = ",".join(str(a) for a in args)
        if key not in value:
            raise NVMLError_NotSupported()
        value = value[key]
    if isinstance(value, dict) and "nvml_error" in value:  # the driver answered with an error
        raise NVMLError(value["nvml_error"], value["text"])
    if isinstance(value, dict) and set(value) == {"busId"}:
        return types.SimpleNamespace(**value)
    if isinstance(value, dict) and "total" in value and "used" in value:
        return types.SimpleNamespace(**value)
    if isinstance(value, list) and name.endswith("Processes"):
        return [types.SimpleNamespace(**p) for p in value]
    return tuple(value) if isinstance(value, list) and name != "nvmlDeviceGetRetiredPages" else value


def recorded(name: str) -> types.ModuleType:
    return from_recording(json.loads((FIXTURES / f"{name}.json").read_text()))


def from_recording(data: dict) -> types.ModuleType:
    """The stand-in for a recording's data (a test's copy, one fact changed, for a control)."""
    gpus: list[dict] = data["gpus"]
    n = types.ModuleType("pynvml")
    n.NVMLError, n.NVMLError_NotSupported = NVMLError, NVMLError_NotSupported  # type: ignore[attr-defined]
    n.NVML_ERROR_LIBRARY_NOT_FOUND, n.NVML_ERROR_DRIVER_NOT_LOADED = 12, 9  # type: ignore[attr-defined]
    n.NVML_ERROR_NO_PERMISSION, n.NVML_ERROR_FUNCTION_NOT_FOUND, n.NVML_ERROR_GPU_IS_LOST = 4, 13, 15  # type: ignore[attr-defined]
    n.NVML_NVLINK_MAX_LINKS, n.NVML_FEATURE_ENABLED, n.NVML_P2P_CAPS_INDEX_READ = 36, 1, 0  # type: ignore[attr-defined]
    n.NVML_NVLINK_DEVICE_TYPE_GPU, n.NVML_NVLINK_DEVICE_TYPE_SWITCH = 0, 2  # type: ignore[attr-defined]
    n.nvmlInit = lambda: None  # type: ignore[attr-defined]
    n.nvmlShutdown = lambda: None  # type: ignore[attr-defined]

    def system(key: str) -> Any:
        def answer() -> Any:
            if key not in data:  # the thread did not show it
                raise NVMLError_NotSupported()
            return data[key]
        return answer

    n.nvmlSystemGetDriverVersion = system("driver")  # type: ignore[attr-defined]
    n.nvmlSystemGetCudaDriverVersion = system("cuda_driver")  # type: ignore[attr-defined]
    n.nvmlDeviceGetCount = lambda: len(gpus)  # type: ignore[attr-defined]

    def handle(i: int) -> int:
        refused = gpus[i].get("nvmlDeviceGetHandleByIndex")
        if isinstance(refused, dict):
            raise NVMLError(refused["nvml_error"], refused["text"])
        return i

    n.nvmlDeviceGetHandleByIndex = handle  # type: ignore[attr-defined]

    def device_call(fn: str) -> Any:
        return lambda handle, *args: _answer(gpus[handle], fn, args)

    def pair_call(fn: str) -> Any:
        def answer(a: int, b: int, *args: Any) -> Any:
            raise NVMLError_NotSupported()
        return answer

    def getattr_(fn: str) -> Any:
        if fn in ("nvmlDeviceGetP2PStatus", "nvmlDeviceGetTopologyCommonAncestor"):
            return pair_call(fn)
        if fn.startswith("nvmlDevice"):
            return device_call(fn)
        raise AttributeError(fn)

    n.__getattr__ = getattr_  # type: ignore[attr-defined]
    n.recording = data  # type: ignore[attr-defined]
    return n
