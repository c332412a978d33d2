"""The kernel log's Xid lines, read through real `dmesg` / `journalctl` programs:
stand-ins on PATH that print a real kernel-log excerpt (gpu-operator#1146) or
refuse as a restricted dmesg does."""

from __future__ import annotations

import os
import stat

import pytest

from gpudoctor.probe import kernel_log
from gpudoctor.probe.kernel_log import KernelLogFacts, probe_kernel_log
from gpudoctor.core.unavailable import Unavailable

# https://github.com/NVIDIA/gpu-operator/issues/1146 (syslog form, as journalctl prints it)
EXCERPT = """\
Dec  2 11:38:46 worker4 kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)
Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.
Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).
"""


def program(folder, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setattr(kernel_log, "KERN_LOG", str(tmp_path / "no-kern.log"))
    return folder


def test_a_refused_dmesg_falls_back_to_the_journal(bin_dir, tmp_path):
    program(bin_dir, "dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1\n")
    (tmp_path / "journal.txt").write_text(EXCERPT)
    program(bin_dir, "journalctl", f"cat {tmp_path / 'journal.txt'}\n")
    log = probe_kernel_log()
    assert isinstance(log, KernelLogFacts) and log.source == "journalctl -k -b"
    assert log.refused == ("dmesg: dmesg: read kernel buffer failed: Operation not permitted",)
    assert [(e.xid, e.pci, e.pid) for e in log.xids] == [(48, "PCI:0000:07:00", "'<unknown>'"), (64, "PCI:0000:07:00", "'<unknown>'")]
    assert "physAddr 0x7fffa8860" in log.xids[0].detail


def test_nothing_readable_is_a_reason_per_source(bin_dir):
    program(bin_dir, "dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1\n")
    program(bin_dir, "journalctl", "exit 0\n")  # what a user outside the adm group gets: nothing
    log = probe_kernel_log()
    assert isinstance(log, Unavailable)
    assert "dmesg: dmesg: read kernel buffer failed" in log.reason
    assert "journalctl -k -b: no lines readable by this user" in log.reason
    assert "no-kern.log: No such file or directory" in log.reason


def test_a_hung_source_is_given_up_on(bin_dir, monkeypatch):
    monkeypatch.setattr(kernel_log, "TIMEOUT_S", 0.5)
    program(bin_dir, "dmesg", "exec sleep 30\n")
    program(bin_dir, "journalctl", "echo 'kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.'\n")
    log = probe_kernel_log()
    assert isinstance(log, KernelLogFacts) and log.refused == ("dmesg: no answer within 0 s",)
    assert [e.xid for e in log.xids] == [79]


def test_kern_log_is_read_from_the_last_boot(bin_dir, tmp_path, monkeypatch):
    path = tmp_path / "kern.log"
    path.write_text(
        "Nov 1 10:00:00 h kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
        "Nov 2 09:00:00 h kernel: Linux version 6.8.0 (buildd@lcy02)\n" + EXCERPT
    )
    monkeypatch.setattr(kernel_log, "KERN_LOG", str(path))
    program(bin_dir, "dmesg", "exit 1\n")
    program(bin_dir, "journalctl", "exit 1\n")
    log = probe_kernel_log()
    assert isinstance(log, KernelLogFacts) and log.source == str(path)
    assert [e.xid for e in log.xids] == [48, 64]  # the Xid 79 was the boot before
