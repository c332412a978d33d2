"""NCCL: what its WARN lines and torch's NCCL errors mean."""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, HARMLESS, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO
# Two ranks on one GPU: torch's fix, and XGBoost's step before it where XGBoost's check said it (its workers, one per GPU)
TORCH_ONE_GPU_PER_RANK = ('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # before init_process_group / model.cuda(); and no more ranks per node '
                          "than it has GPUs: --nproc-per-node (accelerate's --num_processes, a launch script's GPU count) = the number of GPUs "
                          "(nvidia-smi -L), 1 on a one-GPU machine")
XGBOOST_ONE_GPU_PER_WORKER = ("one worker per GPU: dask: dask_cuda.LocalCUDACluster() (one worker per visible GPU; or dask-cuda-worker on each "
                              "node) in place of a LocalCluster(n_workers=N) whose workers all see GPU 0, and no more workers than GPUs; Spark: "
                              "spark.task.resource.gpu.amount=1 with one executor per GPU; MIG slices of one card are one device to NCCL: "
                              "whole GPUs, or one worker; for torch's own ranks, the same rule")


def duplicate_fields(m: re.Match, context: list[str]) -> dict:
    """XGBoost's check: its step (knowledge/story.py puts a `read_as` step before the pattern's fix)."""
    out = groups(m, context)
    if out.get("xgboost"):
        out["step"], out["read_as"] = XGBOOST_ONE_GPU_PER_WORKER, "nccl-duplicate-gpu"
    return out


SHM_FIX = "docker run --ipc=host ...  (or --shm-size=16g; Kubernetes: mount an emptyDir with medium: Memory at /dev/shm)"

LAST_ERROR = re.compile(r"Last error:\s*(\S.{0,299})")


def last_error(m, context):
    """torch prints NCCL's own reason on the line after 'Last error:' (or after it on the
    same line when the message was pasted as one line): it is the most useful evidence."""
    out = groups(m, context)
    inline = LAST_ERROR.search(m.string)
    if inline:
        out["last_error"] = inline.group(1).strip()
        return out
    for i, line in enumerate(context):
        if line.strip().rstrip(":") == "Last error":
            following = [rest.strip() for rest in context[i + 1 :] if rest.strip()]
            if following:
                out["last_error"] = following[0][:300]
            break
    return out


# The trace of return codes NCCL prints under its warning names the files the failure went through: one through
# bootstrap.cc failed while the ranks were connecting, before the communicator existed (NVIDIA/nccl#1612).
BOOTSTRAP_TRACE = re.compile(r"\bbootstrap\.cc:\d+(?: -> \d+| NCCL WARN)")


def peer_closed(m, context):
    """The lost connection's stage: "bootstrap" when the warning or the trace under it is in NCCL's bootstrap."""
    out = groups(m, context)
    if BOOTSTRAP_TRACE.search(m.string) or any(BOOTSTRAP_TRACE.search(line) for line in context):
        out["stage"] = "bootstrap"
    return out


PATTERNS = [
    pattern(
        "nccl-shm-segment",
        "nccl",
        CAUSE,
        E,
        "NCCL could not create or attach its /dev/shm segment",
        r"(?:Error while (?:creating|attaching to) shared memory segment|failed to extend /dev/shm/nccl-\S* to \d+ bytes|Call to posix_fallocate failed ?: No space left on device)",
        ("shared memory segment", "/dev/shm/nccl-", "posix_fallocate"),
        why="""NCCL passes data between ranks on the same node through files in /dev/shm. When /dev/shm
        is too small (Docker's default is 64 MB) or is not shared between the ranks' containers, creating or
        attaching the segment fails and NCCL reports an 'unhandled system error'.""",
        fix=SHM_FIX + "   # check: df -h /dev/shm",
        examples=[
            (
                "mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)",
                "pytorch/ci-infra#490",
            ),
            ("ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 bytes", "NVIDIA/nccl-tests#166"),
            (
                "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)",
                "NVIDIA/nccl#1589",
            ),
            ("[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device", "NVIDIA/nccl#525"),
        ],
    ),
    pattern(
        "nccl-duplicate-gpu",
        "nccl",
        CAUSE,
        E,
        "two ranks are on the same GPU",
        r"Duplicate GPU detected ?: rank (?P<rank_a>\d+)(?: and rank (?P<rank_b>\d+)(?: both on CUDA device (?P<bus_id>\w+))?)?"
        # (diagC31) XGBoost's own check before its NCCL all-reduce: the workers of one training share a GPU (dask workers of
        # a LocalCluster, Spark tasks, MIG slices of one card), "n_uniques == world (1 vs. 10)"
        r"|(?P<xgboost>Multiple processes within communication group running on same CUDA device is not supported)",
        ("Duplicate GPU", "running on same CUDA device"),
        why="""NCCL needs one GPU per rank. Without torch.cuda.set_device(local_rank) before the first CUDA
        call every rank of a node uses cuda:0; a hard-coded device, CUDA_VISIBLE_DEVICES set to one GPU for
        all ranks, or more ranks than GPUs (--nproc-per-node) do the same. XGBoost's GPU training checks it
        itself: its workers (dask workers, Spark tasks) each need a GPU of their own, and workers that all see
        the same one (a plain LocalCluster's, more workers than GPUs) stop it.""",
        fix=TORCH_ONE_GPU_PER_RANK,
        fields=duplicate_fields,
        examples=[
            (
                "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
                "horovod/horovod#3929",
            ),
            ("Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000", "NVIDIA/Megatron-LM#661"),
            ("Exception in gpu_hist: [12:40:37] /root/repo/xgboost/src/common/device_helpers.cu:64: Check failed: n_uniques == world (1 vs. 10) : "
             "Multiple processes within communication group running on same CUDA device is not supported",
             "dmlc/xgboost#6344 (heldout29b, retired: ten dask workers on one GPU)"),
            ("XGBoostError: Multiple processes within communication group running on same CUDA device is not supported",
             "dask/dask#10091 (dask-cuda workers on MIG slices of one A100)"),
        ],
        not_examples=["[0] NCCL INFO comm 0x556fe4c70860 rank 3 nranks 16 cudaDev 3 nvmlDev 3 - Init COMPLETE"],
    ),
    pattern(
        "nccl-socket-ifname",
        "nccl",
        CAUSE,
        E,
        "NCCL found no usable network interface (NCCL_SOCKET_IFNAME)",
        r"(?:Bootstrap : no socket interface found|no NCCL_SOCKET_IFNAME interface found|ncclSocketInit: connecting to address\s+with family \d+ is neither AF_INET"
        r"|Socket creation failed : Address family not supported)",
        ("socket interface found", "ncclSocketInit", "NCCL_SOCKET_IFNAME interface", "Socket creation failed"),
        why="""NCCL_SOCKET_IFNAME names an interface this node does not have (names differ between nodes:
        eth0 on one, ens5 on another), or uses a syntax this NCCL does not accept, so NCCL has no address to
        bootstrap from.""",
        fix="ip -br addr   # then: export NCCL_SOCKET_IFNAME=<interface that carries the node's IP> (or unset it)",
        examples=[
            ("Bootstrap : no socket interface found", "NVIDIA-NeMo/Speech#15019 (the 'Last error:' line under ncclInvalidUsage, as torch quotes it)"),
            ("[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)", "NVIDIA/nccl#1837"),
            ("node1:1958:1958 [3] NCCL WARN Bootstrap : no socket interface found", "marin-community/marin#6940"),
            ("include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol", "NVIDIA/nccl#210 (old NCCL: no usable IP interface)"),
        ],
    ),
    pattern(
        "nccl-socket-connect",
        "nccl",
        CAUSE,
        E,
        "NCCL could not open a TCP connection to another rank",
        # only failures: NCCL INFO "Call to connect returned ..., retrying" is normal while peers start
        r"(?:Connect to (?P<peer>\S+) failed|Call to connect failed\s*:?\s*(?P<reason>[A-Za-z ]+))",
        ("onnect",),
        why="""Bootstrap and socket transport connect to other ranks' addresses. A firewall, a wrong interface
        (docker0, a veth, a VPN chosen by default) or a node that is unreachable on that network makes the
        connection time out or be refused; NCCL then fails with 'unhandled system error' or hangs in init.""",
        fix="set NCCL_SOCKET_IFNAME to the interface the nodes reach each other on (see 'Bootstrap : Using' lines); open the ports between nodes",
        examples=[
            ("gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out", "NVIDIA/nccl-tests#15"),
            ("beijing:47853:47899 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.5<43271> failed : Software caused connection abort", "NVIDIA/nccl-tests#162"),
        ],
        not_examples=["node0:13571:13571 [0] NCCL INFO Connected all rings", "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying"],
    ),
    pattern(
        "nccl-ib-verbs",
        "nccl",
        CAUSE,
        E,
        "an InfiniBand/RoCE verbs call failed",
        r"Call to (?P<call>ibv_\w+) failed(?: with error (?P<reason>[^\n]+))?",
        ("ibv_",),
        why="""NCCL could not set up its InfiniBand/RoCE queue pairs: the port is down, the GID index is wrong
        for RoCE, the container lacks /dev/infiniband or locked-memory limits, or the HCA chosen is not wired
        to the other nodes.""",
        fix="ibstat; ibv_devinfo   # RoCE: export NCCL_IB_GID_INDEX=3; containers: --device=/dev/infiniband --ulimit memlock=-1; to confirm: NCCL_IB_DISABLE=1",
        examples=[
            ("node08:6561:6600 [0] misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed", "NVIDIA/nccl#1129"),
            ("dgxh100-3:2152176:2152299 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable", "NVIDIA/nccl-tests#185"),
            ("spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed", "NVIDIA/nccl#380"),
        ],
    ),
    pattern(
        "nccl-ib-completion-error",
        "nccl",
        CAUSE,
        E,
        "a network transfer (InfiniBand/RoCE/EFA) failed or the port reported an error",
        # NCCL <= 2.18 "with error 12, opcode 0"; 2.19+ "with status=12 opcode=0"; 2.27+ names it "status=IBV_WC_RETRY_EXC_ERR(12)"
        r"NET/IBP?(?:/GIN)?\s*:\s*Got completion (?:from peer (?P<peer>\S+) )?with (?:error (?P<status>\d+)|status=(?:(?P<status_name>IBV_WC_\w+)\()?(?P<status2>\d+))"
        r"|NET/IB ?: .*Got async event ?: (?P<event>.+)|NET/OFI .*completed with error",
        ("Got completion", "Got async event", "NET/OFI"),
        why="""The network reported a failed transfer. Error 12 (retry exceeded) means packets to the peer were
        lost: a flapping link, a bad cable or switch port, or congestion on RoCE without proper flow control.
        Error 5 (flushed) usually means the peer process already died.""",
        fix="check the links on both nodes (ibstat, ibdiagnet, switch counters); run nccl-tests between the two nodes; exclude the node that fails",
        examples=[
            ("kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)", "NVIDIA/nccl-tests#252"),
            ("NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129", "tatsu-lab/stanford_alpaca#207"),
            ("NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)", "NVIDIA/nccl#1664"),
            ("[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0", "NVIDIA/nccl#1928"),
        ],
    ),
    pattern(
        "nccl-ib-no-device",
        "nccl",
        HARMLESS,
        I,
        "NCCL found no InfiniBand device and uses TCP sockets (safe to ignore without InfiniBand)",
        r"NET/IB ?: No device found|Failed to open libibverbs\.so",
        ("No device found", "libibverbs"),
        why="""Informational: without an InfiniBand/RoCE adapter (or its libraries) NCCL falls back to TCP
        sockets. Safe to ignore on machines without InfiniBand; on an InfiniBand cluster it means inter-node
        traffic is much slower than it should be.""",
        fix="nothing on one node or without InfiniBand; on an IB cluster: ibv_devinfo, and mount /dev/infiniband into the container",
        examples=[
            ("worker:101542:101542 [0] NCCL INFO NET/IB : No device found.", "Oneflow-Inc/oneflow#3586"),
            ("ip-172-31-0-137:14605:14673 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]", "pytorch/pytorch#68893"),
        ],
    ),
    pattern(
        "nccl-p2p-in-use",
        "nccl",
        HARMLESS,
        I,
        "NCCL sends between these GPUs over PCIe/NVLink peer-to-peer (fine unless the job hangs)",
        r"via P2P/(?P<transport>IPC|CUMEM|direct)",
        ("via P2P",),
        why="""Informational: NCCL chose direct GPU-to-GPU transfers. When a job then hangs in its first
        collectives with no error, broken P2P (PCIe ACS or the IOMMU redirecting peer traffic, some VMs and
        consumer boards) is the usual suspect.""",
        fix="only if the job hangs: NCCL_P2P_DISABLE=1 to confirm, then disable ACS / set iommu=pt; `gpudoctor check` tests P2P",
        examples=[
            ("node0:13572:13572 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via P2P/IPC", "NCCL INFO channel setup line (cf. NVIDIA/nccl#1232)"),
            ("g148:14937:69361 [0] NCCL INFO Channel 00/1 : 0[0] -> 7[7] via P2P/CUMEM", "NVIDIA/nccl#1589"),
        ],
        fields=groups,
    ),
    pattern(
        "nccl-collective-mismatch",
        "nccl",
        CAUSE,
        E,
        "NCCL detected ranks calling different collectives",
        r"Mismatched collective detected(?:, please check your collective calls at and around rank (?P<culprit_rank>\d+))?|collective mismatch error|message truncated : receiving (?P<received>\d+) bytes instead of (?P<expected>\d+)",
        ("ismatch", "message truncated"),
        why="""Every rank must call the same collectives in the same order with the same sizes. A collective
        under `if rank == 0`, uneven batches, or different tensor shapes per rank make NCCL see mismatched
        calls (a 'message truncated' receive is a peer sending more bytes than this rank expects). Different
        NCCL_PROTO/NCCL_ALGO settings between ranks do the same.""",
        fix="rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL to get each rank's collective; look for collectives inside rank-dependent branches",
        examples=[
            ("init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs", "NVIDIA/nccl#296"),
            ("n136-081-017:201800:201850 [2] NCCL WARN NET/IB : collective mismatch error", "NVIDIA/nccl#531"),
            ("node1:4242:4300 [0] NCCL WARN NET/Socket : peer 10.0.0.2<35021> message truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is in healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks", "NCCL net_socket.cc warning text (NVIDIA/nccl#605 added the hint)"),
        ],
    ),
    pattern(
        "nccl-cuda-failure",
        "nccl",
        CAUSE,
        E,
        "a CUDA call made by NCCL failed",
        # CUDACHECK (runtime API) prints the reason; CUCHECK (driver API, NCCL 2.12+) the error's number first.
        # A kernel fault CUDA's own patterns name (illegal access, launch failure, device assert) is theirs: it
        # happened on the GPU, NCCL only saw it first
        r"(?:NCCL WARN )?Cuda failure (?:\d+ )?'(?P<reason>(?!an illegal memory access|unspecified launch failure|device-side assert)[^']+)'",
        ("Cuda failure",),
        why="""NCCL reports the CUDA error of one of its own calls: 'out of memory' (the GPU is full), 'peer
        access is not supported' or 'invalid argument' in P2P/shared-memory setup (GPU topology, IOMMU, or
        /dev/shm).""",
        fix="read the reason in quotes; to rule out P2P and shared memory: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 (slower, for diagnosis)",
        examples=[
            ("[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'", "NVIDIA/nccl#1518"),
        ],
        # the peer-access case has its own answer (cuda-peer-access-unsupported)
        not_examples=["[rank1]: Cuda failure 'peer access is not supported between these two devices'"],
        fields=groups,
    ),
    pattern(
        "nccl-unhandled-cuda-error",
        "nccl",
        CAUSE,
        E,
        "a CUDA call inside NCCL failed",
        # (caffe2's CHECK prints NCCL's result as its number: 1 = ncclUnhandledCudaError, facebookresearch/video-nonlocal-net#14)
        r"unhandled cuda error|ncclUnhandledCudaError|status == ncclSuccess\. 1 vs 0",
        ("unhandled cuda error", "ncclUnhandledCudaError", "ncclSuccess. 1 vs"),
        why="""NCCL wraps the CUDA error of the call that failed; the actual CUDA error is in an earlier
        'NCCL WARN Cuda failure' line (rerun with NCCL_DEBUG=INFO). Common causes: two ranks on one GPU, a GPU
        out of memory, P2P not supported between the GPUs, or a driver/CUDA mismatch.""",
        fix="rerun with NCCL_DEBUG=INFO and read the 'NCCL WARN Cuda failure' line; check one GPU per rank and free memory",
        examples=[
            ("what(): NCCL Error 1: unhandled cuda error", "TheAtticusProject/cuad#9"),
            ("RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3", "NVIDIA/nccl#934"),
        ],
        after=("nccl-duplicate-gpu", "cuda-peer-access-unsupported", "nccl-cuda-failure", "cuda-oom", "cuda-oom-gpu0-other-ranks", "cuda-driver-too-old", "cuda-ecc-error", "nvidia-xid"),
        context_after=4,
        fields=last_error,
    ),
    pattern(
        "nccl-unhandled-system-error",
        "nccl",
        CAUSE,
        E,
        "NCCL failed on a system call (shared memory, sockets, InfiniBand)",
        r"unhandled system error|ncclSystemError|status == ncclSuccess\. 2 vs 0",  # (2 = ncclSystemError, as caffe2's CHECK prints it)
        ("unhandled system error", "ncclSystemError", "ncclSuccess. 2 vs"),
        why="""NCCL's generic 'a system call failed' error. The real failure is in an earlier NCCL WARN line:
        most often /dev/shm too small in a container, an unreachable peer or wrong network interface, or an
        InfiniBand setup failure.""",
        fix="rerun with NCCL_DEBUG=INFO and read the first 'NCCL WARN' line; in containers first try --ipc=host",
        examples=[
            ("RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1", "NVIDIA/nccl#1016"),
            ("RuntimeError: NCCL Error 2: unhandled system error", "NVIDIA/nccl#473"),
            ("ncclSystemError: System call (socket, malloc, munmap, etc) failed.", "NVIDIA/nccl#834"),
            ("[E net_dag.cc:188] Exception from operator chain starting at '' (type 'NCCLAllreduce'): caffe2::EnforceNotMet: [enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 2 vs 0.  Error at: /root/cod",
             "facebookresearch/video-nonlocal-net#14 (caffe2's CHECK with NCCL's result as its number; NCCL not built in properly)"),
        ],
        after=("nccl-topology-sysfs", "nccl-shm-segment", "shm-no-space", "cuda-peer-access-unsupported", "network-no-route", "nccl-cuda-failure", "nccl-socket-ifname", "nccl-socket-connect", "nccl-ib-verbs", "gloo-no-address"),
        context_after=4,
        fields=last_error,
    ),
    pattern(
        "nccl-internal-error",
        "nccl",
        CAUSE,
        E,
        "NCCL reported an internal error",
        r"internal error - please report this issue to the NCCL developers|ncclInternalError|NCCL (?:error(?: in: \S+?)?[,:]|Error \d+:|failure \S+:\d+ ') ?internal error",
        ("internal error", "ncclInternalError"),
        why="""Despite the wording, usually not an NCCL bug: different NCCL versions on different nodes, a bad
        NCCL_SOCKET_IFNAME, /dev/shm too small, or a peer that died during setup.""",
        fix="python -c 'import torch; print(torch.cuda.nccl.version())' on every node (must match); rerun with NCCL_DEBUG=INFO",
        examples=[
            ("Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL developers / '", "NVIDIA/nccl-tests#166"),
            ("[trainer0|0]:ncclInternalError: Internal check failed.", "NVIDIA/nccl#1837"),
            ("RuntimeError: NCCL Error 3: internal error", "torch 1.x NCCL error format"),
        ],
        after=("nccl-shm-segment", "network-no-route", "nccl-socket-ifname", "nccl-socket-connect", "nccl-ib-verbs", "nccl-remote-error"),
        context_after=4,
        fields=last_error,
    ),
    pattern(
        "nccl-invalid-usage",
        "nccl",
        CAUSE,
        E,
        "NCCL rejected how it was called (invalid usage)",
        r"ncclInvalidUsage|NCCL (?:error(?: in: \S+?)?[,:]|Error \d+:|failure \S+:\d+ ') ?invalid usage",
        ("invalid usage", "ncclInvalidUsage"),
        why="""NCCL refused the call: most often two ranks on one GPU (see 'Duplicate GPU detected'), a
        communicator used after it was aborted, or mismatched ranks/world size.""",
        fix='torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # one GPU per rank; rerun with NCCL_DEBUG=WARN for the reason',
        examples=[
            ("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "NVIDIA/Megatron-LM#661"),
            ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5", "verl-project/verl#161"),
        ],
        after=("nccl-duplicate-gpu", "nccl-socket-ifname"),
        context_after=4,
        fields=last_error,
    ),
    pattern(
        "nccl-peer-closed",
        "nccl",
        CONSEQUENCE,
        E,
        "NCCL lost its connection to another rank",
        # NCCL before 2.12 did not name the peer: "Call to recv failed : Connection reset by peer"
        r"Connection closed by remote peer|Call to recv (?:from \S+ )?failed ?: (?:Broken pipe|Connection reset by peer)|socketProgress\w*: .*(?:Connection reset by peer|Broken pipe)",
        ("remote peer", "Call to recv", "socketProgress"),
        why="""The other end of an NCCL connection closed or reset it: either the process there ended (it
        crashed, or the OOM killer or the scheduler killed it) or the connection itself was cut (its node dropped off
        the network). This rank only reports the loss: the other ranks' output and exit status decide which.""",
        fix="find the first rank that failed (the earliest error in the other ranks' logs, an exit status that is not 0) and fix that; if none failed, the network between them: rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the interface and the peer of each connection",
        examples=[
            ("a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-st-p4d24xlarge-22.pcluster<47861>", "NVIDIA/nccl#795"),
            ("a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe", "NVIDIA/nccl#795"),
            ("node0:13571:13600 [0] NCCL WARN socketProgress: Connection closed by remote peer node2<42830>", "NVIDIA/nccl#1232"),
            ("Genc-A100-VM:36759:36970 [0] include/socket.h:421 NCCL WARN Call to recv failed : Connection reset by peer", "huggingface/accelerate#609 (the IB transport's proxy thread)"),
            ("[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
             "NVIDIA/nccl#1612 (at NCCL's bootstrap: a connection that closed before NCCL's handshake, fatal before NCCL 2.27.3)"),
        ],
        not_examples=["node0:13571:13600 [0] NCCL INFO Call to connect returned Connection refused, retrying"],
        after=("*",),
        context_after=8,
        fields=peer_closed,
    ),
    pattern(
        "nccl-remote-error",
        "nccl",
        CONSEQUENCE,
        E,
        "NCCL: a remote process exited or the network failed",
        r"remote process exited or there was a network error|ncclRemoteError",
        ("remote process exited", "ncclRemoteError"),
        why="""A peer rank died (crash, OOM kill, scheduler) or the link to it broke. This rank is a victim: the
        cause is on the rank that failed first, or in the 'Last error' line that follows (an InfiniBand or
        socket error).""",
        fix="find the first rank that failed (earliest error, torchrun's 'Root Cause' block) and fix that; if none failed, check the network link named in 'Last error'",
        examples=[
            ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5", "NVIDIA/nccl#2076"),
            ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.", "NVIDIA/nccl#934"),
        ],
        after=("*",),
        context_after=4,
        fields=last_error,
    ),
    pattern(
        "nccl-comm-aborted",
        "nccl",
        CONSEQUENCE,
        E,
        "the NCCL communicator was aborted after an earlier failure",
        r"NCCL communicator was aborted on rank (?P<rank>\d+)",
        ("communicator was aborted",),
        why="""torch aborts a communicator when a collective on it failed or timed out; every later use of it
        raises this. The 'Original reason for failure' that follows, or an earlier error, is the cause.""",
        fix="read the 'Original reason for failure' part of the message and the first error before it",
        examples=[
            ("RuntimeError: NCCL communicator was aborted on rank 0. Original reason for failure was: [Rank 0] Watchdog caught collective operation timeout", "PeterGriffinJin/Search-R1#170"),
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "nccl-timeout-dump-signal",
        "nccl",
        CONSEQUENCE,
        E,
        "a collective timed out and the ranks dumped their Flight Recorder traces",
        r"Received a dump signal due to a collective timeout from\s+(?:rank (?P<from_rank>\d+)|(?P<local>this local rank))(?:.*?Last enqueued NCCL work: (?P<last_enqueued>-?\d+), last completed NCCL work: (?P<last_completed>-?\d+))?",
        ("Received a dump signal",),
        why="""The rank named here ('from rank N', or 'this local rank') was the first whose collective timed out;
        every rank then writes its Flight Recorder trace (to TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank, /tmp/nccl_trace_rank_
        by default). The trace shows which collective each rank was in.""",
        fix="collect the trace files of every rank into one folder and run: gpudoctor diagnose <folder>",
        examples=[
            ("[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump signal due to a collective timeout from  rank 6 and we will try our best to dump the debug info. Last enqueued NCCL work: 460631, last completed NCCL work: 460630.", "OpenRLHF/OpenRLHF#1126"),
            ("[rank1]:[E418 01:32:50.907313453 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.", "vllm-project/vllm-omni#2928"),
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "nccl-process-teardown",
        "nccl",
        CONSEQUENCE,
        E,
        "ProcessGroupNCCL is taking the process down after a failed collective",
        r"Some NCCL operations have failed or timed out|To avoid data inconsistency, we are taking the entire process down|Exception \(either an error or timeout\) detected by watchdog at work: (?P<work>\d+)|failure detected by watchdog at work sequence id: (?P<work2>\d+)|(?:NCCL|Process group) watchdog thread terminated with exception(?!.*(?:Watchdog caught collective operation timeout|CUDA error: ))|Timeout at NCCL work: (?P<work3>\d+)|terminate called after throwing an instance of 'c10::DistBackendError'",
        ("NCCL operations have failed", "taking the entire process down", "detected by watchdog", "watchdog thread terminated", "Timeout at NCCL work", "DistBackendError"),
        why="""After a collective failed or timed out, torch aborts the process on purpose because the GPU data
        may be corrupt. The failure it reacts to is reported just before.""",
        fix="look at the collective timeout or NCCL error reported before this line",
        examples=[
            ("[rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.", "hiyouga/LlamaFactory#7396"),
            ("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.", "tatsu-lab/stanford_alpaca#207"),
            ("[rank7]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631 PG status: last enqueued work: 460631, last completed work: 460630", "OpenRLHF/OpenRLHF#1126"),
        ],
        # the watchdog's line that names the timed-out collective is the timeout's, which says more (HKUDS/GraphGPT#44)
        not_examples=[
            "[E ProcessGroupNCCL.cpp:915] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=778778, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800413 milliseconds before timing out.",
        ],
        after=("*",),
    ),
    pattern(
        "iommu-fault",
        "nccl",
        CAUSE,
        E,
        "the IOMMU blocked a GPU's memory access (GPU peer-to-peer through ACS/IOMMU)",
        # a GPU's own driver names the faulting device: another device's fault is iommu-fault-device's
        r"\b(?:nvidia|amdgpu|nouveau)\b.*(?:IO_PAGE_FAULT|DMAR: \[DMA (?:Read|Write)|DMAR: DRHD: handling fault)",
        ("IO_PAGE_FAULT", "DMAR"),
        why="""With the IOMMU (VT-d / AMD-Vi) or PCIe ACS enabled, GPU-to-GPU peer-to-peer traffic is redirected
        through the root complex and blocked or faulted; NCCL then hangs in its first collective over P2P.""",
        fix="NCCL_P2P_DISABLE=1 to confirm; then disable ACS / set iommu=pt (or amd_iommu=off / intel_iommu=off) on the kernel command line, or disable VT-d in the BIOS",
        examples=[
            ("amdgpu 0000:03:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0010 address=0x64a7f000 flags=0x0000]", "kernel AMD-Vi report quoted in a public ROCm issue (search: 'Event logged [IO_PAGE_FAULT')"),
        ],
    ),
    pattern(
        "iommu-fault-device",
        "nccl",
        CAUSE,
        W,
        "the IOMMU blocked a device's memory access (which device: its PCI address)",
        r"IO_PAGE_FAULT|DMAR: \[DMA (?:Read|Write)|DMAR: DRHD: handling fault",
        ("IO_PAGE_FAULT", "DMAR"),
        why="""The IOMMU (VT-d / AMD-Vi) refused a device's DMA. The line names the device by its PCI address, not by
        its kind: when it is a GPU (or the NIC NCCL uses), peer-to-peer traffic through ACS/IOMMU is being blocked and
        NCCL hangs in its first collective over P2P; when it is another device (a disk controller, a USB or network
        card), it is that device's driver's problem, not the training job's.""",
        fix="lspci -s 0000:BB:DD.F   # the PCI address in the line: is it a GPU or the NIC NCCL uses? If so: NCCL_P2P_DISABLE=1 to confirm, then iommu=pt (or disable ACS)",
        examples=[
            ("DMAR: [DMA Read] Request device [3b:00.0] PASID ffffffff fault addr 7f8a0000 [fault reason 06] PTE Read access is not set", "Intel VT-d fault report format (kernel dmar.c)"),
            ("AMD-Vi: Event logged [IO_PAGE_FAULT device=81:00.0 domain=0x0000 address=0x00000000fef00000 flags=0x0020]", "AMD-Vi fault report format (kernel amd_iommu)"),
        ],
        not_examples=["[    0.000000] DMAR: IOMMU enabled", "DMAR: Host address width 46"],
    ),
    pattern(
        "nccl-error",
        "nccl",
        CAUSE,
        E,
        "an NCCL call failed",
        r"NCCL error(?: in: \S+?)?[,:] (?P<what>[^,(]+)|NCCL Error (?P<code>\d+): (?P<what2>[^,(]+)",
        ("NCCL error", "NCCL Error"),
        why="""An NCCL operation returned an error that gpudoctor has no more specific pattern for. The
        'Last error' line after it, or the NCCL WARN lines before it (NCCL_DEBUG=WARN), name the reason.""",
        fix="rerun with NCCL_DEBUG=WARN (or INFO) and read the first 'NCCL WARN' line",
        examples=[
            ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3", "torch's NCCL error format"),
        ],
        after=("nccl-duplicate-gpu", "nccl-cuda-failure", "nccl-shm-segment", "nccl-socket-ifname", "nccl-socket-connect", "nccl-ib-verbs"),
        fields=groups,
    ),
]
