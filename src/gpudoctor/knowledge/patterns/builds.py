"""Why a build or an install of GPU code failed, read from the tool's own first error line (issue 35, item 4; diagJ33).

A failed build ends in wrappers that say only that it failed (ninja's "build stopped: subcommand failed", pip's
"subprocess-exited-with-error" and "Failed building wheel", setuptools' "command '.../nvcc' failed"): those are
`extension-build-failed` (patterns/launchers.py), told as the consequence of the line that decides. These classes are the
lines that decide, beside diagE31's (launchers.py: the architecture, the host's memory, a header or library, the host
compiler's version, the toolkit not found):

- the toolkit's CUDA is not the one the build needs: torch.utils.cpp_extension's and apex's checks against torch's CUDA, a
  package's own minimum (`build-cuda-version-mismatch`);
- the compiler itself crashed: gcc's and MSVC's internal compiler error, nvcc's front end or ptxas dying on a signal other
  than the out-of-memory killer's (`build-compiler-crashed`);
- nvcc's "identifier ... is undefined" for a CUDA intrinsic or API: a toolkit or an architecture without it
  (`build-cuda-intrinsic-undefined`);
- nvcc refusing its own command line: a host compiler's flag, a path split at a space (`nvcc-command-line-refused`);
- torch's headers refusing an older C++ standard (`build-cxx-standard-too-old`);
- torch's JIT build without ninja (`ninja-missing`);
- pip's isolated build environment without the torch the package's setup imports (`build-isolation-torch-missing`: uv's
  own hint here; the ModuleNotFoundError under pip's build hook by knowledge/story.py `refine`);
- pip finding no release it can install (`pip-no-matching-distribution`), its resolver finding no set of versions that fits
  (`pip-dependency-conflict`), or an install that went through and left a package whose requirement it breaks (a warning:
  `pip-installed-with-conflicts`).

Written from the development parts' build cases (heldout32's pytorch, nccl, TransformerEngine and apex builds, heldout29b's
whisper build, heldout5's sam2 build) and the threads named beside the examples (the issues corpus).
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern

E = Severity.ERROR

CUDA_MISMATCH = "build-cuda-version-mismatch"
COMPILER_CRASHED = "build-compiler-crashed"
INTRINSIC_UNDEFINED = "build-cuda-intrinsic-undefined"
NVCC_COMMAND = "nvcc-command-line-refused"
CXX_STANDARD = "build-cxx-standard-too-old"
NINJA_MISSING = "ninja-missing"
ISOLATED_BUILD = "build-isolation-torch-missing"
NO_DISTRIBUTION = "pip-no-matching-distribution"
CONFLICT = "pip-dependency-conflict"
INSTALLED_CONFLICT = "pip-installed-with-conflicts"
# The build and install findings whose title gives what the line names and whose fix is the step it decides (knowledge/story.py)
DETAIL_SAID = (CUDA_MISMATCH, COMPILER_CRASHED, INTRINSIC_UNDEFINED, NVCC_COMMAND, CXX_STANDARD, ISOLATED_BUILD, CONFLICT, INSTALLED_CONFLICT)
# What decides why a build of GPU code failed, from this module (patterns/launchers.py: the wrapper lines are their consequence)
CAUSES = (CUDA_MISMATCH, COMPILER_CRASHED, INTRINSIC_UNDEFINED, NVCC_COMMAND, CXX_STANDARD, NINJA_MISSING, ISOLATED_BUILD)

INDEX = "https://download.pytorch.org/whl/"
ISOLATION_STEP = ("when pip builds it (pip install PACKAGE, pip install -e .) without --no-build-isolation, the torch compared is the one pip "
                  "installed into its isolated build environment, not yours: pip install --no-build-isolation PACKAGE")


def wheel_tag(cuda: str) -> str:
    """PyTorch's index folder for a CUDA version (12.1 -> cu121), or ''."""
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", cuda)
    return f"cu{m[1]}{m[2]}" if m else ""


def mismatch_fields(m: re.Match, context: list[str]) -> dict:
    """The two CUDA versions (torch's on the message's next line where it wraps), and the step they decide."""
    out = groups(m, context)
    nvcc = out.get("nvcc_cuda", "")
    torch = out.get("torch_cuda") or out.get("apex_torch", "")
    if nvcc and not torch:
        wrapped = re.search(r"PyTorch \((?P<torch>[\d.]+)\)", " ".join(context[:1]))
        torch = wrapped["torch"] if wrapped else ""
    if out.get("needs_cuda"):
        out["detail"] = f"{out.get('package', 'the package')} needs nvcc of CUDA {out['needs_cuda']} or newer"
        out["step"] = (f"nvcc --version   # the toolkit the build runs: install CUDA {out['needs_cuda']} or newer (the one of torch.version.cuda "
                       f"best) and export CUDA_HOME=/usr/local/cuda-X.Y PATH=/usr/local/cuda-X.Y/bin:$PATH before the build; or install a "
                       "prebuilt wheel of the package for your Python, torch and CUDA")
        return out
    if torch:
        out["torch_cuda"] = torch
    shown = f"nvcc's CUDA {nvcc}, torch's {torch}" if nvcc and torch else f"torch was built with CUDA {torch}" if torch else f"nvcc's CUDA {nvcc}"
    out["detail"] = shown
    toolkit = (f"export CUDA_HOME=/usr/local/cuda-{torch} PATH=/usr/local/cuda-{torch}/bin:$PATH (install that toolkit if it is not "
               f"there: conda install -c nvidia cuda-toolkit={torch})") if torch else "point CUDA_HOME and PATH at the toolkit of torch.version.cuda"
    other = (f"; or install the torch built for nvcc's CUDA: pip install torch --index-url {INDEX}{wheel_tag(nvcc)}" if wheel_tag(nvcc) else "")
    out["step"] = (f"nvcc --version; echo $CUDA_HOME; python -c \"import torch; print(torch.version.cuda)\"   # the build needs one CUDA: "
                   f"{toolkit}{other}; {ISOLATION_STEP}")
    return out


def crash_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    said = out.get("ice") or out.get("msvc") or out.get("codegen") or (f"'{out['tool']}' died due to signal {out['signal']}" if out.get("tool") else "")
    out["detail"] = f"\"{' '.join(str(said).split())[:100]}\""
    return out


def intrinsic_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    out["detail"] = out["identifier"]
    return out


def nvcc_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    out["detail"] = f"nvcc fatal: {' '.join(out['refused'].split())[:100]}"
    return out


def standard_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    std = out.get("std") or out.get("std2") or "17"
    out["detail"] = f"torch's headers need C++{std}"
    return out


def isolated_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    out["module"] = out.get("dependency", "torch")
    out["detail"] = f"{out['module']} ({out.get('package', 'the package')} does not declare it for its build)"
    return out


# pip's lines before its "Could not find a version": releases for another Python, an index it never reached
REQUIRES_PYTHON = re.compile(r"Ignored the following versions that require a different python version: (?P<ignored>.*)")
NO_CONNECTION = re.compile(r"Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|"
                           r"ConnectTimeoutError|ReadTimeoutError|ProxyError|SSLError|Could not fetch URL|connection broken by")


def versions_before(line: int, before: list[str]) -> dict:
    """What pip printed before it found no release: a line on releases for another Python, or on an index it did not reach."""
    out: dict = {}
    for k, text in enumerate(reversed(before)):
        if "python_ignored" not in out and (r := REQUIRES_PYTHON.search(text)) is not None:
            out["python_ignored"] = r["ignored"][:160]
        if "no_index" not in out and NO_CONNECTION.search(text):
            out["no_index"] = f"line {line - 1 - k}: {' '.join(text.split())[:160]}"
    return out


def distribution_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    out["requirement"] = out.get("requirement") or out.get("nodist", "")
    return out


def installed_conflict_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    out["detail"] = f"{out['dependent']} {out['dependent_version']} requires {out['requirement']}, {out['installed']} {out['installed_version']} is installed"
    name = re.split(r"[=<>~!;\[ ]", out["requirement"])[0]
    out["step"] = (f"pip check   # every requirement the environment breaks; then install what {out['dependent']} requires, "
                   f"pip install '{out['requirement']}' (a torch from PyTorch's index for your CUDA: --index-url {INDEX}cuXYZ), or the "
                   f"{out['dependent']} release made for {name} {out['installed_version']}; or keep the two in separate environments")
    return out


def conflict_fields(m: re.Match, context: list[str]) -> dict:
    """The resolver's own lines after it: what each requirement asks of the package in conflict."""
    out = groups(m, context)
    causes = [" ".join(t.split()) for t in context if re.search(r"\bdepends on\b|\bThe user requested\b|\byou require\b", t)]
    if causes:
        out["caused_by"] = causes[:6]
        out["detail"] = "; ".join(causes[:3])[:220]
    else:
        out["detail"] = "the resolver's lines after it name the requirements in conflict"
    return out


PATTERNS = [
    pattern(
        CUDA_MISMATCH,
        "launcher",
        CAUSE,
        E,
        "the CUDA toolkit (nvcc) that builds the extension is not the CUDA version the build needs",
        # torch.utils.cpp_extension's check (a major version apart; a minor one only warns), its message wrapped after "compile"
        NOT_HEADING + r"(?:The detected CUDA version \((?P<nvcc_cuda>[\d.]+)\) mismatches the version that was used to compile(?:\s+PyTorch \((?P<torch_cuda>[\d.]+)\))?"
        # apex's own check
        r"|Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries\.\s+"
        r"Pytorch binaries were compiled with Cuda (?P<apex_torch>\d+\.\d+)"
        # a package's own minimum (flash-attn's setup.py)
        r"|(?P<package>\w+) is only supported on CUDA (?P<needs_cuda>[\d.]+) and above)",
        ("mismatches the version that was used to compile", "does not match the version used to compile Pytorch", "is only supported on CUDA"),
        why="""A C++/CUDA extension is compiled by the toolkit's nvcc (CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda) against
        torch's headers and libraries, which were built with their own CUDA (torch.version.cuda). torch.utils.cpp_extension stops
        the build when the two are a major version apart (a minor one only warns), apex when they differ at all, and a package
        stops it when nvcc is older than it supports. Two CUDA versions on one machine is the usual cause: a system toolkit
        beside a pip or conda torch built with another, or CUDA_HOME left at an old one. Under pip without --no-build-isolation,
        the torch compared is not the installed one: pip builds in an environment of its own into which it installs the newest
        torch (often for another CUDA).""",
        fix="STEP",
        fields=mismatch_fields,
        context_after=1,
        examples=[
            ("The detected CUDA version (11.8) mismatches the version that was used to compile", "open-mmlab/OpenPCDet#1275 (torch 1.13.1's 11.7 on the next line)"),
            ("      The detected CUDA version (12.2) mismatches the version that was used to compile", "NVIDIA/TransformerEngine#553 (dev3; torch built with 11.7)"),
            ("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries.  "
             "Pytorch binaries were compiled with Cuda 12.1.", "NVIDIA/apex#1748 (nvcc 12.3)"),
            ("      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by running nvcc -V.",
             "Dao-AILab/flash-attention#597"),
        ],
        not_examples=[
            # torch's warning for a minor mismatch: the build goes on (open-mmlab/mmcv#2949)
            "UserWarning: The detected CUDA version (11.5) has a minor version mismatch with the version that was used to compile PyTorch (11.7). Most likely this shouldn't be a problem.",
            "# The detected CUDA version (12.0) mismatches the version that was used to compile PyTorch (11.7).",  # a thread's heading
        ],
    ),
    pattern(
        COMPILER_CRASHED,
        "launcher",
        CAUSE,
        E,
        "the compiler itself crashed while building (an internal compiler error): a bug of that compiler version, or a compile short of memory",
        # gcc (any program it runs, or the file it crashed on) except the kill of the out-of-memory killer (build-out-of-host-memory)
        NOT_HEADING + r"(?:internal compiler error: (?!Killed)(?P<ice>.+)"
        # MSVC's two wordings
        r"|\berror C1001: (?P<msvc>Internal compiler error\.?|An internal error has occurred in the compiler\.?)"
        # nvcc's own programs dying on a signal other than the kill (9)
        r"|'(?P<tool>cicc|ptxas|nvlink|fatbinary|cudafe\+\+)' died due to signal (?P<signal>(?!9\b)\d+)"
        r"|Internal Compiler Error \(codegen\): \"(?P<codegen>[^\"]+)\")",
        ("internal compiler error: ", "C1001", "died due to signal", "Internal Compiler Error (codegen)"),
        why="""The line is the compiler's own report that it crashed (gcc's cc1plus on a segmentation fault, MSVC's C1001, nvcc's
        front end cicc or ptxas dying on a signal): not an error in the code it compiles, and not the GPU. Such crashes are bugs of
        one compiler version met by one source file (huge generated files, nvcc's device-link stub, heavy templates), so another
        version of the compiler builds the same code; a crash that comes and goes under a parallel build is the compile running
        short of memory.""",
        fix="""build with another compiler version: the newest gcc this nvcc supports (CC=gcc-N CXX=g++-N NVCC_CCBIN=/usr/bin/gcc-N;
        CMake: -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-N), a newer CUDA toolkit for a crash of nvcc's own programs (cicc, ptxas), an
        updated Visual Studio for C1001; retry it alone, MAX_JOBS=1 pip install -v --no-build-isolation PACKAGE (CMake: -j 1), to rule
        out memory (free -g; dmesg | grep -i killed); compile for your GPU only (TORCH_CUDA_ARCH_LIST="8.6") to make each compile
        smaller; or install a prebuilt wheel of the package""".replace("\n        ", " "),
        fields=crash_fields,
        examples=[
            ("c++: internal compiler error: Segmentation fault (program cc1plus)", "traveller59/spconv#328 (gcc 7 on a Jetson)"),
            ("/tmp/tmpxft_001a896c_00000000-4_devlink.fatbin.c:47911901: internal compiler error: Segmentation fault",
             "pytorch/pytorch#47412 (heldout32: gcc on nvcc's device-link stub, CUDA 11.1)"),
            (" C:\\projects\\alicevision\\src\\aliceVision\\matching\\kvld\\algorithm.h(122): fatal error C1001: Internal compiler error.",
             "alicevision/AliceVision#778 (CUDA 10 and VS 2019)"),
            ("Error\t13599\terror C1001: An internal error has occurred in the compiler.\te:\\projects\\opensource\\mxnet\\src\\ndarray\\ndarray.cc\t171",
             "apache/mxnet#1407 (Visual Studio's error list)"),
            ("Error: Internal Compiler Error (codegen): \"there was an error in verifying the lgenfe output!\"", "pytorch/pytorch#15630 (nvcc on Windows)"),
            ("nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)", "nvcc's front end crashing"),
        ],
        not_examples=[
            "g++: internal compiler error: Killed (program cc1plus)",  # the out-of-memory killer's kill: build-out-of-host-memory
            "nvcc error   : 'cicc' died due to signal 9 (Kill signal)",
            "Please submit a full bug report,",
        ],
    ),
    pattern(
        INTRINSIC_UNDEFINED,
        "launcher",
        CAUSE,
        E,
        "the CUDA code uses a CUDA intrinsic or API that this compile does not have (the toolkit is older, or the architecture compiled for lacks it)",
        # nvcc's front end (EDG): a device intrinsic (__hadd2, __half22float2, __hmax, __funnelshift_r, __nv_bfloat16), a driver or
        # library API (CUtensorMap, cusparseSpMM); a package's own identifier is the compiler's error of extension-build-failed
        NOT_HEADING + r"error: identifier \"(?P<identifier>__(?:h[a-z]\w*|half\w*|float2half\w*|float22half\w*|float2bfloat\w*|bfloat16\w*|nv_\w+|funnelshift_\w+|"
        r"dp[24]a\w*|ldg\w*|shfl\w*|activemask|reduce_\w+_sync|byte_perm|ll2half\w*|int2half\w*|double2half\w*)|nv_bfloat16\w*|"
        r"cu(?:blas|sparse|solver|rand|fft|dnn)\w+|CU[a-z]\w*|cuda[A-Z]\w+)\" is undefined",
        ("is undefined",),
        why="""nvcc says the code names a CUDA intrinsic or API it does not know here. Device intrinsics exist only from one
        compute capability on (half-precision arithmetic from 5.3, bfloat16 ones from 8.0; cuda_fp16.h and cuda_bf16.h hide them
        below), and only from one CUDA release on (__hmax in CUDA 11, __funnelshift for older toolkits in the next): a build that
        compiles for an older architecture (a default list starting at sm_52, -gencode for an old GPU, TORCH_CUDA_ARCH_LIST) or
        with an older toolkit than the package needs (often a second, older toolkit on PATH or CUDA_HOME) fails on them. The
        code is not at fault on the GPU it was written for.""",
        fix="""nvcc --version against the CUDA the package needs (its README or setup.py), and the architectures the build compiles for
        (arch= in the nvcc command above it): build for your GPU only, export TORCH_CUDA_ARCH_LIST="8.6" (python -c 'import torch;
        print(torch.cuda.get_device_capability())' gives it; CMake: -DCMAKE_CUDA_ARCHITECTURES=86), then rebuild; a toolkit older
        than the package needs: install a newer one and point CUDA_HOME and PATH at it""".replace("\n        ", " "),
        fields=intrinsic_fields,
        examples=[
            ('src/reduce_kernel.h(199): error: identifier "__half22float2" is undefined', "NVIDIA/nccl#9 (compiled for sm_52)"),
            ('/workspace/ByteTransformer/bytetransformer/include/reduce.h(58): error: identifier "__hadd2" is undefined', "bytedance/ByteTransformer#7"),
            ('      /tmp/pip-install-lps8mve2/llama-cpp-python/vendor/llama.cpp/ggml-cuda.cu(626): error: identifier "__hmax2" is undefined',
             "abetlen/llama-cpp-python#1081 (CUDA 11.x)"),
            ('error: identifier "__funnelshift_r" is undefined', "NVIDIA/nccl#637 (heldout32: nvcc 10.1)"),
            ('rotateKernel.cu(40): error: identifier "__hdiv" is undefined', "DerryHub/BEVFormer_tensorrt#92"),
        ],
        not_examples=[
            'csrc/ops.cu(40): error: identifier "scatter_helper" is undefined',  # the package's own name: extension-build-failed quotes it
            "-D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF2_OPERATORS__",
            # ROCm's clang: another toolchain (use of undeclared identifier)
            "/data/llama.cpp/ggml/src/ggml-cuda/common.cuh:365:12: error: use of undeclared identifier '__hmax'; did you mean '__fmax'?",
        ],
    ),
    pattern(
        NVCC_COMMAND,
        "launcher",
        CAUSE,
        E,
        "nvcc refused its own command line: a flag meant for the host compiler, an option this nvcc does not know, or a path split at a space",
        NOT_HEADING + r"nvcc fatal\s*:\s*(?P<refused>A single input file is required for a non-link phase when an output ?file is specified"
        r"|Unknown option '?(?P<option>[^'\s]+)'?|Don't know what to do with '(?P<what>[^']*)')",
        ("nvcc fatal",),
        why="""nvcc stopped before compiling anything: its command line holds what it cannot read. "A single input file is
        required" means it saw more than one input: a path with a space split in two (C:\\Program Files, a user folder with a
        space), or a host compiler's option (MSVC's /EHsc, gcc's -fopenmp) taken for a file; "Unknown option" is a host
        compiler's flag passed to nvcc itself (it belongs after -Xcompiler), or an option of a newer nvcc than this one
        (-generate-dependencies-with-compile needs CUDA 11); "Don't know what to do with" names the word it could not place.
        The build's configuration (setup.py's extra_compile_args, CMake's CUDA flags, a Makefile) wrote that command.""",
        fix="""read the nvcc command line above it: a host compiler's flag passed to nvcc itself (-fopenmp, /EHsc, -Wall) goes after
        -Xcompiler (-Xcompiler -fopenmp) or out of the CUDA flags (setup.py's extra_compile_args['nvcc'], CMAKE_CUDA_FLAGS); an
        option this nvcc is too old for: nvcc --version, and the toolkit the package needs; a path with a space: build from a folder
        without spaces (and a CUDA_HOME without them), or quote it""".replace("\n        ", " "),
        fields=nvcc_fields,
        examples=[
            ("nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified", "CharlesShang/TFFRCNN#131; parallel101/course#27 (/EHsc)"),
            (">   nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified", "NickDarvey/whisper#19 (heldout29b: MSBuild, quoted)"),
            ("nvcc fatal   : Unknown option 'fopenmp'", "flashlight/flashlight#488; AlexeyAB/darknet#3314"),
            ("nvcc fatal   : Unknown option '-generate-dependencies-with-compile'", "levihsu/OOTDiffusion#65 (nvcc 10; 11 works)"),
        ],
        not_examples=[
            "nvcc fatal   : Unsupported gpu architecture 'compute_89'",  # build-gpu-arch-unsupported
            "nvcc warning : incompatible redefinition for option 'compiler-bindir', the last value of this option was used",
            "nvcc fatal   : Cannot find compiler 'cl.exe' in PATH",  # msvc-compiler-not-found
        ],
    ),
    pattern(
        CXX_STANDARD,
        "launcher",
        CAUSE,
        E,
        "torch's headers need a newer C++ standard than the build compiles them with",
        NOT_HEADING + r"#error:?\s+(?:C\+\+(?P<std>\d\d) or later compatible compiler is required to use (?P<library>PyTorch|ATen|c10)|You need C\+\+(?P<std2>\d\d) to compile PyTorch)",
        ("compatible compiler is required to use", "to compile PyTorch"),
        why="""torch's C++ headers (torch/extension.h, ATen, c10) check the language standard they are compiled as: C++17 since torch
        2.1, C++14 before. A build that compiles them as an older one stops at the first: a package's setup.py or CMakeLists
        written for an older torch (-std=c++14, set(CMAKE_CXX_STANDARD 14)), or a compiler too old for the standard (gcc before 7
        for C++17). The torch installed is newer than the build it is used with.""",
        fix="""compile as C++17 (torch 2.1 and newer): setup.py extra_compile_args={'cxx': ['-std=c++17'], 'nvcc': ['-std=c++17']}, CMake
        set(CMAKE_CXX_STANDARD 17) and set(CMAKE_CUDA_STANDARD 17), MSVC /std:c++17; or build the package's newer release, made for
        this torch, or use the torch it names; gcc --version: gcc 9 or newer""".replace("\n        ", " "),
        fields=standard_fields,
        examples=[
            ("/public/home/miniconda3/envs/oneformer3d/lib/python3.8/site-packages/torch/include/torch/csrc/api/include/torch/all.h:4:2: error: #error C++17 or later "
             "compatible compiler is required to use PyTorch.", "Karbo123/segmentator#13"),
            ("libtorch/include/ATen/ATen.h:4:2: error: #error C++17 or later compatible compiler is required to use ATen.", "Cambridge-ICCS/FTorch#34"),
            ("C:\\libtorch\\include\\c10/macros/Macros.h(4): fatal error C1189: #error:  You need C++17 to compile PyTorch", "pytorch/pytorch.github.io#1794 (MSVC)"),
        ],
        not_examples=["[3/8] c++ -MMD -MF x.o.d -std=c++17 -c csrc/cxx17_compat.cpp -o x.o"],
    ),
    pattern(
        NINJA_MISSING,
        "launcher",
        CAUSE,
        E,
        "torch's just-in-time build of a C++/CUDA extension needs ninja, and it is not installed (or not on PATH)",
        NOT_HEADING + r"Ninja is required to load C\+\+ extensions",
        ("Ninja is required",),
        why="""torch.utils.cpp_extension.load() (DeepSpeed's ops, a project's custom kernels compiled at first use) builds with
        ninja and first checks that `ninja --version` runs. Here it did not: ninja is not installed in the environment that runs
        the program, or its bin folder (the environment's) is not on PATH, as when a notebook or IDE starts Python from an
        environment it did not activate.""",
        fix="""pip install ninja in the environment that runs the program, then `ninja --version` must print a version from that
        environment (which ninja; python -m ninja --version); the program's first run then builds the extension""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Ninja is required to load C++ extensions", "CSAILVision/unifiedparsing#12; sicxu/Deep3DFaceRecon_pytorch#35"),
            ("> RuntimeError: Ninja is required to load C++ extensions", "unlimblue/KNN_CUDA#14 (quoted)"),
        ],
        not_examples=[
            # setuptools' build without ninja goes on with the slow backend (open-mmlab/mmcv#1483)
            "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. Falling back to using the slow distutils backend.",
        ],
    ),
    pattern(
        ISOLATED_BUILD,
        "launcher",
        CAUSE,
        E,
        "the package's build imports a module (torch, most often) that pip's or uv's isolated build environment does not have",
        # uv's own hint; pip's ModuleNotFoundError under its build hook is told by knowledge/story.py `refine`
        r"hint: This error likely indicates that `(?P<package>[^`@]+)(?:@[^`]*)?` depends on `(?P<dependency>[^`]+)`, but doesn't declare it as a build dependency",
        ("doesn't declare it as a build dependency",),
        why="""pip and uv build a package from source in a fresh environment of their own (build isolation) holding only what its
        pyproject.toml declares for the build. Packages with CUDA code (flash-attn, apex, xformers, DeepSpeed, mamba-ssm) import
        torch in their setup.py to find its headers and CUDA, and many do not declare it: in that environment torch is not there,
        whatever the user's environment holds. Installing torch first does not help while the build stays isolated.""",
        fix="""install torch first (the build for your CUDA), then build against it: pip install --no-build-isolation PACKAGE (uv pip
        install --no-build-isolation PACKAGE; for requirements files, install torch in an earlier step); or install a prebuilt wheel
        of PACKAGE made for your Python, torch and CUDA (its release page)""".replace("\n        ", " "),
        fields=isolated_fields,
        examples=[
            ("hint: This error likely indicates that `flash-attn@2.8.1` depends on `torch`, but doesn't declare it as a build dependency. If `flash-attn` is a "
             "first-party package, consider adding `torch` to its `build-system.requires`. Otherwise, `uv pip install torch` into the environment and re-run "
             "with `--no-build-isolation`.", "whyNLP/LCKV#17 (uv)"),
        ],
        not_examples=["ModuleNotFoundError: No module named 'torch'"],  # a run's own import: module-not-found (pip's build hook decides)
    ),
    pattern(
        NO_DISTRIBUTION,
        "launcher",
        CAUSE,
        E,
        "pip found no release of a requirement that it can install here",
        # (pip 20.3 left out the versions it found; "(unavailable)", "(from -r requirements.txt (line 3))" may stand before them; a paste may
        # cut the list)
        NOT_HEADING + r"(?:ERROR: )?Could not find a version that satisfies the requirement (?P<requirement>[^\s)]+)"
        r"(?: \((?!from versions)(?:[^()]|\([^()]*\))*\))*(?: \(from versions: (?P<versions>[^)]*)\)?)?"
        r"|^(?:ERROR: )?No matching distribution found for (?P<nodist>\S+)",
        ("Could not find a version that satisfies the requirement", "No matching distribution found for"),
        why="""pip looked at the index (PyPI, or the --index-url given) for a release of the requirement that fits this
        interpreter and platform, and found none. The list in "(from versions: ...)" is what it found: "none" means no release has
        a file for this Python and platform (a package without wheels for Windows, macOS or the newest Python), or the index was not
        reached at all (a proxy, no network: pip's warnings above it say so); versions listed without the one asked mean it is on
        another index (torch's +cu121 builds are on download.pytorch.org, not PyPI) or needs another Python (pip's "Ignored the
        following versions that require a different python version" above it).""",
        fix="STEP",
        fields=distribution_fields,
        context_before=12,
        fields_before=versions_before,
        examples=[
            ("ERROR: Could not find a version that satisfies the requirement torch==2.3.1+cu121 (from versions: 1.11.0, 1.12.0, 2.3.0, 2.3.1, 2.4.0)",
             "wusongbai139/controlnet_train_webUI#1"),
            ("ERROR: Could not find a version that satisfies the requirement flash-attn (from versions: none)", "haotian-liu/LLaVA#1165 (the index not reached)"),
            ("ERROR: Could not find a version that satisfies the requirement onnxruntime>=1.14.1 (from chromadb) (from versions: none)",
             "PromptEngineer48/Ollama#5 (releases for other Pythons)"),
            ("ERROR: No matching distribution found for accuweather==2.1.1", "Pastlecry/FireLemon#3"),
        ],
        not_examples=[
            "# ERROR: No matching distribution found for flash-attn==2.6.3+cu123torch2.4cxx11abifalse",  # a thread's heading
            "Requirement already satisfied: torch in /usr/lib/python3/dist-packages (2.3.0)",
        ],
    ),
    pattern(
        CONFLICT,
        "launcher",
        CAUSE,
        E,
        "pip's resolver found no set of versions that satisfies every requirement together",
        r"^(?:ERROR: )?Cannot install (?P<install>.+?) because these package versions have conflicting dependencies"
        r"|^(?:ERROR: )?ResolutionImpossible\b|" + NOT_HEADING + r"No solution found when resolving dependencies",
        ("conflicting dependencies", "ResolutionImpossible", "No solution found when resolving dependencies"),
        why="""Two requirements ask for the same package in versions that exclude each other (a pinned torch against a package that
        pins another torch, as vllm, xformers and flash-attn wheels do), so nothing was installed. pip's lines after it ("The
        conflict is caused by:") and uv's ("Because ... we can conclude that your requirements are unsatisfiable") name each
        requirement and what it asks.""",
        fix="""read "The conflict is caused by:" (uv: the "Because ..." lines): change the pin you control to one every package
        accepts (the torch the other package pins, or a release of that package made for your torch), or drop the pin and let pip
        choose; install the packages that cannot agree in separate environments""".replace("\n        ", " "),
        fields=conflict_fields,
        context_after=8,
        examples=[
            ("ERROR: Cannot install -r requirements.txt (line 1), -r requirements.txt (line 2) and torch==2.1.1 because these package versions have conflicting dependencies.",
             "NineAbyss/S2R#2 (vllm 0.5.4 pins torch==2.4.0)"),
            ("ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts", "pip's last line"),
            ("  × No solution found when resolving dependencies:", "uv's wording"),
        ],
        not_examples=[
            # pip's note after an install that went through: a warning about the environment, not this
            "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.",
        ],
    ),
    pattern(
        INSTALLED_CONFLICT,
        "launcher",
        CAUSE,
        Severity.WARN,
        "pip installed what it was asked, and left a package whose requirement the environment now breaks",
        # the lines under pip's note "pip's dependency resolver does not currently take into account all the packages that are installed"
        NOT_HEADING + r"(?P<dependent>[\w.\-]+) (?P<dependent_version>\S+) requires (?P<requirement>[^,]+), but you have (?P<installed>[\w.\-]+) "
        r"(?P<installed_version>\S+) which is incompatible",
        ("which is incompatible",),
        why="""pip installs the requirements it was given and does not re-check the packages already in the environment; after the
        install it lists those whose requirements are now broken (its note "pip's dependency resolver does not currently take into
        account all the packages that are installed"). The install went through: whether the run fails depends on whether that
        package is used, and where it is, its errors come later (an ImportError, an undefined symbol, an API that moved). A
        torch replaced by another version under a package compiled against it (vllm, xformers, flash-attn, torchvision) is the
        usual case in GPU environments.""",
        fix="STEP",
        fields=installed_conflict_fields,
        examples=[
            ("vllm 0.6.3 requires torch==2.4.0, but you have torch 2.2.0 which is incompatible.", "PRIME-RL/SimpleVLA-RL#53"),
            ("xformers 0.0.22 requires torch==2.0.1, but you have torch 2.3.0 which is incompatible.", "allenai/open-instruct#172"),
        ],
        not_examples=["Requirement already satisfied: torch>=2.0 in /usr/lib/python3/dist-packages (2.3.0)"],
    ),
]


def no_distribution_said(fields: dict) -> tuple[str, str]:
    """(what the title adds, the fix): what the lines around pip's "Could not find a version" decide (its fields and
    `versions_before`'s, read after the line's own: knowledge/story.py)."""
    requirement = str(fields.get("requirement", "PACKAGE"))
    said, step = no_distribution_case(fields, requirement, str(fields.get("versions", "")))
    return f"{requirement} ({said})", step


def no_distribution_case(fields: dict, requirement: str, versions: str) -> tuple[str, str]:
    if fields.get("no_index"):
        return "no connection to the index: pip's warnings before it", (f"pip did not reach the index ({fields['no_index']}): check the network and proxy (pip config list; --proxy; a mirror in "
                f"--index-url), then pip install '{requirement}' again")
    local = re.search(r"\+(cu\d+|cpu|rocm[\d.]+)", requirement)
    if local:
        return f"a +{local[1]} build: on PyTorch's index, not PyPI", (f"builds with a +{local[1]} tag are on PyTorch's index, not PyPI: pip install '{requirement}' --index-url {INDEX}{local[1]} "
                "(or --extra-index-url for a requirements file)")
    if fields.get("python_ignored"):
        return "its releases need another Python (Requires-Python)", (f"its releases need another Python (pip's line above: {fields['python_ignored'][:100]}): python --version; create the "
                "environment with a Python they support (python -m venv, conda create python=3.X), or pin a release that supports yours")
    if versions.strip() == "none":
        return "from versions: none", ("no release of it has a file for this Python and platform (python --version; pip debug --verbose lists the tags pip "
                "accepts): the package's install page names the Pythons and systems it ships wheels for (flash-attn, triton, DeepSpeed "
                "have none for some); use one of those, or install it from its source or release page")
    if not versions:
        name = re.split(r"[=<>~!;\[ ]", requirement)[0]
        return "pip does not list what it found", (f"pip index versions {name} lists the releases the index has, "
                                                   "and pip install -v why each file was skipped: pin one of them, use a Python and platform they "
                                                   "ship files for, or point pip at the index that has it (--index-url / --extra-index-url)")
    if not re.search(r"[=<>~!]", requirement):
        return "releases there, none that fits here", ("the index has releases of it, but none with a file for this Python and platform, or "
                                                       "none that the other requirements allow: pip install -v lists why each file was skipped; "
                                                       "the package's install page names the Pythons, systems (and for a CUDA package the torch "
                                                       "and CUDA) each release ships wheels for; use one of those, or build it from source")
    return "not among the versions the index has", (f"the version asked is not among those the index has (from versions: {versions[:120]}): pin one of them, or point pip at the "
            "index that has it (--index-url / --extra-index-url)")


# pip's (and build's) hook that runs a package's build in its isolated environment: a frame of it in a traceback says the
# exception was raised while pip prepared the build, not by the program
BUILD_HOOK = re.compile(r"pyproject_hooks[/\\]_in_process|pep517[/\\]in_process|[/\\]pip-build-env-[^/\\]+[/\\]")
BUILD_HOOK_FUNCS = ("get_requires_for_build_wheel", "get_requires_for_build_editable", "prepare_metadata_for_build_wheel",
                    "prepare_metadata_for_build_editable", "build_wheel", "build_editable")


def under_build_hook(frames) -> bool:
    """Whether a traceback's frames (knowledge/signs.py `Frame`s) run inside pip's build of a package from source."""
    return any(BUILD_HOOK.search(f.path) or f.func in BUILD_HOOK_FUNCS for f in frames)


def isolated_detail(module: str) -> str:
    return f"{module} (not found under pip's build hook)"
