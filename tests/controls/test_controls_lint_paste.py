"""Controls and siblings for how lint reads a snippet that is not valid Python
(issue 41, linter/repair.py): a valid file is read exactly as before; a pasted
snippet whose pitfall can be seen once repaired gets it, marked as read after
repair and at most a warning, next to its `syntax-error`; one that cannot be
repaired within the bounds keeps only `syntax-error`. Real code, the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine

SPAWN_AT_IMPORT = textwrap.dedent("""
    import torch.multiprocessing as mp


    def train(rank):
        print(rank)


    mp.spawn(train, nprocs=2)
""").lstrip("\n")


def lint(code: str) -> list[tuple[int, str, str, str]]:
    """(line, rule, severity, message) of each diagnostic."""
    return [(d.line, d.rule, d.severity, d.message)
            for d in engine.lint_source(code, "train.py")]


class TestSyntaxErrorRepaired:
    def test_control_a_valid_script_is_read_exactly_as_before(self):
        # the error stays an error, its words untouched, and no syntax-error
        ((line, rule, severity, message),) = lint(SPAWN_AT_IMPORT)
        assert (line, rule, severity) == (8, "spawn-no-main-guard", "error")
        assert "repair" not in message and "not valid Python" not in message

    def test_control_a_valid_script_that_only_looks_pasted(self):
        # `...` bodies and a `>>>` in a docstring are Python: nothing to repair
        code = SPAWN_AT_IMPORT + 'def later():\n    """>>> later()"""\n    ...\n'
        assert [(d[1], d[2]) for d in lint(code)] == [("spawn-no-main-guard", "error")]

    def test_sibling_the_same_script_cut_off_is_read_repaired(self):
        pasted = SPAWN_AT_IMPORT + 'print("spawned",\n'
        found = {rule: (line, severity, message) for line, rule, severity, message in lint(pasted)}
        assert set(found) == {"spawn-no-main-guard", "syntax-error"}
        line, severity, message = found["spawn-no-main-guard"]
        # the reading is not the program Python runs: a warning that says why
        assert (line, severity) == (8, "warning")
        assert message.endswith("(read after repairing line 9 of a snippet that is not valid Python)")
        assert found["syntax-error"][:2] == (9, "error")

    def test_sibling_a_snippet_that_cannot_be_repaired_keeps_only_syntax_error(self):
        # Python 2 prints on most lines: blanking them would read a different program
        pasted = SPAWN_AT_IMPORT + 'print "a"\nprint "b"\nprint "c"\nprint "d"\nprint "e"\n'
        ((line, rule, severity, message),) = lint(pasted)
        assert (line, rule, severity) == (9, "syntax-error", "error")
        assert "repaired" not in message
