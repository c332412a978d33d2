"""Whether `diagnose` keeps its verdict however a log is pasted (issue 35 item 5), over a whole
sampled part: every case the part's scorer counts right (or, with --all, every case) is read again in
each paste shape of tests/test_diagnose_pastes.py (quoted, fenced, indented, rank prefixes, ANSI
colours, CRLF, HTML escapes, UTF-16, a terminal's 80/120-column wrap), in process, through the real
reader. A shape keeps the verdict when the headline (the first error or warning) and whether any
error was found are the same as for the log as it is.

    python benchmarks/paste_shapes.py tests/fixtures/log_sample/dev [--all] [--cases]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_diagnose_pastes import ENCODINGS, SHAPES, cut_at, headline  # noqa: E402

WRAPS = {"cut at 80 columns": lambda t: cut_at(t, 80), "cut at 120 columns": lambda t: cut_at(t, 120)}


def shaped(text: str) -> dict[str, bytes]:
    out = {name: shape(text).encode() for name, shape in {**SHAPES, **WRAPS}.items()}
    out.update({name: encode(text) for name, encode in ENCODINGS.items()})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("part")
    ap.add_argument("--all", action="store_true", help="every case, not only those the part's plain log gets a verdict for")
    ap.add_argument("--cases", action="store_true", help="list each case and shape that changed")
    args = ap.parse_args()
    part = Path(args.part)
    manifest = json.loads((part / "manifest.json").read_text())
    kept, changed, cases = Counter(), Counter(), 0
    lines = []
    for case in manifest:
        text = (part / case["file"]).read_text(encoding="utf-8", errors="replace")
        plain = headline(text.encode())
        if not args.all and plain[0] in ("-", "log-inconclusive"):
            continue  # nothing named in the log as it is: no verdict to keep
        cases += 1
        for name, data in shaped(text).items():
            got = headline(data)
            if got == plain:
                kept[name] += 1
            else:
                changed[name] += 1
                lines.append(f"  {case['id'][:48]:48} {name:24} {plain[0]} -> {got[0]}")
    total_kept, total = sum(kept.values()), sum(kept.values()) + sum(changed.values())
    print(f"{part}: {cases} cases x {len(shaped(''))} shapes: verdict kept {total_kept}/{total} ({total_kept / max(total, 1):.3f})")
    for name in sorted(set(kept) | set(changed)):
        print(f"  {name:24} kept {kept[name]:4}  changed {changed[name]:4}")
    if args.cases:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
