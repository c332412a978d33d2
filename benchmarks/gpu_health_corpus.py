"""How well does `gpudoctor diagnose` read GPU health from real pastes?

Scores tests/fixtures/gpu_health/corpus.json: real `nvidia-smi`, `nvidia-smi -q`
and kernel-log (Xid) excerpts from public threads, each with the warn/error
finding ids it should produce, written before the tool ran on it. A case is right
when the set of warn/error ids reported equals the expected set exactly. The
held-out quarter (by a hash of the case id, recorded in the file) was not looked
at while the readers were written; it is scored separately.

    python benchmarks/gpu_health_corpus.py [--show]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from gpudoctor import api

# The input's own verdict, not a GPU reading: a snapshot with no fault in it does not
# decide whether the run was healthy (log-inconclusive, case "snapshot").
UNDECIDED = "log-inconclusive"

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gpu_health" / "corpus.json"


def verdict(text: str) -> list[str]:
    report = api.diagnose(text)
    return sorted({f.id for f in report.findings if f.severity.value in ("warn", "error") and f.id != UNDECIDED})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every case, not only the wrong ones")
    args = parser.parse_args(argv)
    cases = json.loads(CORPUS.read_text())["cases"]
    scores: dict[str, list[int]] = {"dev": [0, 0], "heldout": [0, 0]}
    for case in cases:
        got = verdict(case["text"])
        right = got == case["expected"]
        scores[case["split"]][0] += right
        scores[case["split"]][1] += 1
        if args.show or not right:
            mark = "ok " if right else "BAD"
            print(f"{mark} [{case['split']}] {case['id']}: expected {case['expected']}, got {got}  ({case['source']})")
    for split, (right, total) in scores.items():
        print(f"{split}: {right}/{total} right ({100 * right / max(total, 1):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
