"""Shell completion (Typer's): `--install-completion` writes the script and hooks it
into the shell's rc file; the completion protocol answers commands and options."""

from __future__ import annotations

import os
import subprocess
import sys


def gpudoctor(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        env=dict(os.environ, **env), capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_install_completion_for_bash(tmp_path):
    # Typer finds the shell from the parent processes, so ask from inside a real bash
    # (not exec'd: bash must stay the parent), as a user at a prompt would.
    r = subprocess.run(["bash", "-c", f"'{sys.executable}' -m gpudoctor --install-completion; exit $?"],
                       env=dict(os.environ, HOME=str(tmp_path)), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    script = tmp_path / ".bash_completions" / "gpudoctor.sh"
    assert "_GPUDOCTOR_COMPLETE=complete_bash" in script.read_text()
    assert f"source '{script}'" in (tmp_path / ".bashrc").read_text()


def test_completion_answers_commands_and_options():
    # What bash's completion function asks (the script above runs exactly this).
    commands = gpudoctor(COMP_WORDS="gpudoctor tr", COMP_CWORD="1", _GPUDOCTOR_COMPLETE="complete_bash")
    assert commands.stdout.split() == ["train-smoke"]
    options = gpudoctor(COMP_WORDS="gpudoctor lint --sel", COMP_CWORD="2", _GPUDOCTOR_COMPLETE="complete_bash")
    assert options.stdout.split() == ["--select"]
