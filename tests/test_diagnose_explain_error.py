"""`diagnose --explain` with an unknown id: the line names the close ids and never
suggests a bare `--explain` (itself a usage error: the option needs an argument)."""

import pytest

from gpudoctor.commands.diagnose.options import Options, validate
from gpudoctor.core.usage import UsageError


def test_unknown_id_suggests_the_close_ones():
    with pytest.raises(UsageError) as caught:
        validate(Options(explain="nccl-watchdog-timout"))
    line = str(caught.value)
    assert "did you mean nccl-watchdog-timeout" in line
    assert "`gpudoctor diagnose --explain`" not in line and "\n" not in line


def test_an_id_like_none_gets_only_the_list():
    with pytest.raises(UsageError) as caught:
        validate(Options(explain="zzzz"))
    assert "did you mean" not in str(caught.value) and "gloo-peer-closed" in str(caught.value)
