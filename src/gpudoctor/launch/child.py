"""Entry point of a rank started by `launch_function`:
`python -m gpudoctor.launch.child package.module:function`.

Runs fn(ctx, config) and leaves the outcome in the run directory: the return
value as rank<N>.result.json, or the exception as rank<N>.error.json (the idea
of torch elastic's @record: the parent learns why a child died from a file,
not by parsing its stderr).
"""

from __future__ import annotations

import faulthandler
import importlib
import json
import os
import signal
import sys
import traceback

from gpudoctor.launch.rank import STAGE_STARTED, join_context


def _write_json(path: str, payload: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as fh:
        json.dump(payload, fh, default=str)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    # A segfault prints the Python stack; SIGUSR1 from the supervisor prints every
    # thread's stack, which is how a hung rank shows where it is stuck.
    faulthandler.enable()
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    ctx = join_context()  # the supervisor set RANK, WORLD_SIZE, ... and GPUDOCTOR_RUN_DIR
    ctx.progress(STAGE_STARTED, 0)
    module_name, _, func_name = argv[0].partition(":")
    with open(os.path.join(ctx.run_dir, "config.json")) as fh:
        config = json.load(fh)
    try:
        fn = getattr(importlib.import_module(module_name), func_name)
        result = fn(ctx, config)
    except BaseException as exc:  # noqa: BLE001 - every way a rank can fail is reported
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        _write_json(
            os.path.join(ctx.run_dir, f"rank{ctx.rank}.error.json"),
            {"type": type(exc).__name__, "message": str(exc), "traceback": tb[-4000:]},
        )
        return 1
    _write_json(os.path.join(ctx.run_dir, f"rank{ctx.rank}.result.json"), result or {})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
