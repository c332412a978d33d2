"""What the platform's torch build cannot do (Windows, macOS, CPU-only builds)."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

THD_STEP = ("torch 0.4's THD backend (torch.distributed.deprecated in torch 1.0) was built without NCCL 2: a torch built from source "
            "that did not find NCCL 2 builds the NCCL 1 it ships, which THD cannot use: rebuild where it finds NCCL 2 "
            "(NCCL_ROOT_DIR=/path/to/nccl2), or install a torch CUDA wheel, whose NCCL is built in")


def backend_fields(m, context: list[str]) -> dict:
    """The backend named; THD's words carry their own step (the fix's first)."""
    out = groups(m, context)
    if m.group("thd"):
        out.update(read_as="backend-not-built", step=THD_STEP)
    return out


PATTERNS = [
    pattern(
        "backend-not-built",
        "platform",
        CAUSE,
        E,
        "this torch build has no such distributed backend",
        r"Distributed package doesn't have (?P<backend>NCCL|MPI|UCC) built in"
        # torch 0.4's THD (torch.distributed.deprecated in 1.0) in its own words: built without NCCL 2 (a source build that
        # found only the NCCL 1 it ships), or without MPI
        r"|" + NOT_HEADING + r"the distributed (?P<thd>NCCL|MPI) backend is not available; try to recompile the THD package",
        ("built in", "try to recompile the THD package"),
        why="""NCCL exists only in Linux CUDA builds of torch: Windows, macOS and CPU-only builds have gloo
        (MPI only when torch was compiled with it).""",
        fix='dist.init_process_group(backend="gloo")  # on Windows/macOS; for NCCL use Linux (or WSL2) with a CUDA build',
        examples=[
            ("RuntimeError: Distributed package doesn't have NCCL built in", "Alpha-VLLM/LLaMA2-Accessory#166"),
            ("RuntimeError: the distributed NCCL backend is not available; try to recompile the THD package with CUDA and NCCL 2+ support at /pytorch/torch/lib/THD/process_group/General.cpp:20",
             "facebookresearch/maskrcnn-benchmark#122 (torch.distributed.deprecated); pytorch/pytorch#9932 (a source build that found only NCCL 1: NCCL_ROOT_DIR)"),
        ],
        fields=backend_fields,
    ),
    pattern(
        "nccl-no-gpu",
        "platform",
        CAUSE,
        E,
        "the NCCL backend was asked for on a process that sees no GPU",
        r"ProcessGroupNCCL is only supported with GPUs, no GPUs found",
        ("only supported with GPUs",),
        why="""NCCL needs a GPU in every rank; this process sees none (CPU node, CUDA_VISIBLE_DEVICES empty, or a
        container without --gpus).""",
        fix='dist.init_process_group(backend="gloo")  # on CPU; else make the GPUs visible: nvidia-smi, CUDA_VISIBLE_DEVICES',
        examples=[
            ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "ProcessGroupNCCL error text"),
        ],
    ),
    pattern(
        "libuv-missing",
        "platform",
        CAUSE,
        E,
        "the TCPStore asked for libuv, which this torch build lacks (Windows)",
        r"use_libuv was requested but PyTorch was buil[dt] without libuv support",
        ("use_libuv",),
        why="""Since torch 2.4 the store uses libuv by default, but Windows wheels are built without it, so
        torchrun fails at the rendezvous.""",
        fix="set USE_LIBUV=0   (PowerShell: $env:USE_LIBUV=0) before torchrun; or init_method='tcp://127.0.0.1:29500?use_libuv=0'",
        examples=[
            ("RuntimeError: use_libuv was requested but PyTorch was build without libuv support", "pytorch/pytorch#148283"),
            ("RuntimeError: use_libuv was requested but PyTorch was built without libuv support", "kohya-ss/musubi-tuner#100"),
        ],
    ),
]
