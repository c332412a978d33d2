"""Collective watchdog timeouts and the c10d store / rendezvous: who waited for whom."""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, HARMLESS, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

WORK = re.compile(r"(\w+(?:\(\w+\))?)=([^,)]+)")  # SeqNum=5, Timeout(ms)=600000


# the watchdog's message, whose start a cut line must be
CAUGHT = "collective operation timeout"


def work_fields(m, _context):
    """WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, ...) -> its fields; None for a cut line whose words are not
    the start of the timeout's message."""
    if m.group("cut") is not None:
        return {"cut": True} if CAUGHT.startswith(m.group("cut")) else None
    out = {k: v.strip() for k, v in WORK.findall(m.group("work") or "")}
    if m.group("ran_ms"):
        out["ran_ms"] = m.group("ran_ms")
    return out


PATTERNS = [
    pattern(
        "nccl-watchdog-timeout",
        "timeout",
        CONSEQUENCE,
        E,
        "a collective timed out: this rank waited for a peer that never joined it",
        # torch 1.8-1.9 in blocking-wait mode said "[Rank N] Caught collective operation timeout for work: WorkNCCL(...)";
        # a paste cut or wrapped after "timeout:" still names the failure without the work
        r"(?:Watchdog caught|\] Caught) collective operation timeout(?:(?: for work)?: (?P<work>Work\w+\((?:[^()]|\(\w+\))*\)?)(?: ran for (?P<ran_ms>\d+) milliseconds)?)?"
        # the watchdog's C++ backtrace names the timeout check when the message itself is cut (jpata/particleflow#390)
        r"|^frame #\d+: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout\("
        # a paste cut inside the message's own words, from "collectiv" on: torch's watchdog writes "Watchdog caught
        # collective" in this message alone (meta-llama/llama3#241); "Watchdog c" alone could be another of its lines
        r"|\] Watchdog caught (?P<cut>collectiv[a-z ]{0,19}?)\s*$",
        ("Watchdog caught", "Caught collective operation timeout", "WorkNCCL::checkTimeout"),
        why="""The collective (OpType, SeqNum) did not finish within the process group timeout (10 min for NCCL
        by default). The ranks that report it were waiting; the culprit is a rank that crashed, hung before
        the collective (data loading, a deadlock, a collective only some ranks call), called a different
        collective, or was still busy with work the others did not do: preprocessing or caching a dataset on
        one rank, evaluating or saving on rank 0 only, a rank with more batches at the end of an epoch (uneven
        data). A rank missing from these lines, or one with a lower SeqNum, is the one to look at.""",
        fix="""find the rank that never reached this SeqNum (missing from these lines, or the Flight Recorder dump: TORCH_FR_BUFFER_SIZE=2000)
        and look at what it was doing; work only one rank does (dataset preprocessing, evaluation on rank 0): run it on every rank
        or before init_process_group; uneven batches at the end of an epoch: give every rank the same number of batches
        (DistributedSampler pads to it; an IterableDataset must do it itself); increase the timeout (timeout=timedelta(hours=2) in init_process_group, accelerate's
        InitProcessGroupKwargs(timeout=...)) only for work that is legitimately that slow""".replace("\n        ", " "),
        examples=[
            ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.", "hiyouga/LlamaFactory#7396"),
            ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.", "OFA-Sys/OFA#271"),
            ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in /x/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)", "jpata/particleflow#390 (the message cut, the backtrace kept)"),
            ("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collectiv", "meta-llama/llama3#241 (the paste cut inside the message)"),
        ],
        not_examples=["frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in /x/libtorch_cuda.so)",
                      "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c",  # ultralytics/yolov5#7481: too little of it to say which line
                      "[Rank 0] Watchdog caught collective operation error: NCCL error"],
        after=("*",),
        fields=work_fields,
    ),
    pattern(
        "gloo-collective-timeout",
        "timeout",
        CONSEQUENCE,
        E,
        "a gloo collective timed out waiting for a peer",
        r"Timed out waiting (?P<timeout_ms>\d+)ms for (?P<op>recv|send) operation to complete",
        ("Timed out waiting",),
        why="""A gloo send/recv (all collectives are built from them) waited for the whole timeout (30 min by
        default) without the peer arriving: a rank is stuck or slow before this collective, or skipped it.""",
        fix="find the rank that never reached this collective (its traceback or a Flight Recorder dump) and look at what it was doing",
        examples=[
            ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 1800000ms for recv operation to complete", "gloo unbound_buffer.cc error text, quoted in public training logs"),
        ],
        after=("*",),
    ),
    pattern(
        "nccl-heartbeat-stuck",
        "timeout",
        CONSEQUENCE,
        E,
        "ProcessGroupNCCL's watchdog itself was stuck (heartbeat monitor)",
        r"watchdog got stuck for (?P<seconds>\d+) seconds without making progress|Heartbeat monitor timed out!",
        ("watchdog got stuck", "Heartbeat monitor timed out"),
        why="""The heartbeat monitor kills the process when the watchdog thread makes no progress: a CUDA or NCCL
        call hung (P2P/IOMMU problems, a GPU fault), another thread held the GIL inside a CUDA call, or the
        watchdog was blocked while the job was already hung on a collective.""",
        fix="first look for a collective timeout or a crashed peer; if none: NCCL_P2P_DISABLE=1 to rule out P2P, TORCH_NCCL_DUMP_ON_TIMEOUT=1 for the stacks; only if the watchdog is merely slow: TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1200",
        examples=[
            ("[rank2]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.", "hiyouga/LlamaFactory#8549"),
            ("[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=103", "Intellindust-AI-Lab/DEIM#105"),
        ],
        after=("*",),
    ),
    pattern(
        "store-waiting-for-clients",
        "timeout",
        CAUSE,
        E,
        "not every rank reached the rendezvous store",
        r"Timed out after (?P<seconds>\d+) seconds waiting for (?:clients|workers)(?:\. (?P<joined>\d+)/(?P<expected>\d+) (?:clients|workers) joined)?"
        r"|Timed out initializing process group in store based barrier on rank:? (?P<rank>\d+)(?:, for key: \S+ \(world_size=(?P<expected2>\d+), (?:worker_count|num_workers_joined)=(?P<joined2>\d+))?",
        ("waiting for clients", "waiting for workers", "store based barrier"),
        why="""The store on MASTER_ADDR waited for world_size ranks and only some connected: another node never
        started or points at a different MASTER_ADDR/PORT, --nnodes/--nproc-per-node do not add up to the world
        size, a firewall blocks the port, or a rank crashed before init_process_group.""",
        fix="check that every node runs the same command with the same MASTER_ADDR:MASTER_PORT and --nnodes; from each node: nc -zv $MASTER_ADDR $MASTER_PORT",
        examples=[
            ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.", "pytorch/pytorch#111805 (message format)"),
            ("torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.", "pytorch/pytorch#111805"),
            ("RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)", "vllm-project/vllm#1401"),
        ],
        fields=groups,
    ),
    pattern(
        "launcher-env-missing",
        "timeout",
        CAUSE,
        E,
        "the distributed environment variables are not set (no launcher set them: plain python, or srun without the exports)",
        r"environment variable (?P<var>RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|LOCAL_RANK) expected, but not set|^KeyError: '(?P<key>LOCAL_RANK|RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)'"
        # torch 0.4's THD said it in its own words
        r"|\b(?P<thd>rank|world_size) is not set but it is required for env:// init method",
        ("expected, but not set", "KeyError: '", "is not set but it is required for env://"),
        why="""init_process_group's env:// rendezvous (the default) reads RANK, WORLD_SIZE, MASTER_ADDR and
        MASTER_PORT from the environment; torchrun sets them all. srun sets only its own SLURM_* variables:
        the batch script exports MASTER_ADDR and MASTER_PORT (and RANK, WORLD_SIZE from SLURM_PROCID,
        SLURM_NTASKS). Run with plain `python`, they are missing.""",
        fix="torchrun --nproc-per-node=N train.py   # under srun, in the batch script: export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1) MASTER_PORT=$((15000 + SLURM_JOB_ID % 10000))",
        examples=[
            ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set", "torch rendezvous error text, quoted in public notebooks and issues"),
            ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR expected, but not set", "torch rendezvous error text"),
            ("KeyError: 'LOCAL_RANK'", "the script read os.environ['LOCAL_RANK'] without a launcher"),
            ("RuntimeError: rank is not set but it is required for env:// init method at /opt/conda/conda-bld/pytorch_1524590031827/work/torch/lib/THD/process_group/General.cpp:17",
             "STVIR/pysot#60 (train.py run in PyCharm without the launcher; the code runs only distributed)"),
        ],
        fields=groups,
    ),
    pattern(
        "store-socket-timeout",
        "timeout",
        CONSEQUENCE,
        E,
        "a rank timed out waiting for a key in the c10d store",
        r"(?:store->get\('?(?P<key>[^')]*)'?\) got error: Socket Timeout|DistStoreError: (?:Socket Timeout|wait timeout after (?P<ms>\d+)ms)|RuntimeError: Socket Timeout|wait timeout after \d+ms, keys: "
        # torch 1.0's store (a file:// or tcp:// init_method) said only this
        r"|RuntimeError: Wait timeout$)",
        ("Socket Timeout", "wait timeout after", "Wait timeout"),
        why="""Ranks exchange setup data (the NCCL unique id, barriers) through the store. The key never arrived:
        the rank that should write it (often rank 0) crashed, is still busy before that point (loading or
        preprocessing a dataset on one rank only), or the ranks disagree about world size. With init_method='file://...'
        the store is a file that every rank must see: a folder shared between the machines (not a local copy), and
        no file left from an earlier run.""",
        fix="look at rank 0's log at that moment; move slow one-rank work (dataset preprocessing) before init_process_group or raise timeout= in init_process_group",
        examples=[
            ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout", "bytedance/HLLM#20"),
            ("torch.distributed.DistStoreError: Socket Timeout", "hiyouga/LlamaFactory#6154"),
            ("torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg/0//cuda//0", "vllm-project/vllm#12526"),
            ("RuntimeError: Wait timeout", "pytorch/pytorch#13583 (a gloo group through a file:// store on a shared folder, torch 1.0)"),
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "store-connection-lost",
        "timeout",
        CONSEQUENCE,
        E,
        "the connection to the c10d store was lost (the process hosting it went away)",
        r"(?:recvValue|sendBytes) failed on SocketImpl|DistNetworkError: (?:Connection reset by peer|Broken pipe)|TCPStore\.cpp:\d+\].*(?:Connection reset by peer|Broken pipe)|store->get\('[^']*'\) got error: (?:Connection reset by peer|Broken pipe)"
        # the libuv TCPStore client (torch 2.4+) words a closed connection itself
        r"|Failed to (?:recv, got|send, sent) 0 bytes\. Connection was likely closed",
        ("recvValue failed", "sendBytes failed", "DistNetworkError", "TCPStore", "store->get", "Connection was likely closed"),
        why="""The store lives in rank 0's process (or torchrun's agent on the first node). Its connection was
        reset: that process exited or crashed, so the other ranks lose it too.""",
        fix="look at rank 0 (or the first node's torchrun) for the failure that ended it",
        examples=[
            ("[rank1]:[W618 10:26:54.029068449 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=105, addr=[localhost]:39468, remote=[::ffff:0.0.0.0]:12201): Connection reset by peer", "sgl-project/sglang#28396"),
            ("torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", "torch store->get error format (bytedance/HLLM#20 shows its Socket Timeout variant)"),
            ("[W522 11:47:46.952883182 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=77, addr=[::ffff:127.0.0.1]:39732, remote=[::ffff:127.0.0.1]:29600): Broken pipe", "pytorch/torchft examples/ddp_proactive/README.md"),
        ],
        # with no failure in the log, it is the heartbeat monitor noticing rank 0's store close at exit
        after=("*", "store-closed-at-exit"),
    ),
    pattern(
        "nccl-unique-id-exchange-failed",
        "timeout",
        CONSEQUENCE,
        E,
        "a rank failed while fetching the NCCL unique id from rank 0 through the c10d store (the message itself is not in the log)",
        # the C++ backtrace of the exception: TCPStore::get under broadcastUniqueNCCLID, the message cut
        r"^frame #\d+: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID\(",
        ("broadcastUniqueNCCLID",),
        why="""When a process group first runs a collective on a GPU, rank 0 (of that group) creates the NCCL
        communicator's unique id and writes it to the c10d store; every other rank waits for it in a store get. That get
        failed on this rank: rank 0 never wrote the id in time (it crashed, was still busy with work the others skipped
        such as preprocessing a dataset or evaluating on rank 0 only, or ran another collective first), or the store
        itself went away with rank 0. The exception's own message (a Socket Timeout or a reset connection) was cut from
        this log.""",
        fix="""read rank 0's output at that moment: its error, or the one-rank work it was doing (move dataset preprocessing
        before init_process_group or behind a barrier every rank reaches, raise timeout= in init_process_group if that work is
        legitimately long); the full message of this rank's exception says which: 'Socket Timeout' (rank 0 late) or 'Connection
        reset' (rank 0 gone)""".replace("\n        ", " "),
        examples=[
            (
                "frame #9: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, std::string const&, int) + 0xaf (0x7fdfb0e29b8f in /home/user/enter/envs/train/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
                "hiyouga/LlamaFactory#5769 (rank 2, under TCPStore::get)",
            ),
        ],
        not_examples=[
            "frame #4: c10d::TCPStore::get(std::string const&) + 0x7a (0x7fdfeab5883a in /x/torch/lib/libtorch_cpu.so)",  # a store get of any key
            "NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>",
        ],
        after=("*",),
    ),
    pattern(
        "store-closed-at-exit",
        "timeout",
        HARMLESS,
        I,
        "the heartbeat monitor lost the c10d store while processes exited (safe to ignore after a finished run)",
        r'Failed to check the "should dump" flag on TCPStore',
        ('"should dump" flag',),
        why="""torch's NCCL heartbeat monitor polls the store that lives in rank 0's process. When rank 0 exits
        first at the end of a run (or a job is torn down), the other ranks print this, often with
        recvValue/sendBytes failures, while they shut down. Safe to ignore when training completed; when the
        job failed, look for the first real error instead.""",
        fix="dist.destroy_process_group()  # on every rank at the end of main(), so ranks leave together",
        examples=[
            ('[W522 11:47:46.955975324 ProcessGroupNCCL.cpp:1659] [PG ID 0 PG GUID  Rank 1] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Broken pipe', "pytorch/torchft examples/ddp_proactive/README.md"),
            ('[W522 11:47:45.952720714 ProcessGroupNCCL.cpp:1659] [PG ID 0 PG GUID  Rank 1] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: failed to recv, got 0 bytes', "pytorch/torchft examples/ddp_proactive/README.md"),
        ],
    ),
    pattern(
        "store-host-unresolvable",
        "timeout",
        CAUSE,
        E,
        "the rendezvous host name does not resolve (MASTER_ADDR / --rdzv-endpoint)",
        r"The IPv4 network addresses of \((?P<host>[^,]+), (?P<port>\d+)\) cannot be retrieved|gaierror: \[Errno -[235]\] (?:Name or service not known|Temporary failure in name resolution|No address associated with hostname)",
        ("IPv4 network addresses", "gaierror"),
        why="""The name given as MASTER_ADDR (or the rendezvous endpoint) is not known to this node's DNS or
        /etc/hosts, so no rank can reach the store.""",
        fix="getent hosts $MASTER_ADDR   # on every node; use an IP address or a name every node resolves",
        examples=[
            ("[W socket.cpp:601] [c10d] The IPv4 network addresses of (gpu-master, 29500) cannot be retrieved (gai error: -2 - Name or service not known).", "torch socket.cpp warning text"),
            ("socket.gaierror: [Errno -2] Name or service not known", "Python socket error text"),
        ],
        fields=groups,
    ),
    pattern(
        "store-connect-timeout",
        "timeout",
        CAUSE,
        E,
        "a rank could not connect to the store at MASTER_ADDR:MASTER_PORT",
        # (not one address's refusal, "failed to connect to [host]:port (errno: 111 ...)": the client retries after it,
        # store-connect-retrying; the client gives up with "any network address of (host, port)" or a timeout)
        r"connect\(\) timed out\. Original timeout was (?P<timeout_ms>\d+) ms|client socket has (?:timed out after (?P<after>\S+) while trying to connect to \((?P<host>[^,]+), (?P<port>\d+)\)"
        r"|failed to connect to any network address of (?:\((?P<host4>[^,\s]+), (?P<port4>\d+)\)|\[?(?P<host2>[^\]\s]+)\]?:(?P<port2>\d+)))|TCP client failed to connect/validate to host (?P<host3>\S+)",
        ("client socket", "TCP client failed", "connect() timed out"),
        why="""The store runs on MASTER_ADDR (rank 0's node). It was unreachable: the address is wrong or not
        reachable from this node (a private or container address), nothing listens there yet (rank 0 not started
        or crashed), or a firewall drops the port.""",
        fix="from the failing node: nc -zv $MASTER_ADDR $MASTER_PORT; use an address all nodes can reach (not 127.0.0.1 across nodes) and a free port",
        examples=[
            ("[E616 02:08:15.931416442 socket.cpp:1023] [c10d] The client socket has timed out after 600000ms while trying to connect to (172.17.0.9, 50437).", "vllm-project/vllm#19670"),
            ("TimeoutError: The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391).", "lllyasviel/ControlNet#382"),
            ("RuntimeError: connect() timed out. Original timeout was 60000 ms.", "pytorch/pytorch#67581"),
            ("[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of (6841231, 47389).", "hpcaitech/Open-Sora#667"),
        ],
        not_examples=["[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 97 - Address family not supported by protocol).",
                      "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 (errno: 110 - Connection timed out)."],
        fields=groups,
    ),
    pattern(
        "store-address-in-use",
        "timeout",
        CAUSE,
        E,
        "the rendezvous port is already in use (EADDRINUSE)",
        # "failed to listen on any local network address" ends every refused bind: it is "in use" only when
        # the line gives no other errno (13 on a high port is a security policy, not a second job)
        r"(?:failed to (?:bind to|listen on) \S+:(?P<port>\d+) \(errno: 98|failed to listen on any local network address(?!.*(?:\(errno: |code: -)(?!98\b)\d)\.? ?(?:port: (?P<port2>\d+))?|EADDRINUSE|[Aa]ddress already in use)",
        ("EADDRINUSE", "already in use", "failed to listen", "failed to bind"),
        why="""Rank 0 starts the store on MASTER_PORT (29500 by default) and another process already listens
        there: a second job on the same machine, or a previous run that has not exited.""",
        fix="ss -ltnp | grep \":${MASTER_PORT:-29500} \"   # the port named in the error; then give each job its own port: torchrun --master-port=$((20000 + RANDOM % 20000)) ... (or --standalone on one node)",
        examples=[
            ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).", "showlab/Tune-A-Video#90"),
            ("RuntimeError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use.", "om-ai-lab/VLM-R1#289"),
            ("[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 - Address already in use).", "pytorch/pytorch#85604"),
        ],
        not_examples=[
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 13 - Permission denied). The server socket has failed to bind to 0.0.0.0:29500 (errno: 13 - Permission denied).",
        ],
        # "failed to listen on any local network address" also ends a bind refused for another reason
        after=("store-port-privileged", "windows-port-forbidden"),
        fields=groups,
    ),
    pattern(
        "windows-address-invalid",
        "timeout",
        CAUSE,
        W,
        "Windows could not connect to the hostname's address (10049); torch retries other addresses",
        r"(?:system error: |WinError )10049",
        ("10049",),
        why="""On Windows, torch resolves the machine name and tries each address; 10049 means one of them
        (often an IPv6 or a virtual adapter address) is not valid for connecting. It is usually followed by a
        successful connection; when the job then hangs or fails, the address torch picked is the problem.""",
        fix="set MASTER_ADDR=127.0.0.1 (one machine) and use backend='gloo' on Windows; if the job fails later, read the error after these lines",
        examples=[
            ("[W C:\\actions-runner\\_work\\pytorch\\pytorch\\builder\\windows\\pytorch\\torch\\csrc\\distributed\\c10d\\socket.cpp:558] [c10d] The client socket has failed to connect to [DESKTOP-7BNNAUJ]:29995 (system error: 10049 - The requested address is not valid in its context.).", "kennymckormick/pyskl#79"),
            ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [local.id.seewo.com]:29500 (system error: 10049 - The requested address is invalid in its context.).", "meta-llama/llama3#138"),
        ],
    ),
    pattern(
        "rendezvous-connection-failed",
        "timeout",
        CAUSE,
        E,
        "torchrun could not reach the rendezvous (c10d) endpoint",
        r"RendezvousConnectionError|The connection to the C10d store has failed|RendezvousTimeoutError|RendezvousClosedError",
        ("Rendezvous", "C10d store"),
        why="""torchrun's agents meet at --rdzv-endpoint. It was unreachable (wrong host or port, firewall, the
        host node's agent not started or already gone), or another job shares the same endpoint and closed it
        when it finished.""",
        fix="give every job its own --rdzv-endpoint=<host>:<free port> and --rdzv-id; check the endpoint from each node: nc -zv <host> <port>",
        examples=[
            ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.", "wenet-e2e/wekws#172"),
        ],
    ),
    pattern(
        "ipv6-address-family",
        "timeout",
        HARMLESS,
        I,
        "IPv6 is not available, torch falls back to IPv4 (safe to ignore)",
        r"errno: 97 - Address family not supported by protocol|The IPv6 network addresses of \(.*\) cannot be retrieved|failed to connect to \[localhost\]:\d+ \(errno: 99 - Cannot assign requested address\)",
        ("errno: 97", "IPv6 network addresses", "errno: 99 - Cannot assign"),
        why="""torch's store tries IPv6 first; on hosts or containers without IPv6 this warning is printed and the
        IPv4 address is used. Safe to ignore when the job then runs; it is not the cause of a hang or crash.""",
        fix="nothing to do; to silence it, set MASTER_ADDR to an IPv4 address (e.g. 127.0.0.1 on one machine)",
        examples=[
            ("(BenchmarkRunner pid=10896) [W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:50704 (errno: 97 - Address family not supported by protocol).", "microsoft/vidur#49"),
            ("[W socket.cpp:697] [c10d] The client socket cannot be initialized to connect to [x08j01357.cloud.sqa.na131.tbsite.net]:50704 (errno: 97 - Address family not supported by protocol).", "microsoft/vidur#49"),
            ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (localhost, 51595) cannot be retrieved (gai error: -2 - Name or service not known).", "antgroup/animate-x#15"),
            ("[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:18630 (errno: 99 - Cannot assign requested address).", "a public fairseq distributed-init log (same line in many reports)"),
        ],
    ),
]
