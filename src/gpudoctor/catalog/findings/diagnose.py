"""Findings in the area "diagnose" (what `gpudoctor diagnose` reports besides its log
patterns, which have their own pages under docs/patterns/)."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="log-no-failure",
        severity="ok",
        area="diagnose",
        emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md)",
        summary="""No known failure pattern matched any line of the log (harmless notices, such as torchrun's
`OMP_NUM_THREADS` line, may still be listed as info).""",
        evidence="`lines`: how many lines were read.",
        why="Nothing in this log says the job failed.",
        fix="""Nothing to fix. If the job did fail, the log may not hold the failing rank's output: diagnose
the run folder or every rank's log, and rerun with more to go on:

```sh
gpudoctor diagnose /path/to/run_folder/
NCCL_DEBUG=WARN TORCH_SHOW_CPP_STACKTRACES=1 torchrun ...
```""",
    ),
    FindingDoc(
        id="rank-exception",
        severity="error",
        area="diagnose",
        emitted_by="[`gpudoctor diagnose DIR`](../commands/diagnose.md)",
        summary="""A torchrun error file (`error.json`, written by `@record`) holds an exception that no failure
pattern recognises. The earliest one is marked as the first failure (`role: cause`); later
ones are usually consequences of it.""",
        evidence="`role`, `rank`, `error_file`, `message`, and `traceback` (its last lines).",
        why="""It is the rank's own exception; when it comes first, the other ranks' timeouts and lost
connections follow from it.""",
        fix="Read the traceback in the error file: its last frame in your own code is the line to fix.",
    ),
)
