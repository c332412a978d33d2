"""Shared test setup: the logs of failed runs (which gpudoctor keeps on purpose,
for the user to read) land in pytest's own temporary folder, which pytest
prunes, instead of piling up in the system's /tmp."""

import os
import tempfile

import pytest


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
