"""Findings in the area "gpudoctor"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="fault-injected",
        severity="info",
        area="gpudoctor",
        emitted_by="`gpudoctor allreduce` and `gpudoctor train-smoke`, first in the report, when run with the hidden test hook `--fault RANK:KIND,...`, or when `GPUDOCTOR_FAULT` was in the environment and was ignored",
        summary="""gpudoctor's own tests make ranks fail on purpose (`--fault 1:hang` hangs rank 1,
`1:wrong` corrupts its all-reduce, ...). Only the flag does it: a `GPUDOCTOR_FAULT` variable
inherited from a shell or a job script is dropped before any rank starts, and said here, so that
no variable can fake a hardware verdict.""",
        evidence="`fault` (the flag's value) or `ignored` (the variable that was not acted on).",
        why="A fault injected on purpose makes the report describe that fault, not the machine.",
        fix="""Nothing to fix when you asked for it. For a verdict on the machine itself, run without it:

```sh
unset GPUDOCTOR_FAULT; gpudoctor allreduce
```""",
        says="A fault injected on purpose makes the report describe that fault, not the machine.",
        does="for a verdict on the machine itself, run without --fault (and unset GPUDOCTOR_FAULT)",
    ),
    FindingDoc(
        id="check-failed",
        severity="error",
        area="gpudoctor",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="One of gpudoctor's own checks raised on these facts; the other checks still ran.",
        evidence="`check` (which one), `error`.",
        why="A bug in gpudoctor, or a facts snapshot (`--facts`) from a version it does not understand.",
        fix="""Save the facts and report it:

```sh
gpudoctor check --json > facts.json
```""",
        says="A bug in gpudoctor, or a facts snapshot it does not understand; the other checks still ran.",
        does="gpudoctor check --json > facts.json  # and attach it to a gpudoctor issue",
    ),
)
