"""The step clock in a real process (its hooks patch torch process-wide): through
gpudoctor.watch(model, steps=True), one rank, its data made slow."""

import json
import os
import socket
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "straggler", "watch_steps.py")


def test_watch_accounts_for_the_blocks_steps():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PORT=str(port))
    env.pop("GPUDOCTOR_RUN", None)
    r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    [rank] = out["steps"]["ranks"]
    assert rank["rank"] == 0 and rank["steps"] == 16  # one per optimizer step
    phases = rank["phases_ms"]
    assert phases["data"] >= 25 and phases["data"] == max(phases.values())
    assert out["steps"]["steps_compared"] == 14  # the first two are warm-up
    assert out["ids"] == []  # one rank: nobody to wait for
