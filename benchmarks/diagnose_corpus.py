"""How `gpudoctor diagnose` does on a corpus of real logs (tests/fixtures/log_corpus).

The corpus directory holds one log per case and a manifest.json (see the corpus's
README.md): per case its source thread, whether the job failed, the cause and fix the
thread established, keywords a right answer names, the first failing rank when the log
shows it, and its split ("dev" or "heldout", decided by a hash of the thread before any
scoring). Every case is diagnosed in this process, as `gpudoctor diagnose FILE` would.

Two scores per split:
  keyword: a failed case scores when diagnose reports an error and one of its keywords
           is in a finding's id, title, why or fix (never in the quoted evidence);
           a healthy case scores when diagnose reports no error.
  strict:  the headline (first error finding) itself carries a keyword (or, when the
           manifest names one, is the expected finding id), and the first failing rank
           matches when the manifest gives it.
and the defect that matters most: a failed log called healthy (exit 0).

Held-out cases are scored only as totals unless --show-heldout is given: develop on dev.

    python benchmarks/diagnose_corpus.py [CORPUS_DIR] [--split dev|heldout|all] [-v] [--show-heldout]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DEFAULT = ROOT / "tests" / "fixtures" / "log_corpus"


@dataclass
class Outcome:
    case: dict
    failed_found: bool  # an error finding
    keyword: bool
    strict: bool
    crashed: str = ""
    headline: str = ""
    rank: Optional[int] = None

    @property
    def called_healthy(self) -> bool:
        return bool(self.case.get("failed")) and not self.failed_found and not self.crashed


def finding_text(f) -> str:
    return " ".join([f.id, f.title, f.why, f.fix]).lower()


def judge(case: dict, path: Path) -> Outcome:
    from gpudoctor.commands.diagnose.inputs import Target
    from gpudoctor.commands.diagnose.analyse import diagnose
    from gpudoctor.core.findings import Severity

    try:
        report = diagnose(Target("text", str(path)), io.BytesIO(path.read_bytes()))
    except Exception as exc:  # a crash is a defect to count, not a reason to stop scoring
        return Outcome(case, False, False, False, crashed=f"{type(exc).__name__}: {exc}")
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    keywords = [k.lower() for k in case.get("keywords") or []]
    root = report.data.get("root_cause") or {}
    rank = root.get("rank") if root.get("rank") is not None else root.get("local_rank")  # one node: the local rank is the rank
    head = errors[0] if errors else None
    out = Outcome(case, bool(errors), False, False, headline=head.title if head else "", rank=rank)
    if not case.get("failed"):
        out.keyword = out.strict = not errors
        return out
    out.keyword = bool(errors) and any(k in finding_text(f) for f in report.findings for k in keywords)
    expected_id = case.get("finding") or case.get("expected_id")
    if head is not None:
        named = head.id == expected_id if expected_id else any(k in finding_text(head) for k in keywords)
        rank_ok = case.get("first_rank") is None or case.get("first_rank") == rank
        out.strict = named and rank_ok
    return out


def summary(name: str, outcomes: list[Outcome]) -> str:
    failed = [o for o in outcomes if o.case.get("failed")]
    healthy = [o for o in outcomes if not o.case.get("failed")]
    kw = sum(o.keyword for o in outcomes)
    st = sum(o.strict for o in outcomes)
    n = len(outcomes) or 1
    return (
        f"{name}: {len(outcomes)} cases ({len(failed)} failed, {len(healthy)} healthy) | "
        f"keyword {kw}/{len(outcomes)} ({kw / n:.2f}) | strict {st}/{len(outcomes)} ({st / n:.2f}) | "
        f"failed log called healthy: {sum(o.called_healthy for o in outcomes)} | "
        f"error on a healthy log: {sum(o.failed_found for o in healthy)} | crashes: {sum(bool(o.crashed) for o in outcomes)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT))
    ap.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per dev case that misses")
    ap.add_argument("--show-heldout", action="store_true", help="also list held-out misses (only for the final scoring)")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    by_split: dict[str, list[Outcome]] = {"dev": [], "heldout": []}
    for case in manifest:
        split = case.get("split", "dev")
        if args.split != "all" and split != args.split:
            continue
        path = corpus / case["file"]
        if not path.exists():
            continue
        by_split.setdefault(split, []).append(judge(case, path))
    for split, outcomes in by_split.items():
        if not outcomes:
            continue
        print(summary(split, outcomes))
        if args.verbose and (split == "dev" or args.show_heldout):
            for o in outcomes:
                if not o.strict or o.crashed:
                    mark = "CRASH" if o.crashed else "HEALTHY?" if o.called_healthy else "kw" if o.keyword else "miss"
                    print(f"  [{mark:8}] {o.case['id']}: got {o.crashed or o.headline or 'no error'!r} (rank {o.rank}); "
                          f"want {o.case.get('keywords')} rank {o.case.get('first_rank')}")


if __name__ == "__main__":
    main()
