"""Rules for classes of messages of the tenth round (issue 35, diagA10): the wrong and the honest answers
on the retired held-out parts heldout8 and heldout7, sorted by the class of their failing message.

- a key the configuration lacks, read as an attribute of a config container (EasyDict, mmcv's ConfigDict,
  yacs' CfgNode, ...): the config file and the code are of different versions, or the key was left out;
  never a package to upgrade (library-api-mismatch said "pip install -U easydict");
- NCCL's topology detection that cannot resolve a device's PCI path in /sys (WSL2, a container's /sys,
  a virtual machine): the warning right before its init fails with a system error;
- an object that pickle cannot serialise (a lock, a socket, a generator, a class redefined after import)
  sent to a spawned process, saved or deep-copied: not only the local functions and lambdas
  spawn-unpicklable-object reads;
- a spawned process that cannot be started because a file descriptor it is to inherit is not valid
  ("bad value(s) in fds_to_keep");
- a cuBLAS call that failed on the GPU (CUBLAS_STATUS_EXECUTION_FAILED) and a kernel launch the GPU
  refused (invalid configuration argument): the line decides that the GPU refused the work; what made
  it, the fix tells how to decide;
- a GPU monitor (nvtop) that found no GPU it can read;
- Paddle's launcher reporting that a trainer or container failed: its own error is in that trainer's log.

And one frame-decided refinement: an attribute missing on DDP/DataParallel read by torch's own parallel
code (its constructor of an older torch), not through the wrapper by the user's code.

Their examples are real lines from the sampled threads (thread in the source); their counter-examples
the nearest lines that mean something else.
"""

import re
from typing import Iterable

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge import gpu_library
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, groups, pattern

E = Severity.ERROR
W = Severity.WARN

# Config containers: attribute access reads a key of the loaded configuration (yaml/json/py config).
CONFIG_TYPES = r"EasyDict|edict|AttrDict|AttributeDict|ConfigDict|CfgNode|DictConfig|DotMap|Box|addict\.Dict"
# Methods of a dict that Python 3 removed: code written for Python 2, not a key the configuration lacks.
PY2_DICT_METHODS = r"iteritems|itervalues|iterkeys|has_key|viewitems|viewkeys|viewvalues"

# The frames a DDP/DataParallel wrapper's own code runs in (its constructor, forward, replicate).
PARALLEL_CODE = re.compile(r"torch[/\\]nn[/\\]parallel[/\\]\w+\.py$")
GETATTR = re.compile(r"torch[/\\]nn[/\\]modules[/\\]module\.py$")


def read_by_wrapper_itself(paths_funcs: Iterable[tuple[str, str]]) -> bool:
    """The frames (innermost last) of an AttributeError "'DistributedDataParallel' object has no attribute X":
    True when the read was made by torch's own parallel code (the frame that called Module.__getattr__ is in
    torch/nn/parallel/), so the user read nothing through the wrapper (an older torch's DDP constructor
    reading its own `_module_copies`, pytorch/examples#253)."""
    frames = [(p, f) for p, f in paths_funcs if not (GETATTR.search(p) and f == "__getattr__")]
    return bool(frames) and PARALLEL_CODE.search(frames[-1][0]) is not None


def sysfs_path(m, context: list[str]) -> dict:
    out = groups(m, context)
    out["step"] = f"the PCI path {out.get('path', 'of a GPU')} is missing from /sys"
    chain = next((c for c in context if re.search(r"NCCL INFO \S+ -> (\d+)", c)), "")
    code = re.search(r" -> (\d+)", chain)
    if code:
        out["returns"] = {"2": "2 (ncclSystemError)", "3": "3 (ncclInternalError)"}.get(code.group(1), code.group(1))
    return out


CONTAINER_LINE = re.compile(r"^Container rank (?P<container>\d+) status failed cmd .*? code (?P<code>-?\d+) log (?P<log>\S+)")


def trainer_fields(m, context: list[str]) -> dict:
    """The report's fields; "LAUNCH ERROR ... Container failed" is followed by the line that names the container, its exit
    code and its log: read from there when this line does not say them."""
    out = groups(m, context)
    if "log" not in out:
        more = next((c for c in (CONTAINER_LINE.match(line.strip()) for line in context) if c), None)
        if more is not None:
            out.update(more.groupdict())
    return {**out, "step": trainer_log(out)}


def trainer_log(fields: dict) -> str:
    """Where the failed Paddle trainer's own output is (the fix's STEP)."""
    if fields.get("log"):
        code = {"-6": ", exit code -6: SIGABRT", "-9": ", exit code -9: SIGKILL", "-11": ", exit code -11: SIGSEGV"}.get(fields.get("code", ""), "")
        return f"{fields['log']} (the file the launcher names for container {fields.get('container', '?')}{code})"
    rank = (fields.get("rank") or "N").split(",")[0].strip()
    return f"log/workerlog.{rank} (Paddle < 2.2), or log/<job>.<pod>.{rank}.log (Paddle >= 2.2)"


def provider_fields(m, context: list[str]) -> dict:
    """onnxruntime's provider failure: which provider, and the library it could not load in turn where the line names it
    (then the title names it and the fix starts with what installs it: knowledge/gpu_library.py)."""
    out = groups(m, context)
    if out.get("library_dll"):
        out["library"] = out.pop("library_dll")
    name = out.pop("dependency", None) or out.pop("dependency_dll", None)
    found = gpu_library.library(name) if name else None
    if found is not None:
        out.update(dependency=name, detail=found.detail(), step=found.step("onnxruntime"), read_as=ONNXRUNTIME_PROVIDER)
    return out


ONNXRUNTIME_PROVIDER = "onnxruntime-cuda-provider-failed"

PATTERNS_EARLY = [
    pattern(
        "nccl-topology-sysfs",
        "nccl",
        CAUSE,
        E,
        "NCCL cannot resolve a GPU's or NIC's PCI path in /sys, so it cannot build the machine's topology",
        # topo.cc (NCCL 2.4-2.6), graph/xml.cc (2.7 on): the realpath of /sys/class/pci_bus/<bus>/../../<device>
        r"NCCL WARN Could not find real path of (?P<path>/sys/\S+)",
        ("Could not find real path of",),
        why="""NCCL reads the machine's topology (which PCI switch, CPU socket and NIC each GPU hangs off) from /sys:
        for each GPU it resolves /sys/class/pci_bus/<bus>/../../<device>. Here that path does not exist, so the
        communicator's init fails (the "-> 2" lines after the warning are ncclSystemError returned up the stack,
        which torch reports as "unhandled system error"). The GPU is visible to CUDA but not in /sys as NCCL
        expects: under WSL2 (GPUs are paravirtualised: no PCI tree; `lspci` shows none), in a container whose /sys
        is not the host's (a restricted or rootless runtime, gVisor), or in a virtual machine whose virtual PCI
        layout hides the bus. What decides which: `ls -l /sys/class/pci_bus/` and `nvidia-smi --query-gpu=pci.bus_id
        --format=csv` in the same environment.""",
        fix="""STEP: run the job where /sys shows the GPUs (in docker the default
        runtime mounts the host's /sys: do not mask it; --privileged or -v /sys:/sys for a restricted runtime); under
        WSL2 use a recent NCCL (pip install -U torch, whose NCCL handles WSL) or a single process per machine; else give NCCL a
        topology file (NCCL_TOPO_FILE=topo.xml, written by NCCL_TOPO_DUMP_FILE on a machine where it works)""".replace("\n        ", " "),
        examples=[
            ("d13186ffee3a:57:75 [0] misc/topo.cc:22 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0",
             "xg-chu/CrowdDet#86 (NCCL 2.4.8 in a docker container; init fails with -> 2)"),
            ("SHJS-PF4ZKYLL:92777:92889 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0",
             "NVIDIA/nccl#573 (WSL2, NCCL 2.7.8: 'NCCL cannot find its PCI topology in /sys/class', the maintainer)"),
        ],
        not_examples=[
            "graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order",  # a search fallback (dev nemo-run#266)
            "NCCL INFO Topology detection: network path /sys/devices/virtual/net/eth0 is not a PCI device (vNIC). Attaching to first CPU",
        ],
        context_after=3,
        fields=sysfs_path,
    ),
    pattern(
        "cublas-execution-failed",
        "cuda",
        CAUSE,
        E,
        "a cuBLAS matrix multiply failed on the GPU (CUBLAS_STATUS_EXECUTION_FAILED)",
        r"CUBLAS_STATUS_EXECUTION_FAILED(?: when calling `?(?P<call>\w+))?",
        ("CUBLAS_STATUS_EXECUTION_FAILED",),
        why="""cuBLAS launched its kernel for a matrix multiply and the GPU did not run it. The status does not say why;
        what is known to cause it: an earlier asynchronous error in another kernel that is only reported at this call
        (an index out of range in an embedding or a label, a device-side assert: CUDA errors surface at the next
        synchronising call); a torch build whose CUDA/cuBLAS does not fit this GPU or driver (a wheel built for another CUDA
        version, or one without kernels for this GPU's architecture); a half-precision (fp16/bf16) GEMM of a shape or type the
        cuBLAS version mishandles, or on a GPU without the tensor cores it picked; and memory exhausted inside cuBLAS's
        workspace. What decides it: rerun with CUDA_LAUNCH_BLOCKING=1 (an earlier kernel's error then appears at its own
        line), and compare torch.version.cuda with the driver (nvidia-smi) and the GPU's compute capability.""",
        fix="""CUDA_LAUNCH_BLOCKING=1 python train.py   # an earlier kernel's error (an index out of range, a device assert) then shows
        at its own line: fix that one; if STEP itself fails: install the torch build for this machine's CUDA
        (python -c "import torch; print(torch.version.cuda, torch.cuda.get_device_capability())" against nvidia-smi),
        run the step in fp32 (no --fp16) to see whether half precision is the trigger, and reduce the batch size""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
             "thu-coai/CDial-GPT#65 (solved: the CUDA version did not fit the torch build)"),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`",
             "ThilinaRajapakse/simpletransformers#1237 (fp16 GemmEx in backward)"),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasLtMatmul with transpose_mat1 1 transpose_mat2 0 m 896 n 1 k 896 mat1_ld 896 mat2_ld 896 result_ld 896 abcType 2 computeType 68 scaleType 0",
             "LLaVA-VL/LLaVA-NeXT#484 (an index-out-of-bounds device assert surfacing at the next cuBLAS call)"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",  # cuBLAS could not start: cublas-init-failed
            "cublas: using the CUBLAS_WORKSPACE_CONFIG=:4096:8 setting for deterministic execution",
        ],
        # an earlier kernel's own error, when the log shows it, is what this call only reported
        after=("cuda-device-assert", "cuda-index-out-of-range", "cuda-illegal-memory-access", "cuda-oom"),
        fields=lambda m, ctx: {**groups(m, ctx), "step": m.group("call") or "the cuBLAS call"},
    ),
    pattern(
        "cuda-invalid-launch-configuration",
        "cuda",
        CAUSE,
        E,
        "the GPU refused a kernel launch: its grid or block size is invalid for this GPU (CUDA error: invalid configuration argument)",
        r"(?:CUDA error|cudaErrorInvalidConfiguration)[:\s]+invalid configuration argument",
        ("invalid configuration argument",),
        why="""A kernel was launched with a grid or block shape the GPU does not accept: more threads per block than it
        allows, a grid dimension beyond its limit (65535 in y and z), or a zero-sized launch. The kernel's launch
        arithmetic comes from the tensors' shapes, so it is the input that is out of the kernel's range: a batch times heads
        (or sequence length) larger than an attention kernel's grid takes (flash-attention, xformers, a custom CUDA
        extension), an empty tensor reaching an extension that does not check for it, or a kernel compiled for more threads
        than this GPU supports. It fails on one machine and not another when the GPU, the shapes or the extension's build
        differ.""",
        fix="""find the kernel: CUDA_LAUNCH_BLOCKING=1 python ...   # the traceback then stops at the launching call; reduce the batch size
        or sequence length the call gets, or split it; skip empty batches; for flash-attention or another compiled extension,
        reinstall it built for this GPU and torch (pip install --no-build-isolation --force-reinstall flash-attn) or switch the
        model to the default attention (attn_implementation="sdpa")""".replace("\n        ", " "),
        examples=[
            ("`RuntimeError: CUDA error: invalid configuration argument", "THUDM/LongBench#23 (flash-attn under device_map='auto' over several GPUs, on one machine only)"),
        ],
        not_examples=[
            "ValueError: invalid configuration: `num_processes` must be a positive integer",
            "RuntimeError: CUDA error: invalid argument",  # another CUDA error (a bad pointer or size), not a launch shape
        ],
        after=("cuda-device-assert", "cuda-index-out-of-range", "cuda-illegal-memory-access"),
    ),
    pattern(
        "gpu-monitor-no-gpu",
        "platform",
        CAUSE,
        E,
        "the GPU monitor found no GPU it can read (its NVIDIA library, NVML, did not load or lists no GPU)",
        r"^\W*No GPU to monitor\.?\s*$",
        ("No GPU to monitor",),
        why="""nvtop reads NVIDIA GPUs through NVML (libnvidia-ml.so.1, installed with the driver) and lists the GPUs NVML
        and the DRM devices show it. "No GPU to monitor" means none of its backends found one: NVML did not load (a
        build or AppImage that cannot open the host's libnvidia-ml.so.1, a library path a container does not mount),
        the build has no NVIDIA support, or the platform has no NVML at all (Jetson's integrated GPU: use tegrastats or
        jtop; WSL2 exposes NVML only under /usr/lib/wsl/lib). When nvidia-smi works in the same shell, the driver and the
        GPU are fine: it is the monitor that cannot reach them.""",
        fix="""nvidia-smi   # works: the GPU is fine, the monitor cannot load NVML: ldconfig -p | grep libnvidia-ml (under WSL2 add
        /usr/lib/wsl/lib to LD_LIBRARY_PATH), install nvtop from the distribution or build it with -DNVIDIA_SUPPORT=ON on
        this machine instead of the AppImage; Jetson: no NVML (tegrastats, jtop); nvidia-smi fails too: the driver is the
        problem (gpudoctor check)""".replace("\n        ", " "),
        examples=[
            ("No GPU to monitor.", "Syllo/nvtop#392 (the AppImage on RHEL 7.9 while nvidia-smi sees the V100)"),
            ("No GPU to monitor.", "Syllo/nvtop#225 (Jetson Orin: no NVML)"),
        ],
        not_examples=["There is no GPU to monitor on this node yet; waiting for the job to start", "GPU monitor: 2 GPUs found"],
    ),
    pattern(
        "paddle-multi-gpu-check-failed",
        "nccl",
        CAUSE,
        E,
        "Paddle's installation check ran on one GPU but failed on several (NCCL missing or unusable, GPUs not visible or busy; Windows has no NCCL)",
        # paddle.utils.run_check (2.x) and fluid.install_check.run_check (1.x)
        r"PaddlePaddle meets some problem with (?P<gpus>\d+) GP|Your Paddle has some problem with multiple GPU"
        r"|PaddlePaddle is installed successfully ONLY for single GPU",
        ("meets some problem with", "some problem with multiple GPU", "ONLY for single GPU"),
        why="""paddle.utils.run_check() runs a small program on one GPU, then on all visible GPUs together through NCCL. The
        second step failed: NCCL is not installed or not found (Paddle's Linux wheels load the system's libnccl.so.2 and
        need it installed; Paddle on Windows has no NCCL at all, so data-parallel training over several GPUs is not
        supported there), fewer GPUs are visible than the check uses, or another process holds them. "Cannot enable P2P
        access" warnings before it only say the GPUs do not talk peer to peer; they are not the failure. The line after
        ("Original Error is: ...") or the spawned process's traceback says which.""",
        fix="""on Windows: train on one GPU, or run Linux (WSL2 or a Linux machine) for several; on Linux: ldconfig -p | grep libnccl
        (install libnccl2 matching the CUDA version Paddle was built for, or add its folder to LD_LIBRARY_PATH), check
        nvidia-smi for other processes and CUDA_VISIBLE_DEVICES for the GPUs it lists, then rerun
        `python -c "import paddle; paddle.utils.run_check()"`""".replace("\n        ", " "),
        examples=[
            ("WARNING:root:PaddlePaddle meets some problem with 2 GPUs. This may be caused by:",
             "PaddlePaddle/PaddleOCR#9313 (Windows: no NCCL, the maintainers' answer)"),
            ("[2024-04-09 16:04:43,870] [ WARNING] install_check.py:265 - PaddlePaddle meets some problem with 2 GPThis may be caused by:",
             "PaddlePaddle/PaddleOCR#11901 (Linux, the spawned process exited with code 1)"),
            ("2020-04-02 12:56:01,231-WARNING: Your Paddle has some problem with multiple GPU. This may be caused by:",
             "PaddlePaddle/Paddle#23410 (fluid 1.7's run_check, NCCL error)"),
        ],
        not_examples=["PaddlePaddle works well on 1 GPU.", "PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now."],
        fields=groups,
    ),
    pattern(
        "paddle-library-version-mismatch",
        "platform",
        CAUSE,
        W,
        "Paddle was built with another cuDNN or CUDA version than the one this machine loads",
        r"The installed Paddle is compiled with (?P<library>CUDNN|CUDA) (?P<built>[\d.]+), but (?:CUDNN|CUDA) version in your machine is (?P<found>[\d.]+)",
        ("The installed Paddle is compiled with",),
        why="""Paddle checks the cuDNN (or CUDA) library it loaded against the version it was built with and warns when they
        differ: an older library than the build's may lack functions or behave differently ("may cause serious
        incompatible bug"), so kernels can fail later, often only in some models or on some runs. It is a warning: a run
        can work with it; when a run fails after it with a cuDNN or CUDA error, the mismatch is the first suspect.""",
        fix="""install the cuDNN version Paddle was built with (or the paddlepaddle-gpu wheel built for the cuDNN/CUDA you have: the
        post/cuXXX variants), and make sure the environment loads it first (LD_LIBRARY_PATH, conda's cudnn package); then
        paddle.utils.run_check()""".replace("\n        ", " "),
        examples=[
            ("W0808 20:36:32.951223 14459 gpu_resources.cc:217] WARNING: device: . The installed Paddle is compiled with CUDNN 8.2, but CUDNN version in your machine is 8.0, which may cause serious incompatible bug. Please recompile or rein",
             "PaddlePaddle/Paddle#56095 (a multi-GPU PaddleOCR run that then failed)"),
            ("W0402 12:55:56.627372 30772 device_context.cc:271] WARNING: device: 0. The installed Paddle is compiled with CUDNN 7.6, but CUDNN version in your machine is 7.0, which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDNN version.",
             "PaddlePaddle/Paddle#23410"),
        ],
        not_examples=["W0307 10:05:31.753669 24496 gpu_resources.cc:91] device: 0, cuDNN Version: 8.0."],
        fields=groups,
    ),
    pattern(
        ONNXRUNTIME_PROVIDER,
        "platform",
        CAUSE,
        W,
        "onnxruntime could not create its CUDA execution provider: the model runs on the CPU (CUDA or cuDNN libraries missing or of another version)",
        r"Failed to create (?P<provider>CUDA|TensorRT)ExecutionProvider"
        # the same failure in its other words (onnxruntime_pybind_state.cc, provider_bridge_ort.cc): the CUDA libraries not
        # loaded on Windows (facefusion/facefusion#469, #294), the provider's own library not loaded (LoadLibrary's error 126
        # on Windows, dlopen's on Linux: a CUDA or cuDNN library it links missing)
        r"|CUDA_PATH is set but CUDA wasn'?t\s+able to be loaded"
        r"|(?:LoadLibrary failed with error \d+|Failed to load library)\b.{0,300}?onnxruntime_providers_(?P<library>cuda|tensorrt)\b"
        # the library it could not load in turn, where the line names it (knowledge/gpu_library.py: which part of the stack,
        # at which version): "... with error: libcublasLt.so.11: cannot open shared object file", Windows' "... is missing"
        r"(?:\S*\s+with error:\s+(?:[^\s:'\"]*/)?(?P<dependency>" + gpu_library.LIBRARY + r"))?"
        r"|Error loading (?:\S*[\\/])?onnxruntime_providers_(?P<library_dll>cuda|tensorrt)\S*:\s+(?P<dependency_dll>" + gpu_library.LIBRARY + r") is missing",
        ("ExecutionProvider", "CUDA_PATH is set", "onnxruntime_providers_cuda", "onnxruntime_providers_tensorrt"),
        why="""onnxruntime-gpu loads its CUDA provider (libonnxruntime_providers_cuda.so) at session creation; it needs the CUDA
        runtime, cuBLAS and cuDNN of the major versions that onnxruntime release was built for. When one of them is missing or
        of another version it warns and falls back to the CPU provider, so inference or training that was meant for the GPU
        runs on the CPU (slow, no GPU use) or fails later. Having onnxruntime and onnxruntime-gpu installed together also
        leaves the CPU-only build in charge.""",
        fix="""compare onnxruntime's CUDA/cuDNN requirements table (its docs, for the installed version: `pip show onnxruntime-gpu`) with
        the libraries this environment loads (ldconfig -p | grep -E 'libcudnn|libcublas', or the nvidia-*-cu12 wheels torch
        installed; on Windows, the CUDA and cuDNN bin folders on PATH: `where cublasLt64_*.dll cudnn64_*.dll` finds them); install the
        onnxruntime-gpu build for that CUDA major version (or those libraries for it), uninstall the CPU-only onnxruntime package, and
        check with `python -c "import onnxruntime as ort; print(ort.get_available_providers())"`""".replace("\n        ", " "),
        examples=[
            ("`2022-01-31 20:57:03.234399301 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:535 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/reference/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.`",
             "Lednik7/CLIP-ONNX#2 (the provider's CUDA/cuDNN requirements not met)"),
            ("EP Error D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:743 onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasn't able to be loaded. Please install the correct version of CUDA and cuDNN as mentioned in the GPU requirements page (https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements), make sure they're in the PATH, and that your GPU is supported.",
             "facefusion/facefusion#294 (heldout26: Windows, onnxruntime-gpu's CUDA libraries not found; it fell back to the CPU)"),
            ("2024-01-06 21:27:06.9504247 [E:onnxruntime:Default, provider_bridge_ort.cc:1480 onnxruntime::TryGetProviderInfo_CUDA] D:\\a\\_work\\1\\s\\onnxruntime\\core\\session\\provider_bridge_ort.cc:1193 onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 \"\" when trying to load \"C:\\Users\\agusc\\AppData\\Local\\Programs\\Python\\Python310\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\"",
             "facefusion/facefusion#294 (the provider's DLL could not load a CUDA or cuDNN DLL it needs)"),
            ("what():  /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file or directory",
             "k2-fsa/sherpa-onnx#1465 (heldout27b: a CUDA 11 build of onnxruntime on a CUDA 12.4 machine)"),
            ("Error loading onnxruntime_providers_cuda.dll: cublasLt64_13.dll is missing",
             "danielgatis/rembg#841 (heldout27b: onnxruntime-gpu 1.28, built for CUDA 13, without its DLLs)"),
        ],
        not_examples=["providers=['CUDAExecutionProvider', 'CPUExecutionProvider']", "Available providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']",
                      "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: {'CUDAExecutionProvider': {'device_id': '0'}}",
                      "set CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"],
        fields=provider_fields,
    ),
    pattern(
        "paddle-launch-trainer-failed",
        "launcher",
        CONSEQUENCE,
        E,
        "Paddle's launcher reports that a trainer process failed (its own error is in that trainer's log)",
        # paddle.distributed.launch before 2.2 (launch_utils.py) and since (controllers: "Container failed")
        r"ABORT!!! Out of all (?P<trainers>\d+) trainers, the trainer process with rank=\[(?P<rank>[\d, ]+)\] was aborted"
        r"|^Container rank (?P<container>\d+) status failed cmd .*? code (?P<code>-?\d+) log (?P<log>\S+)"
        r"|LAUNCH ERROR .*?(?P<what>Container failed|Pod failed)",
        ("ABORT!!! Out of all", "status failed cmd", "LAUNCH ERROR"),
        why="""paddle.distributed.launch starts one trainer process per GPU and writes each one's output to its own file
        (log/workerlog.N before Paddle 2.2, log/<job>.<pod>.N.log since); when one fails it stops the others and
        reports only which one failed and its exit code. The trainer's own error is in that file, not on the launcher's
        console. Exit code -6 is SIGABRT (an uncaught C++ exception, a failed CHECK, NCCL aborting), -9 SIGKILL (the
        out-of-memory killer), -11 SIGSEGV, 1 a Python exception.""",
        fix="""read the failed trainer's own log: STEP,
        its last traceback or fatal line is the cause: gpudoctor diagnose that file; no log folder (an AI Studio task): rerun with
        --log_dir to choose where they go""".replace("\n        ", " "),
        examples=[
            ("ERROR 2021-05-24 17:17:14,611 launch_utils.py:545] ABORT!!! Out of all 4 trainers, the trainer process with rank=[3] was aborted. Please check its log.",
             "PaddlePaddle/Paddle#33074 (PaddleDetection on AI Studio; the maintainer: read log/workerlog.3)"),
            ("Container rank 0 status failed cmd ['/usr/bin/python3.8', '-u', 'train.py'] code -6 log log/default.fpwuxo.0.log",
             "PaddlePaddle/Paddle#47326 (parameter-server training, SIGABRT)"),
            ("LAUNCH ERROR 2022-10-25 15:17:31,067 Container failed !!!", "PaddlePaddle/Paddle#47326"),
        ],
        not_examples=[
            "LAUNCH INFO 2022-10-25 15:17:31,067 Pod failed",  # the launcher's INFO line before its ERROR one: not a report of its own
            "LAUNCH WARNING 2023-08-08 20:34:19,551 save gpu log failed",  # the launcher's GPU usage log (PaddlePaddle/Paddle#56095)
        ],
        context_after=2,
        fields=trainer_fields,
    ),
]


PATTERNS = [
    pattern(
        "config-key-missing",
        "launcher",
        CAUSE,
        E,
        "the configuration has no key the code reads (the config file and the code are of different versions, or the key was left out)",
        r"(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*AttributeError: '(?P<type>" + CONFIG_TYPES + r")' object has no attribute "
        r"'(?!(?:" + PY2_DICT_METHODS + r")')(?P<key>\w+)'",
        ("object has no attribute",),
        why="""The object is a config container (EasyDict, mmcv's ConfigDict, yacs' CfgNode, ...): its attributes are
        the keys of the loaded configuration file, so the code reads a key the configuration does not have. No package
        is at fault: the config file is of another version than the code that reads it (a config copied from an older or
        newer release, or from another project's fork), the key sits under another section, or the user's own config left
        it out. The traceback's last frame shows which part of the code reads it.""",
        fix="""add STEP to the configuration where the code reads it (compare the config with the one the same release of the code
        ships: git log -p on that file, or the project's configs/ of your version), or use the config and code of one
        release together; for a key that is optional in your set-up, the code can read it with cfg.get(...)""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'EasyDict' object has no attribute 'BACKUP_DB_INFO'", "open-mmlab/OpenPCDet#1151 (pv_rcnn.yaml of another version than the dataset code)"),
            ("AttributeError: 'EasyDict' object has no attribute 'depth'", "Huangying-Zhan/DF-VO#23 (the maintainer: check that the yml has 'depth')"),
            ("AttributeError: 'ConfigDict' object has no attribute 'data'", "open-mmlab/mmdetection#8995 (the maintainer: the config has no `data` setting)"),
        ],
        not_examples=[
            "AttributeError: 'EasyDict' object has no attribute 'iteritems'",  # Python 2 code on Python 3 (taoxugit/AttnGAN#84)
            "AttributeError: 'AdamW' object has no attribute 'train'",  # an API of another version: library-api-mismatch
            "AttributeError: 'NoneType' object has no attribute 'DATA_PATH'",
        ],
        fields=lambda m, ctx: {**groups(m, ctx), "step": f"the key {m.group('key')!r}"},
    ),
    pattern(
        "unpicklable-object",
        "launcher",
        CAUSE,
        E,
        "an object that pickle cannot serialise was sent to another process, saved or copied (a lock, a socket, a generator, a redefined class)",
        # (local functions and lambdas: spawn-unpicklable-object, before this one)
        r"(?:can't pickle (?P<object>[\w.]+) objects|cannot pickle '(?P<object2>[\w.]+)' object"
        r"|Can't pickle (?P<cls><class '[^']+'>): it's not the same object as (?P<as>[\w.]+))",
        ("pickle",),
        why="""Pickle writes an object as data and, for a function or class, as its importable name. Some objects have no
        such form: a thread lock, an open file or socket, a generator, a CUDA stream, a database or logging handle; and a
        class object that is not the one its module's name now points to (made by a call, e.g. a generic Class[Param], or
        redefined after import) cannot be named. Distributed training pickles more than it seems: mp.spawn, the spawn start
        method (the only one on Windows, the default on macOS) and DataLoader workers under spawn send the function they run
        and all its arguments (an object's bound method sends the whole object, with every lock its attributes hold);
        torch.save and copy.deepcopy pickle the object too. The traceback's frames tell which: multiprocessing's reduction
        or spawn (a process start), torch/serialization.py (a save), copy.py (a deep copy).""",
        fix="""send each process only plain data: give mp.spawn a module-level function and arguments that are plain values (paths,
        configs), and build the trainer, engines, loggers and locks inside each process; drop the attribute that holds the
        STEP before saving or copying (__getstate__), or save state_dict() only; a class made by a call (Generic[X]): define a
        named subclass at module level and use it""".replace("\n        ", " "),
        examples=[
            ("TypeError: can't pickle _thread.lock objects", "pytorch/ignite#1091 (a bound method of an object holding engines given to mp.spawn)"),
            ("_pickle.PicklingError: Can't pickle <class 'nerfstudio.data.datamanagers. VanillaDataManager'>: it's not the same object as nerfstudio.data.datamanagers.VanillaDataManager",
             "nerfstudio-project/nerfstudio#2176 (a generic VanillaDataManager[MyDataset] in the config pickled for the spawned workers)"),
        ],
        not_examples=[
            "AttributeError: Can't pickle local object 'main.<locals>.collate'",  # a local function: spawn-unpicklable-object
            "INFO: using the spawn start method; objects are pickled for each worker",
        ],
        fields=lambda m, ctx: {**groups(m, ctx), "step": m.group("object") or m.group("object2") or m.group("cls") or "object"},
    ),
    pattern(
        "spawn-bad-file-descriptor",
        "launcher",
        CAUSE,
        E,
        "a new process could not be started: a file descriptor it was to inherit is not valid (bad value(s) in fds_to_keep)",
        r"bad value\(s\) in fds_to_keep",
        ("fds_to_keep",),
        why="""Starting a process with the spawn or forkserver method hands it file descriptors to keep open (its pipe, the
        resource tracker, and, with torch's file_descriptor sharing strategy, one per tensor sent to it through shared
        memory). One of them was closed or invalid by then, so Python refused to start the process. Most often a large
        object full of tensors (a model, a dataset held in memory) passed in the arguments of mp.spawn or of DataLoader
        workers under spawn, whose shared-memory handles do not survive the hand-over; also processes spawned from an
        already spawned process, or a parent whose stdin/stdout was replaced (a notebook, a job runner) by an object
        without a real descriptor.""",
        fix="""do not pass models or tensors to the spawned processes: pass paths and configs, and build or load the model inside each
        process (each rank loads its own copy); or torch.multiprocessing.set_sharing_strategy("file_system") before starting
        them; for DataLoader workers, num_workers=0 to confirm, then keep the dataset's tensors out of the objects sent""".replace("\n        ", " "),
        examples=[
            ("I got error: `bad value(s) in fds_to_keep`.", "eric-mitchell/direct-preference-optimization#14 (policy and reference models built before mp.spawn of 8 FSDP processes)"),
            ("ValueError: bad value(s) in fds_to_keep", "pytorch/pytorch#50089 (DataLoader workers started from an mp.spawn'ed process)"),
        ],
        not_examples=["fds_to_keep = sorted(self._fds)", "passfds = tuple(sorted(map(int, passfds)))"],
    ),
]
