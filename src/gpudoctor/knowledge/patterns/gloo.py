"""gloo: the CPU backend, also used for CPU-side groups next to NCCL."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

PATTERNS = [
    pattern(
        "gloo-hostname-unresolvable",
        "gloo",
        CAUSE,
        E,
        "gloo could not bind to an address of this machine's hostname",
        r"rp != nullptr\. Unable to find address for:? ?(?P<host>\S+)",
        ("rp != nullptr",),
        why="""Without GLOO_SOCKET_IFNAME, gloo resolves the machine's hostname and binds to the address it
        gets. Here the name did not resolve, or resolved to an address that is not on this machine (a stale
        /etc/hosts entry, a container started with --net=host but another hostname).""",
        fix="getent hosts $(hostname)   # fix /etc/hosts so it gives this node's IP, or export GLOO_SOCKET_IFNAME=<interface with that IP>",
        examples=[
            ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. Unable to find address for: dgx-1.ai", "msr-fiddle/pipedream#32"),
        ],
        fields=groups,
    ),
    pattern(
        "gloo-no-address",
        "gloo",
        CAUSE,
        E,
        "gloo could not find the network interface GLOO_SOCKET_IFNAME names",
        r"Unable to find address for:? ?(?P<interface>\S+)",
        ("Unable to find address",),
        why="""GLOO_SOCKET_IFNAME must be one existing interface name on every node (gloo does not accept
        NCCL's '^lo,docker' syntax, nor an IP address).""",
        fix="ip -br addr   # export GLOO_SOCKET_IFNAME=<interface that carries this node's IP> (a name like ens5, not a list)",
        examples=[
            ("RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find address for: ^lo", "aws-samples/aws-do-eks#51"),
            ("what():  [enforce fail at /tmp/pip-install-3dvzdqhs/horovod/third_party/gloo/gloo/transport/tcp/device.cc:88] ifa != nullptr. Unable to find address for: eth0", "horovod/horovod#1341"),
            ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: ib0", "Megvii-BaseDetection/YOLOX#139"),
        ],
        fields=groups,
    ),
    pattern(
        "gloo-device-setup-failed",
        "gloo",
        CAUSE,
        E,
        "gloo could not set up its TCP device on this machine's address",
        # any other check of gloo's TCP device set-up: the two above name the address it looked for
        r"enforce fail at \S*gloo/transport/tcp/device\.cc:\d+\] (?P<check>.+)",
        ("transport/tcp/device.cc",),
        why="""Before any collective, gloo's TCP transport picks this process's address (the interface GLOO_SOCKET_IFNAME
        names, else the address the hostname resolves to) and creates and binds a socket on it. One check of that
        set-up failed (the condition after 'enforce fail' is the one, `rv != -1` a socket call that returned an
        error): the hostname resolves to an address that is not this machine's (a stale /etc/hosts line, a cloned VM's
        name), or the interface gloo took is not one the other nodes reach.""",
        fix="""getent hosts $(hostname) and ip -br addr on each node: the hostname must resolve to an address of that node;
        export GLOO_SOCKET_IFNAME=<interface that carries the node's IP> on every node (one name, e.g. ens5)""".replace("\n        ", " "),
        examples=[
            ("  what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:281] rv != -1. -1", "pytorch/pytorch#30375 (two VMs, torch 1.3)"),
        ],
        not_examples=["[enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 8 vs 4"],
        fields=groups,
    ),
    pattern(
        "gloo-loopback-fallback",
        "gloo",
        CAUSE,
        W,
        "gloo fell back to the loopback address (hostname does not resolve to this node's IP)",
        r"Unable to resolve hostname to a \(local\) address\. Using the loopback address as fallback",
        ("loopback address as fallback",),
        why="""gloo binds to the address the hostname resolves to; here that failed, so it uses 127.0.0.1. On one
        machine that works; across nodes the other ranks cannot reach it and connectFullMesh fails.""",
        fix="export GLOO_SOCKET_IFNAME=<interface with the node's IP>   # or fix /etc/hosts so `hostname -i` gives the node's IP",
        examples=[
            ("[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface with GLOO_SOCKET_IFNAME", "aws-samples/aws-do-eks#50"),
        ],
    ),
    pattern(
        "gloo-connect-full-mesh",
        "gloo",
        CAUSE,
        E,
        "gloo could not connect all ranks to each other (connectFullMesh)",
        r"Gloo connectFullMesh failed(?: with (?P<detail>.*))?"
        r"|gloo/transport/\w+/pair\.cc:\d+\] connect \[(?P<peer>[^\]]+)\]:\d+: (?P<reason>Connection refused|No route to host|Connection timed out)",
        ("connectFullMesh", "] connect ["),
        why="""Each gloo rank connects to every other rank at the address it advertises. A rank advertised an
        unreachable address (127.0.0.1 from its hostname, a container or wrong interface) or a firewall blocks
        the ports.""",
        fix="export GLOO_SOCKET_IFNAME=<interface the nodes reach each other on> on every node; check `hostname -i` is not 127.0.x.x",
        examples=[
            ("RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152] timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:14215", "aws-samples/aws-do-eks#69"),
            ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error", "sgl-project/sglang#3226"),
            ("RuntimeError: [/opt/conda/conda-bld/pytorch_1623448255797/work/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [192.168.0.222]:2226: Connection refused", "a public multi-node setup report (gloo pair.cc connect text)"),
        ],
        after=("gloo-loopback-fallback", "gloo-no-address", "gloo-hostname-unresolvable"),
    ),
    pattern(
        "gloo-size-mismatch",
        "gloo",
        CAUSE,
        E,
        "ranks passed different tensor sizes to the same gloo collective",
        r"op\.preamble\.length <= op\.nbytes\. (?P<received>\d+) vs (?P<expected>\d+)",
        ("op.preamble.length",),
        why="""The data a peer sent is larger than this rank's buffer: the ranks called the same collective with
        different shapes (uneven last batch, rank-dependent tensor sizes) or different collectives.""",
        fix="make every rank pass the same shape (pad, or all_gather sizes first); TORCH_DISTRIBUTED_DEBUG=DETAIL names the mismatch",
        examples=[
            ("what():  [enforce fail at /opt/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 256000 vs 128000", "NVIDIA/nccl#1394"),
        ],
        fields=groups,
    ),
    pattern(
        "gloo-peer-closed",
        "gloo",
        CONSEQUENCE,
        E,
        "gloo lost its connection to another rank",
        r"gloo/transport/\w+/pair\.cc:\d+\] (?:Connection closed by peer|Read error|Write error|.*Connection reset by peer)|Connection closed by peer \[(?P<peer>[^\]]+)\]:\d+",
        ("Connection closed by peer", "Connection reset by peer", "Read error", "Write error"),
        why="""The other rank's end of the connection closed: that process exited or crashed (often after its own
        error), was killed, or its node dropped off the network. This rank only reports the loss.""",
        fix="find the rank that failed first (the earliest error in the other ranks' output) and fix that",
        examples=[
            ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [172.28.0.12]:14004", "CGCL-codes/pFedSD#3"),
            ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [192.168.70.92]:25266: Connection reset by peer", "RVC-Project/Retrieval-based-Voice-Conversion-WebUI#1882"),
        ],
        after=("*",),
        fields=groups,
    ),
]
