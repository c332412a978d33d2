"""A class rule for CUDA kernel faults that no cuda pattern names (issue 35 item 4, the eighth round).

cuda.py claims an illegal memory access, a device-side assertion and an unspecified launch failure;
the other faults CUDA reports for a kernel that ran badly (a misaligned address, an illegal instruction,
a launch asking for more registers or shared memory than the GPU has) and the error of a CUDA graph
capture (an operation that is not allowed while a stream is captured) came out as "unrecognised". The
line decides that a kernel failed (an error); which kernel is not in the line: CUDA reports a fault at
the next call that checks the device, so the fix is the way to find the kernel.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern

E = Severity.ERROR

# What CUDA calls the fault, as its message (after "CUDA error:") and as its error code (the driver's
# CUDA_ERROR_X, the runtime's cudaErrorX).
FAULT_MESSAGE = (
    r"misaligned address|an illegal instruction was encountered|too many resources requested for launch"
    r"|operation not permitted when stream is capturing|operation failed due to a previous error during capture"
    r"|capturing stream has unjoined work"
)
FAULT_CODE = (
    r"CUDA_ERROR_(?:MISALIGNED_ADDRESS|ILLEGAL_INSTRUCTION|LAUNCH_OUT_OF_RESOURCES|STREAM_CAPTURE_\w+)"
    r"|cudaError(?:MisalignedAddress|IllegalInstruction|LaunchOutOfResources|StreamCapture\w+)"
)


def fault_of(m, _context: list[str]) -> dict:
    return {"fault": m.group("fault") or m.group("code")}


PATTERNS = [
    pattern(
        "cuda-kernel-fault",
        "cuda",
        CAUSE,
        E,
        "a CUDA kernel failed (a misaligned address, an illegal instruction, too few resources for its launch, or an operation a CUDA graph capture does not allow)",
        # a line that reports it as a warning it survived (retried, ignored, fell back) does not decide the run failed
        r"^(?!.*(?i:\bwarn(?:ing)?\b|\bignor(?:e|ed|ing)\b|\bfalling back\b|\bretry(?:ing)?\b))"
        rf".*?(?:\b(?:CUDA (?:error|Error|ERROR|failure)\b|Error \[CUDA\])[^\n]*?(?P<fault>{FAULT_MESSAGE})|\b(?P<code>{FAULT_CODE})\b)",
        ("misaligned address", "illegal instruction was encountered", "too many resources requested for launch", "stream is capturing",
         "error during capture", "capturing stream has unjoined work", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
         "CUDA_ERROR_STREAM_CAPTURE_", "cudaErrorMisalignedAddress", "cudaErrorIllegalInstruction", "cudaErrorLaunchOutOfResources",
         "cudaErrorStreamCapture"),
        why="""A GPU kernel failed as it ran, and CUDA named the fault. A misaligned address is a load or a store at an
        address that is not a multiple of its size: a custom or fused kernel (a compiled extension, a Triton or an attention
        kernel, a quantisation kernel) given a tensor that is not contiguous, sliced at an odd offset or of a shape or a data
        type it was not written for. An illegal instruction is a kernel compiled wrongly for this GPU or hitting a compiler
        or driver bug (a kernel built for another architecture, a Triton or a driver version with the bug). Too many
        resources requested for launch is a kernel launched with more threads, registers or shared memory than the GPU
        has (a block size tuned for another GPU). An operation not permitted when a stream is capturing is a CUDA graph
        capture (torch.compile's mode="reduce-overhead", CUDA graphs in vLLM or in a trainer) that met an operation it
        cannot record: a synchronisation, a copy to the host (.item(), printing a tensor), a new allocation or a
        collective that is not graph-safe. CUDA reports a fault at the next call that checks the device, so the line that
        shows it is often far from the kernel: the traceback, run with launches made synchronous, names it. After such a
        fault the process's CUDA context is unusable: every later CUDA call on that rank fails too.""",
        fix="""rerun with CUDA_LAUNCH_BLOCKING=1 so the error is raised at the kernel that failed: its traceback's last frames
        name the extension or the kernel (a compiled extension, a Triton or a fused kernel); `compute-sanitizer --tool memcheck
        python train.py` names the kernel and the address of a misaligned access; call .contiguous() on what is passed to that
        kernel, or turn the fused path off (the library's option for it) to confirm; an illegal instruction or too many
        resources: reinstall or rebuild the extension for this GPU (TORCH_CUDA_ARCH_LIST set to its compute capability) and
        upgrade the package, Triton and the driver; a stream capture error: run without CUDA graphs to confirm (torch.compile
        mode="default", vLLM --enforce-eager), then move the operation the traceback names (.item(), a print, a host copy)
        out of the captured region""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: CUDA error: misaligned address", "pytorch/pytorch#32893 (torch.addmm in batchnorm; deepspeedai/DeepSpeedExamples#530 the same line)"),
            ("  what():  CUDA error: misaligned address (insert_events at /pytorch/c10/cuda/CUDACachingAllocator.cpp:771)", "open-mmlab/mmdetection#2342"),
            ("CUDA_ERROR_MISALIGNED_ADDRESS failed with error misaligned address", "NVIDIA/Fuser#4970 (a generated fusion kernel)"),
            ("RuntimeError: CUDA error: an illegal instruction was encountered", "CUDA runtime error text (cudaErrorIllegalInstruction)"),
            ("RuntimeError: CUDA error: operation not permitted when stream is capturing", "NVlabs/cuHPX#11 (an extension not capturable in a CUDA graph; pytorch/pytorch#87794)"),
            ("Exception: Capture cuda graph failed: CUDA error: capturing stream has unjoined work", "deepseek-ai/DeepEP#62 (normal kernels sync with the CPU)"),
            ("RuntimeError: CUDA error: too many resources requested for launch", "CUDA runtime error text (cudaErrorLaunchOutOfResources)"),
            ("RuntimeError: Triton Error [CUDA]: misaligned address", "Triton's report of the same fault"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: an illegal memory access was encountered",  # cuda-illegal-memory-access
            "RuntimeError: CUDA error: unspecified launch failure",  # cuda-launch-failure
            "Illegal instruction (core dumped)",  # a CPU instruction this host lacks (SIGILL): its own pattern
            "[W] CUDA graph capture failed (operation not permitted when stream is capturing), falling back to eager mode",
            "INFO: misaligned address checks enabled for the allocator",
        ],
        fields=fault_of,
    ),
]
