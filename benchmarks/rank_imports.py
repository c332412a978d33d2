"""What a rank of the user's job imports because it runs under the doctor: a real
`gpudoctor run --nproc 2` of a script that leaves a finding on each rank (so each
rank draws its own report), against the floor of any rank, a bare
`python -c "import torch"`, measured in the same run.

For each: the modules in sys.modules at the very end (the rank's, written by
tests/rank_modules/sitecustomize.py after gpudoctor's report), and the total time
of its imports (`-X importtime`, PYTHONPROFILEIMPORTTIME for the ranks: the sum of
the top-level imports' cumulative times). Also listed: whether rich, the
supervisor or the hang doctor's watch is among the rank's modules (it must not be:
tests/e2e/test_rank_imports.py), and the time of gpudoctor's own modules.

    python benchmarks/rank_imports.py [--repeat 3]

Measure another checkout (e.g. before a change) with PYTHONPATH=<it>/src.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys
import tempfile

from measure import run_timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELPER = os.path.join(ROOT, "tests", "rank_modules")
SCRIPT = os.path.join("tests", "scripts", "sampler_no_set_epoch.py")
SUPERVISOR_SIDE = ("rich", "gpudoctor.launch.supervisor", "gpudoctor.hang.watch")
_LINE = re.compile(r"^(?:\[rank (\d+)\] )?import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)")


def import_times(stderr: str) -> dict[str, list[tuple[int, int, int, str]]]:
    """-X importtime lines by process ("" = unprefixed): (self us, cumulative us, depth, module)."""
    by: dict[str, list[tuple[int, int, int, str]]] = {}
    for line in stderr.splitlines():
        m = _LINE.match(line)
        if m:
            by.setdefault(m.group(1) or "", []).append((int(m.group(2)), int(m.group(3)), len(m.group(4)), m.group(5)))
    return by


def total_ms(rows) -> float:
    return sum(cum for _, cum, depth, _ in rows if depth == 1) / 1000


def own_ms(rows) -> float:
    return sum(own for own, _, _, name in rows if name.split(".")[0] in ("gpudoctor", "rich")) / 1000


def baseline() -> tuple[float, int]:
    r = run_timed([sys.executable, "-X", "importtime", "-c", "import torch, sys; print(len(sys.modules))"])
    assert r.returncode == 0, r.stderr[-2000:]
    return total_ms(import_times(r.stderr)[""]), int(r.stdout.strip())


ISOLATED = """
import importlib, sys, time
import torch
names = sys.argv[1:]
start = time.perf_counter()
for name in names:
    importlib.import_module(name)
print(time.perf_counter() - start)
"""


def isolated_ms(modules: list[str], repeat: int) -> float:
    """The rank's own gpudoctor and rich modules imported again, after torch, in a fresh
    quiet python: what they cost without the other rank competing for the cores (best run)."""
    own = [m for m in modules if m.split(".")[0] in ("gpudoctor", "rich") and m != "gpudoctor.hooks.main"]
    times = []
    for _ in range(repeat):
        r = run_timed([sys.executable, "-c", ISOLATED, *own])
        assert r.returncode == 0, r.stderr[-2000:]
        times.append(float(r.stdout.strip()) * 1000)
    return min(times)


def rank_run(tmp: str, n: int) -> tuple[float, float, int, list[str], list[str]]:
    out = os.path.join(tmp, f"modules{n}")
    env = dict(os.environ, RANK_MODULES_OUT=out, PYTHONPROFILEIMPORTTIME="1")
    env["PYTHONPATH"] = os.pathsep.join([HELPER, *filter(None, [env.get("PYTHONPATH")])])
    for name in ("GPUDOCTOR_RUN", "RANK"):
        env.pop(name, None)
    os.chdir(ROOT)
    r = run_timed([sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", SCRIPT], env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = import_times(r.stderr)["0"]
    with open(glob.glob(f"{out}.*.json")[0]) as fh:
        modules = [m for m in json.load(fh)["modules"] if m != "sitecustomize"]
    bad = sorted(m for m in modules if m in SUPERVISOR_SIDE or m.startswith("rich."))
    return total_ms(rows), own_ms(rows), len(modules), bad, modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base, ranks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.repeat):  # alternated, so that load on the machine falls on both
            base.append(baseline())
            ranks.append(rank_run(tmp, n))
    torch_ms = statistics.median(b[0] for b in base)
    torch_modules = base[0][1]
    rank_ms = statistics.median(r[0] for r in ranks)
    own = statistics.median(r[1] for r in ranks)
    modules, bad = ranks[0][2], ranks[0][3]
    alone = isolated_ms(ranks[0][4], max(3, args.repeat))
    print(f"import torch (bare python):        {torch_ms:7.0f} ms of imports, {torch_modules} modules")
    print(f"rank 0 of run --nproc 2 {SCRIPT}: {rank_ms:7.0f} ms of imports, {modules} modules")
    lo, hi = min(r[1] for r in ranks), max(r[1] for r in ranks)
    print(f"  of which gpudoctor's and rich's own: {own:.0f} ms (runs: {lo:.0f} to {hi:.0f}; two ranks share the cores)")
    print(f"ratio rank / import torch: {rank_ms / torch_ms:.2f}x import time, {modules / torch_modules:.2f}x modules")
    print(f"gpudoctor's own imports / import torch: {own / torch_ms:.2f}x")
    print(f"the rank's gpudoctor and rich modules imported alone after torch: {alone:.0f} ms, "
          f"{alone / torch_ms:.3f}x import torch")
    print(f"supervisor-side modules in the rank: {', '.join(bad) if bad else 'none'}")


if __name__ == "__main__":
    main()
