"""How `gpudoctor diagnose` does on one part of the sampled log corpus (issue 35).

PART_DIR holds one log per case and a manifest.json (tests/fixtures/log_sample/<part>/README.md):
per case the thread it came from, whether the run failed, the cause the thread established,
keywords a right answer names, the case's family and project. Each case is diagnosed as a user
would run it, `python -m gpudoctor diagnose FILE --json`, in its own process (30 s at most,
two at a time), so a crash or a hang is counted rather than stopping the scoring.

Per case one verdict:
  right           failed: diagnose says the run failed and a keyword of the case is in a
                  finding's id, or in its title/why/fix where the log itself does not hold
                  that word (a word echoed from the log shows nothing); healthy: exit 0
  called-healthy  failed, and diagnose exits 0 (the defect that matters most)
  unrecognised    failed, and the headline is the unrecognised verdict (`unrecognised-failure`)
  other           failed, found to have failed, with another cause that names no keyword
  called-failed   healthy, and diagnose exits 1
  crash           no JSON, an exit code other than 0/1, or the 30 s limit

and the figures, overall, per project and per family: (a) keyword score, (b) failed called
healthy, (c) unrecognised, (d) healthy called failed.

    python benchmarks/score_sample.py PART_DIR [--json] [--cases]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run_timed  # noqa: E402

UNRECOGNISED = "unrecognised-failure"
UNDECIDED = "log-inconclusive"
TIMEOUT_S = 30
VERDICTS = ("right", "called-healthy", "unrecognised", "other", "called-failed", "crash")


@dataclass
class Scored:
    id: str
    project: str
    family: str
    failed: bool
    gpu_tool: bool
    verdict: str
    headline: str  # the top finding's id, "" when there is none
    exit_code: int
    detail: str = ""  # what went wrong when the run crashed


def headline(answer: dict) -> str:
    """The finding diagnose leads with: its root cause when it names one, else the first error, else the first finding."""
    root = answer.get("root_cause") or {}
    if root.get("id"):
        return str(root["id"])
    findings = answer.get("findings") or []
    errors = [f for f in findings if f.get("severity") == "error"]
    return str((errors or findings or [{}])[0].get("id", ""))


def names_keyword(answer: dict, keywords: list[str], log_text: str) -> bool:
    """A keyword in a finding's id counts; in its title/why/fix only when the log does not already say it."""
    for f in answer.get("findings") or []:
        prose = " ".join(str(f.get(k) or "") for k in ("title", "why", "fix")).lower()
        for k in keywords:
            if k in str(f.get("id", "")).lower() or (k in prose and k not in log_text):
                return True
    return False


def score(case: dict, part: Path, python: str) -> Scored:
    path = part / case["file"]
    out = Scored(case["id"], case.get("project") or "?", case.get("family") or "?", bool(case.get("failed")),
                 bool(case.get("gpu_tool")), "crash", "", 0)
    run = run_timed([python, "-m", "gpudoctor", "diagnose", str(path), "--json"], timeout=TIMEOUT_S)
    out.exit_code = run.returncode
    try:
        answer = json.loads(run.stdout)
    except ValueError:
        answer = None
    if run.returncode not in (0, 1) or not isinstance(answer, dict):
        last = (run.stderr.strip().splitlines() or ["no output"])[-1]
        out.detail = "timed out" if run.returncode == -9 else f"exit {run.returncode}: {last[:200]}"
        return out
    out.headline = headline(answer)
    said_failed = run.returncode == 1
    if not out.failed:
        out.verdict = "called-failed" if said_failed else "right"
        return out
    log_text = path.read_text(encoding="utf-8", errors="replace").lower()
    # heldout3's collector marked cases of unknown cause with the keyword "unrecognised";
    # the id `unrecognised-failure` would then count as right: it is an honest
    # "unrecognised", scored as such, never as a named cause
    keywords = [k.lower() for k in case.get("keywords") or [] if k.lower() not in ("unrecognised", "unrecognized")]
    if not said_failed:
        out.verdict = "called-healthy"
    elif names_keyword(answer, keywords, log_text):
        out.verdict = "right"
    elif out.headline == UNRECOGNISED:
        out.verdict = "unrecognised"
    else:
        out.verdict = "other"
    return out


def figures(rows: list[Scored]) -> dict:
    failed = [r for r in rows if r.failed]
    healthy = [r for r in rows if not r.failed]
    count = Counter(r.verdict for r in rows)
    right = count["right"]
    return {
        "cases": len(rows), "failed": len(failed), "healthy": len(healthy),
        "keyword_right": right, "keyword_score": round(right / len(rows), 3) if rows else None,
        "failed_called_healthy": count["called-healthy"], "unrecognised": count["unrecognised"],
        "healthy_called_failed": count["called-failed"], "other": count["other"], "crash": count["crash"],
        # of `other` and `healthy_called_failed`: the answer "the log does not decide" (an honest
        # not-decided, exit 1, which is neither a named cause nor a failure claimed)
        "failed_undecided": sum(r.verdict == "other" and r.headline == UNDECIDED for r in failed),
        "healthy_undecided": sum(r.verdict == "called-failed" and r.headline == UNDECIDED for r in healthy),
    }


def line(name: str, f: dict) -> str:
    score_ = "-" if f["keyword_score"] is None else f"{f['keyword_score']:.2f}"
    return (f"{name[:34]:34} {f['cases']:4} {f['failed']:4} {f['keyword_right']:4} {score_:>5} "
            f"{f['failed_called_healthy']:4} {f['unrecognised']:4} {f['healthy_called_failed']:4} "
            f"{f['other']:4} {f['crash']:4}")


def grouped(rows: list[Scored], key: str) -> dict[str, dict]:
    groups: dict[str, list[Scored]] = defaultdict(list)
    for r in rows:
        groups[str(getattr(r, key))].append(r)
    return {name: figures(g) for name, g in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", help="a part folder, e.g. tests/fixtures/log_sample/dev")
    ap.add_argument("--json", action="store_true", help="one JSON object: totals, per project, per family, per case")
    ap.add_argument("--cases", action="store_true", help="also one line per case, to judge by reading")
    ap.add_argument("--python", default=sys.executable, help="the interpreter gpudoctor runs under")
    args = ap.parse_args()
    part = Path(args.part)
    try:
        manifest = json.loads((part / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.exit(f"score_sample: cannot read {part / 'manifest.json'}: {exc}")
    cases = [c for c in manifest if (part / c["file"]).is_file()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda c: score(c, part, args.python), cases))
    result: dict = {
        "part": str(part), "missing_files": len(manifest) - len(cases),
        "total": figures(rows), "gpu_tool": figures([r for r in rows if r.gpu_tool]),
        "by_project": grouped(rows, "project"), "by_family": grouped(rows, "family"),
    }
    if args.json:
        result["cases"] = [asdict(r) for r in rows]
        print(json.dumps(result, indent=2))
        return
    head = f"{'':34} {'n':>4} {'fail':>4} {'kw':>4} {'score':>5} {'heal':>4} {'unrc':>4} {'h→f':>4} {'othr':>4} {'crsh':>4}"
    print("kw: keyword right; heal: failed called healthy; unrc: unrecognised; h→f: healthy called failed")
    print(head)
    print(line("TOTAL", result["total"]))
    print(line("gpu-tool output", result["gpu_tool"]))
    total = result["total"]
    print(f"not decided ({UNDECIDED}): {total['failed_undecided']} of the othr, {total['healthy_undecided']} of the h→f")
    for title in ("by_project", "by_family"):
        print(f"\n{title.replace('_', ' ')}:\n{head}")
        for name, f in result[title].items():
            print(line(name, f))
    if result["missing_files"]:
        print(f"\n{result['missing_files']} manifest cases have no file")
    if args.cases:
        print(f"\n{'id':58} {'family':22} {'verdict':14} top finding")
        for r in rows:
            print(f"{r.id[:58]:58} {r.family[:22]:22} {r.verdict:14} {r.headline or '-'} {r.detail}")


if __name__ == "__main__":
    main()
