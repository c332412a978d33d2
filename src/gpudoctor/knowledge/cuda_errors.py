"""CUDA's table of errors, one row an error: every name and number programs print it by, CUDA's message for it, what it
means and what to do. The one place a CUDA error's meaning and fix are written; two patterns read it:

- patterns/classes17b.py's `cuda-runtime-error`, CUDA's message (cudaGetErrorString's words) in a program's words (torch's
  "CUDA error: X", old torch's THC lines, darknet's, Caffe's glog check), for the rows marked `message_class`;
- patterns/classes19a.py's `cuda-error-code`, the error by its number or its enum name (the runtime's, the driver API's or
  HIP's), for every row.

A fault gpudoctor has a finding for (`finding`) is that finding's: cuda-error-code is told as it (knowledge/story.py), and
the message class reads it only in the forms that finding's pattern misses (a broken or cut message, an old wrapper). A
row's `meaning` and `step` are what both patterns say of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

BUILD_FOR_GPU = ("build the program for this GPU's architecture (nvidia-smi --query-gpu=name,compute_cap --format=csv; "
                 "the build's -arch/-gencode, CUDA_ARCH or CMAKE_CUDA_ARCHITECTURES must include it) or install a release "
                 "built for it; cuobjdump --list-elf on the binary lists the architectures it holds")


@dataclass(frozen=True)
class Fault:
    """One error of CUDA's table, under every name and number programs print it by."""

    name: str  # the runtime API's enum name (cudaError_t), the row's key
    message: str  # cudaGetErrorString's words
    code: Optional[int]  # the runtime's number since CUDA 10.1 (HIP's numbers are these)
    old_code: Optional[int]  # the runtime's number before CUDA 10.1
    driver: str = ""  # the driver API's CUresult name
    driver_code: Optional[int] = None
    hip: str = ""  # HIP's name for it
    finding: str = ""  # the finding gpudoctor already tells this fault as ("": its own words below)
    message_class: bool = False  # cuda-runtime-error reads its message in a program's words
    meaning: str = ""  # what it means ("" for a fault whose finding's why says it)
    step: str = ""  # what to do


F = Fault
FAULTS: tuple[Fault, ...] = (
    F("cudaErrorInvalidValue", "invalid argument", 1, 11, "CUDA_ERROR_INVALID_VALUE", 1, "hipErrorInvalidValue",
      meaning="a CUDA call refused one of its arguments: CUDA's catch-all, which names no fault by itself (a size of 0 or "
      "larger than the GPU can take, a pointer from another device or context, a handle already freed)",
      step="the call the line names and its arguments decide: rerun with CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer "
      "(compute-sanitizer --tool memcheck PROGRAM) to see the refused call; an allocation refused this way on some GPUs of a "
      "rig only (a miner's DAG buffer) is memory: the GPU's free memory and, on Windows, the paging file size"),
    F("cudaErrorMemoryAllocation", "out of memory", 2, 2, "CUDA_ERROR_OUT_OF_MEMORY", 2, "hipErrorOutOfMemory", finding="cuda-oom"),
    F("cudaErrorInitializationError", "initialization error", 3, 3, "CUDA_ERROR_NOT_INITIALIZED", 3, "hipErrorNotInitialized",
      meaning="CUDA could not start in this process: the driver is not loaded or does not answer (nvidia_uvm missing, the "
      "/dev/nvidia* files absent in a container), or the process is a child forked after its parent used CUDA",
      step="nvidia-smi in the same environment (the container, the job) answers or says why; ls /dev/nvidia* and lsmod | "
      "grep nvidia_uvm (sudo modprobe nvidia_uvm); a forked worker: start workers with spawn, or make no CUDA call before the fork"),
    F("cudaErrorCudartUnloading", "driver shutting down", 4, 29, "CUDA_ERROR_DEINITIALIZED", 4, "hipErrorDeinitialized",
      meaning="a CUDA call was made while the process was exiting and CUDA was already unloading (a destructor or an exit "
      "handler): most often noise after another failure ended the process",
      step="read the lines before it: the failure that made the process exit is there; the call at exit is a consequence"),
    F("cudaErrorInvalidConfiguration", "invalid configuration argument", 9, 9, hip="hipErrorInvalidConfiguration",
      finding="cuda-invalid-launch-configuration",
      message_class=True,
      meaning="a kernel launched with a grid or block CUDA cannot run: a size of 0 (an empty batch or tensor) or more "
      "threads than a block takes",
      step="rerun with CUDA_LAUNCH_BLOCKING=1 to name the kernel; look for an empty input (a batch or a tensor of size "
      "0) at that step"),
    # told as no kernel image (issue 35, diagA31): in the threads that name it, a build without the GPU's architecture
    # (ethminer#422 and a Tesla M2075, ccminer#42, CudaMiner#160, pow-miner-gpu#36/#124, AutoDock-GPU#172)
    F("cudaErrorInvalidSymbol", "invalid device symbol", 13, 13, hip="hipErrorInvalidSymbol", finding="cuda-no-kernel-image",
      meaning="a __device__ or __constant__ symbol the program copies to or from is not in the kernels loaded for this GPU: "
      "the binary holds no kernels for its architecture (built for others), or two CUDA runtimes are linked into one process",
      step="a __constant__ or __device__ symbol is not in the kernels loaded for this GPU (rarely: two CUDA runtimes linked into "
      "one process): " + BUILD_FOR_GPU),
    F("cudaErrorStubLibrary", "CUDA driver is a stub library", 34, None, "CUDA_ERROR_STUB_LIBRARY", 34,
      message_class=True,
      meaning="the libcuda.so loaded is the toolkit's stub (its lib64/stubs folder, for linking only), not the "
      "driver's",
      step="take the stubs folder out of LD_LIBRARY_PATH (and out of any ld.so.conf entry) so the driver's "
      "libcuda.so.1 is loaded"),
    F("cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version", 35, 35,
      hip="hipErrorInsufficientDriver", finding="cuda-driver-too-old"),
    F("cudaErrorCallRequiresNewerDriver", "API call is not supported in the installed CUDA driver", 36, None,
      "CUDA_ERROR_NOT_SUPPORTED_ON_NEWER_DRIVER", None, finding="cuda-driver-too-old"),
    F("cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable", 46, 46, "CUDA_ERROR_DEVICE_UNAVAILABLE", 46,
      finding="cuda-devices-busy"),
    F("cudaErrorMissingConfiguration", "__global__ function call is not configured", 52, 1,
      message_class=True,
      meaning="a kernel launch reached CUDA without its launch configuration, and never ran: the program's CUDA code "
      "and the CUDA it runs with disagree (a binary or an extension built with another CUDA toolkit than the one "
      "loaded, two CUDA runtimes linked into one process), or code just changed launches a kernel the build did not "
      "configure",
      step="rebuild the program's CUDA code with the toolkit installed (make clean, then make with that toolkit's nvcc "
      "and the GPU's architecture; ldd on the binary shows the one libcudart it must load), then rerun with "
      "CUDA_LAUNCH_BLOCKING=1: the call that fails names the kernel; a change just made to the code or the network (a "
      "layer or an input of another shape) is the first suspect"),
    F("cudaErrorPriorLaunchFailure", "unspecified launch failure in prior launch", 53, 5, finding="cuda-launch-failure"),
    F("cudaErrorInvalidDeviceFunction", "invalid device function", 98, 8, hip="hipErrorInvalidDeviceFunction",
      finding="cuda-no-kernel-image", step=BUILD_FOR_GPU),
    F("cudaErrorNoDevice", "no CUDA-capable device is detected", 100, 38, "CUDA_ERROR_NO_DEVICE", 100, "hipErrorNoDevice",
      finding="cuda-no-gpus-visible"),
    F("cudaErrorInvalidDevice", "invalid device ordinal", 101, 10, "CUDA_ERROR_INVALID_DEVICE", 101, "hipErrorInvalidDevice",
      finding="cuda-invalid-device-ordinal"),
    F("cudaErrorInvalidKernelImage", "device kernel image is invalid", 200, 47, "CUDA_ERROR_INVALID_IMAGE", 200, "hipErrorInvalidImage",
      message_class=True,
      meaning="the driver could not load a compiled kernel: built with a newer CUDA toolkit than the driver runs, or "
      "for another GPU",
      step="rebuild the code for this GPU with a toolkit the driver supports (nvidia-smi's 'CUDA Version' is the "
      "newest), or update the driver"),
    F("cudaErrorDeviceUninitialized", "invalid device context", 201, None, "CUDA_ERROR_INVALID_CONTEXT", 201, "hipErrorInvalidContext",
      meaning="the call ran with no current CUDA context, or with one destroyed or made elsewhere: a library's GPU object "
      "(an encoder or decoder session, a second instance of a program's GPU package in one process) used from another "
      "thread or context than the one that made it, or a context an earlier failure destroyed",
      step="create and use the library's GPU objects in the thread (and context) that set the device up, one instance per "
      "process or one shared context (the primary context: cuDevicePrimaryCtxRetain); the first error before this line, if "
      "any, is the cause"),
    F("cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device", 209, 48,
      "CUDA_ERROR_NO_BINARY_FOR_GPU", 209, "hipErrorNoBinaryForGpu", finding="cuda-no-kernel-image", message_class=True,
      meaning="the code has no kernels compiled for this GPU's architecture",
      step=f"{BUILD_FOR_GPU}; PyTorch and its extensions are built for it with TORCH_CUDA_ARCH_LIST set to its compute capability"),
    F("cudaErrorECCUncorrectable", "uncorrectable ECC error encountered", 214, 39, "CUDA_ERROR_ECC_UNCORRECTABLE", 214,
      finding="cuda-ecc-error",
      message_class=True,
      meaning="the GPU's memory returned an error ECC could not correct: a hardware fault",
      step="nvidia-smi -q -d ECC,PAGE_RETIREMENT on the node; drain it and ask the admin"),
    F("cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices", 217, 64,
      "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 217,
      meaning="the program asked for peer-to-peer access between two GPUs that cannot have it (no P2P path: another PCIe "
      "root, a virtual machine, GPUs of different kinds)",
      step="nvidia-smi topo -m shows the path between them; copy through the host (the program's option for it; "
      "NCCL_P2P_DISABLE=1 for NCCL), or give the program GPUs that share a P2P path"),
    F("cudaErrorInvalidPtx", "a PTX JIT compilation failed", 218, 78, "CUDA_ERROR_INVALID_PTX", 218,
      meaning="the driver could not compile the kernels the program ships as PTX for this GPU: most often PTX made by a "
      "newer CUDA toolkit than the driver knows",
      step="nvidia-smi's 'CUDA Version' is the newest the driver takes: update the driver, or use a build made with that "
      "toolkit or an older one (or with kernels compiled for this GPU)"),
    F("cudaErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context", 219, 79, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", 219,
      meaning="CUDA was asked to share an OpenGL/EGL or DirectX buffer with no current graphics context of the GPU CUDA "
      "runs on: a display sink or renderer on a machine without a display (no X server, DISPLAY unset, ssh), or with the "
      "display on another GPU",
      step="run with a display on the NVIDIA GPU (DISPLAY=:0 and X on that GPU), or use an output that needs no display "
      "(a file or fakesink instead of an EGL/GL sink)"),
    F("cudaErrorNvlinkUncorrectable", "an uncorrectable NVLink error was detected during the execution", 220, 80,
      "CUDA_ERROR_NVLINK_UNCORRECTABLE", 220,
      message_class=True,
      meaning="an NVLink between the GPUs failed: a hardware fault of the link or a GPU",
      step="nvidia-smi nvlink -e (error counters) and the node's Xid messages (dmesg | grep -i xid); drain the node "
      "and ask the admin if the counters grow"),
    F("cudaErrorJitCompilerNotFound", "PTX JIT compiler library not found", 221, 81, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", 221,
      message_class=True,
      meaning="a kernel shipped only as PTX had to be compiled for this GPU by the driver, and the driver's JIT "
      "library (libnvidia-ptxjitcompiler) is not installed or not mounted into the container",
      step="install the driver's full package (or the container toolkit's compute capability) so "
      "libnvidia-ptxjitcompiler is there, or use a build with kernels compiled for this GPU"),
    F("cudaErrorUnsupportedPtxVersion", "the provided PTX was compiled with an unsupported toolchain", 222, None,
      "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222, finding="cuda-driver-too-old"),
    F("cudaErrorOperatingSystem", "OS call failed or operation not supported on this OS", 304, 63, "CUDA_ERROR_OPERATING_SYSTEM", 304,
      meaning="a call CUDA made to the operating system failed: most often CUDA IPC or shared memory that a container, "
      "WSL or Windows does not allow",
      step="in a container: --ipc=host (or a larger --shm-size); under WSL or Windows: run without CUDA IPC (the program's "
      "option to share tensors through the host)"),
    F("cudaErrorInvalidResourceHandle", "invalid resource handle", 400, 33, "CUDA_ERROR_INVALID_HANDLE", 400,
      message_class=True,
      meaning="a CUDA stream, event or handle was used where it does not belong: made on another GPU or in another "
      "process (a stream, an event or a tensor passed across processes or devices), or used after it was destroyed",
      step="set the device first in every process (torch.cuda.set_device(local_rank) before any stream, event or "
      "tensor is made) and create streams and events on the device that uses them; CUDA_LAUNCH_BLOCKING=1 names the "
      "call"),
    F("cudaErrorSymbolNotFound", "named symbol not found", 500, None, "CUDA_ERROR_NOT_FOUND", 500,
      meaning="a kernel or a symbol the program looked up by name is not in the module loaded for this GPU: a build without "
      "kernels for its architecture, or a library of another build than the program's",
      step=BUILD_FOR_GPU),
    F("cudaErrorIllegalAddress", "an illegal memory access was encountered", 700, 77, "CUDA_ERROR_ILLEGAL_ADDRESS", 700,
      "hipErrorIllegalAddress", finding="cuda-illegal-memory-access",
      message_class=True,
      meaning="a kernel read or wrote memory it does not own (an index out of range in a custom kernel, a tensor on "
      "another device or freed); the process's CUDA context is unusable after it",
      step="rerun with CUDA_LAUNCH_BLOCKING=1 so the kernel that faulted raises; compute-sanitizer --tool memcheck "
      "names it"),
    F("cudaErrorLaunchOutOfResources", "too many resources requested for launch", 701, 7, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701,
      "hipErrorLaunchOutOfResources", finding="cuda-kernel-fault",
      message_class=True,
      meaning="a kernel launched with more threads, registers or shared memory than the GPU has",
      step="rebuild or reinstall the extension for this GPU; smaller block sizes"),
    F("cudaErrorLaunchTimeout", "the launch timed out and was terminated", 702, 6, "CUDA_ERROR_LAUNCH_TIMEOUT", 702,
      finding="cuda-launch-timeout",
      message_class=True,
      meaning="a kernel ran longer than the display watchdog allows (a GPU that also drives a display)",
      step="run on a GPU without a display, or raise the watchdog's limit (Windows: TdrDelay)"),
    F("cudaErrorPeerAccessNotEnabled", "peer access has not been enabled", 705, 51, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 705,
      message_class=True,
      meaning="a copy or an access between two GPUs that peer access was never enabled for "
      "(cudaDeviceEnablePeerAccess), or that this pair of GPUs cannot have (no P2P between them: another PCIe root, a "
      "virtual machine)",
      step="nvidia-smi topo -m shows the path between the GPUs (CUDA's p2pBandwidthLatencyTest whether P2P works); "
      "copy through the host where the pair has none (the program's option for it; NCCL_P2P_DISABLE=1 for NCCL); a "
      "program that enables peer access for some GPUs only: the GPUs it was given"),
    F("cudaErrorContextIsDestroyed", "context is destroyed", 709, None, "CUDA_ERROR_CONTEXT_IS_DESTROYED", 709,
      meaning="a call used a CUDA context that was already destroyed: by an earlier failure or by the program's teardown",
      step="read the lines before it: an earlier CUDA error destroyed the context (it is the cause); otherwise the program "
      "uses a GPU object after releasing its context"),
    F("cudaErrorAssert", "device-side assert triggered", 710, 59, "CUDA_ERROR_ASSERT", 710, "hipErrorAssert",
      finding="cuda-device-assert",
      message_class=True,
      meaning="a kernel's own assertion failed: most often an index or a label out of range (a class id >= the number "
      "of classes)",
      step="rerun with CUDA_LAUNCH_BLOCKING=1 (or on the CPU) to see the assertion and its index; check labels against "
      "the number of classes"),
    F("cudaErrorHardwareStackError", "hardware stack error", 714, 72, "CUDA_ERROR_HARDWARE_STACK_ERROR", 714,
      message_class=True,
      meaning="a kernel corrupted or overflowed its call stack on the GPU (deep recursion or large local arrays in "
      "device code)",
      step="CUDA_LAUNCH_BLOCKING=1 names the kernel; compute-sanitizer names the fault"),
    F("cudaErrorIllegalInstruction", "an illegal instruction was encountered", 715, 73, "CUDA_ERROR_ILLEGAL_INSTRUCTION", 715,
      finding="cuda-kernel-fault"),
    F("cudaErrorMisalignedAddress", "misaligned address", 716, 74, "CUDA_ERROR_MISALIGNED_ADDRESS", 716, finding="cuda-kernel-fault"),
    F("cudaErrorLaunchFailure", "unspecified launch failure", 719, 4, "CUDA_ERROR_LAUNCH_FAILED", 719, "hipErrorLaunchFailure",
      finding="cuda-launch-failure",
      message_class=True,
      meaning="a kernel failed as it ran (an out-of-range access in a kernel, a kernel stopped by the driver, a GPU "
      "fault)",
      step="rerun with CUDA_LAUNCH_BLOCKING=1; check the node's Xid messages (dmesg | grep -i xid)"),
    F("cudaErrorNotSupported", "operation not supported", 801, 71, "CUDA_ERROR_NOT_SUPPORTED", 801, "hipErrorNotSupported",
      message_class=True,
      meaning="the GPU, its driver or the operating system does not have a feature the program used: most often the "
      "stream-ordered allocator (cudaMallocAsync: PyTorch's PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, ComfyUI's "
      "and Fooocus' default 'cuda-malloc'), which older GPUs (laptop and Maxwell/Pascal cards), a virtual machine's "
      "GPU or an old driver lack; also CUDA IPC or peer memory under Windows and WSL",
      step="run without the feature: ComfyUI --disable-cuda-malloc (Fooocus the same), no backend:cudaMallocAsync or "
      "expandable_segments in PYTORCH_CUDA_ALLOC_CONF; update the driver; CUDA_LAUNCH_BLOCKING=1 names the call that "
      "needs it"),
    F("cudaErrorSystemNotReady", "system not yet initialized", 802, None, "CUDA_ERROR_SYSTEM_NOT_READY", 802,
      meaning="the driver is up but the system is not ready for CUDA: on an NVSwitch machine (HGX/DGX) the fabric manager "
      "is not running",
      step="sudo systemctl start nvidia-fabricmanager (the same version as the driver), then rerun"),
    F("cudaErrorSystemDriverMismatch", "system has unsupported display driver / cuda driver combination", 803, None,
      "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 803,
      message_class=True,
      meaning="the driver's user-space library (libcuda) and its kernel module are not the same version: a driver "
      "updated without a reboot, or a container that brings its own libcuda",
      step="reboot after a driver update (or reload the nvidia modules); in a container, use the host's driver "
      "libraries (the NVIDIA Container Toolkit mounts them) instead of a libcuda in the image; nvidia-smi and cat "
      "/proc/driver/nvidia/version show both versions"),
    F("cudaErrorCompatNotSupportedOnDevice", "forward compatibility was attempted on non supported HW", 804, None,
      "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 804,
      message_class=True,
      meaning="CUDA's forward-compatibility package (cuda-compat, in NGC and other CUDA containers newer than the "
      "host's driver) runs only on data-center GPUs: on this GPU the container's CUDA is newer than the driver can run",
      step="use an image whose CUDA the host's driver runs (nvidia-smi's 'CUDA Version'), or update the host's driver"),
    F("cudaErrorUnknown", "unknown error", 999, 30, "CUDA_ERROR_UNKNOWN", 999, "hipErrorUnknown",
      meaning="CUDA's catch-all: the driver reported a fault it does not classify. At a program's first CUDA call it is "
      "CUDA failing to start (nvidia_uvm not loaded or stale after a suspend or a driver update, a build too old for this "
      "GPU, the device files missing in a container); after the program ran a while it is the GPU or its driver failing "
      "(an Xid in the kernel log: heat, power, an overclock or undervolt)",
      step="where it came: at the first call, nvidia-smi and a CUDA sample (deviceQuery) in the same environment, sudo "
      "modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm (or a reboot), and a build of the program made for this GPU; after "
      "a while, sudo dmesg -T | grep -i xid and the GPU's clocks, temperature and power (nvidia-smi -q -d "
      "CLOCK,TEMPERATURE,POWER), at stock settings"),
)

BY_NAME: dict[str, Fault] = {}
for _f in FAULTS:
    for _name in (_f.name, _f.driver, _f.hip):
        if _name:
            BY_NAME[_name.lower()] = _f
BY_MESSAGE: dict[str, Fault] = {f.message.lower(): f for f in FAULTS}
# a number, in each enum a program prints it from: the runtime's since CUDA 10.1 (and HIP's), before 10.1, the driver's
ENUMS: dict[str, dict[int, Fault]] = {
    "runtime": {f.code: f for f in FAULTS if f.code is not None},
    "runtime before CUDA 10.1": {f.old_code: f for f in FAULTS if f.old_code is not None},
    "driver": {f.driver_code: f for f in FAULTS if f.driver_code is not None},
}
ENUMS["hip"] = ENUMS["runtime"]


def by_message(said: str) -> Optional[Fault]:
    """The fault whose message a text starts with (a program's "!!!" or its own words may follow)."""
    low = " ".join(said.lower().split())
    return next((f for message, f in BY_MESSAGE.items() if low.startswith(message)), None)
