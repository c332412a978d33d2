"""`gpudoctor run` as a user runs it: real scripts from tests/scripts/, as
subprocesses, compared with plain `python` where the two must agree."""

import json
import os
import shutil
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
SCRIPTS = os.path.join(TESTS, "scripts")
sys.path.insert(0, TESTS)
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402
from session_jobs import run_once  # noqa: E402

DOCTOR = [sys.executable, "-m", "gpudoctor", "run"]


def script(name):
    return os.path.join("tests", "scripts", name)


def run(cmd, timeout=180, **kw):
    env = dict(os.environ, **kw.pop("env", {}))
    env.pop("GPUDOCTOR_RUN", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=kw.pop("cwd", ROOT), env=env, **kw)


def doctor(*args, **kw):
    return run([*DOCTOR, *args], **kw)


def plain(*args, **kw):
    return run([sys.executable, *args], **kw)


def findings(path):
    with open(path) as fh:
        return json.load(fh)


# -- runs the script as python would -----------------------------------------------------------


def test_correct_script_same_output_same_exit_no_finding(tmp_path):
    out = tmp_path / "report.json"
    p = plain(script("correct_training.py"), "a", "--b")
    d = doctor("--json", str(out), script("correct_training.py"), "a", "--b")
    assert p.returncode == d.returncode == 0, d.stderr
    assert d.stdout == p.stdout and "epoch 2: loss" in d.stdout
    assert d.stderr == p.stderr + "gpudoctor run: no problems seen in tests/scripts/correct_training.py\n"
    report = findings(out)
    assert report["command"] == "run" and report["ok"] is True and report["findings"] == []
    assert report["exit_code"] == 0 and report["target"] == [script("correct_training.py"), "a", "--b"]


def test_script_options_pass_through_untouched(tmp_path):
    args = ["--lr", "3", "-x", "--json", "f", "--nproc", "2", "-h", "--", "-m", "z"]
    (tmp_path / "argv_echo.py").write_text(
        "import os, sys\nprint(sys.argv)\nprint(sys.path[0] == os.path.dirname(__file__), __file__)\n"
    )
    p = plain("argv_echo.py", *args, cwd=tmp_path)
    d = doctor("argv_echo.py", *args, cwd=tmp_path)
    assert d.returncode == p.returncode == 0, d.stderr
    assert d.stdout == p.stdout
    assert "['argv_echo.py', '--lr', '3', '-x', '--json', 'f', '--nproc', '2', '-h', '--', '-m', 'z']" in d.stdout
    assert f"True {tmp_path / 'argv_echo.py'}" in d.stdout


def test_module_form_runs_like_python_m(tmp_path):
    # --strict too: on a script with nothing to say it changes nothing, exit 0 (its failing
    # side: test_warning_before_failure_and_strict). A module of its own that does not import
    # torch: a torch training script the doctor runs and changes nothing of is
    # test_correct_script_same_output_same_exit_no_finding's (it ran correct_training twice more).
    (tmp_path / "argv_module.py").write_text('import sys\nprint("argv:", sys.argv[1:], "name:", __name__)\n')
    p = plain("-m", "argv_module", "x", cwd=tmp_path)
    d = doctor("--strict", "-m", "argv_module", "x", cwd=tmp_path)
    assert d.returncode == p.returncode == 0, d.stderr
    assert d.stdout == p.stdout and "argv: ['x'] name: __main__" in d.stdout


@pytest.mark.parametrize("code", [0, 3, 17])
def test_system_exit_code_is_the_script_s(code):
    p = plain(script("exit_code.py"), str(code))
    d = doctor(script("exit_code.py"), str(code))
    assert p.returncode == d.returncode == code
    assert d.stdout == p.stdout == "about to exit\n"


def test_uncaught_exception_same_traceback_and_exit_1():
    p = plain(script("raises.py"))
    d = doctor(script("raises.py"))
    assert p.returncode == d.returncode == 1
    assert p.stderr.startswith("Traceback") and "FileNotFoundError" in p.stderr
    assert d.stderr.startswith(p.stderr)  # the same traceback, then the doctor's line
    assert "gpudoctor" not in d.stderr[: len(p.stderr)]


def test_torch_is_not_imported_before_the_script():
    d = doctor(script("torch_imported_first.py"))
    assert d.returncode == 0, d.stderr
    assert "torch before the script: False" in d.stdout and "threads: 1" in d.stdout


# -- usage errors ---------------------------------------------------------------------------------


def one_line_usage_error(r, text):
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpudoctor: error:") and text in lines[0], r.stderr
    assert r.stdout == ""


def test_missing_script_is_a_one_line_usage_error():
    one_line_usage_error(doctor("no/such/train.py", "--lr", "1"), "no such script: no/such/train.py")


def test_non_python_file_is_a_one_line_usage_error(tmp_path):
    (tmp_path / "weights.bin").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "README.md").write_text("# not a script\n\nSome words.\n")
    one_line_usage_error(doctor(str(tmp_path / "weights.bin")), "is not a Python script")
    one_line_usage_error(doctor(str(tmp_path / "README.md")), "is not a Python script")


def test_no_target_and_missing_module_are_usage_errors():
    one_line_usage_error(doctor(), "give a script to run")
    one_line_usage_error(doctor("-m", "surely_not_a_module"), "no module named 'surely_not_a_module'")


def test_run_help_does_not_import_torch():
    code = (
        "import sys\nfrom gpudoctor.cli.app import main\n"
        "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')\n"
    )
    r = run([sys.executable, "-c", code])
    assert r.stdout.strip().endswith("NO-TORCH") and "--nproc" in r.stdout and "--timeout" in r.stdout


# -- device mismatch ---------------------------------------------------------------------------------


def test_meta_submodule_is_named_with_both_devices(tmp_path):
    out = tmp_path / "report.json"
    p = plain(script("meta_submodule.py"))
    d = doctor("--json", str(out), script("meta_submodule.py"))
    assert p.returncode == d.returncode == 1
    assert d.stdout == p.stdout == "built\n"
    assert d.stderr.startswith(p.stderr)  # python's traceback first, unchanged
    report_text = d.stderr[len(p.stderr) :]
    assert "`encoder.proj` (Linear) has its parameters on meta but was called with input on cpu" in report_text
    assert "[device-mismatch]" in report_text
    assert "source: tests/scripts/meta_submodule.py:17" in report_text
    assert 'fix: model.encoder.proj.to_empty(device="cpu")' in report_text
    report = findings(out)
    assert report["ok"] is False and report["exit_code"] == 1
    [f] = report["findings"]
    assert f["id"] == "device-mismatch" and f["severity"] == "error"
    assert f["evidence"]["module"] == "encoder.proj (Linear)"
    assert f["evidence"]["module parameters/buffers"] == "weight=meta, bias=meta"
    assert f["evidence"]["inputs"] == "input=cpu"


def test_warning_before_failure_and_strict():
    # One job, under --strict: the warning is said, the script's output untouched, and the exit is 1
    # (a clean script under --strict: test_module_form_runs_like_python_m). That a warning alone
    # exits 0 without --strict (this was a second job of this script for it):
    # test_sampler_without_set_epoch_in_ranks_started_by_mp_spawn, test_workers_restarted_every_epoch_in_a_spawned_rank.
    strict = doctor("--strict", script("input_on_other_device.py"))
    assert strict.returncode == 1 and strict.stdout == "ran on meta\n", strict.stderr
    assert "[module-input-device]" in strict.stderr and "`0` (Scale)" in strict.stderr
    # a warning, not an error: --strict is what fails it
    assert "gpudoctor run: 0 error(s), 1 warning(s) in tests/scripts/input_on_other_device.py" in strict.stderr


def test_nccl_on_a_machine_without_it_fails_as_python_shows_it():
    p = plain(script("nccl_without_gpu.py"))
    d = doctor(script("nccl_without_gpu.py"))
    if p.returncode == 0:
        pytest.skip("this machine has NCCL and a GPU")
    assert d.returncode == p.returncode
    assert d.stderr.startswith(p.stderr)
    tail = d.stderr[len(p.stderr) :]
    assert "ended with" in tail and "(traceback above)" in tail and "no problems seen" not in tail


# -- --timeout -----------------------------------------------------------------------------------------


def test_timeout_prints_the_stack_stops_the_script_and_its_children():
    tag = new_tag()
    d = doctor("--timeout", "2", script("sleeps.py"), env={TAG_ENV: tag}, timeout=60)
    try:
        assert d.returncode == 124
        assert "still running after 2 s (--timeout)" in d.stderr
        assert 'sleeps.py", line 13, in wait_for_data' in d.stderr
        assert "gpudoctor/runtime" not in d.stderr
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


# -- several ranks ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_sampler_without_set_epoch_in_ranks_started_by_mp_spawn(tmp_path):
    # One spawned job, two loops: the broken one, then the fixed one on a sampler of its
    # own (--then-fixed). Each rank has one warning, the broken loop's; none for the fixed.
    out = tmp_path / "report.json"
    d = doctor("--json", str(out), script("sampler_no_set_epoch.py"), "--then-fixed")
    assert d.returncode == 0, d.stderr
    assert "rank 0: epochs differ: False" in d.stdout
    assert "rank 0 with set_epoch: epochs differ: True" in d.stdout
    for rank in (0, 1):
        assert d.stderr.count(f"[rank {rank}]   ! DistributedSampler iterated 2 times, always with epoch 0") == 1
        assert f"[rank {rank}] gpudoctor run: 0 error(s), 1 warning(s) in tests/scripts/sampler_no_set_epoch.py" in d.stderr
    assert d.stderr.count("[sampler-without-set-epoch]") == 2  # one per rank: nothing from the fixed loop
    [f] = findings(out)["findings"]
    assert f["id"] == "sampler-without-set-epoch" and f["evidence"]["ranks"] == [0, 1]


@pytest.mark.slow
def test_device_error_in_a_spawned_rank_is_explained_by_that_rank():
    p = plain(script("spawn_meta_rank.py"))
    d = doctor(script("spawn_meta_rank.py"))
    assert p.returncode == d.returncode == 1
    assert "[rank 1]   ✗ `2` (Linear) has its parameters on meta but was called with input on cpu" in d.stderr
    # What torch sends the parent from the rank is the plain traceback, untouched. Torch's
    # own "Terminating process ... via signal SIGTERM" warning races the traceback, so it
    # is left out of both sides.
    def traceback_of(stderr: str) -> str:
        lines = [line for line in stderr.splitlines(keepends=True) if "Terminating process" not in line]
        text = "".join(lines)
        return text[text.index("Traceback (most recent call last):") :]

    assert traceback_of(d.stderr).startswith(traceback_of(p.stderr))
    assert "gpudoctor/runtime" not in d.stderr


# `run --nproc 2` merging the ranks' findings into one report is checked on the job
# tests/e2e/test_rank_imports.py starts (the same script, the same command), not a second one.


@pytest.fixture(scope="module")
def save_every_rank_job(tmp_path_factory):
    """`run --nproc 2` of save_every_rank.py --then-fixed, read by two tests (they were two jobs,
    one of them the same script under mp.spawn): every rank saves the DDP state_dict to
    checkpoint.pt, then rank 0 the module's to fixed.pt. Findings for the first, none for the
    second. A spawned rank's findings merged into the one report, once, with their ranks:
    test_sampler_without_set_epoch_in_ranks_started_by_mp_spawn. Once per session: the two tests
    are often given to two xdist workers (tests/session_jobs.py)."""

    def start(folder):
        return doctor("--nproc", "2", "--json", str(folder / "report.json"), script("save_every_rank.py"), str(folder), "--then-fixed")

    d, folder = run_once(tmp_path_factory, "save-every-rank", start)
    return d, folder / "report.json", folder


@pytest.mark.slow
def test_nproc_shows_a_finding_every_rank_raised_once_with_its_ranks(save_every_rank_job):
    d, out, _ = save_every_rank_job
    assert d.returncode == 0, d.stderr
    for title in ("torch.save of a DDP state_dict to", "2 ranks saved the same checkpoint"):
        assert d.stderr.count(title) == 1, d.stderr  # not once per rank
    assert "      ranks: 0, 1\n" in d.stderr and "      ranks seen saving it: 0, 1\n" in d.stderr
    assert not [line for line in d.stderr.splitlines() if line.startswith("[rank ")]
    report = findings(out)
    assert [f["id"] for f in report["findings"]] == ["checkpoint-ddp-wrapper", "checkpoint-every-rank"]
    assert report["findings"][0]["evidence"]["ranks"] == [0, 1]


@pytest.mark.slow
def test_nproc_exit_code_is_the_failing_rank_s(tmp_path):
    tag = new_tag()
    out = tmp_path / "report.json"
    # a training script has imported torch by the time it leaves: the hang doctor's trace
    # (installed with torch) is what knows the line of the sys.exit
    leaving = tmp_path / "leaving.py"
    leaving.write_text("import sys\nimport torch\nprint('about to exit', flush=True)\nraise SystemExit(int(sys.argv[1]))\n")
    d = doctor("--nproc", "2", "--json", str(out), str(leaving), "3", env={TAG_ENV: tag}, timeout=120)
    try:
        assert d.returncode == 3
        assert "[rank-crashed]" in d.stderr and f"called sys.exit(3) at {leaving}:4" in d.stderr, d.stderr
        assert leftovers(tag) == []
        logs = [p["log"] for p in findings(out)["processes"]]
        assert all(os.path.exists(log) for log in logs)  # a failed run keeps the ranks' logs
    finally:
        kill_all(leftovers(tag, settle_s=0))
        for p in findings(out)["processes"] if out.exists() else []:
            shutil.rmtree(os.path.dirname(p["log"]), ignore_errors=True)


@pytest.mark.slow
def test_each_torchrun_rank_runs_under_the_doctor(tmp_path):
    torchrun = shutil.which("torchrun", path=os.path.dirname(sys.executable)) or shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not installed")
    tag = new_tag()
    cmd = [torchrun, "--nproc_per_node", "2", "--standalone", "-m", "gpudoctor", "run", "--json"]
    cmd += [str(tmp_path / "report.json"), script("sampler_no_set_epoch.py")]
    r = run(cmd, env={TAG_ENV: tag}, timeout=240)
    try:
        assert r.returncode == 0, r.stderr[-3000:]
        for rank in (0, 1):
            header = f"[rank {rank}] gpudoctor run: 0 error(s), 1 warning(s) in tests/scripts/sampler_no_set_epoch.py"
            assert header in r.stderr
            # No merged report under torchrun: every rank writes its own file.
            [f] = findings(tmp_path / f"report.rank{rank}.json")["findings"]
            assert f["id"] == "sampler-without-set-epoch" and f["evidence"]["rank"] == rank
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


@pytest.mark.slow
def test_workers_restarted_every_epoch_in_a_spawned_rank():
    # One rank and one worker are enough: the workers of a spawned rank are spawned too.
    # One job, two loaders (--then-fixed): the broken one, then one with persistent_workers=True
    # in the same rank. One warning, the broken loader's; none for the fixed one.
    d = doctor(script("spawn_loader_workers.py"), "--ranks", "1", "--workers", "1", "--then-fixed", timeout=240)
    assert d.returncode == 0, d.stderr
    assert d.stderr.count("[rank 0]   ! DataLoader workers re-created every epoch in a spawned rank") == 1, d.stderr
    assert d.stderr.count("[spawned-rank-loader-workers]") == 1
    assert "persistent_workers=True" in d.stderr
    assert "[rank 0]       persistent_workers: False\n" in d.stderr and "persistent_workers: True\n" not in d.stderr
    assert d.stdout == "rank 0: total 240.0\nrank 0 with persistent workers: total 240.0\n"


@pytest.mark.slow
def test_saving_on_every_rank(save_every_rank_job):
    # The fixed save (--then-fixed: rank 0 saves the module's state_dict to fixed.pt) adds nothing.
    d, out, folder = save_every_rank_job
    assert d.returncode == 0, d.stderr
    ids = sorted(f["id"] for f in findings(out)["findings"])
    assert ids == ["checkpoint-ddp-wrapper", "checkpoint-every-rank"]
    assert {f["evidence"]["path"] for f in findings(out)["findings"]} == {str(folder / "checkpoint.pt")}
    assert (folder / "fixed.pt").is_file()
    every = next(f for f in findings(out)["findings"] if f["id"] == "checkpoint-every-rank")
    assert every["evidence"]["ranks seen saving it"] == [0, 1]


@pytest.mark.slow
def test_lightning_ddp_spawn_with_workers():
    pytest.importorskip("pytorch_lightning")
    d = doctor(script("lightning_ddp_spawn.py"), timeout=280)
    assert d.returncode == 0, d.stderr[-3000:]
    assert "fit done" in d.stdout
    assert "DataLoader workers re-created every epoch in a spawned rank" in d.stderr
    assert 'strategy="ddp"' in d.stderr
    # That persistent workers silence it is shown without Lightning by
    # test_workers_restarted_every_epoch_in_a_spawned_rank (Lightning's start-up is the slowest in the suite).


def test_an_error_diagnose_knows_gets_its_cause_and_fix(tmp_path):
    # A torchrun script started with plain python: once "nothing found to explain it".
    (tmp_path / "train.py").write_text("import os\nlocal_rank = int(os.environ['LOCAL_RANK'])\n")
    env = {k: v for k, v in os.environ.items() if k not in ("LOCAL_RANK", "RANK", "WORLD_SIZE")}
    d = subprocess.run(
        [*DOCTOR, "--json", str(tmp_path / "r.json"), str(tmp_path / "train.py")],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )
    assert d.returncode == 1 and "KeyError: 'LOCAL_RANK'" in d.stderr
    assert "[launcher-env-missing]" in d.stderr and "fix: torchrun" in d.stderr, d.stderr
    assert "nothing found" not in d.stderr
    assert [f["id"] for f in findings(tmp_path / "r.json")["findings"]] == ["launcher-env-missing"]
