"""Findings in the area "torch"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="arch-missing",
        severity="error",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="A GPU's compute capability is not covered by `torch.cuda.get_arch_list()`: torch has no kernels for it.",
        evidence="`arch list` (e.g. `sm_50 … sm_90`), `GPUs` with their capability (from torch, else from NVML).",
        why="Every CUDA op on that GPU fails with *no kernel image is available for execution on the device*. gpudoctor applies CUDA's rules: `sm_XY` code runs on the same major version with the same or a newer minor; `compute_XY` (PTX) is compiled by the driver for any newer GPU; `sm_XYa` runs on that exact GPU only; Jetson parts (5.3, 6.2, 7.2, 8.7) run only their own code.",
        fix="""Install a build whose arch list includes the GPU (newer GPUs need newer CUDA builds):

```sh
pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128
python -c "import torch; print(torch.cuda.get_arch_list())"
```""",
        says="Every CUDA op on that GPU fails with 'no kernel image is available for execution on the device'.",
        does="pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}  # a build whose arch list includes the GPU",
    ),
    FindingDoc(
        id="arch-supported",
        severity="ok",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="torch carries kernels for every GPU's compute capability.",
        evidence="`arch list`, `GPUs` with their capability.",
        why="A GPU newer than the torch build is a common cause of *no kernel image is available*.",
        fix="Nothing to fix. When it fails it is reported as [`arch-missing`](arch-missing.md).",
    ),
    FindingDoc(
        id="cuda-unavailable",
        severity="error",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="torch is a CUDA build, the driver lists GPUs, `CUDA_VISIBLE_DEVICES` selects some, and still `torch.cuda.is_available()` is `False` in a fresh process — and neither an old driver nor the visibility variables explain it.",
        evidence="`torch`, `CUDA (build)`, `driver`, `CUDA_VISIBLE_DEVICES`, and the warnings torch printed while initialising CUDA.",
        why="CUDA failed to initialise: typically the `/dev/nvidia*` device files are not mounted into the container, the user has no permission on them, or a GPU is in a bad state.",
        fix="""See CUDA's own error, then check the device files:

```sh
python -c "import torch; torch.cuda.init()"
ls -l /dev/nvidia*
```""",
        says="CUDA failed to initialise in a fresh process: the warnings above say why (device files not mounted in a container, a GPU in a bad state, or no permission on /dev/nvidia*).",
        does='python -c "import torch; torch.cuda.init()"  # shows CUDA\'s own error',
    ),
    FindingDoc(
        id="driver-cuda-version",
        severity="ok",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The driver supports a CUDA version at least as new as the one torch was built with.",
        evidence="`torch built with CUDA`, `driver`, `driver supports CUDA up to`.",
        why="This is the first thing that breaks after a torch upgrade on an old machine.",
        fix="Nothing to fix. When it fails it is reported as [`driver-too-old`](driver-too-old.md).",
    ),
    FindingDoc(
        id="driver-too-old",
        severity="error / warn",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The NVIDIA driver supports an older CUDA than the one torch was built with. `error` when the major version differs (or torch itself warned that the driver is too old); `warn` when only the minor version does.",
        evidence="`torch built with CUDA`, `driver`, `driver supports CUDA up to`, and torch's own warning when it gave one.",
        why="A CUDA runtime needs a driver of at least its major version, or `torch.cuda.is_available()` is `False`. Within a major version, minor-version compatibility lets it run, but code that needs PTX JIT or newer driver features fails.",
        fix="""Install a torch built for the driver's CUDA, or update the driver:

```sh
pip install --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/cu124
# or a newer driver: https://www.nvidia.com/drivers
```""",
        cases={
            "major": "A CUDA runtime needs a driver of at least its major version; with an older one torch.cuda.is_available() is False.",
            "minor": "Within one CUDA major version, minor-version compatibility lets it run, but kernels that need PTX JIT or newer driver features fail with 'the provided PTX was compiled with an unsupported toolchain'.",
        },
        fix_cases={
            "major": "pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}  # or install a driver for CUDA {cuda}: https://www.nvidia.com/drivers",
            "minor": "pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}",
        },
    ),
    FindingDoc(
        id="torch-build",
        severity="ok / info",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="Which torch build is installed: its version, the CUDA version it was built with, cuDNN and NCCL. On a machine without an NVIDIA GPU a CPU build is expected and reported as `info`.",
        evidence="`torch`, `CUDA (build)` (`none` for a CPU build), `cuDNN`, `NCCL`, `location` (where torch was imported from).",
        why="It tells you which torch the doctor examined: the one your `python` imports, not the one you think you installed.",
        fix="Nothing to fix. On a GPU machine a CPU build is reported as [`torch-cpu-build-with-gpus`](torch-cpu-build-with-gpus.md) instead.",
    ),
    FindingDoc(
        id="torch-cpu-build-with-gpus",
        severity="error",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="torch is a CPU-only build (`torch.version.cuda is None`), but NVML or the PCI bus shows NVIDIA GPUs.",
        evidence="`torch`, `CUDA (build)`: none, `GPUs NVML sees`, `driver`.",
        why="A CPU build contains no CUDA code: `torch.cuda.is_available()` is `False` whatever the driver. This is what `pip install torch` gives on some platforms, or what a CPU-only index URL installs.",
        fix="""Install a CUDA build the driver can run (gpudoctor picks the newest CUDA tag not above the driver's CUDA version):

```sh
pip install --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128
```""",
        says="A CPU build has no CUDA code: torch.cuda.is_available() is False whatever the driver.",
        does="pip install --force-reinstall {pin} --index-url https://download.pytorch.org/whl/{index}",
    ),
    FindingDoc(
        id="torch-import-failed",
        severity="error",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md), [`allreduce`](../commands/allreduce.md), [`train-smoke`](../commands/train-smoke.md), [`run --nproc`](../commands/run.md), [`report`](../commands/report.md)",
        summary="`import torch` raised in a fresh Python process started with your environment. Nothing in PyTorch can run until it imports. When torch is simply not installed (`No module named 'torch'`) the title says so: gpudoctor does not depend on torch, because it examines the one you train with, so installing gpudoctor never installs or replaces it. `gpudoctor lint` needs no torch.",
        evidence="`error` (the exception, one line), `where` (the file and line that raised it: which `torch` was imported), `python`, `PYTHONPATH`, `LD_LIBRARY_PATH`.",
        why="The usual causes: a half-finished or mixed install (two torch versions in one environment), a CUDA library the wheel expects but cannot load (`libcudart.so.12`, `libcudnn`, `libnccl`, often after changing `LD_LIBRARY_PATH`), or another directory called `torch` earlier on `PYTHONPATH` or in the working directory.",
        fix="""Not installed: install the torch you mean to train with, in the same environment (`pip install torch`, or the CUDA build for your driver from https://pytorch.org/get-started/locally/), or `pip install "gpudoctor[torch]"`.

Broken: read the full error, then reinstall the torch you meant to use:

```sh
python -c "import torch"
pip install --force-reinstall torch   # pin your version, e.g. torch==2.13.0
```

If `where` points outside your environment, remove that directory from `PYTHONPATH`.""",
        cases={
            "broken": "Nothing in PyTorch can run: a broken or half-installed torch, a missing CUDA library (libcudart, libcudnn, libnccl), or another `torch` earlier on PYTHONPATH.",
            "not-installed": "gpudoctor examines the torch you train with and does not install one itself; this command needs it. `gpudoctor lint` works without torch.",
        },
        fix_cases={
            "broken": 'python -c "import torch"  # read the full error, then: pip install --force-reinstall torch',
            "not-installed": "pip install torch  # in the environment you train in; for a CUDA build see https://pytorch.org/get-started/locally/",
        },
    ),
    FindingDoc(
        id="torch-probe-failed",
        severity="error",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The child process that imports torch and asks CUDA for its devices crashed, printed no answer, or did not finish within its deadline (90 s).",
        evidence="`status` (`timeout` or `probe-failed`), `error`, and the end of the child's stderr.",
        why="A training process would do the same. A hang at CUDA initialisation usually means a GPU or driver in a bad state (Xid errors in `dmesg`), a crash often a broken CUDA library.",
        fix="""Run the same steps by hand and look at the driver:

```sh
python -c "import torch; print(torch.cuda.device_count())"
nvidia-smi
```""",
        says="The child that imports torch and asks CUDA for its devices crashed or hung; a training process would do the same. A hang at CUDA initialisation usually means a GPU or driver in a bad state.",
        does='python -c "import torch; print(torch.cuda.device_count())"  # run it by hand; then: nvidia-smi',
    ),
    FindingDoc(
        id="nvcc-torch-cuda-mismatch",
        severity="warn / info",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor report`](../commands/report.md)",
        summary="The CUDA compiler an extension build would use (`$CUDA_HOME/bin/nvcc`, else the `nvcc` on `PATH`, else `/usr/local/cuda`: the order of `torch.utils.cpp_extension`) is another CUDA version than the one torch was built with. `warn` when the major version differs; `info` when only the minor version does.",
        evidence="`nvcc` (its path), `found by` (`CUDA_HOME`, `CUDA_PATH`, `PATH` or `/usr/local/cuda`), `nvcc release`, `torch CUDA (build)`.",
        why="Packages that compile CUDA code against torch when installed or first used (flash-attn, apex, xformers and DeepSpeed ops from source, any `CUDAExtension`) run that nvcc. torch refuses a toolkit of another major version (*The detected CUDA version mismatches the version that was used to compile PyTorch*); another minor version only warns, and usually builds. Nothing breaks until such a build runs, so this is not an error.",
        fix="""Point the build at a toolkit of torch's CUDA, or use a torch built for the toolkit you have:

```sh
export CUDA_HOME=/usr/local/cuda-12.6   # a toolkit of the CUDA torch was built with
pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu130   # or a torch for your nvcc
```""",
        cases={
            "major": "Building a CUDA extension (flash-attn, apex, xformers or DeepSpeed ops from source, any CUDAExtension) with this nvcc fails: torch refuses a CUDA toolkit of another major version than its own.",
            "minor": "torch only warns when an extension is built with a toolkit of another minor version, and the build usually works; a build that needs the newer toolkit's features may not.",
        },
        fix_cases={
            "major": "export CUDA_HOME=/usr/local/cuda-{cuda}  # a CUDA {cuda} toolkit, as torch was built with; or a torch built for CUDA {nvcc}: https://pytorch.org/get-started/locally/",
            "minor": "export CUDA_HOME=/usr/local/cuda-{cuda}  # only if an extension build fails: a CUDA {cuda} toolkit, as torch was built with",
        },
    ),
    FindingDoc(
        id="nvcc-torch-cuda-match",
        severity="ok",
        area="torch",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The CUDA compiler an extension build would use is the CUDA version torch was built with.",
        evidence="`nvcc`, `found by`, `nvcc release`, `torch CUDA (build)`.",
        why="A toolkit of another CUDA version than torch's is a top cause of failed builds of flash-attn, apex, xformers and DeepSpeed ops.",
        fix="Nothing to fix. When it differs it is reported as [`nvcc-torch-cuda-mismatch`](nvcc-torch-cuda-mismatch.md).",
    ),
)
