"""One door per command (allreduce, train-smoke, check): the CLI and the Python API
call the same commands/<name>.run, so a bad value is refused by the same check with
the same words. Each case runs the real CLI (a subprocess: exit 2, one line) and the
real API (a ValueError), and compares the two messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gpudoctor
from gpudoctor.core.usage import UsageError

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = str(ROOT / "tests" / "fixtures" / "facts_2gpu.json")
MISSING_DIR = str(ROOT / "tests" / "no-such-folder" / "smoke.pt")
PREFIX = "gpudoctor: error: "

# (CLI arguments, the same request through the API, words the message must hold)
CASES = [
    (["train-smoke", "--steps", "20"], lambda: gpudoctor.train_smoke(steps=20), "--steps 20 is too few to judge learning"),
    (["train-smoke", "--steps", "0"], lambda: gpudoctor.train_smoke(steps=0), "--steps must be at least 1"),
    (
        ["train-smoke", "--batch-size", "1", "--steps", "200"],
        lambda: gpudoctor.train_smoke(batch_size=1, steps=200),
        "use --steps 1280 or more",
    ),
    (["train-smoke", "--batch-size", "0"], lambda: gpudoctor.train_smoke(batch_size=0), "--batch-size must be at least 1"),
    (["train-smoke", "--nproc", "0"], lambda: gpudoctor.train_smoke(nproc=0), "--nproc must be between 1 and 256"),
    (["train-smoke", "--nproc", "10000"], lambda: gpudoctor.train_smoke(nproc=10000), "(got 10000)"),
    (["train-smoke", "--backend", "mpi"], lambda: gpudoctor.train_smoke(backend="mpi"), "--backend must be one of"),
    (["train-smoke", "--device", "tpu"], lambda: gpudoctor.train_smoke(device="tpu"), "--device must be one of"),
    (["train-smoke", "--timeout", "0"], lambda: gpudoctor.train_smoke(timeout=0), "--timeout must be at least 1"),
    (["train-smoke", "--num-workers", "-1"], lambda: gpudoctor.train_smoke(num_workers=-1), "--num-workers must be between 0 and 64"),
    (["train-smoke", "--num-workers", "65"], lambda: gpudoctor.train_smoke(num_workers=65), "(got 65)"),
    (["train-smoke", "--save", MISSING_DIR], lambda: gpudoctor.train_smoke(save=MISSING_DIR), "does not exist"),
    (["allreduce", "--sizes", "abc"], lambda: gpudoctor.allreduce(sizes="abc"), "'abc' is not a size"),
    (["allreduce", "--iters", "0"], lambda: gpudoctor.allreduce(iters=0), "--iters must be at least 1"),
    (["allreduce", "--warmup", "-1"], lambda: gpudoctor.allreduce(warmup=-1), "--warmup must be 0 or more"),
    (["allreduce", "--timeout", "0"], lambda: gpudoctor.allreduce(timeout=0), "--timeout must be a positive number"),
    (["allreduce", "--op", "bogus"], lambda: gpudoctor.allreduce(op="bogus"), "--op must be one of"),
    (["allreduce", "--dtype", "int3"], lambda: gpudoctor.allreduce(dtype="int3"), "--dtype must be one of"),
    (["allreduce", "--nproc", "10000"], lambda: gpudoctor.allreduce(nproc=10000), "--nproc must be between 1 and 256"),
    (["allreduce", "--sizes", "64G"], lambda: gpudoctor.allreduce(sizes="64G"), "sizes above 16G are not supported"),
    (["allreduce", "--backend", "nccl", "--device", "cpu"], lambda: gpudoctor.allreduce(backend="nccl", device="cpu"), "NCCL moves only CUDA"),
    (
        ["check", "--visible", "0", "--facts", SNAPSHOT],
        lambda: gpudoctor.check(visible="0", facts=SNAPSHOT),
        "--visible probes this machine; it cannot be combined with --facts",
    ),
    (["check", "--facts", MISSING_DIR], lambda: gpudoctor.check(facts=MISSING_DIR), "no such file"),
]


def cli_error(args: list[str]) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args], capture_output=True, text=True, timeout=120, cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith(PREFIX), (r.returncode, r.stderr, r.stdout)
    return lines[0][len(PREFIX):]


@pytest.mark.parametrize("args, call, words", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_the_cli_and_the_api_refuse_bad_input_in_the_same_words(args, call, words):
    said = cli_error(args)
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, UsageError)
    assert str(info.value) == said
    assert words in said


def test_the_api_refuses_too_few_steps_as_the_cli_does():
    # The minimum-steps rule once lived only in the CLI: train_smoke(steps=20) ran a job
    # commands/train_smoke/config.py says fails on a healthy machine.
    with pytest.raises(ValueError, match=r"^--steps 20 is too few to judge learning: .* use --steps 40 or more$"):
        gpudoctor.train_smoke(steps=20)


def test_a_small_global_batch_without_steps_is_not_refused_by_the_api_default():
    # steps=None is the CLI's default: 200, or the fewest this global batch needs (320 here).
    from gpudoctor.commands.train_smoke.options import Options, check_options

    assert check_options(Options(nproc=2, batch_size=4)).steps == 320
    assert check_options(Options(nproc=2, batch_size=4), world=8).steps == 200
    with pytest.raises(UsageError, match="use --steps 320 or more"):
        check_options(Options(nproc=2, batch_size=4, steps=200))


def test_the_api_makes_the_clis_join_decision():
    # A launcher variable that is not a number stops `check` before any probe, with a
    # finding naming it: through the API as through the CLI (once only the CLI read them).
    import json
    import os

    env = dict(os.environ, RANK="abc", WORLD_SIZE="2")
    code = "import gpudoctor, json; print(json.dumps(gpudoctor.check().to_dict()))"
    api = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    cli = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--json"], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
        stdin=subprocess.DEVNULL,
    )
    assert api.returncode == 0 and cli.returncode == 1, api.stderr + cli.stderr
    by_api, by_cli = json.loads(api.stdout), json.loads(cli.stdout)
    assert by_api == by_cli and by_api["ok"] is False
    assert "RANK" in json.dumps(by_api["findings"]) and "facts" not in by_api
