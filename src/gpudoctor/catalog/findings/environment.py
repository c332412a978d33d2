"""Findings in the area "environment"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "environment"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


DISTRIBUTED_ENV_INCOMPLETE = FindingKind(
    id="distributed-env-incomplete",
    title={
        "check": "Some launcher variables are set but not {missing}",
        "join": "RANK={rank} WORLD_SIZE={world} are set but not {missing}: no job to join",
        "slurm": "SLURM_PROCID={rank} SLURM_NTASKS={world} are set but not {missing}, and no srun step's node list and job id to derive them from: no job to join",
    },
    severity=Severity.WARN,
    also=(Severity.ERROR,),
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md) (warn); `gpudoctor allreduce` and `gpudoctor train-smoke` (error: nothing is run)",
    summary="`RANK` or `WORLD_SIZE` is set, but not all of `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`. For `allreduce` and `train-smoke`, `RANK` and `WORLD_SIZE` mean *join a job*, and without `MASTER_ADDR`/`MASTER_PORT` there is none to join: most often a shell left over from a torchrun job. Under `srun` (`SLURM_PROCID`, `SLURM_NTASKS` of 2 or more) without `MASTER_ADDR`/`MASTER_PORT`, gpudoctor derives them ([slurm-rendezvous-derived](slurm-rendezvous-derived.md)); it is this error only where it cannot: no srun step, node list or numeric job id.",
    evidence="The variables that are set, `missing`, and `gpudoctor` (what it made of them).",
    why={
        "check": "init_process_group(init_method='env://') needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT together; a partial set is usually left over from another job and makes ranks wait for each other.",
        "join": "Joined as one rank of a job, gpudoctor meets its peers at MASTER_ADDR:MASTER_PORT (env://). Without them this is most often a shell left over from a torchrun job.",
        "slurm": "Under srun the ranks meet at MASTER_ADDR:MASTER_PORT, which the batch script exports; without them, and without a step node list and job id to derive them from, there is nowhere to meet (and torch would stop on KeyError: 'MASTER_ADDR').",
    },
    fix={
        "check": "torchrun --nproc-per-node=2 train.py  # sets them all for each rank",
        "join": "unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE  # then gpudoctor starts its own ranks; or start it under a launcher: torchrun --nproc-per-node=2 -m gpudoctor {command}",
        "slurm": "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1); export MASTER_PORT=$((15000 + SLURM_JOB_ID % 10000))  # in the batch script, then: srun python -m gpudoctor {command}",
    },
)


SLURM_RENDEZVOUS_DERIVED = FindingKind(
    id="slurm-rendezvous-derived",
    title="{names} not set under srun: the ranks meet at {where}",
    severity=Severity.INFO,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke` under `srun` (`gpudoctor check` joins the same way)",
    summary="""Run as a task of an `srun` step (`SLURM_PROCID`, `SLURM_NTASKS` of 2 or more) whose batch script
exported no `MASTER_ADDR` / `MASTER_PORT`, gpudoctor set them as Lightning's `SLURMEnvironment`
does: the address is the first host of the step's node list (`SLURM_STEP_NODELIST`, else
`SLURM_JOB_NODELIST`; hostlist syntax such as `node[01-03,07]` expanded), the port 15000 plus the
last four digits of `SLURM_JOB_ID`. A variable the script did set is kept.""",
    evidence="The values set, the node list variable and its value, `SLURM_JOB_ID`, `rule`.",
    why="Every task of the step derives the same address and port from the same variables, so they meet without the exports; a port another job on that node holds is the one thing that can go wrong.",
    fix="export {exports}  # in the batch script before srun, to choose them yourself",
)


DISTRIBUTED_ENV_MALFORMED = FindingKind(
    id="distributed-env-malformed",
    title="{values}: {problems}",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke`: nothing is run",
    summary="`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE` (or SLURM's `SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`) is not a number, or `RANK` is not below `WORLD_SIZE`, so this process cannot be one rank of a job.",
    evidence="The variables as set, `problems` (each variable and what is wrong with it), `gpudoctor` (what it made of them).",
    why="A launcher sets these variables as integers for each rank it starts (torchrun, srun). Another value is a typo or a leftover: torch.distributed would fail on it with a traceback, or wait for ranks that never come.",
    fix="unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE  # then gpudoctor starts its own ranks; or start it under a launcher: torchrun --nproc-per-node=2 -m gpudoctor {command}",
)


DISTRIBUTED_ENV_IGNORED = FindingKind(
    id="distributed-env-ignored",
    title="{seen} ignored: {reason}",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke`",
    summary="`RANK`/`WORLD_SIZE` are in the environment but gpudoctor ran its own local ranks: only one of the two is set, or `--nproc` was given outside torchrun.",
    evidence="The variables as set and `gpudoctor` (why they were ignored).",
    why="RANK and WORLD_SIZE say 'this process is one rank of a job'. Left over in a shell (an export from another job, a sourced script) they make every later run of a distributed tool try to join a job that is not there.",
    fix="unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE  # then gpudoctor starts its own ranks",
)


DISTRIBUTED_ENV = FindingKind(
    id="distributed-env",
    severity=Severity.OK,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The launcher variables in the environment: `ok` when none is set (a plain shell), `info` listing `MASTER_ADDR`, `MASTER_PORT`, `RANK`, `LOCAL_RANK`, `WORLD_SIZE`, `NCCL_*` and SLURM's job variables when some are.",
    evidence="The variables that are set.",
    title={
        "none": "No distributed launcher variables are set (a plain single-process shell)",
        "set": "Distributed variables in the environment: {variables}",
    },
    more_why="They decide how ranks find each other; seeing them in one place explains many hangs.",
    more_fix="Nothing to fix.",
)


GLOO_SOCKET_IFNAME_MISSING = FindingKind(
    id="gloo-socket-ifname-missing",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`GLOO_SOCKET_IFNAME` names an interface that does not exist (gloo takes exact names, comma-separated).",
    evidence="`GLOO_SOCKET_IFNAME`, `interfaces here`.",
    title="GLOO_SOCKET_IFNAME={value} names an interface that does not exist: {missing}",
    why="gloo takes exact interface names; with one that does not exist, init_process_group fails with 'Unable to find address for <name>'.",
    fix="export GLOO_SOCKET_IFNAME={interface}",
)


MASTER_ADDR_UNRESOLVABLE = FindingKind(
    id="master-addr-unresolvable",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md); `gpudoctor allreduce` and `gpudoctor train-smoke` before they join a job (nothing is run)",
    summary="`MASTER_ADDR` is set but empty, or its name does not resolve (looked up with a 3-second deadline).",
    evidence="`MASTER_ADDR`, `lookup` (the resolver's error).",
    title="MASTER_ADDR={value} {lookup}",
    why="Every rank connects to MASTER_ADDR to rendezvous; a name that does not resolve makes init_process_group fail or wait until its timeout.",
    fix="export MASTER_ADDR=127.0.0.1  # single node; across nodes: rank 0's hostname or IP",
)


MASTER_PORT_INVALID = FindingKind(
    id="master-port-invalid",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md); `gpudoctor allreduce` and `gpudoctor train-smoke` before they join a job (nothing is run)",
    summary="`MASTER_PORT` is not an integer from 1 to 65535.",
    evidence="`MASTER_PORT`.",
    title="MASTER_PORT={value} is not a port number (1-65535)",
    why="torch.distributed's env:// rendezvous reads MASTER_PORT as an integer TCP port and fails before any rank starts talking.",
    fix="export MASTER_PORT=29500  # or let torchrun pick: torchrun --rdzv-endpoint=localhost:0 ...",
)


NCCL_IB_DISABLED = FindingKind(
    id="nccl-ib-disabled",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`NCCL_IB_DISABLE` is set to a true value.",
    evidence="`NCCL_IB_DISABLE`.",
    title="NCCL_IB_DISABLE={value}: NCCL will not use InfiniBand/RoCE between nodes",
    why="Across nodes NCCL then falls back to TCP sockets, much slower than InfiniBand; it changes nothing on a single node or a cluster without IB.",
    fix="unset NCCL_IB_DISABLE  # when the nodes have InfiniBand or RoCE",
)


NCCL_P2P_DISABLED = FindingKind(
    id="nccl-p2p-disabled",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`NCCL_P2P_DISABLE` is set to a true value.",
    evidence="`NCCL_P2P_DISABLE`, and what NVML says about P2P between the GPUs.",
    title="NCCL_P2P_DISABLE={value}: NCCL does not use direct GPU-to-GPU transfers",
    why="Traffic between GPUs of one node then goes through host memory (SHM), often several times slower than NVLink or PCIe P2P. Fine if set on purpose to avoid a P2P hang; otherwise a leftover.",
    fix="unset NCCL_P2P_DISABLE  # then: gpudoctor allreduce, to see whether P2P works",
)


NCCL_SOCKET_IFNAME_MISSING = FindingKind(
    id="nccl-socket-ifname-missing",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`NCCL_SOCKET_IFNAME` matches no network interface on this machine. NCCL's syntax is a comma list of name prefixes; `=` before the list means exact names; `^` means all interfaces except these. `error` when torch has NCCL, `warn` otherwise.",
    evidence="`NCCL_SOCKET_IFNAME`, `interfaces here`, `torch has NCCL`.",
    title="NCCL_SOCKET_IFNAME={value} matches no network interface on this machine",
    why="NCCL bootstraps over the interfaces it names; when none exists, init fails with 'Bootstrap : no socket interface found' or hangs waiting for the other ranks.",
    fix="export NCCL_SOCKET_IFNAME={interface}  # an interface that exists (see: ip -br addr)",
)
