"""Findings in the area "backends"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="backend-choice",
        severity="info",
        area="backends",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="Which backend to use for what, on this machine: NCCL for GPU tensors, gloo for CPU tensors, MPI only when torch was built with it; and so what `gpudoctor allreduce` and `gpudoctor train-smoke` will run (NCCL with one rank per GPU, otherwise gloo on CPU).",
        evidence="`GPU tensors`, `CPU tensors`, `also built in` (mpi, ucc).",
        why="Picking NCCL for CPU tensors, or two NCCL ranks on one GPU, fails at the first collective.",
        fix="""Nothing to fix. In your own code:

```python
dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
```""",
    ),
    FindingDoc(
        id="backend-gloo",
        severity="ok",
        area="backends",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The gloo backend is available.",
        evidence="Which backends the build has: `gloo`, `nccl`, `mpi`, `ucc`, `xccl`.",
        why="gloo runs collectives on CPU tensors everywhere; it is what `allreduce` and `train-smoke` use on a machine without GPUs.",
        fix="Nothing to fix. When it is missing it is reported as [`gloo-missing`](gloo-missing.md).",
    ),
    FindingDoc(
        id="backend-nccl",
        severity="ok",
        area="backends",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="torch sees CUDA GPUs and has NCCL.",
        evidence="Which backends the build has.",
        why="NCCL is the backend for GPU tensors.",
        fix="Nothing to fix. When it is missing it is reported as [`nccl-missing`](nccl-missing.md).",
    ),
    FindingDoc(
        id="distributed-unavailable",
        severity="error",
        area="backends",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="`torch.distributed.is_available()` is `False` in this torch build.",
        evidence="`torch`, `torch.distributed.is_available()`.",
        why="Without torch.distributed there is no DDP, no all-reduce and no torchrun. Some builds leave it out (older macOS wheels, custom builds with `USE_DISTRIBUTED=0`).",
        fix="""```sh
pip install --force-reinstall torch   # an official Linux wheel includes gloo and NCCL
```""",
        says="Without torch.distributed there is no DDP, no all-reduce and no torchrun; some builds (older macOS wheels, custom builds with USE_DISTRIBUTED=0) leave it out.",
        does="pip install --force-reinstall torch  # an official Linux wheel includes gloo and NCCL",
    ),
    FindingDoc(
        id="gloo-missing",
        severity="error / warn",
        area="backends",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The gloo backend is not in this torch build (`error` when NCCL is missing too, `warn` otherwise).",
        evidence="Which backends the build has.",
        why="gloo is the backend for CPU tensors and the fallback where NCCL is not available.",
        fix="""```sh
pip install --force-reinstall torch   # official wheels include gloo
```""",
        says="gloo is the backend for CPU tensors and the fallback on machines without NCCL; without it, collectives on CPU tensors cannot run.",
        does="pip install --force-reinstall torch  # official wheels include gloo",
    ),
    FindingDoc(
        id="nccl-missing",
        severity="error (info on Windows)",
        area="backends",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="torch sees CUDA GPUs, but its build has no NCCL. On Windows this is expected (PyTorch's Windows wheels have no NCCL): the finding is `info` there and says to use gloo (see [`platform-limits`](platform-limits.md)).",
        evidence="Which backends the build has, `CUDA (build)`, `GPUs torch sees` (and `platform` on Windows).",
        why="Without NCCL, multi-GPU training falls back to gloo, which copies through host memory and is far slower; some collectives do not run at all. NCCL is absent from Windows and some custom builds.",
        fix="""On Windows: `dist.init_process_group(backend="gloo")`, or WSL2 for NCCL. On Linux:

```sh
pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128   # a Linux CUDA wheel ships NCCL
```""",
        cases={
            "windows": "PyTorch's Windows wheels ship gloo only. DDP works with backend='gloo' (slower than NCCL: tensors go through host memory); NCCL needs Linux or WSL2.",
            "not-built": "NCCL is the backend for GPU tensors; without it, multi-GPU training falls back to gloo, which copies through host memory and is far slower (and some collectives do not run at all).",
        },
        fix_cases={
            "windows": 'dist.init_process_group(backend="gloo")  # or run under WSL2 for NCCL',
            "not-built": "pip install --force-reinstall torch  # a Linux CUDA wheel ships NCCL",
        },
    ),
)
