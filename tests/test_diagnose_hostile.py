"""Hostile input to `gpudoctor diagnose` (issue 24): pickles that would run code, malformed
and deeply nested files, numbers that do not fit, odd names, compressed, empty, huge and
linked logs. Each answer is a finding or a one-line error naming the file, never a traceback,
never code run, never "healthy" for what was not read."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import pickle
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import gpudoctor
from gpudoctor.commands.diagnose import folder as run_folder
from gpudoctor.commands.diagnose.reader import scan
from gpudoctor.knowledge.collectives import MalformedDump, read_fr_file
from gpudoctor.knowledge.story import Diagnosis
from gpudoctor.knowledge.plain_pickle import RefusedPickle, loads_plain

ROOT = Path(__file__).resolve().parents[1]
FR = ROOT / "tests" / "fixtures" / "flight_recorder"
LOGS = ROOT / "tests" / "fixtures" / "logs"
OOM_LOG = LOGS / "cuda_fork.log"


def cli(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", "diagnose", *args],
        input=stdin, capture_output=True, timeout=120, env={**os.environ, **(env or {})},
    )  # fmt: skip


class RunsCommand:
    """What an attacker pickles: unpickling it calls os.system(command)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def evil_pickle(marker: Path) -> bytes:
    # A dump-shaped dict whose first entry runs a command when loaded.
    return pickle.dumps({"version": "2.10", "entries": [RunsCommand(f"touch {marker}")], "pg_status": {}}, protocol=2)


def test_the_real_flight_recorder_dump_is_plain_data():
    for path in sorted(FR.glob("*/fr_trace_rank_*")):
        dump = loads_plain(path.read_bytes())
        assert isinstance(dump, dict) and dump["entries"], path


@pytest.mark.parametrize(
    "payload",
    [
        pickle.dumps(RunsCommand("true"), protocol=0),  # GLOBAL + REDUCE, text protocol
        pickle.dumps(RunsCommand("true"), protocol=4),  # STACK_GLOBAL + REDUCE
        b"\x80\x02c__builtin__\neval\nq\x00X\x04\x00\x00\x001+1q\x01\x85q\x02Rq\x03.",  # eval('1+1')
        b"(i__main__\nRunsCommand\np0\n.",  # INST
        b"\x80\x02\x82\xf0.",  # EXT1: the copyreg extension registry (code 240, registered below)
        b"\x80\x02X\x01\x00\x00\x00aQ.",  # BINPERSID
    ],
)
def test_a_pickle_that_names_anything_is_refused_before_any_import(payload):
    import copyreg

    copyreg.add_extension("os", "system", 240)
    try:
        with pytest.raises(RefusedPickle):
            loads_plain(payload)
    finally:
        copyreg.remove_extension("os", "system", 240)


def test_folder_with_a_code_running_pickle_runs_nothing_and_says_so(tmp_path):
    marker = tmp_path / "PWNED"
    run = tmp_path / "run"
    run.mkdir()
    (run / "nccl_trace_rank_0").write_bytes(evil_pickle(marker))
    (run / "optimizer_step_1000").write_bytes(pickle.dumps(RunsCommand(f"touch {marker}"), protocol=4))
    (run / "rank0.log").write_text("step 1 loss 0.5\n")
    proc = cli("--json", str(run))
    assert not marker.exists(), "unpickling ran the file's command"
    assert proc.returncode == 1, proc.stderr.decode()
    data = json.loads(proc.stdout)
    refused = [f for f in data["findings"] if f["id"] == "pickle-refused"]
    assert sorted(f["evidence"]["file"] for f in refused) == ["nccl_trace_rank_0", "optimizer_step_1000"]
    assert "posix.system" in refused[0]["title"] or "os.system" in refused[0]["title"]
    assert "healthy" not in cli(str(run)).stdout.decode()
    # the Python API: the same refusal, nothing run
    report = gpudoctor.diagnose(path=run)
    assert not report.ok and not marker.exists()


def test_a_dump_with_a_bad_shape_is_a_finding_naming_the_file(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "rank0.log").write_text("step 1 loss 0.5\n")
    cases = {
        "fr_a_0.json": {"entries": [1, 2, 3]},
        "fr_b_1.json": {"entries": "x"},
        "fr_c_2.json": {"entries": [{"collective_seq_id": "²", "profiling_name": "gloo:all_reduce"}]},
        "fr_d_3.json": {"entries": [{"collective_seq_id": 1, "input_sizes": [["a"]]}]},
        "fr_e_4.json": {"entries": [], "pg_status": [1]},
    }
    for name, dump in cases.items():
        (run / name).write_text(json.dumps(dump))
    (run / "fr_f_5.json").write_text('{"entries": [{"collective_seq_id": "' + "9" * 4400 + '"}]}')
    (run / "fr_g_6").write_bytes(pickle.dumps({"entries": [{"collective_seq_id": 10**5000}]}))
    proc = cli("--json", str(run))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    data = json.loads(proc.stdout)
    unread = {item["path"]: item["why"] for item in data["not_read"]}
    assert set(unread) == {*cases, "fr_f_5.json", "fr_g_6"}, unread
    assert all("malformed Flight Recorder dump" in why for why in unread.values()), unread
    [warn] = [f for f in data["findings"] if f["id"] == "files-not-read"]
    assert warn["severity"] == "warn" and "fr_a_0.json" in warn["evidence"]
    assert "7 item(s) not read" in cli(str(run)).stdout.decode()


def test_deep_nesting_and_huge_numbers_never_raise(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(MalformedDump):
        path = tmp_path / "t_0"
        path.write_bytes(pickle.dumps({"entries": [{"frames": [[[[]]]] * 3}], "x": [10**5000]}))
        read_fr_file(str(path))
    path = tmp_path / "deep_1.json"
    path.write_text('{"entries": ' + deep + "}")
    with pytest.raises(ValueError):
        read_fr_file(str(path))
    run = tmp_path / "run"
    (run / "attempt_0" / "²").mkdir(parents=True)
    (run / "attempt_0" / "9").mkdir(parents=True)
    (run / "attempt_0" / "²" / "error.json").write_text(
        json.dumps({"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "", "timestamp": "²"}}})
    )
    (run / "attempt_0" / "9" / "error.json").write_text(
        json.dumps({"message": {"message": "ValueError: x", "extraInfo": {"py_callstack": "", "timestamp": "1" * 4300}}})
    )
    (run / "deep" / "0").mkdir(parents=True)
    (run / "deep" / "0" / "error.json").write_text('{"message": {"message": "x", "extraInfo": ' + deep + "}}")
    (run / "fr_trace_7.json").write_text('{"entries": ' + deep + "}")
    proc = cli("--json", str(run))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    data = json.loads(proc.stdout)
    ranks = {e["path"]: (e["rank"], e["timestamp"]) for e in data["error_files"]}
    assert ranks == {"attempt_0/²/error.json": (None, None), "attempt_0/9/error.json": (9, None)}
    unread = {item["path"]: item["why"] for item in data["not_read"]}
    assert "nested too deeply" in unread["deep/0/error.json"]


def test_check_facts_nested_too_deeply_is_one_line(tmp_path):
    deep = tmp_path / "facts.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    proc = subprocess.run([sys.executable, "-m", "gpudoctor", "check", "--facts", str(deep)], capture_output=True, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "nested too deeply" in err and "Traceback" not in err, err


class Endless:
    """One line of tqdm progress bars, each ended by \\r only, `size` bytes in all, then an
    error; every read as large as asked (as a file's is), up to 8 MB."""

    def __init__(self, size: int, tail: bytes) -> None:
        self.left, self.tail = size, tail
        self.bar = (b"\r 42%|####      | 420/1000 [00:10<00:14, 41.9it/s]" * 200_000)[: 8 << 20]

    def read(self, n: int) -> bytes:
        if self.left <= 0:
            out, self.tail = self.tail[:n], self.tail[n:]
            return out
        n = min(n, self.left, len(self.bar))
        self.left -= n
        return self.bar[:n]


def test_an_endless_line_is_read_in_bounded_memory():
    d = Diagnosis()
    tracemalloc.start()
    try:
        scan(Endless(24 << 20, b"\nRuntimeError: CUDA error: out of memory\n"), d)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a few 8 MB blocks at most (it held the whole line before: 65 MB for this one)
    assert peak < 44 << 20, f"peak {peak >> 20} MB for a 24 MB line"
    assert d.lines == 2 and any(f.id == "cuda-oom" for f in d.findings())


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_compressed_logs_are_read(tmp_path, kind):
    pack = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind]
    log = tmp_path / f"rank0.log.{kind}"
    log.write_bytes(pack(OOM_LOG.read_bytes()))
    plain = gpudoctor.diagnose(path=OOM_LOG)
    packed = gpudoctor.diagnose(path=log)
    assert packed.findings[0].id == plain.findings[0].id and packed.data["lines"] == plain.data["lines"]
    run = tmp_path / "run"
    run.mkdir()
    (run / log.name).write_bytes(log.read_bytes())
    assert gpudoctor.diagnose(path=run).findings[0].id == plain.findings[0].id


def test_zstd_and_damaged_archives_say_what_was_not_read(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "rank0.log").write_text("step 1 loss 0.5\n")
    (run / "rank1.log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 64)
    (run / "rank2.log.gz").write_bytes(gzip.compress(b"step 1 loss 0.5\n" * 100_000)[:-40])  # cut short by a download
    unread = {item["path"]: item["why"] for item in gpudoctor.diagnose(path=run).data["not_read"]}
    assert "rank1.log.zst" in unread and ("zstd" in unread["rank1.log.zst"] or "binary" in unread["rank1.log.zst"])
    assert "read only in part" in unread["rank2.log.gz"]


def test_empty_and_unreadable_folders_are_not_healthy(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "rank0.log").write_bytes(b"")
    proc = cli(str(run))
    assert proc.returncode == 2 and "nothing in this folder could be read (1 empty)" in proc.stderr.decode()


def test_links_are_followed_once_and_limits_are_said(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rank0.log").write_bytes(OOM_LOG.read_bytes())
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(elsewhere / "rank0.log", run / "rank0.log")
    os.symlink(elsewhere / "rank0.log", run / "again.log")  # the same file: read once
    os.symlink(run, run / "loop")  # a loop: not entered twice
    os.symlink(tmp_path / "gone.log", run / "gone.log")
    report = gpudoctor.diagnose(path=run)
    data = report.data
    assert not report.ok and data["sources"] in (["again.log"], ["rank0.log"])
    assert data["not_read"] == [{"path": "gone.log", "why": "broken symbolic link"}]
    # depth and count limits are listed, with a count in the human output
    deep = run / "a" / "b" / "c" / "d" / "e" / "f" / "g"
    deep.mkdir(parents=True)
    (deep / "rank9.log").write_text("x\n")
    many = run / "many"
    many.mkdir()
    for i in range(run_folder.MAX_FILES + 5):
        (many / f"{i:05d}.log").write_text("")
    out = cli(str(run)).stdout.decode()
    assert "a/b/c/d/e/f/: deeper than 6 levels" in out.replace(os.sep, "/") or "deeper than 6 levels" in out
    assert "more file(s)" in out and "past the 2,000-file limit" in out


def test_a_compressed_paste_on_stdin_is_read():
    proc = cli("--json", "-", stdin=gzip.compress(OOM_LOG.read_bytes()))
    assert proc.returncode == 1 and json.loads(proc.stdout)["findings"][0]["id"] == "cuda-fork-reinit"


def test_a_damaged_archive_given_alone_is_read_as_far_as_it_goes(tmp_path):
    cut = tmp_path / "rank0.log.gz"
    cut.write_bytes(gzip.compress(OOM_LOG.read_bytes() * 2000)[:-40])
    report = gpudoctor.diagnose(path=cut)
    assert report.findings[0].id == "cuda-fork-reinit" and report.data["lines"] > 0
    assert report.data["not_read"][0]["why"].startswith("read only in part")
    assert any(f.id == "files-not-read" for f in report.findings)
    (tmp_path / "head.gz").write_bytes(gzip.compress(b"x" * 1000)[:12])
    with pytest.raises(ValueError, match="damaged archive"):
        gpudoctor.diagnose(path=tmp_path / "head.gz")


def test_links_into_system_paths_are_not_followed(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "rank0.log").write_text("step 1\n")
    os.symlink("/proc/self/environ", run / "rank1.log")
    os.symlink("/", run / "root")
    data = gpudoctor.diagnose(path=run).data
    unread = {item["path"]: item["why"] for item in data["not_read"]}
    assert "not followed (a system path" in unread["rank1.log"] and "not followed" in unread["root"]
