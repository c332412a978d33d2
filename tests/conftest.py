"""Shared test setup: the logs of failed runs (which gpudoctor keeps on purpose,
for the user to read) land in pytest's own temporary folder, which pytest
prunes, instead of piling up in the system's /tmp; and Ctrl-C reaches the
commands the tests start, however the suite itself was started."""

import os
import signal
import tempfile

import pytest

# A suite started in the background by a shell without job control (`pytest &` in a
# script, a CI step) inherits SIGINT ignored, and every gpudoctor it starts would too:
# the Ctrl-C tests would be testing nohup, and time out. A handler here, unlike SIG_IGN,
# is reset to the default by exec, so the children get a normal Ctrl-C.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    """Byte-compile gpudoctor once, as a wheel install does, before any test starts it.
    Under PYTHONDONTWRITEBYTECODE=1 (this project's machines set it) no process writes
    the cache, so every gpudoctor the suite starts (each CLI call, each rank) compiled
    its ~100 modules from source again: ~0.12 of a CLI call's ~0.45 CPU-s, a cost no
    user's install has. Reading a cache the variable does not forbid. Under xdist the
    controller does it before it starts the workers."""
    if hasattr(config, "workerinput"):
        return
    # The test modules have the same cost: pytest rewrites every one for its asserts and,
    # under the variable, writes no cache, so each xdist worker rewrote all of them at
    # every run (~15 CPU-s a worker against ~9.5 from a cache). With the variable gone
    # the first run writes the cache (its workers, collecting at once, still rewrite) and
    # every later run on the same checkout reads it; the processes the tests start
    # inherit this environment too. __pycache__ is git-ignored.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import compileall

    import gpudoctor

    for folder in gpudoctor.__path__:
        compileall.compile_dir(folder, quiet=2)  # a read-only checkout: run from source, as before


@pytest.fixture(scope="session", autouse=True)
def _temp_dir_for_run_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    saved_env, saved_tempdir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(folder)  # children (CLI runs, ranks) inherit it
    tempfile.tempdir = str(folder)  # this process's launches too
    yield
    tempfile.tempdir = saved_tempdir
    if saved_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved_env


@pytest.fixture(autouse=True)
def _lint_rules_fail_loudly(monkeypatch):
    """A lint rule that raises is silence to a user (the engine says nothing rather than
    guess); in the tests it must fail, or a broken rule passes every test that expects no
    diagnostic (the twelfth session: a helper's changed signature went unseen this way)."""
    from gpudoctor.linter import engine

    monkeypatch.setattr(engine, "RAISE_RULE_ERRORS", True)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture(autouse=True)
def _stop_signal_handlers_restored():
    """A test that stops the supervisor in-process (tests/test_launch.py) leaves its handlers
    ignoring, by design: a real doctor is on its way out then. In the test process they would
    outlive the test: a multiprocessing pool forked later by the same xdist worker inherited
    the ignoring SIGTERM handler, so the pool's terminate() waited 300 s on a worker that never
    died (CI, twice, test_lint_files_in_parallel_matches_serial[linux])."""
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in saved.items():
        if handler is not None:
            signal.signal(sig, handler)


CPU_LOG_ENV = "GPUDOCTOR_TEST_CPU"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """GPUDOCTOR_TEST_CPU=FOLDER: each test's CPU time (this process's, and that of the processes it started and waited
    for: CLI calls, ranks) written as a JSON line to FOLDER/cpu-WORKER.jsonl; `python tests/cpu_per_test.py FOLDER` sums
    it. On CI's two cores the suite is CPU-bound (with -n 3 its wall time is about its CPU time over two), so what makes
    it slow is CPU, not waiting; and CPU time, unlike wall time, is the same on a machine others load."""
    folder = os.environ.get(CPU_LOG_ENV)
    if not folder:
        yield
        return
    import json
    import resource
    import time

    def cpu() -> tuple[float, float]:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime

    (own, children), started = cpu(), time.monotonic()
    yield
    (own2, children2), wall = cpu(), time.monotonic() - started
    line = {"test": item.nodeid, "wall": round(wall, 3), "own": round(own2 - own, 3), "children": round(children2 - children, 3)}
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(folder, f"cpu-{worker}.jsonl"), "a") as fh:
        fh.write(json.dumps(line) + "\n")
