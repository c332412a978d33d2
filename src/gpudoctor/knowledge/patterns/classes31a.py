"""Rules for classes of messages of the thirty-first round (issue 35, diagA31): a GPU's memory refused, and a GPU's compute
capability missing from a program's build, in the words of any program that uses a GPU (not only PyTorch's).

Across the retired fresh parts the families that recur in the most parts include out of memory (36 logs, 10 parts) and a
build without this GPU's architecture (29 logs, 9 parts); PyTorch's own words for both were read, a miner's, a docking
tool's, a Vulkan or OpenCL program's were not. Each class is told as the finding gpudoctor already has for that cause
(`cuda-oom`, `cuda-no-kernel-image`: one cause, one verdict, whatever program printed it), with the line's own step, and
the setting the log shows decides the fix (knowledge/setting_fix.py: a native program with no Python in the log gets a
fix in its own terms, not PyTorch's).

- `gpu-memory-refused`: the program says the GPU's memory did not hold what it asked for: a CUDA, HIP or OpenCL error line
  that ends in "out of memory" (nsfminer's and ethminer's "CUDA error in func initEpoch at line 93 out of memory"), a GPU
  named with "insufficient memory" / "not enough memory" (rigel's "GPU#0 error: insufficient memory", lolMiner's "GPU 0:
  insufficient memory for DAG epoch 385", ethminer's "CUDA device ... has insufficient GPU memory"), a size it needs
  against a smaller size the device has ("Epoch 397 requires 4.17 GB of required memory from total of 1024.00 MB available
  on device": read only where the need is larger), Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY (vulkan-hpp's
  ErrorOutOfDeviceMemory, vulkano's OutOfDeviceMemory, ggml_vulkan's "Device memory allocation of size N failed"), OpenCL's
  CL_MEM_OBJECT_ALLOCATION_FAILURE. Not the host's memory (pinned or host allocations, RAM, swap, the page file,
  VK_ERROR_OUT_OF_HOST_MEMORY, fork's "Cannot allocate memory": host-memory-exhausted and the OOM killer's own findings),
  not a line that says it survived it (a warning, a retry, a fallback), not a count ("out of memory: 0").
- `gpu-arch-missing`: the program's build has no code for this GPU's compute capability, in CUDA's words without CUDA's
  wrapper (cudaErrorInvalidDeviceFunction's "invalid device function", cudaErrorInvalidSymbol's "invalid device symbol":
  a __constant__ symbol not in the kernels loaded for this GPU; pow-miner-gpu's "[ GPU #0: bitcredit_setBlockTarget
  invalid device symbol ]", AutoDock-GPU's "SetKernelsGpuData copy to cData failed invalid device symbol", ccminer's
  "GPU #0: invalid device function") or in the program's own ("binary does not contain required device architecture",
  xmr-stak). Not nvcc's "Unsupported gpu architecture 'compute_XX'" (a build's toolkit older than the architecture asked
  for: the build failed, no binary ran), nor the driver's "PTX was compiled with an unsupported toolchain" (the driver
  older than the toolkit: cuda-driver-too-old).

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines that
mean something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, Pattern, pattern

E = Severity.ERROR
OOM = "cuda-oom"
NO_KERNEL_IMAGE = "cuda-no-kernel-image"
# the patterns that only read a line and tell it as the finding its fields name (`read_as`): classes19a's CUDA errors by code,
# and this module's classes
READ_AS_FOUND = ("cuda-error-code", "gpu-memory-refused", "gpu-arch-missing")

# a line that reports it as one it survived (a warning, a retry, a fallback, an ignored error) does not decide a failure
SURVIVED = r"^(?!\s*W: )(?!.*(?i:\bwarn(?:ing)?\b|\bignor(?:e|ed|ing)\b|\bfall(?:ing)? ?back\b|\bretry(?:ing)?\b|\bwill retry\b|\btrying again\b))"
# the host's memory (pinned or host allocations, RAM, swap, the page file, Vulkan's host memory, fork's errno) is not the GPU's
HOST = (r"(?!.*(?i:\bhost\b|pinned|\bRAM\b|system memory|virtual memory|\bswap\b|page ?file|OUT_OF_HOST_MEMORY|OutOfHostMemory"
        r"|Cannot allocate memory|std::bad_alloc))")
# a device skipped is no device used (xmr-stak's "WARNING: skip device - binary does not contain ..."): only a retry, an ignored
# error or a fallback is one survived
KEPT_ON = r"(?!.*(?i:\bignor(?:e|ed|ing)\b|\bfall(?:ing)? ?back\b|\bretry(?:ing)?\b|\bwill retry\b|\btrying again\b))"
GPU_WORD = r"(?:GPU|gpu|Gpu|CUDA device|cuda device|[Dd]evice|card|VRAM)"
UNIT = r"(?P<{0}>[\d]+(?:\.\d+)?)\s*(?P<{0}_unit>[KMGT]i?B|[KMGT]Bytes|MByte|GByte|bytes)\b"
SIZES = {"B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

# a person's voice ("I think my GPU doesn't have enough memory", "I get invalid device function on my card"): the reporter's
# judgement, not the program's line (a message a person quotes is read from the quote: knowledge/reported.py)
PERSONLESS = r"(?!.*(?:\b(?:I|I'm|I've|I'd)\b|\b(?i:me|my|we|our)\b))"
ENUMS = (
    # Vulkan's and OpenCL's status for device memory (their host-memory twins are the host's): a status name, said by anyone
    r"(?P<vulkan>VK_ERROR_OUT_OF_DEVICE_MEMORY|\bErrorOutOfDeviceMemory\b|\bOutOfDeviceMemory\b)"
    r"|(?P<opencl>CL_MEM_OBJECT_ALLOCATION_FAILURE)"
)
# Each shape, the words any line it matches holds (a line holding none of a shape's words is not searched for it: the
# alternation costs per character, so NeedsMore.match runs only the shapes a line may hold before the whole pattern)
ALLOCATION = (
    # a device allocation the program says failed (ggml_vulkan's, a program's "failed to allocate ... on the GPU")
    r"(?P<allocation>(?:[Dd]evice|GPU|VRAM|[Vv]ideo) memory allocation (?:of (?:size )?\d[\w. ]*? )?failed"
    r"|(?i:cannot|can't|could not|couldn't|unable to|failed to) allocate\b.{0,60}?\b(?:on (?:the )?(?:GPU|device)\b|(?:GPU|device|video) memory\b|buffer for (?:the )?DAG\b))"
)
# a CUDA, HIP or OpenCL error line whose words end in out of memory (ethminer's and nsfminer's "CUDA error in func X at line N
# out of memory"), not a count of them ("out of memory: 0")
API_ERROR = r"(?P<api_error>\b(?:CUDA|Cuda|cuda|HIP|OpenCL|OCL)\b.{0,30}?\b(?i:error|failed|failure)\b.{0,100}?\bout of (?:device |GPU |video )?memory\b(?!\s*[:=]\s*\d))"
# a GPU named with too little memory: rigel's "GPU#0 error: insufficient memory", lolMiner's "GPU 0: insufficient memory for DAG",
# ethminer's "CUDA device X has insufficient GPU memory", "not enough memory on GPU 0"
SHORT = (
    rf"(?P<short>\b{GPU_WORD}\s*#?\s*\d*\b.{{0,60}}?\b(?:(?i:insufficient|not enough)\s+(?:GPU |device |video |graphics )?memory"
    r"|(?:has not|hasn't|does not have|doesn't have) enough (?:GPU |device |video )?memory)\b"
    rf"|\b(?i:insufficient|not enough) (?:GPU |device |video )?memory (?:on|for) (?:the |this )?{GPU_WORD}\b"
    r"|\b(?i:insufficient|not enough) (?:GPU|VRAM|video memory)\b(?! (?:utili[sz]ation|usage)))"
)
# a size the program needs against a smaller one the device has (compared by NeedsMore below): nsfminer's "requires 4.17 GB ...
# from total of 1024.00 MB available on device", "requires 6927 MB ... but this device has only 4080 MB"
NEEDS = (
    r"(?P<needs>\b(?i:requires?|needs?|required)\s+" + UNIT.format("need") + r".{0,80}?(?:\b(?:only|has|have|total of|of total)\s+"
    + UNIT.format("have") + r"|\b" + UNIT.format("have2") + r"(?=.{0,40}?(?i:\bavailable\b|\bfree\b|\bon (?:the )?device\b|\bthis device\b))))"
)
MEMORY_SHAPES = "|".join((ALLOCATION, API_ERROR, SHORT, NEEDS))
SHAPE_WORDS: tuple[tuple[tuple[str, ...], Optional[re.Pattern]], ...] = (
    (("OutOfDeviceMemory", "OUT_OF_DEVICE_MEMORY", "CL_MEM_OBJECT_ALLOCATION_FAILURE"), None),  # the name decides
    (("llocat",), re.compile(ALLOCATION)),
    (("out of",), re.compile(API_ERROR)),
    (("nsufficient", "NSUFFICIENT", "enough", "ENOUGH"), re.compile(SHORT)),
    (("equire", "EQUIRE", "need", "Need", "NEED"), re.compile(NEEDS)),
)


def size_of(number: str, unit: str) -> float:
    return float(number) * (1 if unit.lower().startswith("byte") else SIZES.get(unit[0].upper(), 1))


def have_of(m: re.Match) -> tuple[str, str]:
    """The size the device has, as the line says it (after "only", "has", "total of", or before "available")."""
    return (m.group("have"), m.group("have_unit")) if m.group("have") is not None else (m.group("have2"), m.group("have2_unit"))


def said(m: re.Match) -> str:
    return next(k for k in ("vulkan", "opencl", "allocation", "api_error", "short", "needs") if m.group(k) is not None)


def memory_fields(m: re.Match, _context: list[str]) -> dict:
    """What the line says of the GPU's memory, told as cuda-oom with the line's own words as its first step."""
    kind = said(m)
    out: dict = {"read_as": OOM, "program_words": True}
    if kind == "needs":
        need, have = m.group("need") + " " + m.group("need_unit"), " ".join(have_of(m))
        out.update(requested=need, available=have, step=(
            f"the program needs {need} of GPU memory at once and the device has {have}: no setting that keeps what it must hold "
            f"fits this card (a mining algorithm's DAG grows with each epoch); a GPU with more memory, or work whose size fits this one"))
    elif kind == "vulkan":
        out["step"] = "Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY: the GPU's memory heap could not hold the allocation (vulkaninfo lists the heaps and their sizes)"
    elif kind == "opencl":
        out["step"] = "OpenCL's CL_MEM_OBJECT_ALLOCATION_FAILURE: the device could not hold the buffer (clinfo lists its global memory and its largest allocation)"
    return out


@dataclass(frozen=True)
class NeedsMore(Pattern):
    """A pattern whose size shape counts only where the size needed is larger than the size the device has."""

    def match(self, text: str) -> Optional[re.Match]:
        if not any(any(w in text for w in words) and (shape is None or shape.search(text) is not None) for words, shape in SHAPE_WORDS):
            return None  # no shape's words, or none of the shapes whose words it holds: the whole pattern is not tried
        m = super().match(text)
        if m is None or m.group("needs") is None:
            return m
        if size_of(m.group("need"), m.group("need_unit")) > size_of(*have_of(m)):
            return m
        return None


# a warning that it may happen (spconv's "[WARNING]your gpu arch (8, 9) isn't compiled in prebuilt, may cause invalid device
# function", heldout17 msmdfusion-32): what the run then printed decides, not the warning
NOT_FORETOLD = r"(?!.*(?i:\bwarn(?:ing)?\b|\b(?:may|might|can|could) (?:cause|lead|result|give|raise)\b))"
ARCH_SHAPES = (
    # CUDA's messages for a kernel or a symbol this GPU's build does not have, without CUDA's wrapper (the wrapped forms are
    # cuda-error-code's and the message class's): at the line's end, or before a bracket, a period or a program's own words
    NOT_FORETOLD + r".*?(?P<message>\binvalid device (?:function|symbol)\b)(?!\s+(?:is|was|means|error is)\b)"
    # a program's own words that its binary holds no code for the device's architecture (xmr-stak: at warning level, the
    # device skipped)
    r"|.*?(?P<own>\b(?:binary|executable|build|module|program) (?:does not|doesn't) contain (?:the )?(?:required )?(?:device )?(?:architecture|code for (?:this|the) (?:GPU|device)))"
)


def arch_fields(m: re.Match, _context: list[str]) -> dict:
    if m.group("own") is not None:
        step = f"the program says its build has no code for this GPU's architecture ({m.group('own')})"
    elif "symbol" in m.group("message"):
        step = ("CUDA's invalid device symbol: a __constant__ or __device__ symbol the program copies to is not in the kernels loaded "
                "for this GPU, because its build holds none for this GPU's architecture (rarely: two CUDA runtimes linked into one process)")
    else:
        step = "CUDA's invalid device function: the program's build holds no kernel for this GPU's architecture"
    return {"read_as": NO_KERNEL_IMAGE, "program_words": True, "step": step}


def _needs_more(p: Pattern) -> NeedsMore:
    return NeedsMore(**{f: getattr(p, f) for f in p.__dataclass_fields__})


PATTERNS_EARLY = [
    _needs_more(pattern(
        "gpu-memory-refused",
        "cuda",
        CAUSE,
        E,
        "a program says the GPU's memory could not hold what it asked for",
        NOT_HEADING.rstrip(".*?") + SURVIVED[1:] + HOST + r"(?:.*?(?:" + ENUMS + r")|" + PERSONLESS + r".*?(?:" + MEMORY_SHAPES + r"))",
        ("VK_ERROR_OUT_OF_DEVICE_MEMORY", "OutOfDeviceMemory", "CL_MEM_OBJECT_ALLOCATION_FAILURE", "memory allocation", "llocate",
         "out of memory", "out of device memory", "out of GPU memory", "out of video memory", "nsufficient", "not enough", "Not enough",
         "NOT ENOUGH", "enough memory", "enough GPU", "equire", "need", "Need"),
        why="""A program that is not PyTorch says in its own words that the GPU's memory could not hold what it asked for: a
        CUDA, HIP or OpenCL error that ends in out of memory, a GPU named with insufficient memory, a size it needs against a
        smaller one the device has, Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY or OpenCL's CL_MEM_OBJECT_ALLOCATION_FAILURE. It is
        told as `cuda-oom`: the same cause, whatever program said it.""",
        fix="told as cuda-oom (gpudoctor diagnose --explain cuda-oom): its fix in the setting the log shows, after the line's own step",
        examples=[
            ("Unexpected error CUDA error in func initEpoch at line 93 out of memory on CUDA device 0000:01:00.0",
             "https://github.com/no-fee-ethereum-mining/nsfminer/issues/45 (retired heldout30b)"),
            ("[2023-02-09 15:58:45] GPU#0 error: insufficient memory", "https://github.com/rigelminer/rigel/issues/20 (retired heldout30b)"),
            (" cu-0  Epoch 397 requires 4.17 GB of required memory from total of 1024.00 MB available on device.",
             "https://github.com/no-fee-ethereum-mining/nsfminer/issues/113 (a GTX 650 with 1 GB; retired heldout30b)"),
            ("GPU 0: insufficient memory for DAG epoch 385. GPU 0 will be paused.", "https://github.com/Lolliedieb/lolMiner-releases/issues/77"),
            (" CUDA device GeForce GTX 960  has insufficient GPU memory. 2096168960  bytes of memory found < 2659188352  bytes of memory required",
             "https://github.com/ethereum-mining/ethminer/issues/994"),
            ("Error: not enough memory on GPU 0 to create DAG. Current epoch requires 6927 MB memory for DAG but this device has only 4080 MB.",
             "https://github.com/RainbowMiner/RainbowMiner/issues/3066"),
            ("ggml_vulkan: Device memory allocation of size 118497280 failed.", "https://github.com/ggml-org/llama.cpp/issues/15256"),
            ("ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "https://github.com/ggml-org/llama.cpp/issues/15256"),
            ("thread '<main>' panicked at 'called `Result::unwrap()` on an `Err` value: OomError(OutOfDeviceMemory)', ../src/libcore\\result.rs:746",
             "https://github.com/vulkano-rs/vulkano/issues/172"),
            ("OpenCL error: CL_MEM_OBJECT_ALLOCATION_FAILURE", "https://github.com/PRiME-project/PRiMEStereoMatch/issues/1"),
            ("CUDA error - cannot allocate big buffer for DAG.", "https://github.com/ethereum/go-ethereum/issues/15317 (Claymore's miner)"),
        ],
        not_examples=[
            " cu-0  Epoch 397 requires 4.17 GB of required memory from total of 8192.00 MB available on device.",  # it fits
            "W: ocl_pfn_notify error: CL_MEM_OBJECT_ALLOCATION_FAILURE error executing CL_COMMAND_WRITE_BUFFER on GeForce GTX 1080 Ti (Device 0).",
            "[W] cudaError 2 (out of memory) on the first try, retrying with a smaller buffer",
            "vk::Device::allocateMemory: VK_ERROR_OUT_OF_HOST_MEMORY",  # the host's
            "RuntimeError: Caught VK_ERROR_OUT_OF_HOST_MEMORY while allocating the staging buffer in host memory",
            "fork: Cannot allocate memory",
            "CUDA errors: 0, out of memory: 0",
            "T-Rex: GPU #0: not enough memory to hold the DAG in the page file, increase virtual memory",  # the host's page file
            "I ran the miner on my GTX 1050 and I think my GPU doesn't have enough memory for this.",  # the reporter's judgement
            "| N/A   45C    P0    60W / 300W |   1024MiB / 16384MiB |      0%      Default |",
            "GPU 0: 8192 MB, enough memory for DAG epoch 400",
        ],
        fields=memory_fields,
    )),
    pattern(
        "gpu-arch-missing",
        "cuda",
        CAUSE,
        E,
        "a program's build has no code for this GPU's compute capability",
        NOT_HEADING.rstrip(".*?") + KEPT_ON + PERSONLESS + r"(?:" + ARCH_SHAPES + r")",
        ("invalid device function", "invalid device symbol", "contain the required", "contain required", "contain code for", "contain the code"),
        why="""A program that is not PyTorch says that this GPU has no code in its build: CUDA's invalid device function or
        invalid device symbol without CUDA's wrapper (the kernel or the __constant__ symbol is not in the code loaded for this
        GPU's architecture), or its own words that its binary does not contain the device's architecture. It is told as
        `cuda-no-kernel-image`: the same cause, whatever program said it.""",
        fix="told as cuda-no-kernel-image (gpudoctor diagnose --explain cuda-no-kernel-image): its fix in the setting the log shows, after the line's own step",
        examples=[
            ("[ 1][t 4][2021-12-12 21:29:44.1083308][cuda.cpp:209]\t[ GPU #0: bitcredit_setBlockTarget invalid device symbol ]",
             "https://github.com/tontechio/pow-miner-gpu/issues/124 (a GT 640, SM 3.0; retired heldout30b)"),
            ("SetKernelsGpuData copy to cData failed invalid device symbol",
             "https://github.com/ccsb-scripps/AutoDock-GPU/issues/172 (an RTX 3080 with a build for 52-70; retired heldout30)"),
            ("[2017-08-11 23:06:20] GPU #0: invalid device function", "https://github.com/djm34/ccminer-msvc2015/issues/15 (a Tesla K80)"),
            ("GPUEngine: Kernel: invalid device function", "https://github.com/JeanLucPons/VanitySearch/issues/37 (an RTX 2060 SUPER, CUDA 8)"),
            ('CUDA [9.1/9.0] GPU#0, device architecture 21: "GeForce GT 430"... WARNING: skip device - binary does not contain required device architecture',
             "https://github.com/fireice-uk/xmr-stak/issues/2195 (a GT 430, compute capability 2.1; retired heldout30b)"),
        ],
        not_examples=[
            "nvcc fatal   : Unsupported gpu architecture 'compute_89'",  # the build's toolkit: no binary ran
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain.",  # the driver: too old
            "# invalid device symbol",  # a thread's title
            "When I start it I get invalid device function on my old card, can you help?",  # a person's words
            "[WARNING]your gpu arch (8, 9) isn't compiled in prebuilt, may cause invalid device function. available: {(7, 0), (6, 1), (8, 0)}",
        ],
        fields=arch_fields,
    ),
]
