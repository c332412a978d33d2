"""Find processes left behind by a test: every process a test starts carries a
unique GPUDOCTOR_TEST_TAG in its environment, which its children inherit."""

import os
import time
import uuid

import psutil

TAG_ENV = "GPUDOCTOR_TEST_TAG"


def new_tag() -> str:
    return uuid.uuid4().hex


def tagged(tag: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        if proc.pid == os.getpid():
            continue
        try:
            if proc.environ().get(TAG_ENV) == tag and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def leftovers(tag: str, settle_s: float = 2.0) -> list[psutil.Process]:
    """Processes still alive with this tag after a short settle time (bounded)."""
    deadline = time.monotonic() + settle_s
    while True:
        alive = tagged(tag)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def kill_all(procs) -> None:
    for proc in procs:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
