"""gpudoctor's own folders in the shared temp folder (issue 24, item 2): private,
never through a link or a folder another user planted, ids that cannot climb out."""

import os
import stat
import subprocess
import sys

import pytest

from gpudoctor.launch.scratch import FolderRefused, private_folder, safe_id, shared_path, write_file
from gpudoctor.commands.train_smoke import job as smoke_runner


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_new_folder_is_private_and_one_of_ours_is_used_again(tmp_path):
    path = str(tmp_path / "gpudoctor-run-x-1")
    assert private_folder(path) is True
    assert _mode(path) == 0o700
    assert private_folder(path) is False  # a sibling rank made it first: fine


@pytest.mark.parametrize("planted", ["symlink", "file", "open-folder", "other-user"])
def test_a_planted_path_is_refused_with_one_line(tmp_path, planted):
    victim = tmp_path / "important"
    victim.mkdir()
    path = tmp_path / "gpudoctor-run-job-29500"
    if planted == "symlink":
        path.symlink_to(victim)
    elif planted == "file":
        path.write_text("x")
    elif planted == "open-folder":
        path.mkdir()
        os.chmod(path, 0o777)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give a folder to another user")
        path.mkdir(mode=0o700)
        os.chown(path, 65534, 65534)
    with pytest.raises(FolderRefused) as refused:
        private_folder(str(path))
    assert "\n" not in str(refused.value) and str(path) in str(refused.value)
    assert list(victim.iterdir()) == []


@pytest.mark.parametrize("raw", ["a/../x", "..", "../../etc", "a\x1b]52;c;x\x07", "", "/abs"])
def test_ids_become_plain_words(raw):
    word = safe_id(raw)
    assert word and "/" not in word and not word.startswith(".") and word.isprintable()
    assert os.path.dirname(shared_path("smoke", raw)) == os.path.dirname(shared_path("smoke", "job"))


def test_a_crafted_run_id_keeps_the_smoke_checkpoint_in_its_own_folder():
    path = smoke_runner.join_checkpoint_path({"TORCHELASTIC_RUN_ID": "a/../x"})
    folder = os.path.dirname(path)
    assert os.path.basename(folder).startswith("gpudoctor-smoke-") and "/" not in os.path.basename(folder)
    assert os.path.normpath(folder) == folder


def test_smoke_under_a_planted_link_uses_a_private_folder_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    victim = tmp_path / "home"
    victim.mkdir()
    path = smoke_runner.join_checkpoint_path({"TORCHELASTIC_RUN_ID": "planted"})
    os.symlink(victim, os.path.dirname(path))
    used, findings = smoke_runner._checkpoint_folder(path)
    try:
        assert os.path.dirname(used) != os.path.dirname(path) and _mode(os.path.dirname(used)) == 0o700
        assert [f.id for f in findings] == ["temp-folder-refused"]
        assert "symbolic link" in findings[0].title
    finally:
        os.rmdir(os.path.dirname(used))


def test_writes_never_follow_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "rank0.progress"
    target.symlink_to(victim)
    # A link planted where the temporary file goes is not followed either.
    (tmp_path / f"rank0.progress.{os.getpid()}.tmp").symlink_to(victim)
    write_file(str(target), "1\tstarted")
    assert victim.read_text() == "precious"
    assert target.read_text() == "1\tstarted" and not target.is_symlink()


def test_the_joined_run_folder_under_a_planted_link_is_refused_and_the_doctor_goes_on(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "gpudoctor-run-job7-29999").symlink_to(victim)
    code = "from gpudoctor.hang import joined as j; print(j.joined_run_dir())"
    env = dict(os.environ, TMPDIR=str(tmp_path), TORCHELASTIC_RUN_ID="job7", MASTER_PORT="29999")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    used = r.stdout.strip()
    assert os.path.isdir(used) and not os.path.islink(used) and _mode(used) == 0o700
    assert "run folder refused" in r.stderr and "symbolic link" in r.stderr
    assert list(victim.iterdir()) == []
    os.rmdir(used)
