"""Findings in the area "torch"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "torch"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


ARCH_MISSING = FindingKind(
    id="arch-missing",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU's compute capability is not covered by `torch.cuda.get_arch_list()`: torch has no kernels for it.",
    evidence="`arch list` (e.g. `sm_50 … sm_90`), `GPUs` with their capability (from torch, else from NVML).",
    title="torch {version} has no kernels for {gpus}",
    why="Every CUDA op on that GPU fails with 'no kernel image is available for execution on the device'.",
    fix="pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}  # a build whose arch list includes the GPU",
)


ARCH_SUPPORTED = FindingKind(
    id="arch-supported",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch carries kernels for every GPU's compute capability.",
    evidence="`arch list`, `GPUs` with their capability.",
    title="torch carries kernels for every GPU's compute capability ({capabilities})",
    more_why="A GPU newer than the torch build is a common cause of *no kernel image is available*.",
    more_fix="Nothing to fix. When it fails it is reported as [`arch-missing`](arch-missing.md).",
)


CUDA_UNAVAILABLE = FindingKind(
    id="cuda-unavailable",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch is a CUDA build, the driver lists GPUs, `CUDA_VISIBLE_DEVICES` selects some, and still `torch.cuda.is_available()` is `False` in a fresh process — and neither an old driver nor the visibility variables explain it.",
    evidence="`torch`, `CUDA (build)`, `driver`, `CUDA_VISIBLE_DEVICES`, and the warnings torch printed while initialising CUDA.",
    title="torch.cuda.is_available() is False although the driver sees {gpus}",
    why="CUDA failed to initialise in a fresh process: the warnings above say why (device files not mounted in a container, a GPU in a bad state, or no permission on /dev/nvidia*).",
    fix="python -c \"import torch; torch.cuda.init()\"  # shows CUDA's own error",
)


DRIVER_CUDA_VERSION = FindingKind(
    id="driver-cuda-version",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The driver supports a CUDA version at least as new as the one torch was built with.",
    evidence="`torch built with CUDA`, `driver`, `driver supports CUDA up to`.",
    title="The driver supports CUDA {driver_cuda} ≥ torch's CUDA {cuda}",
    more_why="This is the first thing that breaks after a torch upgrade on an old machine.",
    more_fix="Nothing to fix. When it fails it is reported as [`driver-too-old`](driver-too-old.md).",
)


DRIVER_TOO_OLD = FindingKind(
    id="driver-too-old",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The NVIDIA driver supports an older CUDA than the one torch was built with. `error` when the major version differs (or torch itself warned that the driver is too old); `warn` when only the minor version does.",
    evidence="`torch built with CUDA`, `driver`, `driver supports CUDA up to`, and torch's own warning when it gave one.",
    title={
        "major": "The NVIDIA driver is too old for torch's CUDA {cuda}{supported}",
        "minor": "torch's CUDA {cuda} is newer than the driver's CUDA {driver_cuda}",
    },
    why={
        "major": "A CUDA runtime needs a driver of at least its major version; with an older one torch.cuda.is_available() is False.",
        "minor": "Within one CUDA major version, minor-version compatibility lets it run, but kernels that need PTX JIT or newer driver features fail with 'the provided PTX was compiled with an unsupported toolchain'.",
    },
    fix={
        "major": "pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}  # or install a driver for CUDA {cuda}: https://www.nvidia.com/drivers",
        "minor": "pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}",
    },
)


TORCH_BUILD = FindingKind(
    id="torch-build",
    severity=Severity.OK,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Which torch build is installed: its version, the CUDA version it was built with, cuDNN and NCCL. On a machine without an NVIDIA GPU a CPU build is expected and reported as `info`.",
    evidence="`torch`, `CUDA (build)` (`none` for a CPU build), `cuDNN`, `NCCL`, `location` (where torch was imported from).",
    title={
        "cuda": "torch {version} built with CUDA {cuda}, cuDNN {cudnn}, NCCL {nccl}",
        "rocm": "torch {version} is a ROCm build (HIP {hip})",
        "cpu": "torch {version} is a CPU build (no CUDA) — as expected on a machine without an NVIDIA GPU",
    },
    more_why="It tells you which torch the doctor examined: the one your `python` imports, not the one you think you installed.",
    more_fix="Nothing to fix. On a GPU machine a CPU build is reported as [`torch-cpu-build-with-gpus`](torch-cpu-build-with-gpus.md) instead.",
)


TORCH_CPU_BUILD_WITH_GPUS = FindingKind(
    id="torch-cpu-build-with-gpus",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch is a CPU-only build (`torch.version.cuda is None`), but NVML or the PCI bus shows NVIDIA GPUs.",
    evidence="`torch`, `CUDA (build)`: none, `GPUs NVML sees`, `driver`.",
    title="torch {version} is a CPU-only build, but this machine has NVIDIA GPUs",
    why="A CPU build has no CUDA code: torch.cuda.is_available() is False whatever the driver.",
    fix="pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}",
)


TORCH_IMPORT_FAILED = FindingKind(
    id="torch-import-failed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`allreduce`](../commands/allreduce.md), [`train-smoke`](../commands/train-smoke.md), [`run --nproc`](../commands/run.md), [`report`](../commands/report.md)",
    summary="`import torch` raised in a fresh Python process started with your environment. Nothing in PyTorch can run until it imports. When torch is simply not installed (`No module named 'torch'`) the title says so: gpudoctor does not depend on torch, because it examines the one you train with, so installing gpudoctor never installs or replaces it. `gpudoctor lint` needs no torch.",
    evidence="`error` (the exception, one line), `where` (the file and line that raised it: which `torch` was imported), `python`, `PYTHONPATH`, `LD_LIBRARY_PATH`.",
    title={
        "broken": "`import torch` fails: {error}",
        "not-installed": "torch is not installed in this Python environment",
    },
    why={
        "broken": "Nothing in PyTorch can run: a broken or half-installed torch, a missing CUDA library (libcudart, libcudnn, libnccl), or another `torch` earlier on PYTHONPATH.",
        "not-installed": "gpudoctor examines the torch you train with and does not install one itself; this command needs it. `gpudoctor lint` works without torch.",
    },
    fix={
        "broken": "python -c \"import torch\"  # read the full error, then: pip install --force-reinstall torch",
        "not-installed": "pip install torch  # in the environment you train in; for a CUDA build see https://pytorch.org/get-started/locally/",
    },
)


TORCH_PROBE_FAILED = FindingKind(
    id="torch-probe-failed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The child process that imports torch and asks CUDA for its devices crashed, printed no answer, or did not finish within its deadline (90 s).",
    evidence="`status` (`timeout` or `probe-failed`), `error`, and the end of the child's stderr.",
    title="A fresh Python process could not report torch's view: {error}",
    why="The child that imports torch and asks CUDA for its devices crashed or hung; a training process would do the same. A hang at CUDA initialisation usually means a GPU or driver in a bad state.",
    fix="python -c \"import torch; print(torch.cuda.device_count())\"  # run it by hand; then: nvidia-smi",
)


NVCC_TORCH_CUDA_MISMATCH = FindingKind(
    id="nvcc-torch-cuda-mismatch",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor report`](../commands/report.md)",
    summary="The CUDA compiler an extension build would use (`$CUDA_HOME/bin/nvcc`, else the `nvcc` on `PATH`, else `/usr/local/cuda`: the order of `torch.utils.cpp_extension`) is another CUDA version than the one torch was built with. `warn` when the major version differs; `info` when only the minor version does.",
    evidence="`nvcc` (its path), `found by` (`CUDA_HOME`, `CUDA_PATH`, `PATH` or `/usr/local/cuda`), `nvcc release`, `torch CUDA (build)`.",
    title={
        "major": "nvcc {release} ({path}, by {found_by}) is not the CUDA {torch_cuda} torch was built with: CUDA extensions will not build with it",
        "minor": "nvcc {release} ({path}, by {found_by}) is not the CUDA {torch_cuda} torch was built with: extensions build with a warning",
    },
    why={
        "major": "Building a CUDA extension (flash-attn, apex, xformers or DeepSpeed ops from source, any CUDAExtension) with this nvcc fails: torch refuses a CUDA toolkit of another major version than its own.",
        "minor": "torch only warns when an extension is built with a toolkit of another minor version, and the build usually works; a build that needs the newer toolkit's features may not.",
    },
    fix={
        "major": "export CUDA_HOME=/usr/local/cuda-{cuda}  # a CUDA {cuda} toolkit, as torch was built with; or a torch built for CUDA {release}: https://pytorch.org/get-started/locally/",
        "minor": "export CUDA_HOME=/usr/local/cuda-{cuda}  # only if an extension build fails: a CUDA {cuda} toolkit, as torch was built with",
    },
)


NVCC_TORCH_CUDA_MATCH = FindingKind(
    id="nvcc-torch-cuda-match",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The CUDA compiler an extension build would use is the CUDA version torch was built with.",
    evidence="`nvcc`, `found by`, `nvcc release`, `torch CUDA (build)`.",
    title="nvcc {release} ({found_by}) is torch's CUDA {cuda}",
    more_why="A toolkit of another CUDA version than torch's is a top cause of failed builds of flash-attn, apex, xformers and DeepSpeed ops.",
    more_fix="Nothing to fix. When it differs it is reported as [`nvcc-torch-cuda-mismatch`](nvcc-torch-cuda-mismatch.md).",
)
