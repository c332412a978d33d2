"""Findings in the area "gpudoctor"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
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
