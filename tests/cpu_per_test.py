"""Sum what GPUDOCTOR_TEST_CPU=FOLDER wrote (tests/conftest.py): CPU seconds per test file and the costliest tests.

    GPUDOCTOR_TEST_CPU=/tmp/cpu pytest -q    # (the folder must exist)
    python tests/cpu_per_test.py /tmp/cpu [--top 40]
"""

import argparse
import collections
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    tests = [json.loads(line) for path in sorted(Path(args.folder).glob("cpu-*.jsonl")) for line in path.read_text().splitlines()]
    cost = {t["test"]: t["own"] + t["children"] for t in tests}
    files: collections.Counter = collections.Counter()
    for t in tests:
        files[t["test"].split("::")[0]] += t["own"] + t["children"]
    print(f"{len(tests)} tests, {sum(cost.values()):.0f} CPU-s (own {sum(t['own'] for t in tests):.0f}, "
          f"started processes {sum(t['children'] for t in tests):.0f}), {sum(t['wall'] for t in tests):.0f} s of tests' wall time")
    print("by file:")
    for name, cpu in files.most_common(args.top):
        print(f"  {cpu:8.1f}  {name}")
    print("tests:")
    for name, cpu in sorted(cost.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {cpu:8.1f}  {name}")


if __name__ == "__main__":
    main()
