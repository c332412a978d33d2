"""The check of one failure model over a real `run --nproc` (tests/e2e/test_run_hangs.py,
benchmarks/hang_corpus.py): the doctor's words and its --json never disagree on the
root rank, and each rank has exactly one state, from hang/verdict.STATES, the same in
`ranks`, in `processes` and in the words."""

import re

from gpudoctor.hang.verdict import STATES

_NAMES_ROOT = (
    r"rank (\d+) failed first",
    r"rank (\d+) holds the others up",
    r"root cause: rank (\d+)",
    r"was waiting for rank (\d+)",
)


def disagreements(report: dict, text: str, nproc: int) -> list[str]:
    """What is wrong; [] when words and JSON agree. `text`: the doctor's own stderr
    report (without the ranks' echoed lines)."""
    wrong = []
    ranks = report.get("ranks") or []
    states = {r["rank"]: r["state"] for r in ranks}
    if sorted(r["rank"] for r in ranks) != list(range(nproc)):
        wrong.append(f"ranks {[r['rank'] for r in ranks]}: not one record per rank")
    wrong += [f"rank {r}: state {s!r} not in the vocabulary" for r, s in states.items() if s not in STATES]
    by_process = {int(p["label"].split()[1]): p["state"] for p in report.get("processes") or []}
    if by_process != states:
        wrong.append(f"processes say {by_process}, ranks say {states}")
    root = (report.get("root_cause") or {}).get("rank")
    named = {int(n) for pattern in _NAMES_ROOT for n in re.findall(pattern, text)}
    if named - ({root} if root is not None else set()):
        wrong.append(f"the words name rank(s) {sorted(named)} as the root, the JSON {root}")
    said = re.search(r"^ranks: (.*); root cause: (.*)$", text, re.M)
    if not report.get("ok", True) and report.get("run_dir"):
        if said is None:
            wrong.append("no `ranks:` line in the report of a failed job")
        else:
            words = dict((int(r), s) for r, s in re.findall(r"rank (\d+) ([\w-]+)", said.group(1)))
            if words != states:
                wrong.append(f"the words say {words}, the JSON {states}")
    return wrong
