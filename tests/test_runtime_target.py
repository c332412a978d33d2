"""runtime/target.py: python's own command-line syntax, and the targets that
cannot run (a usage error before anything starts)."""

import os
import stat

import pytest

from gpudoctor.hooks.target import Target, TargetError, check_target, parse_target


def test_script_and_its_options_are_kept_as_given():
    t = parse_target(["train.py", "--lr", "3", "-x", "--json", "f", "-h"])
    assert t == Target("script", "train.py", ("--lr", "3", "-x", "--json", "f", "-h"))
    assert t.argv() == ["train.py", "--lr", "3", "-x", "--json", "f", "-h"]


def test_module_forms():
    assert parse_target(["-m", "pkg.train", "--epochs", "2"]) == Target("module", "pkg.train", ("--epochs", "2"))
    assert parse_target(["-mpkg.train"]) == Target("module", "pkg.train", ())
    assert parse_target(["-m", "pkg"]).argv() == ["-m", "pkg"]


def test_double_dash_before_the_script_is_skipped():
    assert parse_target(["--", "train.py", "--nproc", "2"]).args == ("--nproc", "2")


@pytest.mark.parametrize("argv", [[], ["--"], ["-m"], ["-m", ""]])
def test_nothing_to_run(argv):
    with pytest.raises(TargetError):
        parse_target(argv)


def test_missing_script(tmp_path):
    with pytest.raises(TargetError, match="no such script: nope.py"):
        check_target(Target("script", "nope.py", ()), cwd=str(tmp_path))


def test_non_python_files(tmp_path):
    (tmp_path / "notes.txt").write_text("these are notes, not code\n")
    (tmp_path / "weights.bin").write_bytes(bytes(range(256)))
    for name in ("notes.txt", "weights.bin"):
        with pytest.raises(TargetError, match="is not a Python script"):
            check_target(Target("script", name, ()), cwd=str(tmp_path))


def test_python_without_py_suffix_runs_as_python_would(tmp_path):
    script = tmp_path / "train"
    script.write_text("#!/usr/bin/env python\nprint('hi')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    check_target(Target("script", "train", ()), cwd=str(tmp_path))


def test_directory_needs_a_main(tmp_path):
    (tmp_path / "app").mkdir()
    with pytest.raises(TargetError, match="__main__.py"):
        check_target(Target("script", "app", ()), cwd=str(tmp_path))
    (tmp_path / "app" / "__main__.py").write_text("print(1)\n")
    check_target(Target("script", "app", ()), cwd=str(tmp_path))


def test_a_py_file_with_a_syntax_error_is_python_s_business(tmp_path):
    # python itself reports it (traceback, exit 1): not a usage error.
    (tmp_path / "broken.py").write_text("def f(:\n")
    check_target(Target("script", "broken.py", ()), cwd=str(tmp_path))


def test_modules_are_found_in_the_current_directory_first(tmp_path):
    (tmp_path / "mytrain.py").write_text("print(1)\n")
    check_target(Target("module", "mytrain", ()), cwd=str(tmp_path))
    check_target(Target("module", "json.tool", ()), cwd=str(tmp_path))
    with pytest.raises(TargetError, match="no module named 'surely_not_a_module'"):
        check_target(Target("module", "surely_not_a_module.sub", ()), cwd=str(tmp_path))
    with pytest.raises(TargetError, match="not a file: gpudoctor run train.py"):
        check_target(Target("module", "train.py", ()), cwd=str(tmp_path))
    with pytest.raises(TargetError, match="not a module name"):
        check_target(Target("module", "my-train", ()), cwd=str(tmp_path))


def test_absolute_script_path(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("pass\n")
    check_target(Target("script", str(script), ()), cwd=os.sep)
