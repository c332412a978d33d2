"""user_file: what a user hands gpudoctor to read or write, on real files of
every kind. Nothing here can block: a FIFO is only ever opened non-blocking,
and a device is refused before it is read."""

import os
import socket

import pytest

from gpudoctor.core.user_file import (
    FACTS_CAP,
    SOURCE_CAP,
    FileRefused,
    cap,
    check_writable,
    open_regular,
    read_capped,
)

ROOT = os.geteuid() == 0


def refused(path, use=SOURCE_CAP) -> FileRefused:
    with pytest.raises(FileRefused) as info:
        read_capped(str(path), use)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))
    return info.value


def test_regular_file_read_whole_and_empty_file_is_empty(tmp_path):
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    (tmp_path / "empty.py").write_bytes(b"")
    assert read_capped(str(tmp_path / "a.py"), SOURCE_CAP) == b"x = 1\n"
    assert read_capped(str(tmp_path / "empty.py"), SOURCE_CAP) == b""


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)  # no writer: a blocking open would never return
    exc = refused(fifo)
    assert exc.kind == "not-regular" and "FIFO" in exc.reason


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_devices_are_refused_naming_what_they_are(device):
    exc = refused(device)
    assert exc.kind == "not-regular" and "character device" in exc.reason


def test_socket_and_directory_are_refused(tmp_path):
    path = tmp_path / "s.py"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        assert "socket" in refused(path).reason
    finally:
        sock.close()
    (tmp_path / "d.py").mkdir()
    exc = refused(tmp_path / "d.py")
    assert exc.kind == "directory" and "directory" in exc.reason


def test_symlink_loop_dangling_link_and_missing_file_say_which(tmp_path):
    os.symlink("loop.py", tmp_path / "loop.py")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    loop = refused(tmp_path / "loop.py")
    assert loop.kind == "loop" and "symbolic link loop" in loop.reason and "no such" not in loop.reason
    dangling = refused(tmp_path / "dangling.py")
    assert "broken symbolic link" in dangling.reason and "nowhere.py" in dangling.reason
    assert refused(tmp_path / "missing.py").reason == "no such file"


@pytest.mark.skipif(ROOT, reason="root reads any file")
def test_permission_denied_says_so(tmp_path):
    path = tmp_path / "secret.py"
    path.write_text("x = 1\n")
    path.chmod(0)
    exc = refused(path)
    assert exc.kind == "denied" and "permission denied" in exc.reason


def test_cap_refuses_a_larger_file_before_reading_it(tmp_path, monkeypatch):
    path = tmp_path / "big.py"
    path.write_bytes(b"#" * 2048)
    monkeypatch.setenv(SOURCE_CAP[0], "1000")
    exc = refused(path)
    assert exc.kind == "too-large" and "2.0 KB" in exc.reason and SOURCE_CAP[0] in exc.reason
    monkeypatch.setenv(SOURCE_CAP[0], "4096")
    assert len(read_capped(str(path), SOURCE_CAP)) == 2048


def test_documented_defaults_and_a_bad_override(monkeypatch):
    monkeypatch.delenv(SOURCE_CAP[0], raising=False)
    monkeypatch.setenv(FACTS_CAP[0], "lots")
    assert cap(SOURCE_CAP) == 5 * 1024 * 1024
    assert cap(FACTS_CAP) == 4 * 1024 * 1024


def test_open_regular_streams_a_regular_file_and_refuses_a_fifo(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("line 1\nline 2\n")
    with open_regular(str(path)) as fh:
        assert fh.readline() == b"line 1\n"
    os.mkfifo(tmp_path / "pipe.log")
    with pytest.raises(FileRefused):
        open_regular(str(tmp_path / "pipe.log"))


def test_check_writable(tmp_path):
    check_writable(str(tmp_path / "new.json"))
    assert not (tmp_path / "new.json").exists() and os.listdir(tmp_path) == []  # nothing left behind
    check_writable("/dev/null")
    with pytest.raises(FileRefused, match="does not exist"):
        check_writable(str(tmp_path / "no" / "dir" / "o.json"))
    with pytest.raises(FileRefused, match="a directory"):
        check_writable(str(tmp_path))
    (tmp_path / "file").write_text("")
    with pytest.raises(FileRefused, match="is not a directory"):
        check_writable(str(tmp_path / "file" / "o.json"))
    with pytest.raises(FileRefused, match="cannot create a file in /proc"):
        check_writable("/proc/gpudoctor-report.json")
