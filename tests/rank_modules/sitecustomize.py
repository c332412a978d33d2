"""Put on PYTHONPATH with RANK_MODULES_OUT set, every rank of a gpudoctor job
(a process with RANK in its environment) writes, at its very end, the names of
the modules it imported and how long its imports took, to
"$RANK_MODULES_OUT.<pid>.json" (tests/e2e/test_rank_imports.py,
benchmarks/rank_imports.py). Registered first, its exit handler runs last,
after gpudoctor's own report."""

import atexit
import json
import os
import sys
import time

_OUT = os.environ.get("RANK_MODULES_OUT")
_STARTED = time.perf_counter()


def _write() -> None:
    with open(f"{_OUT}.{os.getpid()}.json", "w") as fh:
        json.dump({"rank": os.environ.get("RANK"), "argv": sys.argv, "modules": sorted(sys.modules)}, fh)


if _OUT and "RANK" in os.environ:
    atexit.register(_write)
