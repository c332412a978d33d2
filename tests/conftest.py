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
