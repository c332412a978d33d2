"""How right is the hang & crash doctor on multi-rank jobs nobody here wrote?

Runs every case of tests/hang_corpus/ for real, `gpudoctor run --nproc N` on gloo
with bounded timeouts, and compares what it says with the verdict written in
tests/hang_corpus/expected.json before any run:

- fully right: the exit code, the main finding, the root rank, every marked line
  (`# @A` in the case) and every key word appear in the doctor's report;
- main finding right: the main finding (the first error of the report) and the root
  rank; for a healthy job, exit 0 and no error.

Scores are printed for the development and the held-out part separately (the split
is in the data: sha1(case id) % 4 == 0 is held out, decided before the first run).
Every run's whole process tree is checked for leftovers (tests/orphans.py).

    python benchmarks/hang_corpus.py [--split dev|held-out|all] [--case NAME ...] [--show] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "hang_corpus")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from agreement import disagreements  # noqa: E402
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402

HANG_TIMEOUT_S = "10"  # the stall clock: long enough for a rank's start on a busy machine
TIMEOUT_S = "90"  # the watchdog of the whole job (a busy machine starts ranks slowly)
WALL_S = 150  # what this script waits for one run at most


def marked_lines(path: str) -> dict[str, int]:
    """`# @A` markers of a case -> their line numbers."""
    out = {}
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            for mark in re.findall(r"# @([A-Z])\b", line):
                out[mark] = n
    return out


def run_case(name: str, nproc: int) -> tuple[int, dict | None, str, float, int]:
    """(exit code, --json report, the doctor's own report text, seconds, processes left behind)."""
    tag = new_tag()
    env = dict(os.environ, **{TAG_ENV: tag})
    env.pop("GPUDOCTOR_RUN", None)
    with tempfile.TemporaryDirectory(prefix="gpudoctor-corpus-") as tmp:
        out = os.path.join(tmp, "report.json")
        cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", str(nproc), "--hang-timeout", HANG_TIMEOUT_S,
               "--timeout", TIMEOUT_S, "--json", out, os.path.join("tests", "hang_corpus", f"{name}.py")]  # fmt: skip
        start = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=WALL_S, cwd=ROOT, env=env)
            code, stderr = r.returncode, r.stderr
        except subprocess.TimeoutExpired as exc:
            code, stderr = -1, (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        elapsed = time.monotonic() - start
        left = leftovers(tag)
        kill_all(left)
        try:
            with open(out) as fh:
                report = json.load(fh)
        except (OSError, ValueError):
            report = None
    text = "\n".join(line for line in stderr.splitlines() if not line.startswith("[rank "))
    return code, report, text, elapsed, len(left)


def main_finding(report: dict | None) -> tuple[str, int | None]:
    """(id of the first error finding, the root rank of the report)."""
    if not report:
        return "", None
    errors = [f for f in report.get("findings", []) if f.get("severity") == "error"]
    root = (report.get("root_cause") or {}).get("rank")
    return (errors[0]["id"] if errors else ""), root


def judge(name: str, expect: dict, code: int, report: dict | None, text: str) -> tuple[bool, bool, list[str]]:
    """(fully right, main finding right, what was wrong)."""
    wrong = []
    finding, root = main_finding(report)
    if expect["exit"] == 0:
        main = code == 0 and not finding
        if not main:
            wrong.append(f"healthy job: exit {code}, finding {finding or '-'}")
        wrong += disagreements(report, text, expect["nproc"]) if report else ["no --json report"]
        return not wrong, main, wrong
    if finding not in expect["finding"]:
        wrong.append(f"finding {finding or '-'} not in {expect['finding']}")
    if expect["root"] is not None and root != expect["root"]:
        wrong.append(f"root rank {root}, expected {expect['root']}")
    main = not wrong
    if code != expect["exit"]:
        wrong.append(f"exit {code}, expected {expect['exit']}")
    lines = marked_lines(os.path.join(CORPUS, f"{name}.py"))
    for mark in expect["lines"]:
        where = f"{name}.py:{lines.get(mark)}"
        if where not in text:
            wrong.append(f"line {where} (@{mark}) not named")
    lower = text.lower()
    for word in expect["words"]:
        if word.lower() not in lower:
            wrong.append(f"word {word!r} not said")
    # The words and the JSON never disagree on the root rank; one state per rank.
    wrong += disagreements(report, text, expect["nproc"]) if report else ["no --json report"]
    return not wrong, main, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "held-out", "all"), default="dev")
    parser.add_argument("--case", nargs="*", default=None)
    parser.add_argument("--show", action="store_true", help="print the doctor's report of every case that is not fully right")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (each is 2-3 ranks and the doctor)")
    args = parser.parse_args()
    with open(os.path.join(CORPUS, "expected.json")) as fh:
        expected = json.load(fh)
    names = sorted(n for n, e in expected.items() if args.split == "all" or e["split"] == args.split)
    if args.case:
        names = [n for n in names if n in args.case]
    scores: dict[str, list[tuple[bool, bool]]] = {}
    orphans = 0
    load = os.getloadavg()[0]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:  # results come back in order, as they finish
        for name, (code, report, text, elapsed, left) in pool.map(lambda n: (n, run_case(n, expected[n]["nproc"])), names):
            e = expected[name]
            orphans += left
            full, main, wrong = judge(name, e, code, report, text)
            scores.setdefault(e["split"], []).append((full, main))
            mark = "ok  " if full else ("main" if main else "FAIL")
            print(f"{mark} {e['split']:8} {name:36} exit {code:4} {elapsed:5.1f} s  {'; '.join(wrong)}", flush=True)
            if args.show and not full:
                print("    " + text.replace("\n", "\n    "))
    print(f"\nload average at the start: {load:.1f}; processes left behind: {orphans}")
    for split in ("dev", "held-out"):
        got = scores.get(split)
        if got:
            full = sum(f for f, _ in got)
            main_ = sum(m for _, m in got)
            print(f"{split:8}: fully right {full}/{len(got)}, main finding right {main_}/{len(got)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
