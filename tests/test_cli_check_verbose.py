"""check -v (the evidence behind passed checks too) and check --list-checks (every
finding check can report, by area), as a user runs them."""

import os
import subprocess
import sys
from pathlib import Path

from gpudoctor.catalog.findings import FINDINGS

SNAPSHOT = str(Path(__file__).parent / "fixtures" / "facts_cpu.json")


def gd(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "gpudoctor", "check", *args], capture_output=True, text=True, timeout=120, env=env)


def test_verbose_shows_what_passed_checks_saw():
    short, verbose = gd("--facts", SNAPSHOT), gd("-v", "--facts", SNAPSHOT)
    assert short.returncode == verbose.returncode == 0
    assert "[cpu-count]" in short.stdout and "      logical: 2" not in short.stdout
    assert "      logical: 2" in verbose.stdout
    assert len(verbose.stdout.splitlines()) > len(short.stdout.splitlines())


def test_list_checks_names_every_finding_check_reports():
    r = gd("--list-checks")
    assert r.returncode == 0, r.stderr
    listed = {line.split()[0] for line in r.stdout.splitlines() if line.startswith("  ")}
    assert "nvcc-torch-cuda-mismatch" in listed and "shm-too-small" in listed
    assert listed == {e.id for e in FINDINGS.values() if "gpudoctor check" in e.emitted_by}
