"""Controls and siblings for the verdicts the diagnose branch adds or changes (issue 35).

Each class is one verdict: `test_control_*` is the input that looks most like it and must not
get it; `test_sibling_*` is the nearest input that needs a different verdict, and gets its own."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity

OMP_BANNER = (
    "*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, "
    "please further tune the variable for optimal performance in your application as needed.\n"
    "*****************************************\n"
)
TB = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 40, in <module>\n'
    '  File "/opt/conda/lib/python3.10/site-packages/mylib/core.py", line 7, in run\n'
)


def errors(text: str):
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestUnrecognisedFailureRemedy:
    """unrecognised-failure quotes the remedy its own message states, and only that."""

    def test_control_advice_in_a_later_log_record_is_not_the_messages(self):
        found = errors(TB + "RuntimeError: the plan has 3 stages but the mesh has 2\n" + OMP_BANNER)
        assert found[0].id == "unrecognised-failure"
        assert "remedy" not in found[0].evidence
        assert "OMP_NUM_THREADS" not in found[0].fix

    def test_control_a_healthy_log_with_advice_words_is_healthy(self):
        assert errors(OMP_BANNER + "epoch 1 loss 0.31\n") == []

    def test_sibling_advice_that_continues_the_message_is_quoted(self):
        found = errors(TB + "RuntimeError: the plan has 3 stages but the mesh has 2.\nPlease set `pipeline_stages=2` in the config.\n")
        assert found[0].id == "unrecognised-failure"
        assert found[0].evidence["remedy"] == "Please set `pipeline_stages=2` in the config"
        assert found[0].evidence["remedy_line"] == 5
