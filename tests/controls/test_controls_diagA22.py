"""Controls and siblings for what a failed log shows where no line is an error (issue 35, heldout21's no-error-line
cases): the reporter's words that nothing is logged past a point (knowledge/said_hang.py). The sample's cases are the
logs as pasted."""

from __future__ import annotations

from gpudoctor import api
from test_controls_classes6 import case


def head(text: str):
    return api.diagnose(text).findings[0]


class TestLogSaidHangNoLogAfter:
    verdict = "log-said-hang"

    def test_sibling_no_log_after_the_download(self):
        # kubeflow/trainer#1601: "there is no log information after downloading the data", pods stay Running
        f = head(case("heldout21", "kubeflow-trainer-1601-dist-mnist-pytorchjob"))
        assert f.id == "log-said-hang" and f.evidence["last line"] == "line 17: Done!"

    def test_control_an_error_the_log_names_stays_the_answer(self):
        # BVLC/caffe PR 2114: "I still not seen no output after I did that", and CUDA's peer-access error in the log
        assert head(case("heldout10", "caffe-2114-multi-gpu-pr")).id == "cuda-runtime-error"
