"""Does `allreduce --bisect` name slow links that are not there, and does it find
one that is? (issue 34, item 3)

    python benchmarks/bisect_control.py [--controls 10] [--slowed 5] [--busy 2] [--nproc 4]

Controls: `allreduce --nproc N --sizes 64K --bisect --json` with nothing slowed,
each run beside `--busy` CPU-bound loops (`python -c "while True: pass"`, started
before the run and killed by pid after it). A control that reports
allreduce-slow-rank or allreduce-slow-link is a false positive.

Slowed: the same runs with one link slowed on purpose (--fault 1:slowlink3:
rank 1 sleeps before each bisect all-reduce it does with rank 3) and with one rank
slowed (--fault 2:slow); detected when the finding names that link / rank.
`--fault-link` / `--fault-rank` set the specs ("" leaves the kind out, e.g. for a
gpudoctor that has no slowlink fault).

Prints one line per kind: hits / runs, and the verdicts seen. Exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

RUN_TIMEOUT_S = 300
BISECT_IDS = ("allreduce-slow-rank", "allreduce-slow-link", "allreduce-bisect")


def _busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        try:
            os.kill(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=10)


def _run(nproc: int, fault: str) -> dict | None:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GPUDOCTOR_FAULT")}
    cmd = [sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", str(nproc), "--sizes", "64K", "--bisect", "--json"]
    if fault:
        cmd += ["--fault", fault]  # the one way to inject a fault (an inherited GPUDOCTOR_FAULT is ignored)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    try:
        return json.loads(out)
    except ValueError:
        return None


def _pairs(report: dict | None) -> str:
    """The pair times, "a-b:us/repeat_us", to judge again offline."""
    rows = (report or {}).get("bisect") or []  # the JSON report's top-level "bisect" list
    return " ".join(f"{r['ranks'][0]}-{r['ranks'][1]}:{r['us']:.0f}/{r.get('repeat_us', 0):.0f}" for r in rows)


def _verdict(report: dict | None) -> tuple[str, dict]:
    if report is None:
        return "no-report", {}
    for f in report.get("findings", []):
        if f.get("id") in BISECT_IDS:
            return f["id"], f
    return "no-bisect-finding", {}


def _named(finding: dict, fault: str) -> bool:
    """Does the finding name what the fault slowed?"""
    rank, _, kind = fault.partition(":")
    title = finding.get("title", "")
    if kind == "slow":
        return finding.get("id") == "allreduce-slow-rank" and finding.get("evidence", {}).get("ranks") == [int(rank)]
    peer = kind.removeprefix("slowlink")
    a, b = sorted((int(rank), int(peer)))
    return finding.get("id") == "allreduce-slow-link" and title.count(f"rank {a} ") >= 1 and f"rank {b} " in title


def _series(label: str, runs: int, busy: int, nproc: int, fault: str) -> None:
    seen: Counter[str] = Counter()
    hits = 0
    started = time.monotonic()
    for _ in range(runs):
        loops = _busy(busy)
        try:
            report = _run(nproc, fault)
            verdict, finding = _verdict(report)
        finally:
            _stop(loops)
        seen[verdict] += 1
        if fault:
            hits += _named(finding, fault)
        else:
            hits += verdict in ("allreduce-slow-rank", "allreduce-slow-link")
        print(f"  {label}: {verdict}: {finding.get('title', '')[:200]}\n    pairs {_pairs(report)}", flush=True)
    what = "named the slowed one" if fault else "false positives"
    spent = time.monotonic() - started
    print(f"{label} (--fault {fault or '-'}, {busy} busy loops, {nproc} ranks): {what} {hits}/{runs}; verdicts {dict(seen)}; {spent:.0f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--controls", type=int, default=10)
    ap.add_argument("--slowed", type=int, default=5)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--nproc", type=int, default=4)
    ap.add_argument("--fault-link", default="1:slowlink3")
    ap.add_argument("--fault-rank", default="2:slow")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    _series("control", args.controls, args.busy, args.nproc, "")
    if args.fault_link:
        _series("slowed link", args.slowed, args.busy, args.nproc, args.fault_link)
    if args.fault_rank:
        _series("slowed rank", args.slowed, args.busy, args.nproc, args.fault_rank)
    return 0


if __name__ == "__main__":
    sys.exit(main())
