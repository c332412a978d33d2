"""Controls and siblings for diagD19 (issue 35: a not-failed run must get no error finding): a person's words beside a paste
that say the errors it shows did not stop the run (before the paste: "..., but it still finished"; in a reply: "you can
ignore the error"), and srun's exit code 1 that is killall's own status (the job script's last `killall` found the
program already gone). `test_sibling_*` is the input that gets the new answer (no error: the error is kept as information,
the log does not decide), `test_control_*` the nearest one whose error must stay. Lines are real ones (threads named)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import head_id, healthy

from gpudoctor import api
from gpudoctor.core.findings import Severity


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


# https://github.com/google/deepvariant/issues/722 (heldout18, not failed): the reporter says first that the run finished
DV_SAID = ("When I run the GPU version, I got this error mesages, but it still finished SNP calling and all the output files "
           "seemed fine.\n\n== CUDA ==\nCUDA Version 11.3.1\n")
DV_ERROR = ("2023-10-30 00:30:39.544727: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:1278] could not retrieve "
            "CUDA device count: CUDA_ERROR_NOT_INITIALIZED: initialization error\n")
# https://github.com/InternLM/lmdeploy/issues/2055 (heldout6, failed): "it worked" of another fix, "but now" a new failure
LMDEPLOY = ('thanks, it worked. but now I have a new "out of GPU memory" promble on a server with 4 V100 32g cards. i tried the '
            "cogvlm2 model on an A800 80g server and it worked fine.\n\n")


class TestSaidFinishedBefore:
    verdict = "log-inconclusive"

    def test_sibling_errors_said_before_the_paste_not_to_stop_the_run_are_no_failure(self):
        text = DV_SAID + DV_ERROR * 3
        assert head_id(text) == "-" and not healthy(text)
        found = finding(text, "log-inconclusive")
        assert found is not None and "did not stop the job" in found.title and found.evidence["said fixed"].startswith("line 1:")
        # the error is kept as information, under whichever finding reads its line (the table of CUDA's codes here)
        kept = finding(text, "cuda-error-code") or finding(text, "unrecognised-failure")
        assert kept is not None and kept.severity is Severity.INFO

    @pytest.mark.parametrize("said", [
        # it worked once and fails now, or works only another way, or does not finish: the error stays the run's
        "When I run the GPU version, I got this error mesages, but it finished SNP calling before the upgrade.\n",
        "I got this error messages, but it still finished on the CPU.\n",
        "I got this error messages, but it never finished SNP calling.\n",
        "I got this error messages, but does it still finish?\n",
        "When I run the GPU version, I got this error mesages and it stopped.\n",
        LMDEPLOY,
    ])
    def test_control_errors_not_said_to_be_survived_stay_the_failure(self, said):
        assert head_id(said + DV_ERROR * 3) == "cuda-error-code"  # the error stays the failure, read by CUDA's table

    def test_control_a_sentence_long_before_the_error_is_not_of_it(self):
        assert head_id(DV_SAID + "step 1 loss 0.5\n" * 12 + DV_ERROR) == "cuda-error-code"


# https://github.com/kimbring2/minecraft_ai/issues/5 (heldout18, not failed): a traceback cut before its last line, and the
# maintainer's reply in Korean: "you may ignore the error you mention and go on; I get the same error, and training starts"
MINERL = ("Traceback (most recent call last):\n  File \"C:/minerl/learner.py\", line 392, in <module>\n    coord.join(thread_data)\n"
          "  File \"C:\\Users\\sund0\\anaconda3\\envs\\minerl_env\\lib\\site-packages\\tensorflow\\python\\training\\coordinator.py\", "
          "line 357, in join\n    threads = self._registered_threads.union(set(threads))\n\n"
          "where line 391 and 392 is \n    for thread_data in thread_data_list:\n        coord.join(thread_data)\n\n"
          "kimbring2 · comment · 2022-04-21\n")
MINERL_REPLY = "@SunWuChoi 안녕하세요, 선우님. 말씀하신 에러는 무시하고 진행하셔도 됩니다. 저도 같은 에러가 나는데 좀만 기다리시면 학습이 시작되더라구요.\n"


class TestSaidIgnorable:
    verdict = "log-inconclusive"

    @pytest.mark.parametrize("reply", [MINERL_REPLY, "You can safely ignore this error, training starts after a while.\n"])
    def test_sibling_an_error_a_reply_says_can_be_ignored_is_no_failure(self, reply):
        text = MINERL + reply
        assert head_id(text) == "-" and not healthy(text)
        assert "can be ignored" in finding(text, "log-inconclusive").title
        assert finding(text, "unrecognised-failure").severity is Severity.INFO

    @pytest.mark.parametrize("reply", [
        "",
        "You can ignore the warning, but the real error is the traceback above.\n",  # said of another line
        "Can I ignore this error?\n",  # a question
        "You cannot ignore this error: the learner never starts.\n",
    ])
    def test_control_an_error_no_reply_says_can_be_ignored_stays_the_failure(self, reply):
        assert head_id(MINERL + reply) == "unrecognised-failure"


# https://github.com/ComputationalRadiationPhysics/picongpu/issues/198 (heldout13, not failed): the submit script's last
# `killall -9 picongpu` finds nothing (German psmisc), and srun reports its status 1 as the tasks'
KILLALL = "picongpu: Kein Prozess abgebrochen\nsrun: error: taurusi2031: tasks 10-11: Exited with exit code 1\n"


class TestSlurmTaskKillall:
    verdict = "slurm-task-failed"

    @pytest.mark.parametrize("text", [KILLALL, KILLALL.replace("Kein Prozess abgebrochen", "no process found")])
    def test_sibling_an_exit_code_1_after_killall_found_nothing_is_killalls(self, text):
        assert head_id(text) == "-"
        found = finding(text, "slurm-task-failed")
        assert found.severity is Severity.INFO and "killall's own" in found.title and found.evidence["killall"]["line"] == 1

    @pytest.mark.parametrize("text", [
        KILLALL.split("\n", 1)[1],  # srun's report alone: the task failed
        KILLALL.replace("Exited with exit code 1", "Exited with exit code 2"),  # another status than killall's
        KILLALL.replace("Exited with exit code 1", "Killed"),
    ])
    def test_control_srun_reports_without_killalls_status_stay_errors(self, text):
        assert head_id(text) == "slurm-task-failed"

    def test_control_the_programs_own_failure_before_srun_leads(self):
        text = KILLALL.replace("picongpu: Kein Prozess abgebrochen", "picongpu: Segmentation fault")
        assert head_id(text) == "unrecognised-failure" and finding(text, "slurm-task-failed").severity is Severity.WARN
