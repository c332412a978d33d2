"""Rules for classes of messages, not one exception at a time (issue 35 item 4).

Each rule covers a family that holds many threads of the sampled corpus, whatever the package or
the name in the message: a module the job's Python cannot import, a launcher the job's shell
cannot find, an argument a launcher's version does not know, and an API that one package calls
the way another version of a second package worked. Their examples are real lines from those
threads; their counter-examples are the nearest lines that mean something else.
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
W = Severity.WARN
LAUNCHERS = r"torchrun|deepspeed|accelerate|srun|mpirun|mpiexec|python3?|llamafactory-cli|colossalai|ray|tune|trl|axolotl|composer|nemo|pdsh"

def refusal_said(m, _context: list[str]) -> dict:
    """The refusal in the message's own words, quoted first in the fix (what the setting needs is in them)."""
    message = m.group("message")
    opened = m.string[: m.start("exception")].rstrip()[-1:]
    if opened in ("\"", "'", "`") and opened in message:  # an exception quoted in a sentence: its message ends at the quote
        message = message[: message.index(opened)]
    message = " ".join(message.split()).rstrip(" .")
    if len(message) > 1 and message[0] in "\"'" and message[-1] == message[0]:  # a message the exception quoted whole
        message = message[1:-1].rstrip(" .")
    return {"exception": m.group("exception"), "message": message, "step": f"the message says: {message[:240]}"}


def opened_path(m, _context: list[str]) -> dict:
    """The path that is not there, and what was to open it: the program's own code, the interpreter (a script) or the shell
    (a program or a redirect's file)."""
    if m.group("script"):
        return {"path": m.group("script"), "opened_by": "python (the script to run)"}
    if m.group("program"):
        return {"path": m.group("program"), "opened_by": "the shell (a program to run, or a file to write to)"}
    if m.group("named") or m.group("data_files"):
        return {"path": m.group("named") or m.group("data_files"), "opened_by": "the program (its own message)"}
    if m.group("go_path"):
        return {"path": m.group("go_path"), "opened_by": "the program (its own error, in Go's words for the path it looked up)"}
    return {"path": m.group("path")}


# (diagI33) "No module named 'a.b'": Python imports a package before its submodules and names the first it cannot find, so a
# dotted name says that `a` was imported and has no `b` (heldout32 NVIDIA/Megatron-LM#870: the megatron_core wheel has
# megatron.core, the repository's example imports megatron.training; torchvision 0.17 removed transforms.functional_tensor)
SUBMODULE_STEP = ("Python imported {top} and found no {module} in it (a package that is not there at all is named alone): the {top} "
                  "it imports is not the one this code was written for: a release without that module (removed or renamed since, or "
                  "added later: `pip show {top}` against the version the code requires, and install that one), a distribution of it "
                  "that ships only part of a repository (a wheel of its core while the script imports the repository's other folders: "
                  "run it from the repository's checkout, or put that checkout on PYTHONPATH), or a folder named {top} in the "
                  "working directory shadowing the package (`python -c \"import {top}; print({top}.__file__)\"` shows which one is "
                  "imported); or the name is misspelt")


# "No module named 'a.b'; 'a' is not a package": `a` was found as a single module (a file a.py, a compiled a.so), not the package
NOT_A_PACKAGE = re.compile(r"; '[\w.]+' is not a package")
NOT_A_PACKAGE_STEP = ("{top} was imported as a single module, not as the package that has {module}: a file {top}.py (or a compiled "
                      "module of that name) earlier on the path shadows it (the working directory, the script's folder, another "
                      "environment's site-packages): `python -c \"import {top}; print({top}.__file__)\"` shows which; rename that file, "
                      "or run with the environment that has the package")


def module_fields(m, context: list[str]) -> dict:
    """The module named; a dotted one (a submodule the imported package lacks) has its own step."""
    out = groups(m, context)
    module = out.get("module", "")
    top, dot, _ = module.partition(".")
    if dot and top and NOT_A_PACKAGE.search(m.string):
        out.update(read_as="module-not-found", step=NOT_A_PACKAGE_STEP.format(top=top, module=module))
    elif dot and top and not module.split(".")[-1].startswith("_"):  # (a compiled part, vllm._C: an extension not built)
        out.update(read_as="module-not-found", step=SUBMODULE_STEP.format(top=top, module=module))
    return out


# NVML's "Unknown Error" where a container or a pod had the GPU and lost it (issue 35, heldout27's aks-3680: the first job used
# the A100, the later ones in the same pod got this): its step before the driver's
NVML_UNKNOWN_STEP = ("inside a container or a pod that had the GPU (an earlier job used it): the container lost its access to the "
                     "GPU's device files when the host's systemd reloaded its cgroups (systemctl daemon-reload, a package update; "
                     "NVIDIA/nvidia-container-toolkit#48): restart the pod or container; to keep it from recurring, run the NVIDIA "
                     "device plug-in with PASS_DEVICE_SPECS=true (or docker with --device /dev/nvidia0 --device /dev/nvidiactl "
                     "--device /dev/nvidia-uvm beside --gpus), or set the runtime's cgroup driver to cgroupfs; on the host itself, "
                     "nvidia-smi failing the same way is the driver's")


def driver_unusable_fields(m, context: list[str]) -> dict:
    """What the line names; for NVML's Unknown Error, the container's lost device access first (its step)."""
    out = groups(m, context)
    if out.get("nvml") == "Unknown Error":
        out.update(step=NVML_UNKNOWN_STEP, read_as="gpu-driver-unusable")
    return out


# (diagC31) A device or backend option whose choices the program builds from what its installed build can run on (facefusion,
# roop and Deep-Live-Cam offer onnxruntime.get_available_providers() as --execution-provider's choices): a GPU asked for, and
# no GPU among the choices, is a build without its GPU backend, not a mistyped option
GPU_CHOICE = re.compile(r"(?i)^(?:cuda(?::\d+)?|gpu|tensorrt|trt|rocm|(?:cuda|tensorrt|rocm)executionprovider)$")
GPU_WORD = re.compile(r"(?i)cuda|gpu|tensorrt|rocm")
ORT_CHOICES = re.compile(r"(?i)\b(?:azure|dml|coreml|openvino|cpu ?execution ?provider)\b|provider")
CHOICE_REFUSED = re.compile(r"invalid choice: '(?P<asked>[^']+)' \(choose from (?P<choices>[^)]*)\)")


def arguments_fields(m: re.Match, context: list[str]) -> dict:
    """The refusal's groups; a GPU backend asked for among choices that hold none: the step that installs the GPU build."""
    out = groups(m, context)
    refused = CHOICE_REFUSED.search(out.get("detail") or "")
    if refused is None or not GPU_CHOICE.match(refused["asked"]) or GPU_WORD.search(refused["choices"]):
        return out
    choices = refused["choices"]
    if ORT_CHOICES.search(f"{out.get('argument', '')} {choices}"):
        out["step"] = (f"{out.get('argument', 'the option')} offers {choices} alone: the execution providers of the installed onnxruntime, "
                       "which has no CUDA provider (the CPU package onnxruntime, or onnxruntime-directml for 'dml'): pip uninstall -y "
                       "onnxruntime onnxruntime-directml onnxruntime-gpu && pip install onnxruntime-gpu   # the release for the installed "
                       "CUDA and cuDNN; then python -c \"import onnxruntime as ort; print(ort.get_available_providers())\" lists "
                       "CUDAExecutionProvider and the option accepts cuda")
    else:
        out["step"] = (f"{out.get('argument', 'the option')} offers {choices} alone: the program lists what its installed build can run "
                       "on, and it has no GPU backend: install its GPU build (the package or release named for CUDA), then its --help "
                       f"offers {refused['asked']}")
    out["read_as"] = "script-arguments-refused"
    return out


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
            ("ModuleNotFoundError: No module named 'megatron.training'", "NVIDIA/Megatron-LM#870 (the megatron_core wheel: megatron.core only)"),
        ],
        not_examples=[
            "ImportError: cannot import name 'is_torch_tpu_available' from 'transformers'",  # a name moved between versions: another story
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            "[WARNING] apex not found: ImportError: No module named 'apex', using the native implementation",  # a logged fallback
        ],
        fields=module_fields,
        # uv's hint that the module is a build's undeclared dependency (patterns/builds.py); (diagI33) the batch
        # script's environment not set up: the import fails of it
        after=("build-isolation-torch-missing", "job-environment-not-set-up"),
    ),
    pattern(
        "launcher-not-found",
        "launcher",
        CAUSE,
        E,
        "the shell that starts the job cannot find the launcher",
        # (and cmd.exe's words for it: "'torchrun' is not recognized as an internal or external command,")
        r"(?:^(?:/bin/(?:ba|z|da)?sh|bash|sh|zsh)(?:: line \d+)?: (?:\d+: )?|^'"
        # a script's name and line before it (dash: "train.sh: 1: srun: not found"), also quoted in a sentence
        r"|(?:^|(?<=[\"'`]))[\w./-]+\.sh: (?:line )?\d+: )(?P<command>(?:\S*/)?(?:" + LAUNCHERS + r"))"
        r"(?:: (?:command )?not found|(?:\.exe)?' is not recognized as an internal or external command)",
        ("not found", "is not recognized as an internal"),
        why="""The command is not on the PATH of the shell that ran it: its environment was not activated
        there (a conda env or venv activated in another shell), `sudo` replaced the PATH with its own
        secure_path, or a remote node (ssh, pdsh, a scheduler's job) started a shell without the environment.""",
        fix="""see which command the shell would run: `which COMMAND` in the same way the job starts (sudo: `sudo which COMMAND`; Windows: `where COMMAND`);
        activate the conda env / venv in that shell, keep the PATH under sudo (`sudo env "PATH=$PATH" COMMAND ...`),
        or start it through the environment's Python: `python -m torch.distributed.run` for torchrun; srun and sbatch are no Python
        package: they exist only on a Slurm cluster's nodes (off a cluster, start the job with torchrun, the project's script
        that does not use srun)""".replace("\n        ", " "),
        examples=[
            ("/bin/sh: 1: torchrun: not found", "hiyouga/LlamaFactory#5217 (run under sudo)"),
            ("bash: deepspeed: command not found", "shell text when the env is not activated"),
            ("/bin/bash: line 1: srun: command not found", "a job script run off the cluster's login environment"),
            ('When i sh train.sh, there are "train.sh: 1: srun: not found', "zhiyuanyou/SAFECount#16 (not on a Slurm cluster: the maintainer points at the torchrun script)"),
            ("'torchrun' is not recognized as an internal or external command,", "cmd.exe on Windows, the environment not activated"),
        ],
        not_examples=[
            "/bin/sh: 1: nvcc: not found",  # a compiler for an extension build: another story
            "torchrun: error: unrecognized arguments: --nproc-per-node=1",
        ],
        after=("job-environment-not-set-up",),  # (diagI33) the environment the batch script did not activate has the launcher
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
        r"|NVRM: installed in this system is not supported by|NVRM: The NVIDIA probe routine was not called for"
        # nvidia-smi asking for a GPU the driver never brought up: "Not Found", not "GPU is lost" (gpu-lost's)
        # (nvidia-smi.exe says "detect" for Linux's "determine": Easy-GPU-PV#276, diagA19)
        r"|Unable to (?:determine|detect) the device handle for (?i:GPU)\s*[0-9A-Fa-f:.]*:\s*Not Found",
        ("Not Found", "couldn't communicate with the NVIDIA driver", "could not communicate with the NVIDIA driver", "No devices were found", "RmInitAdapter",
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
            ("Unable to determine the device handle for GPU 0000:D8:00.0: Not Found",
             "NVIDIA/open-gpu-kernel-modules#259 (https://github.com/NVIDIA/open-gpu-kernel-modules/issues/259: the open module on CentOS 7)"),
        ],
        not_examples=[
            "Unable to determine the device handle for GPU 0000:81:00.0: Unknown Error",  # a GPU that stopped answering: gpu-lost
            "Failed to initialize NVML: Driver/library version mismatch",  # its own pattern: a reboot fixes it
            "No devices were found matching the filter",
            "[    2.757687] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  530.41.03  Release Build  (archlinux-builder@archalien)",
            "[   24.020428] nvidia-nvlink: Nvlink Core is being initialized, major device number 239",
        ],
        after=("nvidia-xid",),  # a GPU fault the driver logged (an Xid) is why it cannot bring the GPU up
        fields=driver_unusable_fields,
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
        # (or the terminal's echo of Ctrl-C glued to the traceback it started, its last line cut from the paste)
        r"^(?P<exception>KeyboardInterrupt)$|(?P<ctrl_c>\^C)(?=Traceback \(most recent call last\))",
        ("KeyboardInterrupt", "^CTraceback"),
        why="""A KeyboardInterrupt is Python's answer to SIGINT: someone pressed Ctrl-C, or a launcher or a scheduler
        interrupted the process. The run did not finish. Its traceback shows where the process was at that moment: in
        a job stopped because it looked stuck, that is where it waited (a collective, a DataLoader worker's queue,
        a lock).""",
        fix="""read where it was: the last frames of this traceback (WHERE); if the run was stuck, take every rank's stack while
        it hangs (py-spy dump --pid PID) and, for collectives, the Flight Recorder (TORCH_FR_BUFFER_SIZE=2000); a DataLoader
        worker's queue: rerun with num_workers=0 to see the error it hides""".replace("\n        ", " "),
        examples=[
            ("KeyboardInterrupt", "pytorch/pytorch#1355 (Ctrl-C on a DataLoader deadlock)"),
            ("[                                                  ] 0/500, elapsed: 0s, ETA:^CTraceback (most recent call last):", "open-mmlab/mmsegmentation#256 (a test run stuck on its DataLoader)"),
        ],
        not_examples=["During handling of KeyboardInterrupt, the following happened", "Press Ctrl-C (KeyboardInterrupt) to stop"],
    ),
    pattern(
        "checkpoint-corrupt",
        "platform",
        CAUSE,
        E,
        "a checkpoint file is truncated or corrupt",
        r"storage has wrong size: expected -?\d+ got \d+|PytorchStreamReader failed reading (?:zip archive: (?:failed finding central directory|invalid header or archive is corrupted)|"
        r"file \S+: (?:invalid header|file read failed))|"
        r"unexpected EOF, expected \d+ more bytes\. The file might be corrupted",
        ("storage has wrong size", "PytorchStreamReader failed reading", "The file might be corrupted"),
        why="""torch.load read a file that is not the whole checkpoint torch.save wrote: several ranks saved to the
        same path at once (every rank of a job runs the save unless it is guarded), the save was cut (the job was
        killed or the disk filled during it), or a rank loaded it before the writer finished. Each rank then
        reads another mixture of the writes. A file downloaded (pretrained weights) or copied is the same when the
        transfer was cut.""",
        fix="""save from one rank and let the others wait for it: `if dist.get_rank() == 0: torch.save(state, path)` then
        `dist.barrier()` before any rank loads it (Lightning and accelerate do this when you use their save); check the
        disk's free space and the file size, and save again; a downloaded file: download it again and compare its size (or
        checksum) with the source's""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: storage has wrong size: expected -4669315570785868528 got 512", "pytorch/pytorch#12042 (8 ranks saving one path)"),
            ("RuntimeError: storage has wrong size: expected 512 got 65536", "NVIDIA/NeMo#130 (a 32-node run's checkpoint)"),
            ("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory", "torch.load of a truncated file"),
            # the zip's first header unreadable: a file that is not (all of) the archive torch.save wrote
            ('"PytorchStreamReader failed reading zip archive: invalid header or archive is corrupted ".',
             "unit8co/darts#2254 (a model trained on two GPUs, the script run once per GPU, both saving it)"),
            ("RuntimeError: [enforce fail at inline_container.cc:145] . PytorchStreamReader failed reading zip archive: invalid header or archive is corrupted",
             "tomassosorio/OCR_tablenet#7 (an uploaded checkpoint; the maintainer: download and upload it again); XPixelGroup/DiffBIR#95 (a corrupted alexnet .pth)"),
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
        that a later release fixed. The traceback's frames show which package calls which. Pasted without its traceback, the
        message alone is read as this class: the finding says whose frame raised it is not shown, and names the API it gives.""",
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
            # pasted without its traceback: whose frame made the call not shown, the finding says so (knowledge/api_shape.py)
            ("TypeError: chemprop_predict() got an unexpected keyword argument 'use_gpu'", "swansonk14/SyntheMol#5 (fixed in a later version)"),
            ("AttributeError: 'Config' object has no attribute 'jax_experimental_name_stack'", "sokrypton/ColabFold#332 (a newer jax: pin 0.3.24)"),
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
        r"(?P<message>.*?(?:\b(?:is|are) (?:not supported|only supported|not compatible|incompatible|not allowed) (?:with|without|for|when|unless|together with)\b"
        # (diagD21) the same said of what the setting needs: "ZeRO inference only makes sense with ZeRO Stage 3"
        r"|\b(?:only makes sense|only works|can only be used|only applies) (?:with|without|for|when|if|in)\b).*)",
        ("not supported", "only supported", "not compatible", "incompatible", "not allowed", "only makes sense", "only works",
         "can only be used", "only applies"),
        why="""A check of the program's configuration refused it: one setting (the message names it) is accepted only with
        or without another (a parallelism strategy such as FSDP, a model kind, a backend). Nothing ran wrong yet: the
        combination is not one the code supports. A setting the user did not write is set by a package that builds
        the configuration for another one (a trainer passing an option to an inference engine), for a version of it
        that accepted the setting.""",
        fix="""STEP; change the setting the message names to a combination it supports (in the config file, the recipe or trainer
        arguments, or the command line), or turn on what it requires; if no config of yours sets it, the package that calls the
        refusing one set it for another version of it: compare their versions (`pip show`) with the caller's requirements""".replace("\n        ", " "),
        examples=[
            ("[rank1]: ValueError: ``minimize_all_reduces`` is not supported without FSDP", "meta-pytorch/torchtune#2415 (the recipe config without FSDP)"),
            ("(TaskRunner pid=79449) ValueError: `disable_mm_preprocessor_cache` is only supported for multimodal models.", "verl-project/verl#1469 (verl's option refused by a newer vLLM)"),
            ('ValueError: "ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config".',
             "deepspeedai/DeepSpeed#4526 (trainer.predict with a ZeRO stage 2 config: inference shards only with stage 3)"),
        ],
        not_examples=[
            "UserWarning: fused=True is not supported with foreach=True; falling back to the for-loop implementation",
            "INFO: flash attention is not supported for this GPU, using sdpa instead",
            "UserWarning: torch.compile only works with PyTorch 2.0 or later; running eagerly",
        ],
        fields=refusal_said,
    ),
    pattern(
        "assertion-states-condition",
        "platform",
        CAUSE,
        W,
        "an assert refused what it was given: its message states the condition that was false",
        # a sentence, not a bare value: at least three words after the class (specific asserts are claimed by their own patterns first)
        r"^(?!.*(?i:warning\b|\bwarn\b)).*?(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*AssertionError: (?!can only (?:test|join) a child process)(?P<condition>\S+(?: +\S+){2,}.*?)[`\"]*$",
        ("AssertionError: ",),
        why="""An `assert` stopped the run: the code checked a condition its author requires (a shape or a size, a setting,
        a combination of options, a value that must be set) and it was false; the message is that condition in the author's
        words. The line alone does not decide whose the mistake is: the input or the configuration may break the condition
        (yours to change), or the code asserts something it should handle, an unsupported combination in the installed
        version or a bug fixed in a later release. What decides it: whether your configuration, command line or data sets
        what the message names, and whose code the traceback's last frame is.""",
        fix="""make the condition true: find what the message names (a setting, a size, an option) in your configuration,
        command line or input and change it to what the message requires (pad or reshape an input to the size it asks
        for; set the option it says is required); if nothing of yours sets it, the package whose frame asserted (the
        traceback's last frame) does not support this combination in the installed version: compare its version with what the
        calling project requires, upgrade it, and search its issues for the message""".replace("\n        ", " "),
        examples=[
            ("AssertionError: zero stage 2 requires an optimizer", "huggingface/trl#825 (DPOTrainer prepared its reference model without an optimizer)"),
            (
                "AssertionError: FP8 execution requires 2D input matrices with height divisible by 8 and width divisible by 16, but got tensor with dims=[1, 256]",
                "NVIDIA/TransformerEngine#1571 (a [1, 256] input to an FP8 te.Linear)",
            ),
            ("[rank4]: AssertionError: SM100 forward with head_dim=256 does not support aux_tensors", "Dao-AILab/flash-attention#2635 (an unsupported head_dim in that release)"),
            ("AssertionError: You must have a training stage starting at 1 in the config's data_stages", "huggingface/nanotron#121 (the example config)"),
            ("AssertionError: cpu_request should not be None", "skypilot-org/skypilot#7142 (a SkyPilot bug on relaunch)"),
        ],
        refines="python-exception",  # the unrecognised answer names it (knowledge/unrecognised.py): the line does not decide whose mistake it is
        not_examples=[
            "AssertionError",  # a bare assert: nothing stated
            "AssertionError: 0",
            "[WARNING] AssertionError: checkpoint tag mismatch, using the latest one",  # a logged and handled assert
            "AssertionError: can only test a child process",  # harmless at exit: its own pattern
        ],
    ),
    pattern(
        "none-value-used",
        "platform",
        CAUSE,
        W,
        "a value the code uses is None (an optional import, a setting or a result that was never set)",
        r"^(?!.*(?i:warning\b|\bwarn\b)).*?(?:^|[\s\"'(\[])(?P<exception>AttributeError|TypeError): (?P<message>'NoneType' object "
        r"(?:has no attribute '(?P<attribute>\w+)|is not (?P<use>subscriptable|callable|iterable))|argument of type 'NoneType' is not iterable)",
        ("'NoneType' object", "type 'NoneType'"),
        why="""The code used a name whose value is None as if it were set: an optional package's import that failed quietly
        and left a placeholder (`try: from apex import amp` / `except ImportError: amp = None`: the package is not installed,
        or its compiled part did not load), a configuration entry or argument that was never given (`config.get(...)` of a
        missing key), a function that returned nothing, or a cache or an output that another part of the code did not fill
        (a model's output without a loss when no labels were passed; a shared object used by two threads at once). The line
        names only the attribute or the use; the traceback's last frame names the expression that was None, and an import
        warning earlier in the log says when it is an optional package that is not installed.""",
        fix="""read the expression at the traceback's last frame: the name before the attribute or the [ ] is the one that is None;
        if it is a module or a kernel from an optional import (amp, a fused op), install that package in the job's environment
        (look for its ImportError or 'not installed' warning earlier in the log); if it is a setting, give it in the
        configuration or the command line; if it is a result, check what produced it returns a value for this input""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'NoneType' object has no attribute 'initialize'", "microsoft/Swin-Transformer#17 (apex not installed: amp stayed None)"),
            ("AttributeError: 'NoneType' object has no attribute 'get’", "axolotl-ai-cloud/axolotl#871 (DeepSpeed ZeRO-2 config)"),
            ("TypeError: 'NoneType' object is not subscriptable", "zai-org/ChatGLM-6B#137 (a rotary cache read by concurrent requests)"),
        ],
        refines="python-exception",  # the unrecognised answer names it: the line does not say which name was None
        not_examples=[
            "AttributeError: 'AdamW' object has no attribute 'train'",  # an API's shape: library-api-mismatch
            "TypeError: 'int' object is not subscriptable",
            "WARNING: AttributeError: 'NoneType' object has no attribute 'close' ignored at shutdown",
        ],
    ),
    pattern(
        "sampling-probabilities-invalid",
        "cuda",
        CAUSE,
        W,
        "text generation sampled from probabilities that hold inf or nan (the logits overflowed or the weights are broken)",
        r"probability tensor contains either `?inf`?, `?nan`? or element < 0",
        ("probability tensor contains",),
        why="""torch.multinomial, which draws the next token when generation samples (do_sample), refused the probabilities
        because some are inf or nan. The model's logits were not finite: in float16 the activations of many models
        overflow (65504 is float16's largest value), most often with a model trained in bfloat16, split over several GPUs or
        quantised; weights that did not load whole (a checkpoint of another model or version, a failed merge of adapters)
        give the same; and a sampling setting can make them invalid (a temperature of 0 or near it, a repetition penalty on
        bad logits). The line does not say which: running the same prompt in bfloat16 or float32, and greedy decoding
        (do_sample=False), decide it.""",
        fix="""load the model in bfloat16 (torch_dtype=torch.bfloat16) or float32 instead of float16, on a GPU that supports it;
        check that the weights loaded whole (no 'weights not initialized' or missing-keys warning above), and that temperature
        is > 0 when sampling (or use do_sample=False); compare with one GPU and without quantisation to find which part breaks
        the logits""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: probability tensor contains either `inf`, `nan` or element < 0", "qwopqwop200/GPTQ-for-LLaMa#36 (a 4-bit model's generate)"),
            ("RuntimeError: probability tensor contains either inf, nan or element < 0", "Baichuan2 on two RTX 3090 in float16 with device_map='auto' (baichuan-inc/Baichuan2#292)"),
        ],
        refines="python-exception",  # the unrecognised answer names it: overflow, weights or settings, the line does not say
        not_examples=["NaN or Inf found in input tensor.", "RuntimeError: Function 'Log1PBackward0' returned nan values in its 0th output."],
    ),
    pattern(
        "import-name-missing",
        "platform",
        CAUSE,
        E,
        "a package imports a name that the installed version of another package does not have",
        r"^(?!.*(?:(?i:\bwarn(?:ing)?\b)|[A-Z]\w*Warning\b)).*?cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'(?! \(most likely due to a circular import\))"
        r"(?P<location> \(unknown location\))?",
        ("cannot import name",),
        why="""The module exists, but the installed version of its package has no such name: the code that imports it was
        written for another version of that package (the name was added in a later release, or removed or moved in the
        installed one). Two installed packages do not go together, or a script needs a version its environment does not
        have. '(unknown location)' after the module means Python found a folder of that name instead of the package (a
        folder in the working directory shadowing it, or an install that was half removed).""",
        fix="""`pip show` the package of that module and the one that imports it, and install versions that go together: the
        importing project's requirements name the version it needs (upgrade the package for a name it does not have yet, pin
        an older one for a name it removed); '(unknown location)': rename or remove the folder of the same name in the working
        directory, or reinstall the package (pip install --force-reinstall)""".replace("\n        ", " "),
        examples=[
            (
                "ImportError: cannot import name 'TrainingArguments' from 'transformers' (/lustre06/project/6005433/takfa/UW/ue/lib/python3.7/site-packages/transformers/__init__.py)",
                "huggingface/transformers#18269",
            ),
            (
                "ImportError: cannot import name 'SAVE_STATE_WARNING' from 'torch.optim.lr_scheduler' (/net/vaosl01/opt/NFS/su0/anaconda3/envs/scatr/lib/python3.7/site-packages/torch/optim/lr_scheduler.py)",
                "yang-zhang/lightning-language-modeling#2 (an older transformers with a newer torch)",
            ),
            ("ImportError: cannot import name 'DTensor' from 'torch.distributed.tensor'", "huggingface/transformers#38973 (transformers newer than torch)"),
            ("ImportError: cannot import name 'Trainer' from 'transformers' (unknown location)", "chz816/tas#3"),
            ("cannot import name 'DTensor' from 'torch.distributed.tensor' `", "QwenLM/Qwen3-VL#867 (the second line of transformers' 'Failed to import' message)"),
        ],
        not_examples=[
            "ImportError: cannot import name 'utils' from partially initialized module 'train' (most likely due to a circular import) (/home/u/train.py)",
            "ModuleNotFoundError: No module named 'transformers'",  # no package at all: module-not-found
            "WARNING: cannot import name 'FusedLayerNorm' from 'apex.normalization', using the PyTorch implementation",
            # a package's warning (a Python warning class) that it goes on without the name (facebookresearch/sam2's optional _C)
            "/home/ubuntu/sam2/sam2/utils/misc.py:259: UserWarning: cannot import name '_C' from 'sam2' (/home/ubuntu/sam2/sam2/__init__.py)",
        ],
    ),
    pattern(
        "hub-unreachable",
        "platform",
        CAUSE,
        E,
        "the job could not download from the Hugging Face Hub and the file is not in the local cache",
        r"We couldn't connect to '?https://huggingface\.co/?'? to load (?:this file|the files)|"
        r"(?P<status>429) Client Error: Too Many Requests for url: https://huggingface\.co|"
        r"LocalEntryNotFoundError: (?:An error happened while trying to locate the file on the Hub|Cannot find the requested files in the (?:disk )?cache)",
        ("couldn't connect to", "Too Many Requests", "LocalEntryNotFoundError"),
        why="""A model, tokenizer or dataset was named by its Hub id, not found in the local cache (~/.cache/huggingface, or
        HF_HOME), and the download failed: the machine (often a cluster's compute node, or a container) has no internet
        access or needs a proxy, HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set while the cache lacks a file, or the Hub
        refused the requests (429: too many at once, e.g. every rank and DataLoader worker downloading the same files).""",
        fix="""download the files once where the network works (`huggingface-cli download REPO_ID`, or snapshot_download) into the
        cache the job uses (the same HF_HOME on every node, or a shared folder), then run with HF_HUB_OFFLINE=1; or pass the local
        folder's path instead of the Hub id; behind a proxy set HTTPS_PROXY; for 429, download on one rank first (the others wait
        at a barrier) and log in (`huggingface-cli login`) for a higher rate limit""".replace("\n        ", " "),
        examples=[
            (
                "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like decapoda-research/llama-7b-hf is not the path to a directory containing a file named config.json.",
                "facebookresearch/bitsandbytes#34",
            ),
            ("OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files.", "aistudynow/Comfyui-HunyuanFoley#6"),
            ("OSError: We couldn't connect to 'https://huggingface.co/' to load this file, couldn't find it in the cached files and it looks like bert-base-uncased is not the path to a directory containing a file named config.json.", "yanivw12/gs2mesh#21"),
        ],
        not_examples=[
            # huggingface_hub's retry: it goes on (the failure, if any, is a later line)
            "HTTP Error 429 thrown while requesting HEAD https://huggingface.co/facebook/opt-350m/resolve/main/generation_config.json",
            "Checkout your internet connection or see how to run the library in offline mode at 'https://huggingface.co/docs/transformers/installation#offline-mode'.",
        ],
    ),
    pattern(
        "hub-access-refused",
        "platform",
        CAUSE,
        E,
        "the Hugging Face Hub refused the repository: it is gated or private and no accepted token was sent, or its id is wrong",
        r"(?P<error>GatedRepoError|RepositoryNotFoundError): 40[134] Client Error|Cannot access gated repo for url https://huggingface\.co/|"
        r"You are trying to access a gated repo|401 Client Error: Unauthorized for url: https://huggingface\.co/|"
        r"Repository Not Found for url: https://huggingface\.co/|is not a local folder and is not a valid model identifier listed on 'https://huggingface\.co/models'",
        ("Client Error", "gated repo", "Repository Not Found", "not a valid model identifier"),
        why="""The Hub answered the download with 401/403/404: the repository is gated (its licence must be accepted on its page
        with the same account) or private, and the request carried no token, or one without access; the Hub answers
        'Repository Not Found' for a private or gated repository it will not show, and for an id that does not exist (a
        typo, a renamed or removed model). On a cluster the token saved by `huggingface-cli login` on the login node is not
        seen by jobs whose HF_HOME or home directory differs.""",
        fix="""check the id on https://huggingface.co/REPO_ID; accept the model's licence there, then make the token visible to
        every rank: `huggingface-cli login` as the user and on the HF_HOME the job uses, or export HF_TOKEN=hf_... in the job's
        environment (a token with read access to gated repos); or download the files once and pass the local folder""".replace("\n        ", " "),
        examples=[
            (
                "huggingface_hub.utils._errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-661471eb-38c6ceb05c22031f04f730f7;54f54e0f-18d7-4cbf-a882-a291b1abd4b4)",
                "kyegomez/NeoSapiens#3 (meta-llama/Llama-2-7b)",
            ),
            ("Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json.", "zhaoxlpku/DASC7606-A3#1"),
            ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/resolve/main/tokenizer_config.json", "hyperonym/basaran#289"),
            (" OSError: You are trying to access a gated repo.", "zhaoxlpku/DASC7606-A3#1"),
        ],
        not_examples=[
            "[WARNING] [axolotl.scripts.check_user_token:358] [PID:441] [RANK:0] Error verifying HuggingFace token. Remember to log in using `huggingface-cli login`",
            "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://wandb.ai/api",
        ],
    ),
    pattern(
        "cuda-toolkit-missing",
        "cuda",
        CAUSE,
        E,
        "building a CUDA extension needs the CUDA toolkit (nvcc, CUDA_HOME), and it is not found",
        r"CUDA_HOME environment variable is not set|No such file or directory: '(?P<nvcc>[^']*/bin/nvcc)'|"
        r"^(?:/bin/(?:ba|da)?sh|sh|bash)(?:: line \d+)?: (?:\d+: )?(?P<command>(?:\S*/)?nvcc): (?:command )?not found",
        ("CUDA_HOME environment variable", "/bin/nvcc'", "nvcc: not found", "nvcc: command not found"),
        why="""A package compiles CUDA code at install or at first use (torch.utils.cpp_extension: a setup.py's CUDAExtension, a
        just-in-time op), which needs NVIDIA's compiler nvcc from the CUDA toolkit. The driver and the CUDA runtime inside
        the torch wheel are not the toolkit: the machine (or the container, e.g. a -runtime image instead of a -devel one)
        has no toolkit, or it is not where CUDA_HOME (or /usr/local/cuda) points, so torch finds no nvcc.""",
        fix="""`which nvcc; echo $CUDA_HOME; python -c "import torch; print(torch.version.cuda)"`: install the CUDA toolkit of
        torch's CUDA version (conda install -c nvidia cuda-toolkit=X.Y, the distribution's package, or a -devel container image)
        and export CUDA_HOME=/usr/local/cuda-X.Y (the folder with bin/nvcc) before the build; or install a prebuilt wheel of the
        package made for your torch and CUDA, which needs no compiler""".replace("\n        ", " "),
        examples=[
            ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "NVIDIA/flownet2-pytorch#218 (setup.py's CUDAExtension)"),
            ("      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "OpenBMB/CPM-Live#244 (pip's build of bmtrain)"),
            ("FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'", "microsoft/Swin-Transformer#101 (apex's setup.py runs CUDA_HOME/bin/nvcc -V)"),
            ("/bin/sh: 1: nvcc: not found", "a JIT build in a container without the toolkit"),
        ],
        not_examples=[
            "export CUDA_HOME=/usr/local/cuda-12.1",
            "nvcc: NVIDIA (R) Cuda compiler driver",
            "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",  # torch's note when no GPU is visible at build time
        ],
    ),
    pattern(
        "path-not-found",
        "platform",
        CAUSE,
        E,
        "a file or folder the job opens does not exist at that path (on the machine and in the folder the process ran in)",
        r"^(?!.*(?i:\bwarn(?:ing)?\b)).*?(?:FileNotFoundError|IOError|OSError): (?:\[Errno 2\] )?No such file or directory: ['\"](?P<path>[^'\"]+)['\"]"
        # the interpreter or the shell told to run a file (a script, a program) or to write to one that is not there: nothing
        # of it ran (python's own words; bash's for a command or a redirect named by a path, never a builtin's `cd: DIR`)
        r"|(?:^|[\s#>:])(?:\S*[/\\])?python[\d.]*(?:\.exe)?: can't open file ['\"](?P<script>[^'\"]+)['\"]: \[Errno 2\] No such file or directory"
        r"|^(?:(?:/(?:usr/)?bin/)?(?:ba|z|da)?sh|[\w./\-]+\.sh)(?:: line \d+)?: (?P<program>(?:\.{0,2}/|[\w.\-]+/)[^:\s]*): No such file or directory$"
        # (diagD21) a program's own failure status that names the file it did not find, at the start of its line ("[FAIL] Metadata
        # file not found: PATH", "ERROR: Config file not found: PATH"), and datasets' data_files that match nothing
        r"|^(?!.*(?i:\busing (?:the )?defaults?\b|\bwill (?:use|skip|create|be created)\b|\bskip(?:ping)?\b|\bcreating\b|\bdownloading\b))"
        r"\W{0,3}(?:\[(?:FAIL(?:ED)?|ERROR|FATAL)\]|(?:ERROR|FATAL|Error|FileNotFoundError):)\s*(?:[\w.-]+ ){0,3}?(?i:file|folder|directory) "
        r"(?:not found|does not exist)\s*:\s*['\"]?(?P<named>[^'\"\n]*[^'\"\s.])['\"]?\.?\s*$"
        r"|FileNotFoundError: Unable to find '(?P<data_files>[^']+)'"
        # (diagI33) a Go program's fatal or error line (Singularity/Apptainer, docker, kubectl, helm) ending in the os package's
        # words for a path it did not find: "FATAL:   could not open image X: ... lstat X: no such file or directory"
        r"|^(?!.*(?i:\bwarn(?:ing)?\b))\W{0,3}(?:FATAL|ERROR|Error|error)\s*(?:\[[^\]]*\])?\s*:?\s.*?\b(?:lstat|stat|open|chdir|readlink) "
        r"(?P<go_path>\.{0,2}/[^\s:]+|[\w.\-]+/[^\s:]+): no such file or directory\.?$",
        ("No such file or directory", "no such file or directory", "not found", "does not exist", "Unable to find '"),
        why="""The process asked for a path that does not exist where it looked. A relative path is resolved against the process's
        working directory, which a launcher, a scheduler's job, a Ray worker or a container sets, often not the folder the
        command was typed in; a path on one node's local disk does not exist on the other nodes (only shared storage is seen
        by every rank); a file that another rank or an earlier step was to write first (a checkpoint, a cache, a log folder)
        is not there yet or was written under another name; or the path in the configuration is misspelt.""",
        fix="""check the path the message names on the node the failing rank ran on (`ls -l PATH` there, in the job's working directory):
        use an absolute path on storage every node sees, create the folder before the ranks use it (os.makedirs(path,
        exist_ok=True) on every node, or on rank 0 then dist.barrier()), let one rank write a file before the others read it (a
        barrier between), and correct the path or the name in the configuration; a script or a program the command runs (or a
        file its shell writes to) that is not there: start the command from the folder that holds it, correct its path in the
        command or the job script, or build or fetch the program first""".replace("\n        ", " "),
        fields=opened_path,
        examples=[
            ("FileNotFoundError: [Errno 2] No such file or directory: '/home/DEDR-MM-FiD/checkpoint/Training_ET/checkpoint/latest/optimizer.pth.tar'", "alirezasalemi7/DEDR-MM-FiD#4 (a checkpoint not saved)"),
            # the interpreter or the shell, told to run a file that is not there (dev7w: ddrous/HiddenReps nohup.log, heldout18w)
            ("python: can't open file '/home/gb21553/Projects/HiddenReps/./limit_10_transformer_sine.py': [Errno 2] No such file or directory",
             "https://github.com/ddrous/HiddenReps (a nohup.log: the script's path does not exist, nothing ran)"),
            ("## python: can't open file '../exc/train_mpi.py': [Errno 2] No such file or directory", "uoguelph-mlrg/Theano-MPI#5 (run_1gpu.sh names a script not in the branch)"),
            ("bash: ./darknet/darknet: No such file or directory", "https://github.com/Aayushjshah/ALPR-Number-Plate-Recognition (darknet not built)"),
            ("train/launch.sh: line 5: log/sft_20250321-170440.txt: No such file or directory", "simplescaling/s1#106 (a redirect into log/, a folder not there)"),
            ("FileNotFoundError: [Errno 2] No such file or directory: 'logs/openml__arrhythmia__5_2022.09.16_20:21:07/checkpoint_best.pth'", "naszilla/tabzilla#33 (a relative path)"),
            ("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/models/checkpoint_13.pt'", "usnistgov/alignn#8"),
            ("[FAIL] Metadata file not found: C:\\Users\\gack8\\TTS cloning\\training_data\\processed_audio\\nicholas_only_metadata.json",
             "Gerardiebla/xtts-finetuner finetune.log (step 3 needs the metadata an earlier preprocessing step writes)"),
            ("FileNotFoundError: Unable to find '/data/sft/train.json'", "datasets.load_dataset's data_files that match no file"),
            ("FATAL:   could not open image /om2/user/smeisler/fmriprep_22.0.0rc0.sif: failed to retrieve path for /om2/user/smeisler/"
             "fmriprep_22.0.0rc0.sif: lstat /net/vast-storage.ib.cluster/scratch/vast/gablab/smeisler/fmriprep_22.0.0rc0.sif: no such file or directory",
             "nipreps/fmriprep#2787 (Singularity's image path, on storage the node did not see)"),
            ("FATAL:   failed to open overlay image overlay: failed to retrieve path for overlay: lstat /tmp/sandbox/overlay: no such file or directory",
             "apptainer/singularity#4270 (an overlay named by a relative path; heldout32e Shark-NLP/DiffuSeq log.err, an overlay not created)"),
        ],
        not_examples=[
            "libnccl-net.so: cannot open shared object file: No such file or directory",  # NCCL looking for an optional plugin
            "ls: cannot access '/efs/home/nxd-llama2-7b-ptl/checkpoints/epoch=0-step=100-v2.ckpt': No such file or directory",  # the user looking
            "[WARNING] could not read /tmp/cache/index.json: No such file or directory: '/tmp/cache/index.json', rebuilding it",
            "bash: cd: /usr/local/cuda/samples/1_Utilities/deviceQuery: No such file or directory",  # a builtin's folder, typed by hand
            "bash: nvidia-smi: command not found",  # a command looked up on the PATH: launcher-not-found's kind of story
            # (dev8w's mask2former log, a run that did not fail: the mapper skips what it does not find)
            "[08/30 23:00:26] mask2former.data.dataset_mappers.coco_instance_rgbd_dataset_mapper INFO: [Mapper] Noise-mask dir not found, will skip masks: /home/u/depth_noise_mask",
            "ERROR: Config file not found: configs/a.yaml, using the defaults",
            "WARNING: stat /etc/localtime: no such file or directory",  # a Go program's warning: it goes on
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
        # (a subcommand's parser names itself in words, "autotrain advanced cli"; a paste may glue its usage line before it)
        r"^(?:usage: .*?\] )?(?P<prog>[\w.\-]+(?: [\w.\-]+){0,3}?(?:\.py)?): error: (?P<problem>the following arguments are required: (?P<required>.+)|unrecognized arguments: (?P<unknown>.+)"
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
            ("run.py: error: argument --execution-providers: invalid choice: 'cuda' (choose from 'cpu')",
             "facefusion/facefusion#48 (the CPU package onnxruntime; onnxruntime-gpu fixed it)"),
            ("run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'azure', 'cpu')", "hacksider/Deep-Live-Cam#1136"),
            ("run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'dml', 'cpu')",
             "hacksider/Deep-Live-Cam#202 (onnxruntime-directml, DirectML's provider, where CUDA's was asked)"),
            ("train.py: error: the following arguments are required: --output_dir/--output-dir", "hiyouga/LlamaFactory#6075 (deepspeed's --local_rank=0 before the YAML path)"),
            ("main.py: error: argument --batch-size: invalid int value: '32,'", "argparse's message for a malformed value"),
            ("usage: autotrain <command> [<args>] autotrain advanced cli: error: unrecognized arguments: --data_path . --use_peft --use_int4",
             "huggingface/autotrain-advanced#157 (a subcommand's parser; the usage line glued before its error)"),
        ],
        not_examples=[
            "usage: train.py [-h] [--output_dir OUTPUT_DIR]",  # the usage line alone: printed by --help too
            "error: the following files would be overwritten by checkout:",
        ],
        after=("launcher-local-rank-arg",),
        fields=arguments_fields,
    ),
]
