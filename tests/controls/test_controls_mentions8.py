"""log-inconclusive's case `mentions`: a log with no failure gpudoctor can name and no end, whose
lines still speak of an error in words no rule reads. Its control: the lines that speak of errors
without reporting one (zero counts, metrics, code, warnings) leave the plain case; its siblings: a
logger's error level keeps case `errors`, a traceback is a failure, and a log that shows its end
well is healthy whatever its words."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.knowledge.mentions import speaks_of_error

ENDED = "{'train_runtime': 812.4, 'train_loss': 0.412, 'epoch': 3.0}\ntraining completed\n"


def answer(text: str):
    report = api.diagnose(text)
    [found] = [f for f in report.findings if f.id in ("log-inconclusive", "log-no-failure")] or [None]
    return report, found


class TestLogInconclusive:
    verdict = "log-inconclusive"

    def test_control_words_of_error_that_report_none_leave_the_plain_case(self):
        log = (
            "epoch 3 | val error: 0.031 | train error 0.045\n"
            "checked 120 files: 0 errors, failed: 0\n"
            "    except Exception as exc:\n"
            "UserWarning: loading the fast tokenizer failed, falling back to the slow one\n"
            "error rate 0.2% over the last epoch\n"
        )
        report, found = answer(log)
        assert found.id == "log-inconclusive" and "lines that speak of an error" not in found.evidence
        assert report_exit(report) == 1  # still undecided: no end shown

    def test_control_a_log_that_ends_well_is_healthy_whatever_it_says_of_errors(self):
        report, found = answer("then I get this error once: Error using gpuArray\n" + ENDED)
        assert found.id == "log-no-failure" and report_exit(report) == 0

    def test_sibling_another_runtimes_error_is_shown_before_the_users_sentence(self):
        log = (
            "Hello. When I train with 4 GPUs, an error occurs:\n"
            "Starting parallel pool (parpool) using the 'local' profile ...\n"
            "Error using gpuArray/subsref: Index exceeds the number of array elements.\n"
        )
        report, found = answer(log)
        assert found.id == "log-inconclusive" and report_exit(report) == 1
        said = found.evidence["lines that speak of an error"]
        assert said[0] == "line 3: Error using gpuArray/subsref: Index exceeds the number of array elements."
        assert said[1].startswith("line 1: Hello.")
        assert "2 line(s) speak of an error" in found.title and "(first: line 3)" in found.title
        assert "no line shows a failure" not in (found.title + found.why).lower()

    def test_sibling_a_loggers_error_level_keeps_its_own_case(self):
        report, found = answer("2024-05-01 10:00:01 ERROR trainer: checkpoint upload refused, will retry\n")
        assert found.id == "log-inconclusive" and "error lines" in found.evidence
        assert "lines that speak of an error" not in found.evidence

    def test_sibling_a_traceback_is_a_failure_not_a_mention(self):
        log = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: bad shape\n"
        report, found = answer(log)
        assert found is None and report_exit(report) == 1
        assert any(f.severity.value == "error" for f in report.findings)


def test_what_speaks_of_an_error_and_what_does_not():
    assert speaks_of_error("Training failed: the dataset folder is empty")
    assert speaks_of_error("[E:onnxruntime:, sequential_executor.cc:494] Non-zero status code returned: error")
    assert speaks_of_error("caffe2 aborted: enforce fail at context_gpu.cu:415")
    for harmless in ("0 errors", "no errors found", "errors=0", "mean squared error 0.12", "if error_count:", "raise ValueError('x')",
                     "FutureWarning: this will fail in a future version"):
        assert not speaks_of_error(harmless), harmless
