"""train-smoke --save: where the checkpoint goes (commands/train_smoke/options.py
checkpoint_target), with real folders. The page promised `--save ./ckpt/` ->
ckpt/train-smoke.pt; it wrote a file named ckpt, and `--save newdir/sub/` was refused."""

import os
import stat

import pytest

from gpudoctor.commands.train_smoke.options import checkpoint_target
from gpudoctor.core.usage import UsageError


def test_trailing_separator_names_a_folder_made_private(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert checkpoint_target("./ckpt/") == str(tmp_path / "ckpt" / "train-smoke.pt")
    assert checkpoint_target("newdir/sub/") == str(tmp_path / "newdir" / "sub" / "train-smoke.pt")
    for folder in ("ckpt", "newdir", "newdir/sub"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    assert not (tmp_path / "ckpt" / "train-smoke.pt").exists()  # the rank writes it, not the check


def test_existing_folder_without_separator_gets_the_file_inside(tmp_path):
    (tmp_path / "out").mkdir()
    assert checkpoint_target(str(tmp_path / "out")) == str(tmp_path / "out" / "train-smoke.pt")


def test_a_file_name_is_a_file(tmp_path):
    # The sibling of ./ckpt/: without the separator, a name that does not exist is the file itself.
    assert checkpoint_target(str(tmp_path / "ckpt")) == str(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt").exists()


def test_a_file_in_a_missing_folder_is_still_refused(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        checkpoint_target(str(tmp_path / "no" / "x.pt"))
    assert not (tmp_path / "no").exists()


def test_a_folder_that_cannot_be_made_is_one_line(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(UsageError, match=r"cannot create directory .*afile/sub \(Not a directory\)"):
        checkpoint_target(str(tmp_path / "afile" / "sub") + "/")
