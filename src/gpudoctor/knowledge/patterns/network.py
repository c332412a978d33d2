"""Reaching the other nodes and starting the store: a route that does not exist, a port the
process may not bind, a rendezvous that was closed or never completed, a scheduler that
took the job back. Each names what is wrong with the network or the launch, not the code."""

from gpudoctor.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

PATTERNS = [
    pattern(
        "network-no-route",
        "timeout",
        CAUSE,
        E,
        "no route to the other node (EHOSTUNREACH): a firewall or the wrong network interface",
        r"No route to host|EHOSTUNREACH|errno:? 113\b",
        ("No route to host", "EHOSTUNREACH", "113"),
        why="""The kernel has no route to the peer's address, or a firewall rejects it with 'host unreachable':
        NCCL or the store picked an interface (docker0, a VPN, a NAT address) the other node cannot reach, or
        the nodes' firewalls block the ports NCCL and the store use.""",
        fix="NCCL_SOCKET_IFNAME=<the interface the nodes share> GLOO_SOCKET_IFNAME=<same>; check with `ping <peer>` and `nc -zv <peer> <port>`, and open the ports (or the subnet) in the firewall",
        examples=[
            ("ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No route to host", "NVIDIA/nccl#1105"),
            ("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) after sleep for 3400 msec", "hiyouga/LlamaFactory#8045"),
        ],
        not_examples=["NCCL INFO Bootstrap : Using eth0:10.0.0.4<0>"],
    ),
    pattern(
        "store-port-privileged",
        "timeout",
        CAUSE,
        E,
        "the store's port is below 1024: binding it needs root (errno 13, permission denied)",
        r"failed to bind to \S+:(?P<port>\d+) \(errno: 13\b|bind.{0,80}\[Errno 13\] Permission denied",
        ("errno: 13", "Errno 13"),
        why="""Ports below 1024 are privileged on Linux. MASTER_PORT (or --master_port) was set to one, often by a
        script that picks $RANDOM without an offset, so rank 0 cannot start the store. The port is not in use:
        it is forbidden.""",
        fix="torchrun --master-port=29500 ...   # any free port from 1024 to 65535, e.g. $((20000 + RANDOM % 20000))",
        examples=[
            ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to bind to 0.0.0.0:98 (errno: 13 - Permission denied).", "KimMeen/Time-LLM#158"),
            ("[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:97 (errno: 13 - Permission denied).", "KimMeen/Time-LLM#20"),
        ],
        not_examples=["The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."],
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
]
