"""Findings of `check` comparing the nodes of a job (under torchrun/srun, or
`--facts` once per node), which `allreduce` and `train-smoke` also report first
when joined across nodes."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "fleet"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md#fleet-mode-comparing-the-nodes-of-a-job) under torchrun/srun or with `--facts` once per node; first in `allreduce` and `train-smoke` joined across nodes"


FLEET_TORCH_MISMATCH = FindingKind(
    id="fleet-torch-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes run different torch releases or CUDA builds (the `torch` column: version and its CUDA; a torch that fails to import on one node counts as different).",
    evidence="`fact`, `values` (each value with the ranks and nodes that have it), `unknown on`.",
    title="Nodes differ in torch: {values}",
    why="Ranks built from different torch releases or CUDA builds may not interoperate: c10d's wire protocol, DDP's bucketing and the bundled NCCL change between releases; jobs hang at init or at the first collective, or fail with errors that point nowhere near the cause.",
    fix={
        "index": "pip install torch=={version} --index-url https://download.pytorch.org/whl/{index}  # on {odd}; better: one container image or venv for every node",
        "pypi": "pip install torch=={version}  # on {odd}; better: one container image or venv for every node",
    },
)


FLEET_NCCL_MISMATCH = FindingKind(
    id="fleet-nccl-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes load different NCCL versions (torch's bundled one, or another `libnccl` found first).",
    evidence="`fact`, `values`, `unknown on`.",
    title="Nodes differ in NCCL: {values}",
    why="Every rank of a communicator must run the same NCCL: versions differ in their bootstrap and wire protocol, and a mix hangs in ncclCommInitRank or fails with 'unhandled system error' / 'invalid usage'. A node with another libnccl (LD_LIBRARY_PATH, LD_PRELOAD, another nvidia-nccl wheel) is the usual cause when torch is the same.",
    fix="pip install --force-reinstall nvidia-nccl-cu12=={version}  # on {odd}; and drop other libnccl paths from LD_LIBRARY_PATH / LD_PRELOAD there",
)


FLEET_DRIVER_MISMATCH = FindingKind(
    id="fleet-driver-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes run different NVIDIA drivers (or one has none).",
    evidence="`fact` (`driver`: version and the newest CUDA it supports), `values`.",
    title="Nodes differ in driver: {values}",
    why="The driver decides which CUDA features, NVLink/NVSwitch fabric and GPUDirect RDMA paths a node supports; nodes on different drivers pick different NCCL transports, and a driver older than torch's CUDA makes CUDA unusable on that node.",
    fix="nvidia-smi  # on {odd}: install driver {driver} as on the other nodes, or leave them out: srun --exclude=<those nodes> ...",
)


FLEET_GPU_MODEL_MISMATCH = FindingKind(
    id="fleet-gpu-model-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes have different GPU models.",
    evidence="`fact`, `values` (per node: the model, or `Nx model` for mixed nodes).",
    title="Nodes differ in GPU model: {values}",
    why="Every step waits for the slowest rank, so one node of older or smaller GPUs slows the whole job; a batch size chosen for the larger memory runs out of memory on the smaller one.",
    fix="srun --constraint=<gpu type> ...  # one GPU model for the job ({model}); or leave out {odd}",
)


FLEET_GPU_COUNT_MISMATCH = FindingKind(
    id="fleet-gpu-count-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes differ in how many GPUs torch sees, or NVML counts (`N of M`: torch sees N of the M GPUs NVML lists).",
    evidence="`fact`, `values`.",
    title="Nodes differ in GPUs (torch of NVML): {values}",
    why="torchrun starts the same number of ranks on every node; a node with fewer usable GPUs puts two ranks on one GPU (NCCL: 'Duplicate GPU detected') or fails with 'invalid device ordinal'. A GPU missing from NVML fell off the bus (Xid 79) or was never seen by the driver.",
    fix="nvidia-smi -L; echo $CUDA_VISIBLE_DEVICES  # on {odd} ({count} elsewhere); or leave them out: srun --exclude=<those nodes> ...",
)


FLEET_GPUS_FEWER_THAN_RANKS = FindingKind(
    id="fleet-gpus-fewer-than-ranks",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A node runs more ranks of the job than torch sees GPUs there (only when the job has GPUs at all).",
    evidence="per node: `ranks`, `GPUs torch sees`.",
    title="{runs}",  # per node: "<ranks (node)> runs <n> ranks on <m> GPUs", joined by "; "
    why="With NCCL each rank needs its own GPU; the extra ranks share one ('Duplicate GPU detected') or ask for a device that does not exist ('invalid device ordinal').",
    fix="torchrun --nproc-per-node={nproc} ...  # or restore the missing GPUs on {nodes}",
)


FLEET_INFINIBAND_MISMATCH = FindingKind(
    id="fleet-infiniband-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes differ in their InfiniBand/RoCE devices (`/sys/class/infiniband`): one has none, or a port that is down (`mlx5_0 (down)`), or other devices. Nodes whose devices could not be read are not compared.",
    evidence="`fact`, `values`, `unknown on`.",
    title="Nodes differ in InfiniBand: {values}",
    why="NCCL uses InfiniBand/RoCE between nodes when it finds it, else TCP sockets; a node without the device, or with its port down, drags every all-reduce to socket speed or fails to connect ('NET/IB : No device found', 'Connection refused').",
    fix="ibstat  # on {odd}: load the driver (modprobe mlx5_ib), bring the port up, or leave the nodes out; the others have {infiniband}",
)


FLEET_SOCKET_IFNAME_MISSING = FindingKind(
    id="fleet-socket-ifname-missing",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`NCCL_SOCKET_IFNAME` (prefixes, `=` exact, `^` exclude: NCCL's syntax) or `GLOO_SOCKET_IFNAME` (exact names) selects no network interface on some nodes. It replaces the node-local [nccl-socket-ifname-missing](nccl-socket-ifname-missing.md) and [gloo-socket-ifname-missing](gloo-socket-ifname-missing.md) in a fleet report, and is an error whether or not this torch has NCCL: the nodes disagree on the network.",
    evidence="the variable's value per odd node, `interfaces there`, `interfaces on every node`.",
    title={
        "others-have": "{var}={value} names no interface on {missing} (it does on {have})",
        "no-other": "{var}={value} names no interface on {missing}",
    },
    why="{backend} binds to the interfaces {var} names; a rank that finds none fails ('Bootstrap : no socket interface found', 'Unable to find address for') and every other rank waits for it until the timeout.",
    fix="export {var}={interface}  # an interface every node has (ip -br addr on each)",
)


FLEET_ENV_MISMATCH = FindingKind(
    id="fleet-env-mismatch",
    severity=Severity.ERROR,
    also=(Severity.WARN, Severity.INFO,),
    when="by variable",
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""An `NCCL_*`, `GLOO_*`, `CUDA_*`, `MASTER_*`, `TORCH_NCCL_*` or `TORCH_DISTRIBUTED_*` variable is set differently on the nodes, or on some nodes only (`unset` is a value). One finding per variable. Variables that differ per rank by design (`RANK`, `LOCAL_RANK`, `GROUP_RANK`, `SLURM_*`) and variables outside these prefixes are not compared.

Severity by what the variable does:

- **error**: every `NCCL_*`, `TORCH_NCCL_*` and `GLOO_*` variable not named below (nearly all
  of them choose a transport, an algorithm, buffers or channels: `NCCL_IB_DISABLE`,
  `NCCL_PROTO`, `NCCL_ALGO`, `NCCL_BUFFSIZE`, `NCCL_MIN_NCHANNELS`,
  `NCCL_P2P_DISABLE`, ...), and `CUDA_LAUNCH_BLOCKING`,
  `CUDA_DEVICE_MAX_CONNECTIONS`, `MASTER_ADDR`, `MASTER_PORT`, `TORCH_DISTRIBUTED_DEBUG`;
- `CUDA_VISIBLE_DEVICES`: **error** when some node lists fewer devices (a shorter list, an
  empty one, or a list where the others have none), unless torch is seen to count the same
  GPUs on every node; **warn** for as many devices in another order or by other ids;
- **warn**: per-node files (`NCCL_TOPO_FILE`, `NCCL_GRAPH_FILE`, `NCCL_CONF_FILE`) and the
  other `CUDA_*` and `TORCH_DISTRIBUTED_*` variables (`CUDA_DEVICE_ORDER`, `CUDA_MODULE_LOADING`, ...);
- `NCCL_SOCKET_IFNAME`, `GLOO_SOCKET_IFNAME`: judged on each node against that node's own
  interfaces (NIC names often differ per node): **info** when every node's value names an
  interface there; **warn** when some node leaves it unset or its interfaces are unknown;
  a value that names no interface on its node is
  [fleet-socket-ifname-missing](fleet-socket-ifname-missing.md) (error) instead;
- **info**: debug output and installation paths: `NCCL_DEBUG`, `NCCL_DEBUG_SUBSYS`,
  `NCCL_DEBUG_FILE`, `NCCL_TOPO_DUMP_FILE`, `NCCL_GRAPH_DUMP_FILE`, `NCCL_HOSTID`, `CUDA_HOME`,
  `CUDA_PATH`, `CUDA_ROOT`, `CUDA_CACHE_PATH`, `CUDA_INSTALL_PATH`.""",
    evidence="`fact` (the variable), `values` (each value with its ranks and nodes), `unknown on`.",
    title={
        "harmless": "Nodes differ in {name}: {values}",
        "nccl": "Nodes differ in {name}: {values}",
        "gloo": "Nodes differ in {name}: {values}",
        "rendezvous": "Nodes differ in {name}: {values}",
        "interfaces": "Nodes differ in {name}: {values} (each names an interface of its own node)",
        "interfaces-unsure": "Nodes differ in {name}: {values}",
        "other": "Nodes differ in {name}: {values}",
    },
    why={
        "harmless": "Debug output or a per-node path: harmless, though a node that logs differently is harder to compare.",
        "nccl": "NCCL reads its variables on each rank; ranks that disagree on transports, algorithms, protocols or buffer sizes hang at init or at the first collective, and one node without a tuning the others have runs slower, which every rank then waits for.",
        "gloo": "gloo reads its variables on each rank; nodes that disagree may bind to networks that cannot reach each other.",
        "rendezvous": "Every rank must rendezvous at the same MASTER_ADDR:MASTER_PORT; ranks told another address wait there forever.",
        "interfaces": "Each node's value names an interface that exists on that node. NIC names often differ between nodes, and NCCL and gloo bind on each rank to its own node's interface, so this is fine as long as those interfaces reach each other, which the job's first collective shows.",
        "interfaces-unsure": "Some nodes leave it unset (NCCL and gloo then choose an interface themselves) or their interfaces could not be read: nothing here decides whether the interfaces chosen there reach the others; an all-reduce across the nodes does.",
        "other": "The same program sees other devices or behaves differently on those nodes (CUDA_VISIBLE_DEVICES renumbers GPUs, CUDA_LAUNCH_BLOCKING=1 serialises every kernel launch and slows that node).",
    },
    fix={
        "unset": "unset {name}  # on {odd}, as on the other nodes (check ~/.bashrc, the job script, /etc/nccl.conf)",
        "export": "export {name}={value}  # on {odd}, as on the other nodes; set it in the job script, not per node",
        "interfaces": "gpudoctor allreduce  # launched across the nodes as the job is: nothing to change if it passes ({name} names an interface on each node)",
        "interfaces-unsure": "ip -br addr  # on {odd}: set {name} there to its interface on the network the other nodes use; then gpudoctor allreduce across the nodes",
    },
)


FLEET_PYTHON_MISMATCH = FindingKind(
    id="fleet-python-mismatch",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The nodes run different Python versions.",
    evidence="`fact`, `values`.",
    title="Nodes differ in Python: {values}",
    why="Different interpreters mean different environments: packages, pickled objects sent with all_gather_object/broadcast_object_list and compiled extensions may not match across nodes.",
    fix="python -V  # on {odd}; the others run {version}: use one container image or venv for every node",
)


FLEET_SHM_MISMATCH = FindingKind(
    id="fleet-shm-mismatch",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`/dev/shm` has different sizes on the nodes. A node below 1 GiB also gets [shm-too-small](shm-too-small.md), with the nodes it applies to.",
    evidence="`fact`, `values`.",
    title="Nodes differ in /dev/shm: {values}",
    why="NCCL's shared-memory transport between ranks of a node and DataLoader workers live in /dev/shm; a node given a smaller one (another container setup) fails first.",
    fix="docker run --shm-size={size} ...  # on {odd}, as on the other nodes",
)


FLEET_CONSISTENT = FindingKind(
    id="fleet-consistent",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Every node agrees on torch, NCCL, the driver, the GPU model and count, InfiniBand, Python, `/dev/shm` and every compared variable.",
    evidence="`nodes`.",
    title="{nodes} agree on {compared}",
    more_why="Nodes that agree rule out the skews that hang or slow multi-node jobs (another NCCL, driver or interface on one node); a problem that remains is in the node-local findings, or shows in `gpudoctor allreduce` across the nodes.",
    more_fix="Nothing to fix.",
)
