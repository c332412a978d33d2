"""Lines a run prints at error level and goes on from, found where diagnose named a failure that did not stop the
run (issue 35, the tenth round: never confidently wrong, on the older development parts).

- Weights & Biases' client: its server's errors (HTTP 5xx, timeouts) are logged at ERROR level while the client
  retries in the background; the training goes on under them (the progress bar advances between the lines), only
  the metrics reach the server late. The program's own failure, when there is one, has its own lines: wandb.init
  giving up raises (wandb.errors.CommError, UsageError) with a traceback.

- c10d's store client: one address refusing or not answering ("failed to connect to [host]:port (errno: 110/111/113)",
  at warning level) is a retry: the client tries again until its timeout, and a worker node started before the master
  prints it until the master's store is up. The client giving up ("any network address of (host, port)", "timed out
  after") is the failure, store-connect-timeout.

Each rule's examples are real lines from the threads named beside them; its counter-examples the nearest lines
that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, groups, pattern

PATTERNS = [
    pattern(
        "wandb-api-error-retried",
        "platform",
        HARMLESS,
        Severity.INFO,
        "Weights & Biases could not reach its server and retries (the training goes on; only its metrics upload waits)",
        r"\bwandb: (?:ERROR Error while calling W&B API: .*\(<Response \[\d{3}\]>\)|Network error \(\w+\), entering retry loop)",
        ("Error while calling W&B API", "entering retry loop"),
        why="""W&B's client logs its server's errors (an HTTP 5xx, a read timeout, a proxy error) at ERROR level and
        retries the call in a background process; the training process does not wait for it and goes on (its
        progress lines continue under these), so the run's metrics reach W&B late or not at all. These lines are
        not what stopped a run: a run that failed shows its own traceback or exit, and wandb.init giving up raises
        (wandb.errors.CommError, UsageError) with a traceback of its own.""",
        fix="nothing for the training; for the metrics: https://status.wandb.com and the network or proxy to api.wandb.ai, "
        "or WANDB_MODE=offline and `wandb sync wandb/offline-run-*` afterwards",
        examples=[
            ("wandb: ERROR Error while calling W&B API: internal database error (<Response [500]>)",
             "wandb/wandb#4537 (the epoch's progress bar advances between these lines)"),
            ("wandb: ERROR Error while calling W&B API: context deadline exceeded (<Response [500]>)", "wandb/wandb#5372"),
            ("wandb: Network error (ReadTimeout), entering retry loop.", "wandb/wandb#2039 (after hours of training)"),
        ],
        not_examples=[
            "wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])",
            "wandb.errors.CommError: Error uploading run: returned error 404",
        ],
    ),
    pattern(
        "store-connect-retrying",
        "timeout",
        CAUSE,
        Severity.WARN,
        "a rank's store client could not connect to MASTER_ADDR:MASTER_PORT yet and retries (a failure only when it gives up)",
        r"^(?!.*any network address of).*?client socket has failed to connect to \[?(?P<host>[^\]\s]+)\]?:(?P<port>\d+) \(errno: (?P<errno>11[01]|113)",
        ("client socket has failed to connect to",),
        why="""The store runs on MASTER_ADDR (rank 0's node); this rank's client could not reach it at one of its addresses
        (refused: nothing listens there yet; timed out or no route: the address is not reachable from this node or a
        firewall drops the port), and it tries again until its timeout. A node started before the master prints this
        until the master's store is up, and then trains: by itself the line is no failure. The client giving up says
        so ("failed to connect to any network address of (host, port)", "timed out after"), store-connect-timeout.""",
        fix="if the job stops here: from this node, nc -zv $MASTER_ADDR $MASTER_PORT (the address must be one every node can reach, "
        "not 127.0.0.1 across nodes, and the port open); if it goes on, nothing to do",
        examples=[
            ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 (errno: 110 - Connection timed out).",
             "hiyouga/LlamaFactory#3715"),
            ("[W socket.cpp:697] [c10d] The client socket has failed to connect to 0.104.99.143:47389 (errno: 110 - Connection timed out).",
             "hpcaitech/Open-Sora#667 (then the client gives up: 'failed to connect to any network address of')"),
            ("trainer/0 [1]:[W socket.cpp:558] [c10d] The client socket has failed to connect to [::ffff:0.0.0.5]:40323 (errno: 110 - Connection timed out).",
             "ofsoundof/GRL-Image-Restoration#27"),
        ],
        not_examples=[
            "[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of (6841231, 47389).",
            "[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 97 - Address family not supported by protocol).",
        ],
        fields=groups,
    ),
]
