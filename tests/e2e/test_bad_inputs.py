"""What users feed gpudoctor besides flags (issue 19): devices, FIFOs, huge,
empty, binary and looping files, output paths that cannot be written, scripts
that fail. Every command runs for real, under a time limit and an address-space
limit, so a regression that reads /dev/zero fails the test instead of the machine."""

import json
import os
import resource
import signal
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
MEMORY_LIMIT = 3 << 30  # far above what any command here needs; far below the machine


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def gd(*args, timeout=60, env=None, stdin=subprocess.DEVNULL, cwd=ROOT):
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("GPUDOCTOR_RUN", None)
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=full_env,
        stdin=stdin,
        preexec_fn=_limits,
    )


def one_line_error(r, *texts):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpudoctor: error:"), r.stderr
    for text in texts:
        assert text in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.fixture
def bad(tmp_path):
    """A folder of the files users really pass."""
    os.mkfifo(tmp_path / "fifo.py")
    os.symlink("loop.py", tmp_path / "loop.py")
    (tmp_path / "dir.py").mkdir()
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "binary.py").write_bytes(bytes(range(256)))
    (tmp_path / "big.py").write_text("x = 1\n" * 2000)  # 12 KB: above the cap the tests set
    (tmp_path / "ok.py").write_text("import os\n")
    return tmp_path


# -- item 1: reads are bounded and never block -------------------------------------------------


def test_lint_reports_each_unreadable_file_as_skipped_with_its_reason(bad):
    r = gd("lint", "--format", "json", str(bad), env={"GPUDOCTOR_MAX_SOURCE_BYTES": "10000"})
    assert r.returncode == 1, r.stderr
    got = {os.path.basename(d["path"]): d for d in json.loads(r.stdout)["diagnostics"]}
    assert "FIFO" in got["fifo.py"]["message"] and "skipped" in got["fifo.py"]["message"]
    assert "symbolic link loop" in got["loop.py"]["message"] and "iconv" not in got["loop.py"]["fix"]
    assert "above the 9.8 KB limit" in got["big.py"]["message"]
    assert "GPUDOCTOR_MAX_SOURCE_BYTES" in got["big.py"]["fix"]
    assert got["binary.py"]["rule"] in ("syntax-error", "unreadable-file")
    assert {"ok.py", "empty.py", "dir.py"}.isdisjoint(got)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo.py"])
def test_lint_of_a_device_or_fifo_named_directly_is_one_diagnostic(bad, target):
    path = target if target.startswith("/") else str(bad / target)
    r = gd("lint", path)
    assert r.returncode == 1 and "skipped, not linted" in r.stdout, r.stdout + r.stderr
    assert ("character device" if target == "/dev/zero" else "FIFO") in r.stdout


def test_lint_symlink_loop_named_directly_is_not_called_missing(bad):
    one_line_error(gd("lint", str(bad / "loop.py")), "symbolic link loop")


@pytest.mark.parametrize(
    "name, text",
    [
        ("/dev/zero", "character device"),
        ("fifo.py", "FIFO"),
        ("loop.py", "symbolic link loop"),
        ("dir.py", "directory"),
        ("empty.py", "empty file"),
        ("binary.py", "not UTF-8"),
        ("big.py", "above the 1000 bytes limit"),
    ],
)
def test_check_facts_refuses_what_is_not_a_snapshot_in_one_line(bad, name, text):
    path = name if name.startswith("/") else str(bad / name)
    one_line_error(gd("check", "--facts", path, env={"GPUDOCTOR_MAX_FACTS_BYTES": "1000"}), text)


@pytest.mark.parametrize(
    "name, text",
    [
        ("/dev/zero", "character device"),
        ("fifo.py", "FIFO"),
        ("loop.py", "symbolic link loop"),
        ("dir.py", "directory without __main__.py"),
    ],
)
def test_run_refuses_what_python_could_not_finish_reading(bad, name, text):
    path = name if name.startswith("/") else str(bad / name)
    one_line_error(gd("run", path), text)


def test_run_of_a_large_file_without_py_suffix_is_not_read_whole(bad):
    (bad / "train").write_text("x = 1\n" * 2000)
    one_line_error(gd("run", str(bad / "train"), env={"GPUDOCTOR_MAX_SOURCE_BYTES": "1000"}), "rename it to .py")


# -- item 4: output paths are checked before the work ---------------------------------------------


def test_run_json_to_a_missing_directory_fails_before_the_script_runs(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "s.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    r = gd("run", "--json", "/nonexistent/dir/o.json", str(tmp_path / "s.py"))
    one_line_error(r, "--json /nonexistent/dir/o.json", "does not exist")
    assert not marker.exists()
    one_line_error(gd("run", "--json", str(tmp_path), str(tmp_path / "s.py")), "a directory")
    assert not marker.exists()


def test_train_smoke_save_to_a_missing_directory_fails_before_any_rank(tmp_path):
    one_line_error(gd("train-smoke", "--save", str(tmp_path / "no" / "x.pt")), "does not exist")


# -- item 5: train-smoke refuses step counts it cannot judge ----------------------------------------


@pytest.mark.parametrize("args", [["--steps", "1"], ["--steps", "39", "--nproc", "1"]])
def test_train_smoke_too_few_steps_is_a_usage_error_naming_the_minimum(args):
    one_line_error(gd("train-smoke", *args), "too few to judge learning", "use --steps 40 or more")


def test_train_smoke_small_global_batch_needs_more_steps():
    one_line_error(
        gd("train-smoke", "--batch-size", "1", "--nproc", "2", "--steps", "200"),
        "global batch of 2",
        "use --steps 1280 or more",
        "--batch-size",
    )


# -- item 6: messages that said something false or nothing ----------------------------------------


def test_bare_gpudoctor_shows_the_help():
    r = gd()
    assert r.returncode == 0 and "Usage:" in r.stdout and "check" in r.stdout, r.stderr
    assert "error" not in r.stderr


@pytest.mark.parametrize(
    "source, ended",
    [
        ("raise ValueError('bad')\n", "ended with ValueError (traceback above)"),
        ("def f(:\n", "ended with SyntaxError (traceback above)"),
        ("raise KeyboardInterrupt\n", "was interrupted (KeyboardInterrupt)"),
        ("import sys\nsys.exit(3)\n", "exited with status 3"),
    ],
)
def test_run_never_says_no_problems_after_a_failure(tmp_path, source, ended):
    (tmp_path / "s.py").write_text(source)
    r = gd("run", str(tmp_path / "s.py"))
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert "no problems seen" not in r.stderr and ended in last, r.stderr


def test_run_exec_failure_is_one_line():
    # The interpreter gpudoctor would exec cannot be executed (a file without the x bit).
    code = (
        "import sys; sys.executable = '/etc/hostname'\n"
        "from gpudoctor.cli.app import main; main(['run', 'tests/scripts/raises.py'])"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL
    )
    one_line_error(r, "cannot start the script with /etc/hostname")


@pytest.mark.slow
def test_segfault_on_a_machine_without_gpus_is_not_blamed_on_cuda(tmp_path):
    from gpudoctor.probe.cuda import probe_cuda

    if probe_cuda().device_count:
        pytest.skip("this machine has GPUs: CUDA/NCCL are then a fair suspect")
    (tmp_path / "seg.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    report = tmp_path / "r.json"
    r = gd("run", "--nproc", "1", "--json", str(report), str(tmp_path / "seg.py"), timeout=120)
    assert r.returncode == 128 + signal.SIGSEGV, r.stderr
    crashed = [f for f in json.loads(report.read_text())["findings"] if f["id"] == "rank-crashed"]
    assert crashed and "no usable CUDA GPU" in crashed[0]["why"], r.stderr
    assert "NCCL" not in crashed[0]["fix"] and "faulthandler" in crashed[0]["fix"]


# -- item 7: the ranks' stdin ----------------------------------------------------------------


@pytest.mark.slow
def test_run_nproc_says_piped_input_does_not_reach_the_ranks(tmp_path):
    (tmp_path / "read.py").write_text("import sys\nprint('rank read', repr(sys.stdin.read()))\n")
    with open(tmp_path / "input.txt", "w+") as fh:
        fh.write("hello\n")
        fh.seek(0)
        r = gd("run", "--nproc", "1", str(tmp_path / "read.py"), stdin=fh, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "rank read ''" in r.stdout  # end-of-file at once, never a wait
    assert "the ranks' stdin is empty (/dev/null)" in r.stderr


# A global batch of 8 (once diverged to NaN) learning in the default steps it grows to (320):
# tests/test_api.py::test_train_smoke_verifies_a_real_ddp_job, whose real job is that one.


@pytest.mark.slow
def test_allreduce_announces_a_size_it_rounds():
    r = gd("allreduce", "--sizes", "3", "--nproc", "1", "--iters", "1", "--warmup", "0", "--json", timeout=120)
    assert r.returncode == 0, r.stderr
    said = "size 3 bytes runs as 4 bytes: 1 whole float32 element of 4 bytes"
    assert said in r.stderr.replace("\n", " ")
    report = json.loads(r.stdout)
    assert report["summary"]["rounded_sizes"] == [said] and report["results"][0]["bytes"] == 4


@pytest.mark.parametrize("command", ["run", "train-smoke", "report", "allreduce"])
def test_nproc_beyond_one_machine_is_refused_before_any_rank_starts(tmp_path, command):
    # `run --nproc 99999` once started ranks until the machine gave out.
    (tmp_path / "s.py").write_text("")
    args = [command, "--nproc", "99999"] + ([str(tmp_path / "s.py")] if command == "run" else [])
    one_line_error(gd(*args, timeout=30), "256")


def test_diagnose_of_an_empty_folder_is_a_usage_error_not_healthy(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / ".hidden.log").write_text("NCCL WARN x\n")
    one_line_error(gd("diagnose", str(tmp_path / "logs")), "no files in this folder")


def test_piped_report_keeps_each_fix_on_one_line():
    # A fix wrapped at 80 columns in a CI log or a file cannot be pasted back.
    log = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. " + "x" * 60 + "\n"
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "diagnose", "-"], input=log, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert r.returncode == 1, r.stderr
    fix = next(line for line in r.stdout.splitlines() if line.strip().startswith("fix:"))
    assert "expandable_segments" in fix and len(fix) > 80, r.stdout
    assert not any(line.endswith(" ") for line in r.stdout.splitlines()), r.stdout


def test_check_refuses_a_timeout_below_one_second():
    one_line_error(gd("check", "--timeout", "-1", timeout=30), "--timeout")


def test_check_facts_given_another_commands_json_says_which_and_how_to_save_one(tmp_path):
    (tmp_path / "lint.json").write_text(json.dumps({"gpudoctor": "0.1.0", "command": "lint", "ok": True, "findings": []}))
    one_line_error(gd("check", "--facts", str(tmp_path / "lint.json"), timeout=30), "`gpudoctor lint --json` output", "gpudoctor check --json > FILE")
