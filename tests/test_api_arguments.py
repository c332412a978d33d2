"""The Python API checks its arguments at the door (issue 24, item 8): a wrong type is a
TypeError and a bad value a ValueError, each one line naming the CLI's flag, raised before
any work (no rank started, no file read)."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpudoctor

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "examples" / "train_broken.py"


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: gpudoctor.diagnose(123), TypeError, "text must be the log's text"),
        (lambda: gpudoctor.diagnose(path=123), TypeError, "path must be a path"),
        # (NUL bytes alone no longer make a binary: a log emptied under its writer starts with zeros; these are an ELF's bytes)
        (lambda: gpudoctor.diagnose("\x7fELF\x02\x01\x01\x00\x00\x03\x00\x3e\x00\x01\x00"), ValueError, "binary"),
        (lambda: gpudoctor.diagnose(path="a\x00"), ValueError, "NUL byte"),
        (lambda: gpudoctor.diagnose(""), ValueError, "the text is empty"),
        (lambda: gpudoctor.train_smoke(nproc=True), TypeError, "--nproc must be a whole number (got True)"),
        (lambda: gpudoctor.train_smoke(nproc=0), ValueError, "--nproc must be between 1 and"),
        (lambda: gpudoctor.train_smoke(amp="yes"), TypeError, "--amp must be True or False"),
        (lambda: gpudoctor.train_smoke(backend="mpi"), ValueError, "--backend must be one of"),
        (lambda: gpudoctor.allreduce(backend=1), TypeError, "--backend must be a string (got 1)"),
        (lambda: gpudoctor.allreduce(iters=2.5), TypeError, "--iters must be a whole number"),
        (lambda: gpudoctor.allreduce(timeout="10"), TypeError, "--timeout must be a number of seconds"),
        (lambda: gpudoctor.lint(123), TypeError, "paths must be a path or a list of paths"),
        (lambda: gpudoctor.lint(BROKEN, select=[1]), TypeError, "--select must be a rule id"),
        (lambda: gpudoctor.lint(BROKEN, select="no-such-rule"), ValueError, "unknown rule id"),
        (lambda: gpudoctor.check(facts=1), TypeError, "--facts must be a path"),
    ],
)
def test_bad_arguments_are_one_line_errors(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_string_is_one_rule_id_not_its_characters():
    whole = gpudoctor.lint(BROKEN)
    assert whole.findings  # (warnings since lint v3: `ok` alone says nothing here)
    rule = whole.findings[0].id
    only = gpudoctor.lint(BROKEN, select=rule)
    assert only.findings and {f.id for f in only.findings} == {rule}
    assert gpudoctor.lint(BROKEN, ignore=rule).findings != only.findings
