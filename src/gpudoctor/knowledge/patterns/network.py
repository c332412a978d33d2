"""Reaching the other nodes and starting the store: a route that does not exist, a port the
process may not bind, a rendezvous that was closed or never completed, a scheduler that
took the job back. Each names what is wrong with the network or the launch, not the code."""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, groups, pattern

E = Severity.ERROR
BARRIER = r"Waiting in store based barrier to initialize process group for rank: (?P<rank>\d+), key: \S+ \(world_size=(?P<world_size>\d+), (?:worker_count|num_workers_joined)=(?P<joined>\d+)"


# torch's own warning as its c10d client retries an address ("[W socket.cpp:663] [c10d] The client socket has failed to
# connect to [DESKTOP-L2OV9PU]:52550 (system error: 10013 - ...)", RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2532,
# the run's config printed after it): torch's socket.cpp logs each refused address at warning level ("failed to connect to
# [host]:port", the address in brackets) and tries the next; it raises only when none connects, in other words
# ("DistNetworkError: The client socket has failed to connect to any network address of (host, port)", "... has timed
# out after 900000ms while trying to connect to (host, port)"). Error 10013 on that line does not decide the failure (issue
# 35, diagB30): the windows-port-forbidden finding is a warning that says so, what follows decides.
CLIENT_RETRY = re.compile(r"\bThe client socket has failed to connect to \[")

PATTERNS = [
    pattern(
        "network-no-route",
        "timeout",
        CAUSE,
        E,
        "no route to the other node (EHOSTUNREACH): a firewall or the wrong network interface",
        # NCCL retries a connect a number of times: only its last try (34/34) is a failure
        r"No route to host(?!, retrying \((\d+)/(?!\1\))\d+\))|EHOSTUNREACH|errno:? 113\b",
        ("No route to host", "EHOSTUNREACH", "113"),
        why="""The kernel has no route to the peer's address, or a firewall rejects it with 'host unreachable':
        NCCL or the store picked an interface (docker0, a VPN, a NAT address) the other node cannot reach, or
        the nodes' firewalls block the ports NCCL and the store use.""",
        fix="NCCL_SOCKET_IFNAME=<the interface the nodes share> GLOO_SOCKET_IFNAME=<same>; check with `ping <peer>` and `nc -zv <peer> <port>`, and open the ports (or the subnet) in the firewall",
        examples=[
            ("ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No route to host", "NVIDIA/nccl#1105"),
            ("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) after sleep for 3400 msec", "hiyouga/LlamaFactory#8045"),
        ],
        not_examples=[
            "NCCL INFO Bootstrap : Using eth0:10.0.0.4<0>",
            "zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) after sleep for 2600 msec",
        ],
    ),
    pattern(
        "store-port-privileged",
        "timeout",
        CAUSE,
        E,
        "the store's port is below 1024: binding it needs root (errno 13, permission denied)",
        # only a port below 1024: errno 13 on a higher one is a security policy (SELinux, a container's
        # profile, a raised ip_unprivileged_port_start), not a privileged port
        r"failed to bind to \S+:(?P<port>\d{1,3}|10[01]\d|102[0-3]) \(errno: 13\b|bind.{0,80}\[Errno 13\] Permission denied",
        ("errno: 13", "Errno 13"),
        why="""Ports below 1024 are privileged on Linux. MASTER_PORT (or --master_port) was set to one, often by a
        script that picks $RANDOM without an offset, so rank 0 cannot start the store. The port is not in use:
        it is forbidden.""",
        fix="torchrun --master-port=29500 ...   # any free port from 1024 to 65535, e.g. $((20000 + RANDOM % 20000))",
        examples=[
            ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to bind to 0.0.0.0:98 (errno: 13 - Permission denied).", "KimMeen/Time-LLM#158"),
            ("[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:97 (errno: 13 - Permission denied).", "KimMeen/Time-LLM#20"),
        ],
        not_examples=[
            "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
            "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 13 - Permission denied).",
        ],
        fields=groups,
    ),
    pattern(
        "windows-port-forbidden",
        "timeout",
        CAUSE,
        E,
        "Windows forbids this port (system error 10013): it is in a range Hyper-V/WinNAT reserved",
        r"(?:system error: |WinError |\[Errno )10013\b",
        ("10013",),
        why="""On Windows, error 10013 (WSAEACCES) on bind means the port is in an excluded range (reserved by
        Hyper-V, WSL or Docker's WinNAT) or blocked by policy; nothing listens on it, so 'close the other
        program' does not help.""",
        fix="netsh int ipv4 show excludedportrange protocol=tcp   # then set MASTER_PORT to a port outside every listed range",
        examples=[
            ("The server socket has failed to bind to [kodachi]:51545 (system error: 10013", "RVC-Project/Retrieval-based-Voice-Conversion-WebUI#246"),
        ],
        not_examples=["[W socket.cpp:697] [c10d] The client socket has failed to connect to [host]:29500 (system error: 10049 - The requested address is not valid in its context.)."],
    ),
    pattern(
        "rendezvous-closed",
        "launcher",
        CAUSE,
        E,
        "the elastic rendezvous was closed: another node's agent ended the job (or a stale rdzv id)",
        r"RendezvousClosedError",
        ("RendezvousClosedError",),
        why="""torchrun's agents close the rendezvous when the job ends or one agent gives up (its workers failed
        past --max-restarts, it was killed). An agent that then tries to (re)join gets RendezvousClosedError: the
        failure is on the node that closed it. Reusing an --rdzv-id of a finished job gives the same error.""",
        fix="read the first node that failed (its workers' error before this); start a new job with a fresh --rdzv-id (e.g. $SLURM_JOB_ID)",
        examples=[
            ('    "message": "RendezvousClosedError: ",', "kubeflow/trainer#1638"),
        ],
        not_examples=["torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"],
    ),
    pattern(
        "rendezvous-timeout",
        "launcher",
        CAUSE,
        E,
        "not enough nodes joined the rendezvous before its timeout",
        r"RendezvousTimeoutError",
        ("RendezvousTimeoutError",),
        why="""torchrun waits for --nnodes (the minimum of MIN:MAX) agents to join the rendezvous at
        --rdzv-endpoint; the join timeout (900 s by default) passed with fewer: a node that did not start, that
        uses another --rdzv-id/--nnodes/endpoint, or that cannot reach the endpoint's host and port.""",
        fix="start every node with the same --nnodes, --rdzv-id and --rdzv-endpoint=HOST:PORT; check each node reaches it (nc -zv HOST PORT); raise --rdzv-conf join_timeout=... only for slow starts",
        examples=[
            ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "facebookresearch/av_hubert#19"),
        ],
        not_examples=["torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed."],
    ),
    pattern(
        "slurm-preempted",
        "launcher",
        CAUSE,
        E,
        "SLURM took the job back (preemption or requeue), not a failure of the training itself",
        r"CANCELLED AT \S+ DUE TO (?P<reason>PREEMPTION|JOB REQUEUE|NODE FAILURE)",
        ("DUE TO PREEMPTION", "DUE TO JOB REQUEUE", "DUE TO NODE FAILURE"),
        why="""The scheduler cancelled the step to give the nodes to a higher-priority job (or requeued it, or a
        node failed); the tasks' exits and errors that follow are the consequence.""",
        fix="checkpoint often and resume on restart (sbatch --requeue, submitit's checkpointing); submit to a partition/QOS that is not preemptible",
        examples=[
            ("slurmstepd: error: *** JOB 37361369 ON learnfair5146 CANCELLED AT 2021-03-15T18:00:46 DUE TO PREEMPTION ***", "facebookincubator/submitit#1708"),
            ("slurmstepd: error: *** STEP 608.0 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO JOB REQUEUE ***", "facebookincubator/submitit#1708"),
        ],
        not_examples=["slurmstepd: error: *** JOB 494583 ON node1 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***"],
        fields=groups,
    ),
    pattern(
        "store-barrier-waiting",
        "timeout",
        CAUSE,
        E,
        "the process group's store barrier is waiting for ranks that have not joined",
        BARRIER,
        ("Waiting in store based barrier",),
        why="""init_process_group ends with a barrier in the store: every rank adds itself and waits until
        world_size have. A log that keeps printing this line, with fewer ranks joined than world_size, has ranks
        that never arrived: a node that did not start, a rank that crashed before init, a WORLD_SIZE larger than
        the ranks really launched (nnodes x nproc_per_node), or nodes that reach a different MASTER_ADDR:PORT.""",
        fix="check that every node started with the same --nnodes/--nproc-per-node (WORLD_SIZE) and MASTER_ADDR:MASTER_PORT, and read the missing ranks' own output for an earlier error",
        examples=[
            ("05/10/2023 23:07:45 - INFO - torch.distributed.distributed_c10d - Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:2 (world_size=8, worker_count=1, timeout=0:30:00)", "huggingface/accelerate#1401"),
            ("[2021-12-17 16:36:32,821][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to initialize process group for rank: 6, key: store_based_barrier_key:1 (world_size=16, worker_count=7, timeout=0:30:00)", "facebookresearch/fairseq#4082"),
        ],
        not_examples=["INFO - torch.distributed.distributed_c10d - Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 6 nodes."],
        fields=groups,
    ),
    pattern(
        "store-barrier-extra-ranks",
        "timeout",
        CAUSE,
        E,
        "more ranks joined the store barrier than world_size: another launch shares this store",
        BARRIER,
        ("Waiting in store based barrier",),
        why="""The barrier counted more arrivals than world_size (worker_count > world_size): processes of a second
        launch, or workers restarted into the same job, registered in the same store (same MASTER_ADDR:MASTER_PORT
        and key), so the count never equals world_size and the barrier never completes.""",
        fix="stop stray processes of earlier runs (ps aux | grep python), and give each job its own store: torchrun --master-port=$((20000 + RANDOM % 20000)) ...",
        examples=[
            ("Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:30:00)", "ultralytics/yolov5#4574"),
            ("2022-05-10 05:38:33 | INFO | torch.distributed.distributed_c10d | Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=3, timeout=0:30:00)", "facebookresearch/metaseq#52"),
        ],
        not_examples=["Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=8, worker_count=1, timeout=0:30:00)"],
        fields=groups,
        refines="store-barrier-waiting",  # when worker_count > world_size
    ),
    pattern(
        "store-barrier-completed",
        "timeout",
        HARMLESS,
        Severity.INFO,
        "the store barrier completed: every rank joined (earlier 'Waiting in store based barrier' lines were only progress)",
        r"Completed store-based barrier for key:\S+ with (?P<ranks>\d+) nodes",
        ("Completed store-based barrier",),
        why="""torch logs the barrier's progress every few seconds while ranks arrive at different times; this line
        says all of them did, so the waiting lines before it are not a failure.""",
        fix="nothing to do",
        examples=[
            ("02/21/2022 13:46:15 - INFO - torch.distributed.distributed_c10d -   Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 6 nodes.", "Lightning-Universe/lightning-flash#1182"),
        ],
        not_examples=["Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)"],
        fields=groups,
    ),
    pattern(
        "monitored-barrier-rank-late",
        "timeout",
        CAUSE,
        E,
        "a rank did not reach dist.monitored_barrier in time: that rank is stuck, slow or gone",
        r"Rank (?P<culprit_rank>\d+) failed to pass monitoredBarrier in (?P<timeout_ms>\d+) ms",
        ("failed to pass monitoredBarrier",),
        why="""monitored_barrier (gloo) names the ranks that did not arrive before its timeout; the rank that
        reports it (rank 0) is fine. The named rank was still working (a longer evaluation, I/O, a data
        imbalance), hung in an earlier collective, or died.""",
        fix="read the named rank's own output for an error or where it was (py-spy dump --pid PID); give uneven work (evaluation on one rank) a barrier timeout that covers it",
        examples=[
            ("[rank0]:[E1125 01:57:29.085855338 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 1 failed to pass monitoredBarrier in 5000 ms", "produced here: torchrun --nproc_per_node 2, gloo, rank 1 late to monitored_barrier"),
        ],
        not_examples=["[rank0]: dist.monitored_barrier(timeout=datetime.timedelta(seconds=5))"],
        fields=groups,
    ),
]
