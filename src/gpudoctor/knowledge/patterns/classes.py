"""Rules for classes of messages, not one exception at a time (issue 35 item 4).

Each rule covers a family that holds many threads of the sampled corpus, whatever the package or
the name in the message: a module the job's Python cannot import, a launcher the job's shell
cannot find, an argument a launcher's version does not know, and an API that one package calls
the way another version of a second package worked. Their examples are real lines from those
threads; their counter-examples are the nearest lines that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern

E = Severity.ERROR
LAUNCHERS = r"torchrun|deepspeed|accelerate|srun|mpirun|mpiexec|python3?|llamafactory-cli|colossalai|ray|tune|trl|axolotl|composer|nemo|pdsh"

PATTERNS = [
    pattern(
        "module-not-found",
        "platform",
        CAUSE,
        E,
        "the Python that runs the job cannot import a module",
        r"^(?!.*\b(?i:warn)).*?(?:ModuleNotFoundError|ImportError): No module named '?(?P<module>[\w.]+)'?",
        ("No module named",),
        why="""The interpreter that ran this process has no module of that name on its path: the package is
        not installed in that environment, or the job runs under another Python than the one it was installed
        in (a launcher from another environment or from ~/.local, `sudo`, /usr/bin/python, a Ray or Slurm
        worker started without the environment, a remote node), or the module's name is misspelt or moved
        in the installed version of its package. A project's own package (`pip install -e .`) is importable
        only in the environment it was installed in.""",
        fix="""see which Python the job runs (`which python torchrun`; torchrun's first line names its interpreter) and
        try the import with it: `python -c "import MODULE"`; install the package into that environment
        (`python -m pip install ...`, `pip install -e .` for your own project), or start the ranks with that
        environment's interpreter: `python -m torch.distributed.run ...` instead of a torchrun from elsewhere;
        check the name is spelt as the installed version has it""".replace("\n        ", " "),
        examples=[
            ("ModuleNotFoundError: No module named 'llamafactory'", "hiyouga/LlamaFactory#5243 (torchrun from ~/.local ran another Python)"),
            ("ModuleNotFoundError: No module named 'transfer_queue'", "verl-project/verl#7320 (a new dependency not installed)"),
            (
                "/root/anaconda3/envs/test/bin/python: Error while finding module specification for 'torch.distribute.launch' "
                "(ModuleNotFoundError: No module named 'torch.distribute')",
                "NVIDIA/nccl#719 (a misspelt module)",
            ),
            ("ImportError: No module named flash_attn", "Python 2 style text as some wrappers print it"),
        ],
        not_examples=[
            "ImportError: cannot import name 'is_torch_tpu_available' from 'transformers'",  # a name moved between versions: another story
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            "[WARNING] apex not found: ImportError: No module named 'apex', using the native implementation",  # a logged fallback
        ],
    ),
    pattern(
        "launcher-not-found",
        "launcher",
        CAUSE,
        E,
        "the shell that starts the job cannot find the launcher",
        r"^(?:/bin/(?:ba|z|da)?sh|bash|sh|zsh)(?:: line \d+)?: (?:\d+: )?(?P<command>(?:\S*/)?(?:" + LAUNCHERS + r")): (?:command )?not found",
        ("not found",),
        why="""The command is not on the PATH of the shell that ran it: its environment was not activated
        there (a conda env or venv activated in another shell), `sudo` replaced the PATH with its own
        secure_path, or a remote node (ssh, pdsh, a scheduler's job) started a shell without the environment.""",
        fix="""see which command the shell would run: `which COMMAND` in the same way the job starts (sudo: `sudo which COMMAND`);
        activate the conda env / venv in that shell, keep the PATH under sudo (`sudo env "PATH=$PATH" COMMAND ...`),
        or start it through the environment's Python: `python -m torch.distributed.run` for torchrun""".replace("\n        ", " "),
        examples=[
            ("/bin/sh: 1: torchrun: not found", "hiyouga/LlamaFactory#5217 (run under sudo)"),
            ("bash: deepspeed: command not found", "shell text when the env is not activated"),
            ("/bin/bash: line 1: srun: command not found", "a job script run off the cluster's login environment"),
        ],
        not_examples=[
            "/bin/sh: 1: nvcc: not found",  # a compiler for an extension build: another story
            "torchrun: error: unrecognized arguments: --nproc-per-node=1",
        ],
    ),
    pattern(
        "launcher-argument-unknown",
        "launcher",
        CAUSE,
        E,
        "the launcher does not know an argument it was given",
        r"^(?P<prog>torchrun|deepspeed|accelerate(?: <command> \[<args>\] launch)?|launch\.py|run\.py|colossalai|mpirun): error: unrecognized arguments: (?P<args>.+)",
        ("unrecognized arguments",),
        why="""The launcher's argument parser refused these flags: they are spelt for another version of it
        (torchrun before torch 2.0 knew only the underscore forms such as --nproc_per_node; newer flags such as
        --local-ranks-filter or --log-dir do not exist in older releases), or a script's own argument was put
        before the script's name, where the launcher reads it as its own.""",
        fix="""`PROG --help` lists what the installed version takes: spell the flags as it does (older torchrun:
        --nproc_per_node, --nnodes, --node_rank), upgrade torch for the newer spelling, and put the script's own
        arguments after the script""".replace("\n        ", " "),
        examples=[
            ("torchrun: error: unrecognized arguments: --nproc-per-node=1", "huggingface/pytorch-image-models#1742 (an older torchrun)"),
            ("launch.py: error: unrecognized arguments: --use_env", "torch.distributed.launch of an older torch"),
        ],
        not_examples=[
            "train.py: error: unrecognized arguments: --local-rank=0",  # the user's script refusing the launcher's flag: its own pattern
        ],
    ),
    pattern(
        "gpu-driver-unusable",
        "cuda",
        CAUSE,
        E,
        "the NVIDIA driver cannot bring up the GPU (nvidia-smi and CUDA see none)",
        r"NVIDIA[- ]SMI has failed because it (?:couldn't|could not) communicate with the NVIDIA driver|^No devices were found$|"
        r"NVRM: .*(?P<init>RmInitAdapter|rm_init_adapter) failed|Failed to initialize NVML: (?P<nvml>Unknown Error|GPU access blocked by the operating system|Not Found)"
        # the kernel module's own reasons, from dmesg: the open module refusing the GPU, a GSP that does not boot, a GPU this branch does not drive
        r"|NVRM: Open nvidia\.ko is only ready for use on Data Center GPUs|NVRM:? kgspInitRm_IMPL: cannot bootstrap riscv/gsp"
        # the refusal is on the message's second line: its first ("The NVIDIA GPU ... (PCI ID: ...)") also heads
        # "has fallen off the bus" (nvidia-xid's), and a failed probe follows either
        r"|NVRM: installed in this system is not supported by|NVRM: The NVIDIA probe routine was not called for",
        ("couldn't communicate with the NVIDIA driver", "could not communicate with the NVIDIA driver", "No devices were found", "RmInitAdapter",
         "rm_init_adapter", "Failed to initialize NVML", "Open nvidia.ko", "bootstrap riscv/gsp", "is not supported by", "probe routine was not"),
        why="""nvidia-smi (NVML) reaches no GPU: the kernel module is not loaded or was built for another kernel
        (a kernel update without the driver's DKMS rebuild), the driver failed to initialise the GPU (NVRM's
        RmInitAdapter failed: the PCIe link, the BIOS settings for large BARs such as Above 4G Decoding /
        Resizable BAR, power, or a failing card), or, in a container, the GPU device files are not passed in
        (NVML's Unknown Error after the host reloaded its cgroups). With NVIDIA's open kernel modules the GPU must have a GSP
        (Turing or newer; early releases drove only data-center GPUs unless NVreg_OpenRmEnableUnsupportedGpus=1 was set), so an
        older GPU needs the proprietary driver, and a GSP that does not boot (cannot bootstrap riscv/gsp) points to firmware
        files of another driver version; a GPU the driver branch does not support at all (a new card, or a legacy Kepler one)
        is named by its PCI ID; and on a platform or kernel the driver does not support the module loads but reaches no GPU.
        Every CUDA job on the machine fails the same way.""",
        fix="""lsmod | grep nvidia; sudo dmesg -T | grep -i -E 'NVRM|nvidia'; lspci -nn | grep -i nvidia; dkms status  # then
        reinstall the driver for the running kernel (or reboot into the kernel it was built for); an RmInitAdapter failure:
        check the BIOS (Above 4G Decoding, Resizable BAR), reseat the card and its power; in a container: restart it with
        --gpus all; an open-module message (Open nvidia.ko, GSP, 'not supported by open nvidia.ko'): install the proprietary
        driver of the same version, or set NVreg_OpenRmEnableUnsupportedGpus=1 for a Turing or newer GeForce; a PCI ID the branch
        does not support: install the driver branch that supports that GPU""".replace("\n        ", " "),
        examples=[
            ("No devices were found", "NVIDIA/open-gpu-kernel-modules#862 (nvidia-smi)"),
            ("Jul 01 22:55:07 gpu kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)", "NVIDIA/open-gpu-kernel-modules#862 (syslog)"),
            (
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
                "nvidia-smi with no driver loaded",
            ),
            ("Failed to initialize NVML: Unknown Error", "NVIDIA/nvidia-container-toolkit#48 (a container after a cgroup reload)"),
            ("[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.", "NVIDIA/open-gpu-kernel-modules#230 (a GeForce)"),
            ("               NVRM: installed in this system is not supported by open", "NVIDIA/open-gpu-kernel-modules#322 (a V100 has no GSP)"),
            ("[  217.545142] NVRM kgspInitRm_IMPL: cannot bootstrap riscv/gsp: 0xffff", "NVIDIA/open-gpu-kernel-modules#433"),
            (
                "`NVIDIA SMI has failed because it could not communicate with the NVIDIA driver Make sure that the latest NVIDIA driver is installed and running.`",
                "NVIDIA/open-gpu-kernel-modules#388 (an RK3588 board)",
            ),
        ],
        not_examples=[
            "Failed to initialize NVML: Driver/library version mismatch",  # its own pattern: a reboot fixes it
            "No devices were found matching the filter",
            "[    2.757687] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  530.41.03  Release Build  (archlinux-builder@archalien)",
            "[   24.020428] nvidia-nvlink: Nvlink Core is being initialized, major device number 239",
        ],
        after=("nvidia-xid",),  # a GPU fault the driver logged (an Xid) is why it cannot bring the GPU up
    ),
    pattern(
        "rank-outside-world",
        "launcher",
        CAUSE,
        E,
        "a rank number lies outside the world size a part of the job was built with",
        r"Invalid rank (?P<rank>\d+), rank should be in the interval \[0, (?P<last>\d+)\]|"
        r"(?P<launcher>MPI|SLURM|[Ll]auncher) world size (?P<outer>\d+) does not match (?:torch |the )?world size (?P<inner>\d+)",
        ("Invalid rank", "does not match torch world size", "does not match the world size"),
        why="""More ranks run than a part of the job counts: a DistributedSampler (or a process group) was built
        with a world size of one node while several nodes run (the node count, Lightning's num_nodes or
        torchrun's --nnodes, did not reach it), or the launcher started another number of processes than the
        framework was configured for (mpirun -np against the configured world size).""",
        fix="""make the node count and the processes per node agree everywhere: Lightning `Trainer(num_nodes=N, devices=G)`
        with N x G the ranks that run (srun --ntasks-per-node=G), torchrun `--nnodes N --nproc_per_node G`, mpirun -np the
        configured world size; build samplers from the process group: `DistributedSampler(ds, num_replicas=dist.get_world_size(),
        rank=dist.get_rank())`""".replace("\n        ", " "),
        examples=[
            ("ValueError: Invalid rank 8, rank should be in the interval [0, 7]", "Lightning-AI/pytorch-lightning#17436 (FSDP without num_nodes on SLURM)"),
            ("ValueError: Invalid rank 1, rank should be in the interval [0, 0]", "Lightning-AI/pytorch-lightning#17028"),
            ("AssertionError: MPI world size 16 does not match torch world size 8", "deepspeedai/DeepSpeed#461 (mpirun against Megatron's world size)"),
        ],
        not_examples=["ValueError: Invalid device ordinal 8", "RuntimeError: Invalid rank argument"],
    ),
    pattern(
        "run-interrupted",
        "launcher",
        CAUSE,
        E,
        "the run was stopped from outside (Ctrl-C) before it finished",
        r"^(?P<exception>KeyboardInterrupt)$",
        ("KeyboardInterrupt",),
        why="""A KeyboardInterrupt is Python's answer to SIGINT: someone pressed Ctrl-C, or a launcher or a scheduler
        interrupted the process. The run did not finish. Its traceback shows where the process was at that moment: in
        a job stopped because it looked stuck, that is where it waited (a collective, a DataLoader worker's queue,
        a lock).""",
        fix="""read where it was: the last frames of this traceback (WHERE); if the run was stuck, take every rank's stack while
        it hangs (py-spy dump --pid PID) and, for collectives, the Flight Recorder (TORCH_FR_BUFFER_SIZE=2000); a DataLoader
        worker's queue: rerun with num_workers=0 to see the error it hides""".replace("\n        ", " "),
        examples=[("KeyboardInterrupt", "pytorch/pytorch#1355 (Ctrl-C on a DataLoader deadlock)")],
        not_examples=["During handling of KeyboardInterrupt, the following happened", "Press Ctrl-C (KeyboardInterrupt) to stop"],
    ),
    pattern(
        "checkpoint-corrupt",
        "platform",
        CAUSE,
        E,
        "a checkpoint file is truncated or corrupt",
        r"storage has wrong size: expected -?\d+ got \d+|PytorchStreamReader failed reading (?:zip archive: failed finding central directory|file \S+: (?:invalid header|file read failed))|"
        r"unexpected EOF, expected \d+ more bytes\. The file might be corrupted",
        ("storage has wrong size", "PytorchStreamReader failed reading", "The file might be corrupted"),
        why="""torch.load read a file that is not the whole checkpoint torch.save wrote: several ranks saved to the
        same path at once (every rank of a job runs the save unless it is guarded), the save was cut (the job was
        killed or the disk filled during it), or a rank loaded it before the writer finished. Each rank then
        reads another mixture of the writes.""",
        fix="""save from one rank and let the others wait for it: `if dist.get_rank() == 0: torch.save(state, path)` then
        `dist.barrier()` before any rank loads it (Lightning and accelerate do this when you use their save); check the
        disk's free space and the file size, and save again""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: storage has wrong size: expected -4669315570785868528 got 512", "pytorch/pytorch#12042 (8 ranks saving one path)"),
            ("RuntimeError: storage has wrong size: expected 512 got 65536", "NVIDIA/NeMo#130 (a 32-node run's checkpoint)"),
            ("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory", "torch.load of a truncated file"),
        ],
        not_examples=["RuntimeError: shape '[8, 512]' is invalid for input of size 65536", "size mismatch for fc.weight: copying a param with shape"],
    ),
    pattern(
        "cuda-error-async",
        "cuda",
        CAUSE,
        E,
        "a CUDA error surfaced at a later CUDA call (its own message is not in this log)",
        r"Exception raised from c10_cuda_check_implementation|^frame #\d+: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal\(",
        ("c10_cuda_check_implementation", "finishedGPUExecutionInternal"),
        why="""CUDA reports a kernel's fault (an illegal memory access, a device-side assertion, a launch failure)
        at the next call that checks the device, not where the kernel was launched: here torch's CUDA check or
        the NCCL watchdog polling a collective's event. The message that names the error was cut from the log;
        the failing kernel is the first one that ran badly, usually far from this frame.""",
        fix="""rerun with CUDA_LAUNCH_BLOCKING=1 so the error is raised at the kernel that failed (with its message);
        `compute-sanitizer python train.py` pinpoints an illegal memory access; TORCH_USE_CUDA_DSA=1 (a build that has
        it) names a device-side assertion""".replace("\n        ", " "),
        examples=[
            ("Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):", "hpcaitech/Open-Sora#694"),
            ("frame #3: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x56 (0x7f0ed8e5b4f6 in /x/site-packages/torch/lib/libtorch_cuda.so)", "InternLM/lmdeploy#3258"),
        ],
        not_examples=["Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):"],
        after=("cuda-illegal-memory-access", "cuda-device-assert", "cuda-index-out-of-range", "cuda-launch-failure", "cuda-ecc-error", "nvidia-xid", "cuda-oom", "cublas-init-failed"),
    ),
    pattern(
        "library-api-mismatch",
        "platform",
        CAUSE,
        E,
        "one library calls another the way a different version of it worked",
        r"(?:^|[\s\"'(\[])(?:[A-Za-z_]\w*\.)*(?P<exception>AttributeError|TypeError): (?P<message>"
        r"'(?!NoneType')(?P<type>\w+)' object has no attribute '(?P<attribute>\w+)'|"
        r"module '(?P<module>[\w.]+)' has no attribute '(?P<module_attribute>\w+)'|"
        r"(?P<callee>[\w.<>]+)\(\) (?:got an unexpected keyword argument '(?P<keyword>\w+)'|missing \d+ required (?:positional|keyword-only) arguments?:|"
        r"takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:were|was) given|got multiple values for argument))",
        ("has no attribute", "unexpected keyword argument", "required positional argument", "required keyword-only argument", "positional argument", "multiple values for argument"),
        why="""A library raised, inside library code, an error about the shape of an API: an object without the
        attribute the caller uses, a function without the keyword or the number of arguments it is given. One
        installed package calls another as a different version of it worked: the versions do not go together
        (the caller's requirements were not installed, or one of them was upgraded alone), or it is a bug
        that a later release fixed. The traceback's frames show which package calls which.""",
        fix="""VERSIONS do not go together: compare them (`pip show PACKAGES`) with the requirements of the one that
        calls the other, and install versions that do (upgrade RAISER: `pip install -U RAISER`, or pin it to the version
        the caller requires); search RAISER's issues for the message too: such errors are often fixed in a later release""".replace("\n        ", " "),
        examples=[
            ("TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'", "huggingface/trl#3304 (trl newer than vLLM)"),
            ("AttributeError: 'AdamW' object has no attribute 'train'", "hiyouga/LlamaFactory#5647 (transformers version)"),
            ("AttributeError: 'dict' object has no attribute 'num_gpus_per_worker'", "ray-project/ray#23302 (a Ray bug fixed by an upgrade)"),
            ("(ActorModelRayActor pid=700388) AttributeError: 'LLMEngine' object has no attribute 'model_executor'", "OpenRLHF/OpenRLHF#922 (vLLM version)"),
            ("AttributeError: 'Namespace' object has no attribute 'same_network'", "huggingface/accelerate#770 (an accelerate bug)"),
            ("TypeError: BatchEncoding.to() got an unexpected keyword argument 'non_blocking'", "hiyouga/LlamaFactory#6139 (transformers older than accelerate)"),
        ],
        not_examples=[
            "AttributeError: 'NoneType' object has no attribute 'get'",  # a value that is None (a missing config entry): not an API
            "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'",  # the DDP wrapper: its own pattern
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
        ],
    ),
    pattern(
        "system-library-too-old",
        "platform",
        CAUSE,
        E,
        "a prebuilt binary needs a newer system C library or C++ runtime than this machine loads",
        # a warning that an optional extension did not load (and a fallback runs) is not the failure
        r"^(?!.*(?i:warning\b|\bwarn\b)).*?(?P<library>(?<!\S)\S*lib(?:c|m|pthread|dl|rt|stdc\+\+|gcc_s)[\w.\-]*\.so[.\d]*): version `(?P<symbol>(?P<runtime>GLIBC|GLIBCXX|CXXABI|GCC)_[\d.]+)' not found"
        r"(?: \(required by (?P<binary>[^)]+)\))?",
        ("' not found",),
        why="""The dynamic loader refused a compiled file (a wheel's extension module such as a fused optimizer kernel, a
        library it links, or a binary) because it was built against a newer version of a system library than the one
        loaded here. GLIBC_x.y: the operating system's C library is older than the one of the machine the wheel was
        built on (an older distribution, or an old container image); a newer glibc cannot be installed into an
        environment. GLIBCXX_x.y / CXXABI_x.y (libgcc_s: GCC_x.y): the C++ runtime (libstdc++) loaded first is older than the compiler's
        that built the file: usually the system's /usr/lib copy is found before the newer one of the conda
        environment, or the extension was compiled with a newer gcc than the one whose runtime runs it.""",
        fix="""GLIBC: build the package on this machine instead of using the prebuilt wheel (pip install --no-binary PACKAGE
        PACKAGE, or the project's build-from-source steps, e.g. compiling its CUDA kernels at install), install a release built
        for an older glibc (manylinux2014), or run in a container with a newer OS; `ldd --version` shows the glibc here.
        GLIBCXX/CXXABI: load a newer libstdc++ first: `conda install -c conda-forge libstdcxx-ng` and
        `export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH`, or rebuild the extension with this machine's compiler;
        `strings LIBRARY | grep GLIBCXX_` lists what a libstdc++ provides""".replace("\n        ", " "),
        examples=[
            (
                "ImportError: /lib64/libm.so.6: version `GLIBC_2.29' not found (required by /root/anaconda3/envs/colos/lib/python3.9/site-packages/colossalai/_C/fused_optim.cpython-39-x86_64-linux-gnu.so)",
                "hpcaitech/ColossalAI#2402 (a prebuilt fused_optim kernel on CentOS 7)",
            ),
            (
                "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)",
                "the C++ runtime form, as conda environments on an older system print it",
            ),
            ("OSError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found", "a binary built on a newer distribution"),
            ("/usr/lib64/libstdc++.so.6: version `CXXABI_1.3.11' not found (required by /home/u/.cache/torch_extensions/py310_cu118/fused_adam/fused_adam.so)", "a JIT-built extension run with an older libstdc++"),
        ],
        not_examples=[
            "ldd (GNU libc) 2.35",  # the user checking their glibc: healthy
            "UserWarning: Failed to load the fused Adam kernel: /lib64/libm.so.6: version `GLIBC_2.29' not found; using the PyTorch implementation",
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",  # a missing library: another story
            "FileNotFoundError: [Errno 2] No such file or directory: 'train.yaml' not found",
        ],
    ),
    pattern(
        "settings-combination-refused",
        "launcher",
        CAUSE,
        E,
        "the program refused a setting in this combination: the message names it and what it needs",
        r"^(?!.*(?i:warning\b|\bwarn\b)).*?(?:^|[\s\"'(\[])(?:[A-Za-z_]\w*\.)*(?P<exception>ValueError|NotImplementedError|AssertionError|RuntimeError|\w*Config\w*Error|MisconfigurationException): "
        r"(?P<message>.*?\b(?:is|are) (?:not supported|only supported|not compatible|incompatible|not allowed) (?:with|without|for|when|unless|together with)\b.*)",
        ("not supported", "only supported", "not compatible", "incompatible", "not allowed"),
        why="""A check of the program's configuration refused it: one setting (the message names it) is accepted only with
        or without another (a parallelism strategy such as FSDP, a model kind, a backend). Nothing ran wrong yet: the
        combination is not one the code supports. A setting the user did not write is set by a package that builds
        the configuration for another one (a trainer passing an option to an inference engine), for a version of it
        that accepted the setting.""",
        fix="""change the setting the message names to a combination it supports (in the config file, the recipe or trainer
        arguments, or the command line), or turn on what it requires; if no config of yours sets it, the package that calls the
        refusing one set it for another version of it: compare their versions (`pip show`) with the caller's requirements""".replace("\n        ", " "),
        examples=[
            ("[rank1]: ValueError: ``minimize_all_reduces`` is not supported without FSDP", "meta-pytorch/torchtune#2415 (the recipe config without FSDP)"),
            ("(TaskRunner pid=79449) ValueError: `disable_mm_preprocessor_cache` is only supported for multimodal models.", "verl-project/verl#1469 (verl's option refused by a newer vLLM)"),
        ],
        not_examples=[
            "UserWarning: fused=True is not supported with foreach=True; falling back to the for-loop implementation",
            "INFO: flash attention is not supported for this GPU, using sdpa instead",
        ],
    ),
    pattern(
        "spawn-unpicklable-object",
        "launcher",
        CAUSE,
        E,
        "an object sent to a spawned process cannot be pickled (a function defined inside another, or a lambda)",
        r"Can't (?:pickle|get) local object '(?P<qualname>[^']+)'|PicklingError: Can't pickle (?P<function><function .+?>): attribute lookup",
        ("local object", "Can't pickle"),
        why="""The spawn start method (the only one on Windows, the default on macOS, and mp.spawn's everywhere) starts each new
        process empty and sends it what it needs by pickling: the function it runs, its arguments, a DataLoader worker's
        dataset and collate_fn, a model with its hooks. Pickle stores a function by its importable name, so a function
        defined inside another function (`<locals>` in its name) or a lambda cannot be sent. When the name is the
        user's, their code defines it there; when it is a library's (a hook a model class installs in its own method),
        that version of the library cannot be used with spawn.""",
        fix="""define the function at module level (functools.partial(top_level_fn, ...) for its arguments) instead of inside
        another function or as a lambda; for DataLoader workers, a top-level collate_fn or num_workers=0; on Linux,
        multiprocessing_context="fork" when nothing in the parent uses CUDA yet; when the local object is a library's (its
        name is a class of that library), install the version of it that the calling project pins (reinstall it) or run without
        worker processes""".replace("\n        ", " "),
        examples=[
            (
                "AttributeError: Can't get local object 'AutoModelForCausalLMWithValueHead.post_init.<locals>.set_device_hook'",
                "hiyouga/LlamaFactory#7232 (trl's value-head hook, reward training on Windows; reinstalling trl fixed it)",
            ),
            ("AttributeError: Can't pickle local object 'main.<locals>.collate'", "a collate_fn defined in main() with DataLoader workers under spawn"),
            (
                "_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f3a2c1d0e50>: attribute lookup <lambda> on __main__ failed",
                "a lambda passed to mp.spawn's arguments",
            ),
        ],
        not_examples=[
            "TypeError: cannot pickle 'generator' object",  # a deep copy of state: another story
            "INFO: using the spawn start method for DataLoader workers",
        ],
    ),
    pattern(
        "script-arguments-refused",
        "launcher",
        CAUSE,
        E,
        "the training script's argument parser refused its command line",
        r"^(?P<prog>[\w.\-]+(?:\.py)?): error: (?P<problem>the following arguments are required: (?P<required>.+)|unrecognized arguments: (?P<unknown>.+)"
        r"|argument (?P<argument>\S+): (?P<detail>.+)|ambiguous option: .+|one of the arguments .+ is required|expected one argument)",
        ("error: the following arguments", "error: unrecognized arguments", "error: argument", "error: ambiguous option", "error: one of the arguments", "expected one argument"),
        why="""argparse stopped the script before any training ran: an argument it requires is missing, one it does not know
        was given, or a value has the wrong form. Under a launcher the command line is not only the user's: deepspeed
        inserts --local_rank=N before the script's own arguments and `python -m torch.distributed.launch` adds
        --local-rank=N, which moves a positional argument (a YAML config path that the script expects first) out of place
        or adds a flag the parser does not know.""",
        fix="""give PROG the arguments its parser expects (`python PROG --help` lists them); a config file the script expects as its
        first argument: start it with torchrun, which adds nothing to the command line, or pass every option as a flag;
        --local-rank/--local_rank refused: read int(os.environ["LOCAL_RANK"]) or accept both spellings""".replace("\n        ", " "),
        examples=[
            ("train.py: error: the following arguments are required: --output_dir/--output-dir", "hiyouga/LlamaFactory#6075 (deepspeed's --local_rank=0 before the YAML path)"),
            ("main.py: error: argument --batch-size: invalid int value: '32,'", "argparse's message for a malformed value"),
        ],
        not_examples=[
            "usage: train.py [-h] [--output_dir OUTPUT_DIR]",  # the usage line alone: printed by --help too
            "error: the following files would be overwritten by checkout:",
        ],
        after=("launcher-local-rank-arg",),
    ),
]
