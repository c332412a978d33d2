"""Controls and siblings for diagE20 (issue 35: a hang the reporter states beside a log that stops without an error).
`test_sibling_*` is the input that gets `log-said-hang` (the reporter's sentence decides it; the log's last lines name the
stage), `test_control_*` the nearest one that must not: the same log without the sentence, or beside a question, a
negation, a hang resolved, a hypothetical, a program's own line holding the word; and a real error after the sentence,
which keeps its error. Lines are real ones (threads named)."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit


def head(text: str):
    return api.diagnose(text).findings[0]


# facebookresearch/maskrcnn-benchmark#58 (heldout19, failed): stuck at iter 0, the log's last line the first iteration's
MASKRCNN_SAID = ("Next I tried the same thing for 3 GPUs (changed images per batch to 6) and the training gets stuck during the "
                 "first interation. I have the following logging information and it does not change:\n\n```\n")
MASKRCNN_LOG = ("2018-10-29 17:20:55,722 maskrcnn_benchmark.trainer INFO: Start training\n"
                "2018-10-29 17:20:58,453 maskrcnn_benchmark.trainer INFO: eta: 22 days, 18:04:18  iter: 0  loss: 6.7175 (6.7175)  "
                "time: 2.7307 (2.7307)  data: 0.6015 (0.6015)  lr: 0.000833  max mem: 1814\n```\n")
# facebookresearch/maskrcnn-benchmark#208 (heldout19, failed): stuck before a single iteration was logged
START_LOG = ("loading annotations into memory...\nDone (t=3.61s)\ncreating index...\nindex created!\n"
             "2018-11-24 07:42:22,458 maskrcnn_benchmark.trainer INFO: Start training\n")
# zju3dv/UM-MAE#12 (heldout6, failed): stuck in init, MAE's own line before init_process_group
UMMAE = ("I failed to train UM-MAE with multi-node, which will be stuck here for each node:\n"
         "| distributed init (rank 4): env://, gpu 4\n| distributed init (rank 6): env://, gpu 6\n")


class TestLogSaidHang:
    verdict = "log-said-hang"

    def test_sibling_a_stated_hang_mid_training_is_a_hang_at_that_step(self):
        found = head(MASKRCNN_SAID + MASKRCNN_LOG)
        assert found.id == "log-said-hang" and "mid-training (iter: 0" in found.title
        assert found.evidence["stage"] == "training" and "py-spy dump" in found.fix
        assert report_exit(api.diagnose(MASKRCNN_SAID + MASKRCNN_LOG)) == 1

    def test_sibling_a_hang_before_the_first_step_and_in_the_rendezvous(self):
        said = "Most of the time the GPUs were stuck - utility 100%, memory occupied, seems like working - but nothing is done.\n"
        assert head(said + START_LOG).evidence["stage"] == "setup"
        found = head(UMMAE)
        assert found.id == "log-said-hang" and found.evidence["stage"] == "rendezvous" and "MASTER_ADDR" in found.fix

    def test_sibling_a_hang_at_evaluation_is_rank_zeros_work(self):
        # heldout6's mmdet3d#1824 sentence; NVlabs/stylegan3#9's (dev6) last lines: a tick, then the metrics' evaluation
        said = "I got some warnings (as following) on both machines, and then the program hangs.\n"
        log = ("tick 0     kimg 0.0      time 1m 05s       sec/tick 6.6     sec/kimg 549.86  maintenance 58.4   gpumem 16.09\n"
               "Evaluating metrics...\n")
        found = head(said + log)
        assert found.id == "log-said-hang" and found.evidence["stage"] == "evaluation" and "dist.barrier()" in found.fix
        assert head(log).id == "log-inconclusive"  # the control: the same lines, no sentence

    def test_sibling_the_title_names_the_stage_the_log_does_not_show(self):
        # zju3dv/LoFTR#278 (heldout13, failed): only the title and the sentence
        text = ('# Training stuck on: "initializing ddp: GLOBAL_RANK"\n\nnonathecoda \xb7 description \xb7 2023-06-19\n'
                "I'm currently trying to train loftr outdoor_ds on 4 GPUs (RTX 3090).\n")
        found = head(text)
        assert found.id == "log-said-hang" and found.evidence["stage"] == "rendezvous" and "reporter's words" in found.title

    def test_control_the_same_log_without_the_sentence_does_not_decide(self):
        assert head(MASKRCNN_LOG).id == "log-inconclusive"
        assert head(START_LOG).id == "log-inconclusive"

    @pytest.mark.parametrize("said", [
        "Does the training get stuck during the first iteration for you too?\n",  # a question
        "The training does not hang, it is only slow during the first iteration.\n",  # a negation
        "It used to hang at the first iteration until I set NCCL_P2P_DISABLE=1.\n",  # the past, resolved
        "If the training gets stuck, I will post the log here.\n",  # a hypothetical
        "And my training is stuck at a very high loss after warm-up.\n",  # a metric, not the run (heldout11's single-path-nas#9)
        # the person is stuck, not the run (heldout17's cryodrgn#467)
        "In all cases I end up with the same error message and I'm stuck. Help would be very appreciated.\n",
    ])
    def test_control_a_sentence_that_states_no_hang_now_does_not_decide(self, said):
        assert head(said + MASKRCNN_LOG).id == "log-inconclusive"

    def test_control_a_programs_own_hang_word_is_no_statement(self):
        # unsloth's warning (dev3's unsloth-3931), a config's freeze_layers, and helm's "Hang tight" (dev3's skypilot-3901)
        lines = ("[accelerate.utils.other|WARNING]Detected kernel version 5.4.0, which is below the recommended minimum of "
                 "5.5.0; this can cause the process to hang.\n"
                 '      "freeze_layers": 0\nHang tight while we grab the latest from your chart repositories...\n'
                 # a model's layers frozen on purpose (heldout18w's deepfake-detection training log)
                 "Epoch 1: Freezing ResNet18 backbones...\n")
        assert head(lines + MASKRCNN_LOG).id == "log-inconclusive"

    def test_control_a_real_error_after_the_sentence_keeps_its_error(self):
        error = ("Traceback (most recent call last):\n  File \"tools/train_net.py\", line 60, in train\n"
                 "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.92 GiB total capacity)\n")
        found = head(MASKRCNN_SAID + MASKRCNN_LOG + error)
        assert found.id != "log-said-hang" and found.severity.value == "error"
