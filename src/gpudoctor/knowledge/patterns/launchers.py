"""What the launchers built on torch (DeepSpeed's runner, accelerate) refuse before any
training starts: a node they cannot reach over ssh, a CUDA toolkit they need to build
their ops. The launcher's own traceback follows; the fix is in the environment."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

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
    pattern(
        "extension-build-failed",
        "launcher",
        CAUSE,
        E,
        "a CUDA extension failed to compile just in time (DeepSpeed ops, other torch C++/CUDA extensions)",
        r"Error building extension '(?P<extension>[\w.]+)'",
        ("Error building extension",),
        why="""DeepSpeed (and other libraries) compile their CUDA ops with ninja and nvcc at first use. That fails when
        nvcc is missing or its CUDA version differs from torch.version.cuda, when the host compiler is too new
        for that nvcc, or when a stale build sits in ~/.cache/torch_extensions. The compiler's own error is in
        the lines above ("FAILED: ... .cuda.o").""",
        fix="nvcc --version vs python -c 'import torch; print(torch.version.cuda)' must match; rm -rf ~/.cache/torch_extensions; or prebuild: DS_BUILD_FUSED_ADAM=1 pip install deepspeed --no-cache-dir",
        examples=[
            ("RuntimeError: Error building extension 'fused_adam'", "deepspeedai/DeepSpeed#629"),
            ("[BUG] RuntimeError: Error building extension 'fused_adam' Loading extension module fused_adam", "deepspeedai/DeepSpeed#5623"),
        ],
        not_examples=["Building extension module fused_adam..."],
        fields=groups,
    ),
]
