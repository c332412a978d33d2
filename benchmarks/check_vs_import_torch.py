"""`gpudoctor check` against the floor of any tool that asks torch: a bare
`python -c "import torch"`. And the commands that must never import torch
(`--help`, `lint`, `diagnose`): their time against a bare `python -c pass`,
and whether torch ended up in their process.

The two sides of each comparison run in pairs (which one goes first
alternates); the ratio is the median of the per-pair ratios, with its spread.

Target (issue 14): check <= 1.10x import torch (wall and CPU).

    python benchmarks/check_vs_import_torch.py [--pairs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

from measure import Row, load, median_ratio, precompile_gpudoctor, ratio_row, run_timed

TARGET = 1.10
IMPORT_TORCH = [sys.executable, "-c", "import torch"]
CHECK = [sys.executable, "-m", "gpudoctor", "check"]

# Each light command, run in-process by the CLI's own entry point: afterwards,
# was torch imported? (A subprocess it started would not show here; none of
# these start one.)
PROBE_IMPORTS = """
import sys
from gpudoctor.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("\\ntorch imported: %s\\n" % ("torch" in sys.modules))
"""


def light_commands(tmp: str) -> dict[str, list[str]]:
    script = os.path.join(tmp, "train.py")
    with open(script, "w") as fh:
        fh.write("import torch\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n")
    log = os.path.join(tmp, "rank0.log")
    with open(log, "w") as fh:
        fh.write("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                 "cpu and cuda:0!\n")
    from gpudoctor.cli.app import app

    names = {c.name for c in app.registered_commands}
    commands = {"--help": ["--help"], "lint": ["lint", script]}
    if "diagnose" in names:
        commands["diagnose"] = ["diagnose", log]
    return commands


def pairs(a: list[str], b: list[str], n: int) -> tuple[list, list]:
    first, second = [], []
    for i in range(n):
        for side, cmd in ((first, a), (second, b)) if i % 2 == 0 else ((second, b), (first, a)):
            timed = run_timed(cmd, timeout=300)
            if timed.returncode not in (0, 1):
                raise SystemExit(f"{' '.join(cmd)} exited {timed.returncode}:\n{timed.stderr[-2000:]}")
            side.append(timed)
    return first, second


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args(argv)
    precompile_gpudoctor()
    rows: list[Row] = []

    base, check = pairs(IMPORT_TORCH, CHECK, args.pairs)
    print(f"gpudoctor check vs python -c 'import torch', {args.pairs} pairs, {load()}")
    for what, attr in (("wall", "wall_s"), ("CPU", "cpu_s")):
        b = [getattr(t, attr) for t in base]
        c = [getattr(t, attr) for t in check]
        ratio, (lo, hi) = median_ratio(c, b)
        # The target is the wall time a user waits; CPU (the child's torch import plus
        # the CLI's own work beside it) is shown for context.
        row = ratio_row(f"check: {what} / import torch", ratio, lo, hi, TARGET if what == "wall" else None)
        rows.append(row)
        goal = f"  target {row.target}: {'met' if row.met else 'NOT met'}" if row.target else ""
        print(f"  {what:4s}: import torch {statistics.median(b):.3f} s  check {statistics.median(c):.3f} s  "
              f"ratio {ratio:.3f} [{lo:.3f}, {hi:.3f}]{goal}")

    with tempfile.TemporaryDirectory() as tmp:
        bare = [sys.executable, "-c", "pass"]
        print("\ncommands that must not import torch (median wall; python -c pass for scale)")
        floor = statistics.median(run_timed(bare).wall_s for _ in range(3))
        print(f"  python -c pass        : {floor:.3f} s")
        for name, cli_args in light_commands(tmp).items():
            timed = [run_timed([sys.executable, "-c", PROBE_IMPORTS, *cli_args], timeout=120) for _ in range(3)]
            imported = any("torch imported: True" in t.stderr for t in timed)
            ok = not imported and all("torch imported: False" in t.stderr for t in timed)
            wall = statistics.median(t.wall_s for t in timed)
            rows.append(Row(f"{name}: imports torch ({wall:.2f} s)", "yes" if imported else "no", "", "never", ok))
            print(f"  gpudoctor {name:12s}: {wall:.3f} s   imports torch: {'yes' if imported else 'no'}"
                  f"  target: never -> {'met' if ok else 'NOT met'}")
    return rows


if __name__ == "__main__":
    main()
