"""How often is `gpudoctor lint` right on public training code?

The corpus is a folder of public repositories, one sub-folder per repository
named `owner+name` (their code is never committed here: fetch them at the
commits listed in the verdicts file). Each sub-folder is linted as one
project; every diagnostic is matched with its recorded verdict in
tests/fixtures/lint_corpus_verdicts.json (repo, path, line, rule -> "right" /
"wrong" and why). Precision = right / (right + wrong).

    python benchmarks/lint_precision.py CORPUS [--verdicts FILE] [--min 0.95]

Exit 0 when every diagnostic has a verdict and precision >= --min; 1 when
not (the unjudged diagnostics are printed, to be judged and recorded); 2 when
the corpus folder is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

VERDICTS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "lint_corpus_verdicts.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="folder with one owner+name sub-folder per repository")
    parser.add_argument("--verdicts", default=str(VERDICTS))
    parser.add_argument("--min", type=float, default=0.95, help="precision below this fails")
    args = parser.parse_args()
    if not os.path.isdir(args.corpus):
        print(f"no corpus folder: {args.corpus}", file=sys.stderr)
        return 2

    from gpudoctor.linter.engine import lint_paths

    recorded = json.loads(Path(args.verdicts).read_text(encoding="utf-8"))
    verdicts = {(v["repo"], v["path"], v["line"], v["rule"]): v for v in recorded["verdicts"]}
    counts: Counter[tuple[str, str]] = Counter()
    unjudged = []
    for repo in sorted(recorded["repos"]):
        folder = os.path.join(args.corpus, repo.replace("/", "+"))
        if not os.path.isdir(folder):
            print(f"missing {repo} (fetch it at {recorded['repos'][repo]})", file=sys.stderr)
            continue
        for d in lint_paths([folder]).diagnostics:
            key = (repo, os.path.relpath(d.path, folder), d.line, d.rule)
            verdict = verdicts.get(key)
            if verdict is None:
                unjudged.append(f"{repo}/{key[1]}:{d.line}: {d.rule} {d.message}")
            else:
                counts[(d.rule, verdict["verdict"])] += 1
    right = sum(n for (_, v), n in counts.items() if v == "right")
    wrong = sum(n for (_, v), n in counts.items() if v == "wrong")
    for rule in sorted({r for r, _ in counts}):
        print(f"  {rule:<32} right {counts[(rule, 'right')]:>3}  wrong {counts[(rule, 'wrong')]:>3}")
    precision = right / (right + wrong) if right + wrong else 1.0
    print(f"diagnostics: {right + wrong + len(unjudged)}  right: {right}  wrong: {wrong}  unjudged: {len(unjudged)}")
    print(f"precision: {precision:.3f}")
    for line in unjudged:
        print(f"unjudged: {line}")
    return 0 if not unjudged and precision >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
