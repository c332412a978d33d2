"""What `gpudoctor lint` costs per file against parsing the same file with
Python's own `ast.parse` (the floor any AST linter pays), in one process,
file by file, so that one slow file shows by name instead of hiding in a total.

    python benchmarks/lint_throughput.py [PATH ...] [--top 10]

Default input: the lint sample corpus (scripts people posted) and chains of
`a = step(a, i)` whose values lead back through every call site (the shape of
a diffusers pipeline that once took minutes to lint). Figures: MB/s of both,
the total ratio, and the files with the largest ratio. Exit 0: it measures.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))


def chain(steps: int) -> str:
    calls = "\n".join(f"    a = step(a, {i % 2})" for i in range(steps))
    return (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "def step(x, flag):\n    if flag:\n        x = x.to('cpu')\n    return x\n\n"
        f"def main(a):\n{calls}\n    m = DDP(a)\n    m.weight.zero_()\n    return a.bias\n"
    )


def best_of(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    from gpudoctor.linter.engine import python_files, read_file

    with tempfile.TemporaryDirectory() as tmp:
        paths = args.paths
        if not paths:
            for steps in (8, 16, 32):
                with open(os.path.join(tmp, f"chain_{steps}.py"), "w", encoding="utf-8") as f:
                    f.write(chain(steps))
            paths = [os.path.join(ROOT, "tests", "fixtures", "lint_sample"), tmp]
        rows = []
        for path in python_files(paths):
            if not path.endswith(".py"):
                continue
            with open(path, "rb") as f:
                data = f.read()
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                continue  # the floor is undefined for a file Python refuses
            parse_s = best_of(lambda: ast.parse(data))
            lint_s = best_of(lambda: read_file(path), repeats=1 if len(data) > 20_000 else 3)
            rows.append((lint_s / max(parse_s, 1e-6), lint_s, parse_s, len(data), path))
    size = sum(r[3] for r in rows) / 1e6
    lint_total = sum(r[1] for r in rows)
    parse_total = sum(r[2] for r in rows)
    print(f"{len(rows)} files, {size:.2f} MB: lint {size / lint_total:.2f} MB/s, ast.parse {size / parse_total:.1f} MB/s, "
          f"ratio {lint_total / parse_total:.1f}x (CPU time, best of repeats)")
    print(f"largest ratios (lint / ast.parse of the same file):")
    for ratio, lint_s, _parse_s, n, path in sorted(rows, reverse=True)[: args.top]:
        print(f"  {ratio:7.1f}x  {lint_s * 1000:8.1f} ms  {n / 1000:7.1f} KB  {os.path.relpath(path, ROOT)}")
    slowest = max(rows, key=lambda r: r[1]) if rows else None
    if slowest:
        print(f"slowest file: {slowest[1]:.3f} s CPU for {slowest[3] / 1000:.1f} KB ({os.path.relpath(slowest[4], ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
