"""Lines a run prints at error level and goes on from, found where diagnose named a failure that did not stop the
run (issue 35, the tenth round: never confidently wrong, on the older development parts).

- Weights & Biases' client: its server's errors (HTTP 5xx, timeouts) are logged at ERROR level while the client
  retries in the background; the training goes on under them (the progress bar advances between the lines), only
  the metrics reach the server late. The program's own failure, when there is one, has its own lines: wandb.init
  giving up raises (wandb.errors.CommError, UsageError) with a traceback.

Each rule's examples are real lines from the threads named beside them; its counter-examples the nearest lines
that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import HARMLESS, pattern

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
]
