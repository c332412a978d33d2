"""Does `allreduce` across nodes call a node slow that is not, and does it name one
whose NIC is shaped? (issue 36's per-node figures, judged as issue 34 asks: never
confidently wrong on a busy host)

    python benchmarks/per_node_control.py [--controls 10] [--shaped 3] [--busy 2] [--nodes 2] [--nproc 2]

Needs root and `ip netns` (the multi-node tier's simulated nodes, tests/multinode/nodes.py):
one torchrun agent per node, c10d rendezvous, `gpudoctor allreduce --sizes 4K --iters 5
--json` as the workers, as tests/multinode/test_tier.py runs it.

Controls: nothing shaped, each run beside `--busy` CPU-bound loops on the host (started
before the run, killed by pid after it). A control whose `allreduce-slow-node` finding is a
warning is a false positive. Shaped: node 1's NIC shaped with `tbf rate 20mbit` (a few
percent of an unshaped veth); detected when the warning names node 1 and only it.

Prints one line per run (the verdict and each direction's two passes) and one per series:
hits / runs. Exits 0; 2 where the machine cannot make the nodes.

2026-11-29, 2 cores shared with other work, --controls 8 --shaped 2 --busy 1: a send's figure
the median of its 5 sends (before): false positives 1/8 (2->0 read 4192/7537 µs against
681/1149 µs), shaped named 2/2; the best of its 5 sends (after): false positives 0/8, shaped
named 2/2 (27.5 ms against 0.2-0.5 ms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "multinode"))
from nodes import Nodes, available  # noqa: E402
from test_tier import collect, start  # noqa: E402

ARGV = ["allreduce", "--sizes", "4K", "--iters", "5", "--warmup", "1", "--json"]
SHAPE = ("tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms")


def _busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
        p.wait(timeout=10)


def _run(nodes: Nodes, nproc: int, job: str, busy: int) -> dict | None:
    loops = _busy(busy)
    try:
        agents = collect(nodes, start(nodes, nproc, ARGV, job))
    finally:
        _stop(loops)
    try:
        return json.loads(agents[0].stdout)
    except ValueError:
        return None


def _verdict(report: dict | None) -> tuple[str, list[str]]:
    """("warn"/"ok"/"none"/"no-report", the nodes a warning names)."""
    if report is None:
        return "no-report", []
    found = [f for f in report.get("findings", []) if f.get("id") == "allreduce-slow-node"]
    if not found:
        return "none", []
    return found[0]["severity"], found[0].get("evidence", {}).get("slow", [])


def _sends(report: dict | None) -> str:
    rows = ((report or {}).get("per_node") or {}).get("sends") or []
    return " ".join(f"{r['from']}->{r['to']}:{r['us']:.0f}/{r['repeat_us']:.0f}" for r in rows)


def _series(label: str, nodes: Nodes, runs: int, nproc: int, busy: int, shaped: bool) -> None:
    seen: Counter[str] = Counter()
    hits = 0
    began = time.monotonic()
    for i in range(runs):
        report = _run(nodes, nproc, f"{label}{i}", busy)
        verdict, slow = _verdict(report)
        seen[verdict] += 1
        hits += (verdict == "warn" and slow == [nodes.name(1)]) if shaped else verdict == "warn"
        print(f"  {label}: {verdict} {slow} sends {_sends(report)}", flush=True)
    what = "named node 1" if shaped else "false positives"
    print(f"{label} ({nodes.count} nodes x {nproc} ranks, {busy} busy loops): {what} {hits}/{runs}; "
          f"verdicts {dict(seen)}; {time.monotonic() - began:.0f} s", flush=True)  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--controls", type=int, default=10)
    ap.add_argument("--shaped", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--nproc", type=int, default=2)
    args = ap.parse_args()
    why = available()
    if why:
        print(f"per_node_control: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gd-pernode-") as tmp:
        root = Path(tmp) / "nodes"
        root.mkdir(mode=0o700)
        nodes = Nodes(args.nodes, root).up()
        try:
            _series("control", nodes, args.controls, args.nproc, args.busy, shaped=False)
            if args.shaped:
                nodes.shape(1, *SHAPE)
                _series("shaped", nodes, args.shaped, args.nproc, args.busy, shaped=True)
        finally:
            nodes.down()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
