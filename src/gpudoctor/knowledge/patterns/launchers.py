"""What the launchers built on torch (DeepSpeed's runner, accelerate) refuse before any
training starts: a node they cannot reach over ssh, a CUDA toolkit they need to build
their ops. The launcher's own traceback follows; the fix is in the environment."""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern
from gpudoctor.knowledge.patterns.builds import CAUSES as BUILD_LINE_CAUSES

E = Severity.ERROR

# The findings that name why a build of GPU code failed from its own error line (the toolkit not found, the architecture, the
# host compiler, a header or library missing, the host's memory): where the log shows one, `extension-build-failed`'s wrapper
# lines are its consequence
BUILD_CAUSES = ("cuda-toolkit-missing", "deepspeed-cuda-home-missing", "msvc-compiler-not-found", "build-gpu-arch-unsupported",
                "build-out-of-host-memory", "build-dependency-missing", "build-host-compiler-unsupported", *BUILD_LINE_CAUSES)
WRAPPER = "extension-build-failed"
# The findings whose title gives what the line names and whose fix is the step it decides (knowledge/story.py)
DETAIL_SAID = (WRAPPER,)
WRAPPER_FIX = """nvcc --version, echo $CUDA_HOME and python -c 'import torch; print(torch.__version__, torch.version.cuda)' must agree: install
        the CUDA toolkit of torch's CUDA version and point CUDA_HOME at it; better, install a prebuilt wheel made for your Python,
        torch and CUDA (the package's release page, or a container that ships it); else rebuild verbosely with fewer jobs,
        MAX_JOBS=4 pip install -v --no-build-isolation PACKAGE 2>&1 | tee build.log, and read the first `error:` line; for a build at
        first use: rm -rf ~/.cache/torch_extensions, or prebuild it: DS_BUILD_FUSED_ADAM=1 pip install deepspeed --no-cache-dir""".replace("\n        ", " ")


def wrapper_fields(m: re.Match, context: list[str]) -> dict:
    """What the line is: the compiler's own error (it names the reason: quoted), a package's own check, or a wrapper that
    only says the build failed (`wrapper`: the story tells a later line of the compiler's own instead, knowledge/story.py
    `record`), and the step each decides."""
    out = groups(m, context)
    if out.get("compiler_error"):
        where = m.string[: m.start("compiler_error")].strip().rstrip(":").strip(" >'\"")[-120:]
        error = " ".join(out["compiler_error"].split())[:160]
        out["detail"] = f'the compiler\'s first error, "{error}"'
        out["step"] = (f"the compiler stopped at {where}: that code does not compile against what is installed here, in other versions "
                       "than it was written for (the CUDA toolkit's headers, torch's, the compiler, a library such as pybind11 or cuDNN); "
                       f"{WRAPPER_FIX.split('; else ')[0]}; or build the package's release whose requirements (README, setup.py) name the torch "
                       "and CUDA installed here; the package's issues for the quoted line name the version that fixed it")
        return out
    if out.get("requested") or out.get("optimizer"):
        out["step"] = WRAPPER_FIX  # a package's own check, or DeepSpeed's op without its build: the line says what
        return out
    out["wrapper"] = True
    shown = f"\"{' '.join(m.group(0).split())[:100]}\""
    out["detail"] = (f"only its wrapper shows ({shown}): the build's own first error decides why (the compiler's first `error:` line, or "
                     "the exception its setup.py raised), and no line here that gpudoctor reads is it")
    out["step"] = ("the build's own first error decides why: the compiler's first `error:` line (above ninja's FAILED line, inside pip's "
                   "output box) or the exception setup.py raised; where the paste does not hold it, rerun with the whole output, "
                   "MAX_JOBS=4 pip install -v --no-build-isolation PACKAGE 2>&1 | tee build.log, and read it there; meanwhile: " + WRAPPER_FIX)
    return out

PATTERNS = [
    pattern(
        "deepspeed-host-unreachable-ssh",
        "launcher",
        CAUSE,
        E,
        "the DeepSpeed runner could not reach a host of its hostfile over passwordless ssh",
        r"host=(?P<host>\S+) was not reachable via ssh|Command 'ssh -o PasswordAuthentication=no (?P<host2>\S+) hostname' returned non-zero exit status (?P<status>\d+)",
        ("reachable via ssh", "PasswordAuthentication=no"),
        why="""With a hostfile the deepspeed launcher starts the other nodes' ranks over ssh (pdsh) and first checks
        `ssh HOST hostname` without a password; exit status 255 is ssh itself failing: no key authorised on that
        host, a wrong host name or port, or a firewall. A single-node run with a leftover hostfile fails the same way.""",
        fix="ssh -o PasswordAuthentication=no HOST hostname   # must print the name: ssh-copy-id HOST (and --ssh_port if not 22); one node: drop --hostfile",
        examples=[
            ("RuntimeError: Using hostfile at /home/552/dz9214/hostfile but host=gadi-gpu-v100-0011 was not reachable via ssh. If you are running with a single node please remove /home/552/dz9214/hostfile or setup passwordless ssh.", "hpcac/2023-APAC-HPC-AI#1"),
            ("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned non-zero exit status 255.", "deepspeedai/DeepSpeed#4907"),
        ],
        not_examples=["[INFO] [runner.py:283:main] Using IP address of 192.168.2.57 for node 192.168.2.57"],
        fields=groups,
    ),
    pattern(
        "ssh-auth-failed",
        "launcher",
        CAUSE,
        E,
        "a multi-node launcher could not log in to another node over ssh",
        r"(?:on (?P<host>[\w.\-]+), is localhost: \w+, exception: )?"
        r"(?:No authentication methods available|not a valid (?:RSA|DSA|EC|OPENSSH) private key file"
        r"|Permission denied \((?:publickey|gssapi)[^)]*\))",
        ("No authentication methods available", "private key file", "Permission denied ("),
        why="""Launchers that start the other nodes' ranks themselves (colossalai run, DeepSpeed's pdsh runner,
        mpirun, accelerate's multinode launcher) log in to each host of the hostfile over ssh without a
        password. That login failed: no key this user can offer is authorised on that host (no
        ~/.ssh/authorized_keys entry, a key only root or another user has), or the private key is in a format
        the launcher's ssh library cannot read (paramiko, used by colossalai run, reads only PEM keys, not the
        OPENSSH format that newer ssh-keygen writes). The ranks of that node never start.""",
        fix="from the launching node, as the same user: ssh -o PasswordAuthentication=no HOST hostname   # must print the name; else ssh-copy-id HOST; for paramiko-based launchers (colossalai run) use a PEM key: ssh-keygen -p -m PEM -f ~/.ssh/id_rsa",
        examples=[
            (
                "Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --rdzv_backend=c10d --rdzv_endpoint=ip:29501 --rdzv_id=colossalai-default-job train.py --strategy colossalai_zero2 on gpu-1648, is localhost: False, exception: No authentication methods available",
                "hpcaitech/ColossalAI#3066",
            ),
            (
                "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11 --master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA private key file",
                "hpcaitech/ColossalAI#5213",
            ),
            ("10.0.0.2: user@10.0.0.2: Permission denied (publickey,gssapi-keyex,gssapi-with-mic).", "OpenSSH's refusal as pdsh prefixes it (DeepSpeed multi-node threads)"),
        ],
        not_examples=[
            # the same launcher failing on the local host for another reason: not an ssh login
            "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=0 train.py on 127.0.0.1, is localhost: True, exception: I/O operation on closed file",
            # a file the job cannot open: permission, not ssh
            "PermissionError: [Errno 13] Permission denied: '/data/ckpt/latest'",
        ],
        fields=groups,
    ),
    pattern(
        "deepspeed-cuda-home-missing",
        "launcher",
        CAUSE,
        E,
        "DeepSpeed needs the CUDA toolkit (nvcc, CUDA_HOME) to build its ops, and found none",
        r"CUDA_HOME does not exist, unable to compile CUDA op\(s\)",
        ("CUDA_HOME does not exist",),
        why="""DeepSpeed compiles its CUDA ops (fused Adam, CPU Adam, quantizers) just in time, or checks for them
        at import, with the CUDA toolkit: the driver and torch's bundled CUDA runtime are not enough. CUDA_HOME
        is unset and no nvcc is found (a pip-only or conda environment without the toolkit).""",
        fix="install the CUDA toolkit matching torch.version.cuda (conda install -c nvidia cuda-toolkit, or the system package) and export CUDA_HOME=/usr/local/cuda (the directory with bin/nvcc)",
        examples=[
            ("deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)", "thinhlpg/vixtts-demo#12"),
            ('AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)', "enhuiz/vall-e#78"),
        ],
        not_examples=["export CUDA_HOME=/usr/local/cuda-12.1"],
    ),
    pattern(
        "deepspeed-batch-size-mismatch",
        "launcher",
        CAUSE,
        E,
        "DeepSpeed's batch sizes do not multiply up: train_batch_size != micro batch x accumulation x world size",
        r"train_batch_size is not equal to micro_batch_per_gpu \* gradient_acc_step \* world_size ?(?P<train>\d+) != (?P<micro>\d+) \* (?P<accumulation>\d+) \* (?P<world_size>\d+)",
        ("train_batch_size is not equal to",),
        why="""DeepSpeed checks train_batch_size == train_micro_batch_size_per_gpu x gradient_accumulation_steps x
        world_size. A config with fixed numbers breaks when the number of GPUs changes, and a world_size of 1
        while several GPUs run means the processes were not started as one job (python instead of deepspeed /
        torchrun, or the process group created after DeepSpeed read its config).""",
        fix='set the batch sizes to "auto" in the DeepSpeed config (with the HF Trainer/accelerate), or make train_batch_size = micro x accumulation x number of GPUs; start with deepspeed/torchrun so world_size is right',
        examples=[
            ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 * 1", "bigcode-project/starcoder#41"),
            ("[rank0]: AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 8 != 2 * 1 * 1", "deepspeedai/DeepSpeed#6914"),
        ],
        not_examples=['"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto"'],
        fields=groups,
    ),
    # The build's own error line decides why a build of GPU code failed (diagE31, issue 35): these name the cause where the
    # line is one of the compiler's or toolkit's own, before `extension-build-failed`, whose wrapper lines (setuptools' "command
    # '.../nvcc' failed", ninja's CalledProcessError, pip's "Failed building wheel") are then told as their consequence.
    pattern(
        "build-gpu-arch-unsupported",
        "launcher",
        CAUSE,
        E,
        "the build asked for a GPU architecture that its CUDA toolkit (nvcc) or its own build scripts do not know: the toolkit is older than that architecture, or TORCH_CUDA_ARCH_LIST names one it cannot read",
        r"nvcc fatal\s*:\s*Unsupported gpu architecture '(?P<arch>[\w ]+)'?"
        r"|nvcc fatal\s*:\s*Value '(?P<value>\w+)' is not defined for option 'gpu-(?:architecture|name)'"
        r"|Unknown CUDA arch \((?P<arch_list>[^)]*)\) or GPU not supported"
        # CMake's FindCUDA (torch's own source build, its cmake/Modules_CUDA_fix) given a name it does not know
        r"|Unknown CUDA Architecture Name (?P<arch_name>\S+) in CUDA_SELECT_NVCC_ARCH_FLAGS",
        ("Unsupported gpu architecture", "for option 'gpu-architecture'", "for option 'gpu-name'", "Unknown CUDA arch (", "Unknown CUDA Architecture Name"),
        why="""A CUDA extension is compiled for the GPU architectures the build names (torch.utils.cpp_extension takes them from
        TORCH_CUDA_ARCH_LIST, else from the GPUs it sees; a package's setup.py or CMake may name its own, -gencode
        arch=compute_XX). nvcc knows only the architectures of its own release: compute_75 needs CUDA 10.0, compute_80 11.0,
        compute_86 11.1, compute_89 and compute_90 11.8, compute_90a 12.0, compute_100 and compute_120 12.8. An older toolkit
        (often not the one torch was built with: an old /usr/local/cuda, or CUDA_HOME pointing at it) stops at the first one it does
        not know; torch's own check refuses an entry of TORCH_CUDA_ARCH_LIST it cannot read ("Unknown CUDA arch"). No kernel was
        built: the GPU itself is not at fault, and nothing ran on it.""",
        fix="""nvcc --version against the architecture named (compute_89/compute_90 need CUDA 11.8+, compute_90a 12.0+, compute_100/compute_120
        12.8+): install the CUDA toolkit of torch.version.cuda (or newer) and point CUDA_HOME and PATH at it; or build only for the GPU
        you have, in a form this nvcc knows: export TORCH_CUDA_ARCH_LIST="8.6" (python -c 'import torch; print(torch.cuda.get_device_capability())'
        gives it), then pip install -v --no-build-isolation PACKAGE""".replace("\n        ", " "),
        examples=[
            ("nvcc fatal   : Unsupported gpu architecture 'compute_89'", "facebookresearch/3detr#59 (an RTX 4090, CUDA 11.5's nvcc)"),
            ("nvcc fatal   : Unsupported gpu architecture 'compute_75'", "csuhan/s2anet#44 (CUDA 9.2's nvcc)"),
            ("nvcc fatal   : Unsupported gpu architecture 'compute_61", "ucbdrive/few-shot-object-detection#11 (the quote cut)"),
            ("ValueError: Unknown CUDA arch (8.9+PTX) or GPU not supported", "torch.utils.cpp_extension._get_cuda_arch_flags' check of TORCH_CUDA_ARCH_LIST"),
            ("  Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS",
             "pytorch/pytorch#113948 (heldout32: autodetected 9.0a; TORCH_CUDA_ARCH_LIST=\"8.0 8.6 8.9 9.0\" built it)"),
            ("nvcc fatal   : Value 'sm_30' is not defined for option 'gpu-name'", "pytorch/pytorch#85618 (heldout32, quoted: CUDA 11.7 asked for sm_30)"),
        ],
        not_examples=[
            # nvcc's notice while building for old architectures: the build goes on
            "nvcc warning : The 'compute_35', 'compute_37', 'sm_35', and 'sm_37' architectures are deprecated, and may be removed in a future release",
            # the run's error for a binary built without the GPU's architecture: a runtime sibling (cuda-no-kernel-image)
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ],
        fields=groups,
    ),
    pattern(
        "build-out-of-host-memory",
        "launcher",
        CAUSE,
        E,
        "the build ran out of host memory: the system killed a compiler process (more parallel compile jobs than this machine's RAM holds)",
        r"fatal error: Killed signal terminated program (?P<program>[\w+-]+)"
        r"|internal compiler error: Killed \(program (?P<killed>[\w+-]+)\)"
        r"|'(?P<tool>cicc|ptxas|nvlink|fatbinary|cudafe\+\+)' died due to signal 9",
        ("Killed signal terminated program", "internal compiler error: Killed", "died due to signal 9"),
        why="""Compiling CUDA code takes several GB of host memory per compile (flash-attn's, xformers' and vLLM's kernels more), and
        the build runs one compile per CPU core at once (ninja's default; MAX_JOBS sets it). When they do not fit in the RAM (or
        the container's memory limit), the kernel's out-of-memory killer ends a compiler process with signal 9: gcc says "Killed
        signal terminated program cc1plus", nvcc "'cicc' died due to signal 9". The code is not at fault: the same build with fewer
        jobs, or more memory, succeeds.""",
        fix="""MAX_JOBS=2 pip install -v --no-build-isolation PACKAGE (MAX_JOBS=1 if it is killed again; for CMake builds:
        cmake --build . -j 2, CMAKE_BUILD_PARALLEL_LEVEL=2); free -g and dmesg | grep -i 'killed process' show the memory and the
        kill; add swap or raise the container's memory limit; or install a prebuilt wheel of the package for your torch and CUDA""".replace("\n        ", " "),
        examples=[
            ("c++: fatal error: Killed signal terminated program cc1plus", "a compile killed by the out-of-memory killer (gcc's wording)"),
            ("nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "NVIDIA/cudf#8018; microsoft/onnxruntime#18579 (flash-attention kernels)"),
            ("g++: internal compiler error: Killed (program cc1plus)", "gcc's older wording of the same kill"),
        ],
        not_examples=[
            "ninja: build stopped: subcommand failed.",  # ninja's own line: a consequence, not why
            "nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)",  # a crash of nvcc itself, not memory
        ],
        fields=groups,
    ),
    pattern(
        "build-dependency-missing",
        "launcher",
        CAUSE,
        E,
        "the build could not find a header or library it compiles against (the CUDA toolkit's development files, cuDNN, NCCL, Python's headers)",
        r"fatal error: (?P<header>[\w./+-]+\.(?:h|hpp|cuh)): No such file or directory"
        r"|fatal error C1083: Cannot open include file: '(?P<include>[^']+)': No such file or directory"
        r"|\bld(?:\.\w+)?: (?:error: )?cannot find -l(?P<library>[\w.+-]+)"
        r"|LNK1181: cannot open input file '(?P<libfile>[^']+)'",
        ("No such file or directory", "cannot find -l", "LNK1181"),
        why="""A C++/CUDA extension compiles against headers and links against libraries that are not in the Python package: the CUDA
        toolkit's development files (cuda_runtime.h, cusparse.h, cublas_v2.h, libcudart), cuDNN's and NCCL's, and Python's own
        (Python.h). torch's headers include the toolkit's (ATen/cuda/CUDAContext.h includes cusparse.h), so a build finds none of them
        when CUDA_HOME names no toolkit or one without them: a runtime-only container image, the pip wheels nvidia-*-cu12 (libraries,
        not a toolkit), a conda environment with cudatoolkit (runtime) instead of cuda-toolkit, a distribution's toolkit without
        its -dev packages. The file the compiler names decides which is missing.""",
        fix="""find / -name FILE 2>/dev/null for the file named: a CUDA header or library (cuda_runtime.h, cusparse.h, cublas_v2.h, -lcudart):
        install the CUDA toolkit of torch.version.cuda with its development files (a -devel container image, the toolkit installer, conda
        install -c nvidia cuda-toolkit=X.Y, apt install cuda-cusparse-dev-X-Y) and export CUDA_HOME=/usr/local/cuda-X.Y (the folder with
        include/ and lib64/); Python.h: apt install python3.X-dev (the Python of the environment); cudnn.h / nccl.h: the cuDNN / NCCL
        development packages, or CUDNN_INCLUDE_DIR / NCCL_INCLUDE_DIR pointing at them""".replace("\n        ", " "),
        examples=[
            ("/usr/local/lib/python3.6/dist-packages/torch/include/ATen/cuda/CUDAContext.h:12:10: fatal error: cusparse.h: No such file or directory",
             "MVIG-SJTU/AlphaPose#522; NVlabs/ODISE#14; microsoft/TRELLIS#195"),
            ("torchsparse/src/torchsparse_bindings_gpu.cpp:1:10: fatal error: cublas_v2.h: No such file or directory", "mit-han-lab/torchsparse#13"),
            ("src/module.c:1:10: fatal error: Python.h: No such file or directory", "a build without the Python headers (python3-dev)"),
            ("/usr/bin/ld: cannot find -lcudart: No such file or directory", "a link without the toolkit's lib64"),
            ("C:\\src\\ext.cpp(3): fatal error C1083: Cannot open include file: 'cuda_runtime.h': No such file or directory", "MSVC's wording"),
        ],
        not_examples=[
            # CMake's probes: the configure step looks for optional things and goes on
            "-- Looking for pthread_create in pthreads - not found",
            "-- Could NOT find CUDNN (missing: CUDNN_INCLUDE_DIR)",
            "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",  # a program's file, not a build's
        ],
        fields=groups,
    ),
    pattern(
        "build-host-compiler-unsupported",
        "launcher",
        CAUSE,
        E,
        "the host C++ compiler is one this CUDA toolkit does not support: nvcc's own version check stopped the build",
        r"unsupported GNU version! gcc versions later than (?P<gcc_max>\d+) are not supported"
        r"|unsupported (?P<msvc>Microsoft Visual Studio) version"
        r"|unsupported clang version! clang version must be less than (?P<clang_max>\d+)",
        ("unsupported GNU version", "unsupported Microsoft Visual Studio version", "unsupported clang version"),
        why="""nvcc compiles the host side of CUDA code with the system's C++ compiler (gcc, clang, or MSVC's cl.exe on Windows), and
        each CUDA release supports only the compilers of its time: its header crt/host_config.h stops the build with #error when the
        compiler is newer (a distribution upgrade brings gcc 12 or 13 beside CUDA 11.x; a new Visual Studio beside an older
        toolkit). The code and the GPU are not at fault.""",
        fix="""build with a compiler this nvcc supports: install the gcc the message allows (gcc versions later than N are not: apt install
        gcc-N g++-N) and export CC=gcc-N CXX=g++-N NVCC_CCBIN=/usr/bin/gcc-N (CMake: -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-N), or
        install a newer CUDA toolkit that supports this compiler; on Windows, the Visual Studio release the toolkit names (its Build
        Tools, from its x64 Native Tools prompt), or a newer toolkit; -allow-unsupported-compiler only silences the check""".replace("\n        ", " "),
        examples=[
            ("/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported!",
             "nvcc's check of the host compiler (a gcc too new for this CUDA toolkit)"),
            ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.3\\include\\crt/host_config.h(160): fatal error C1189: #error:  -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2019 (inclusive) are supported!",
             "MSVC's wording of the same check"),
        ],
        not_examples=[
            "nvcc warning : The -allow-unsupported-compiler flag is set",
            "-- The CXX compiler identification is GNU 13.2.0",  # CMake's probe names the compiler; the build goes on
        ],
        fields=groups,
    ),
    pattern(
        "extension-build-failed",
        "launcher",
        CAUSE,
        E,
        "a package's C++/CUDA extension failed to build (a pip/uv install from source, or compiled at first use)",
        # one rule for the family: torch.utils.cpp_extension's just-in-time build (DeepSpeed ops), pip's wheel build of a
        # package with CUDA code (flash-attn, TransformerEngine, apex, horovod), the setup.py checks that stop such a build
        # before it starts, and ninja's / setuptools' own failure lines (often the last line of a cut paste)
        r"Error building extension '(?P<extension>[\w.]+)'|CalledProcessError: Command '\['ninja', '-v'(?:, '-j', '\d+')?\]' returned non-zero exit status"
        r"|Failed building wheel for (?P<package>[\w.\-]+)|Building wheel for (?P<wheel>[\w.\-]+) \([\w.]+\) (?:\.\.\. error|did not run successfully)"
        r"|python setup\.py (?P<step>bdist_wheel|egg_info|build_ext|develop|install) did not run successfully"
        r"|(?P<requested>\w+) was requested, but nvcc was not found"
        r"|(?P<objects>Error compiling objects for extension)"
        # the compiler's own error line, which names the reason (nvcc and MSVC: file(line): error ...; gcc: file:line:col: error: ...)
        r"|\.(?:cu|cuh|h|hpp|cpp|cc|cxx|c)(?:\(\d+\)|:\d+:\d+): (?P<compiler_error>(?:fatal )?error(?: C\d{4})?: .+)"
        r"|^\s*FAILED: \S+\.(?:o|obj)\s*$|error: command '(?P<compiler>[^']*(?:nvcc|gcc|g\+\+|c\+\+|cl\.exe))' failed with exit (?:code|status) (?P<code>\d+)"
        # DeepSpeed's CPU optimizers build their op when they are made: a failed build leaves them without its handle, and the
        # error users see is its absence (aqlaboratory/openfold#98: no CUDA toolkit), the build's own error above it
        r"|'(?P<optimizer>DeepSpeedCPU(?:Adam|Adagrad|Lion))' object has no attribute 'ds_opt_(?:adam|adagrad|lion)'",
        ("Error building extension", "'ninja'", "Failed building wheel", "Building wheel for", "did not run successfully", "nvcc was not found",
         "FAILED: ", "failed with exit", "Error compiling objects", "): error", ": error: ", "): fatal error", ": fatal error: ", "object has no attribute 'ds_opt_"),
        why="""Packages with C++/CUDA code (DeepSpeed ops, flash-attn, TransformerEngine, apex, horovod, xformers) compile it with
        nvcc and the host compiler: at first use (torch.utils.cpp_extension, ninja) or at install time, when pip or uv finds no
        prebuilt wheel for this Python, torch and CUDA. The build fails when nvcc is missing (no CUDA toolkit, CUDA_HOME unset, a
        runtime-only container image), when the toolkit's CUDA version differs from torch.version.cuda (its headers then clash with the
        ones torch ships: 'redefined', 'conflicting declaration') or is older than the package needs, when the host compiler is too new or too old for that nvcc, when a header or library it builds against
        (cuDNN, NCCL, MPI, Python.h) is not installed, when parallel compile jobs run out of host memory, or when a stale build
        sits in ~/.cache/torch_extensions. The line shown names the reason when it is one of the package's own checks (nvcc not
        found, a CUDA version mismatch); otherwise the compiler's first `error:` line, above ninja's `FAILED: ... .o` or in
        `pip install -v` output, decides which. DeepSpeed's CPU optimizers (DeepSpeedCPUAdam, -Adagrad, -Lion) build their op when
        they are made; a failed build leaves the optimizer without its op, and what is seen is "'DeepSpeedCPUAdam' object has no
        attribute 'ds_opt_adam'", the build's own error above it (`ds_report` shows which of DeepSpeed's ops can build here).""",
        fix="STEP",
        examples=[
            ("RuntimeError: Error building extension 'fused_adam'", "deepspeedai/DeepSpeed#629"),
            ("[BUG] RuntimeError: Error building extension 'fused_adam' Loading extension module fused_adam", "deepspeedai/DeepSpeed#5623"),
            ("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.", "torch.utils.cpp_extension's build failure text (the line before 'Error building extension')"),
            ("  ERROR: Failed building wheel for transformer_engine", "NVIDIA/TransformerEngine#1284"),
            (">   × python setup.py bdist_wheel did not run successfully.", "Dao-AILab/flash-attention#298 (quoted)"),
            ("  × Building wheel for transformer_engine (pyproject.toml) did not run successfully.", "NVIDIA/TransformerEngine#654"),
            (
                "      RuntimeError: flash_attn was requested, but nvcc was not found.  Are you sure your environment has nvcc available?  "
                "If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, only images whose names contain 'devel' will provide nvcc.",
                "Dao-AILab/flash-attention#509",
            ),
            ("FAILED: /test/flash-attention/hopper/build/temp.linux-x86_64-cpython-310/flash_fwd_hdim64_fp16_sm90.o", "Dao-AILab/flash-attention#1131 (ninja)"),
            ("error: command '/usr/local/cuda/bin/nvcc' failed with exit code 255", "Dao-AILab/flash-attention#298 (title: setuptools' failure line)"),
            ("RuntimeError: Error compiling objects for extension", "open-mmlab/mmcv#2612 (torch's ninja build of mmcv-full on Windows)"),
            ("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
             "aqlaboratory/openfold#98 (heldout22: the maintainer, the CUDA toolkit missing for the op's build)"),
            (" C:\\VirtualEnv\\venv2024_SAA\\lib\\site-packages\\torch\\include\\ATen/cuda/Exceptions.h(65): error C2373: 'cusparseGetErrorString': Redefined with a different type specifier.",
             "IDEA-Research/GroundingDINO#356 (MSVC: torch 2.3.1+cu121's header against the CUDA 12.1 toolkit's cusparse.h)"),
        ],
        not_examples=[
            "Building extension module fused_adam...",
            "Compiling objects...",  # torch.utils.cpp_extension's progress line before the build starts
            # the compilers' warnings: the build goes on
            "/usr/local/cuda/include/cuda_fp16.hpp(1082): warning #177-D: variable \"x\" was declared but never referenced",
            "csrc/ms_deform_attn_cuda.cu:21:5: warning: 'at::DeprecatedTypeProperties& at::Tensor::type() const' is deprecated [-Wdeprecated-declarations]",
            "  Building wheel for flash-attn (setup.py) ... done",
            "Successfully built flash-attn",
            "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",  # torch's warning when building without a visible GPU: builds still succeed
            "      Could not find a recent CMake to build Transformer Engine. Attempting to install CMake 3.18 to a temporary location via pip.",
            "FAILED tests/test_build.py::test_cuda - AssertionError",  # pytest's line, not ninja's
            "AttributeError: 'DeepSpeedDataLoader' object has no attribute 'sampler'",  # another DeepSpeed object's attribute: an API's shape
        ],
        # the build's own error line, where the log shows one, is why (its wrapper lines are its consequence)
        after=BUILD_CAUSES,
        fields=wrapper_fields,
    ),
    pattern(
        "launcher-master-addr-empty",
        "launcher",
        CAUSE,
        E,
        "the launcher built a torchrun command with an empty --master_addr / --master_port",
        r"--master[_-](?P<empty>addr|port)=(?=\s|$)",
        ("--master_addr=", "--master-addr=", "--master_port=", "--master-port="),
        why="""A launcher that writes the torchrun command for each node (colossalai run, a SLURM or
        Kubernetes script) filled --master_addr or --master_port from a variable that was unset or empty,
        so the ranks have no master address to meet at: the store's handshake then fails with an error
        that does not name the address (colossalai's 'Stop_waiting response is expected', a connect
        timeout, a refused connection).""",
        fix="give the launcher the master address and port explicitly (colossalai run --host HOST1,HOST2 --master_addr HOST1 --master_port 29500; in a script: export MASTER_ADDR=$(hostname -i) MASTER_PORT=29500 before it builds the command), then check the printed torchrun command shows both",
        examples=[
            (
                "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --master_addr= --master_port= vit_train_demo.py --plugin hybrid_parallel on 127.0.0.1, is localhos",
                "hpcaitech/ColossalAI#5890",
            ),
        ],
        not_examples=[
            # the same wrapper with both set: the failure is elsewhere
            "Error: failed to run torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --master_addr=192.168.0.64 --master_port=29500 benchmark.py on 192.168.0.64, is localhost: True, exception: I/O operation on closed file",
            # torchrun's own flag given in two words: not empty
            "torchrun --nproc_per_node 8 --master_addr 10.0.0.1 --master_port 29500 train.py",
        ],
        fields=groups,
    ),
    pattern(
        "launcher-env-not-exportable",
        "launcher",
        CAUSE,
        E,
        "the launcher's shell refused to export an environment variable to the ranks",
        r"export: [`'](?P<name>[^'`]*)': not a valid identifier",
        ("not a valid identifier",),
        why="""Launchers that start the ranks through a shell command (colossalai run copies the whole
        environment as `export NAME="value" ...` before torchrun; DeepSpeed's pdsh/mpi runners export
        .deepspeed_env and the NCCL_/PYTHON variables) hand every environment variable to the shell. One of
        them has a name the shell cannot export (empty, or holding '=', '-', '.' or a space), so the shell
        stops there and torchrun never starts: no rank ran.""",
        fix="find the variable: env | grep -v -E '^[A-Za-z_][A-Za-z0-9_]*=' ; unset it (or start the job from a clean shell: env -i bash -l), or run torchrun directly on each node, which does not re-export the environment",
        examples=[
            (
                "/bin/bash: line 0: export: `=/usr/bin/supervisord': not a valid identifier Error: failed to run torchrun --nproc_per_node=1 --nnodes=1 --node_rank=0 --rdzv_backend=c10d",
                "hpcaitech/ColossalAI#3638",
            ),
        ],
        not_examples=[
            # a Python error about an identifier: not the shell's export
            "SyntaxError: invalid syntax. Perhaps you forgot a comma? 'train-set' is not a valid identifier",
            # an export that worked
            "export NCCL_DEBUG=INFO",
        ],
        fields=groups,
    ),
    pattern(
        "launcher-hostfile-malformed",
        "launcher",
        CAUSE,
        E,
        "the launcher's hostfile has a line it cannot read",
        r"Hostfile contains (?:a bad entry: (?P<entry>.*?), unable|multiple entries for (?:host: )?(?P<host>[^\s,.]+))"
        r"|Hostfile is empty or not formatted correctly|Hostfile is not formatted correctly|Invalid entry in hostfile: (?P<invalid>.+?)\.?$",
        ("Hostfile contains", "Hostfile is", "Invalid entry in hostfile"),
        why="""DeepSpeed's launcher (and the launchers modelled on it) reads the hostfile line by line as `HOSTNAME slots=N`
        (a `#` comment or a blank line is skipped) and stops at the first line of another shape: a misspelt `slots=`, a
        missing space, a colon or a tab-separated count, a host listed twice, or a file with no host at all. Some DeepSpeed
        releases print the literal text '{line}' instead of the bad line.""",
        fix="""write every line of the hostfile (deepspeed --hostfile, default /job/hostfile) as `HOSTNAME slots=N` with N the GPUs
        to use there, one line per host, e.g. `worker-0 slots=8`; check it with `grep -nvE '^\\s*(#|$)|^\\S+\\s+slots=[0-9]+' HOSTFILE`,
        which prints the lines the launcher refuses""".replace("\n        ", " "),
        examples=[
            ("ValueError: Hostfile contains a bad entry: {line}, unable to proceed with launching", "deepspeedai/DeepSpeed#3669 ('lots=8' for 'slots=8'; this release does not name the line)"),
            ("ValueError: Hostfile contains a bad entry: worker-1 lots=8, unable to proceed with launching", "deepspeed/launcher/runner.py _parse_hostfile's message"),
            ("ValueError: Hostfile contains multiple entries for worker-0, unable to proceed with launching", "deepspeed/launcher/runner.py _parse_hostfile's message"),
            ("ValueError: Hostfile is empty or not formatted correctly, unable to proceed with launching.", "deepspeed/launcher/runner.py _parse_hostfile's message"),
        ],
        not_examples=["[INFO] [runner.py:607:main] Using IP address of 10.0.0.1 for node worker-0", "worker-0 slots=8"],
        fields=groups,
    ),
]
