"""Controls and siblings for runs whose failure is in their numbers (issue 35, items 2 and 4: the `wrong-output`,
`numerics` and `convergence` threads of dev9 and the retired parts): a loss, a learning rate or an accuracy logged as
exactly 0 at every step shown (knowledge/run_numbers.py `zero_throughout`, finding `stuck-at-zero`), and what an undecided
answer says of the run's own progress lines (`log-inconclusive` case `log`: the last progress line, the loss first -> last,
the throughput). The lines are real ones from the threads and logs named beside them; the sample's cases are the logs as
committed or pasted."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# lm-sys/FastChat#2558: fastchat-t5-3b LoRA in fp16, logging_steps 1 (every step's loss nan, filtered to 0.0; the
# scheduler never stepped)
T5_ZERO = "".join("{'loss': 0.0, 'learning_rate': 0.0, 'epoch': 0.0}\n" for _ in range(8))
# cocoshe/MIMIGenRec#3: LlamaFactory full SFT, DeepSpeed: the loss stays near 12, grad_norm and learning_rate 0.0
MIMI = "".join(
    f"{{'loss': {loss}, 'grad_norm': 0.0, 'learning_rate': 0.0, 'epoch': {epoch}}}\n\n"
    f"  2%|▏         | {step}/390 [01:33<1:26:53, 13.58s/it]\n"
    for step, (loss, epoch) in enumerate(((12.1034, 0.15), (12.0582, 0.18), (12.0021, 0.21), (12.0653, 0.23), (12.0311, 0.26), (12.0415, 0.28)), 6))
# HF Trainer's warm-up from 0 (a scheduler stepped per epoch at its start), then the learning rate it was given
WARM_UP = ("".join(f"{{'loss': {2.31 - i * 0.01:.4f}, 'learning_rate': 0.0, 'epoch': 0.0{i}}}\n" for i in range(1, 4))
           + "".join(f"{{'loss': {2.2 - i * 0.02:.4f}, 'learning_rate': {i}e-05, 'epoch': 0.{i}}}\n" for i in range(1, 7)))
# a cosine schedule that reaches 0 at its last steps (CuberrChen/CSRA-Paddle's train.log shape, exact zeros)
DECAYED = "".join(f"Epoch {e}[4816/5011]: loss:{0.07 - e * 0.001:.5f}, lr:{lr}, batch time:0.3084, data time:0.0002\n"
                  for e, lr in ((26, 0.00012), (27, 8e-05), (28, 3e-05), (29, 0.0), (30, 0.0), (30, 0.0)))
# TRL's GRPO: a loss of 0.0 beside its reward and KL columns, a run that learns (dev7w LIU-Hao-2002/GRPO_project)
GRPO = "".join("{'loss': 0.0, 'grad_norm': 0.20586903393268585, 'learning_rate': 4.5225424859373684e-07, 'completion_length': 382.2, "
               f"'reward': 0.{i}, 'reward_std': 0.42426406145095824, 'kl': 0.000{i}, 'epoch': {i}.0}}\n" for i in range(1, 8))
# minimind's pretraining log (heldout22w Coicozoi/minimind-from-scratch): its MoE balance loss is 0 without experts
MINIMIND = "".join(f"Epoch:[1/1]({n}/39695), loss: {8.5 - n / 100:.4f}, logits_loss: {8.5 - n / 100:.4f}, aux_loss: 0.0, lr: 0.00050000, epoch_time: 130.0min\n"
                   for n in range(10, 80, 10))
# a validation line whose loss is printed 0 (heldout22w conanjgz/critical-error-detection: accuracy and F1 beside it)
VALIDATION = "".join(f"| 2021-07-08 0{i}:35:02 | INFO | Validation loss: 0.0, acc: 0.845, F1: 0.61{i}\n" for i in range(6))
# a loss printed rounded to 4 places: an XOR experiment that converged at once (dev7w sahajrajmalla/Quantum-Neural-Networks)
ROUNDED = "".join(f"2025-04-24 02:05:51,857 - INFO - Run: XOR_QBPNN_All_final | Epoch: {e} | Train Loss: 0.0000\n" for e in range(1, 8))
# an accuracy of 0 at the first epoch, then learning; and one that stays 0 (a classifier whose labels never match)
ACC_FIRST = "".join(f"Epoch {e}: train_loss={2.3 - e * 0.2:.3f}, val_acc={acc}\n" for e, acc in ((0, 0.0), (1, 0.21), (2, 0.35), (3, 0.41), (4, 0.47), (5, 0.5)))
ACC_ZERO = "".join(f"Epoch {e}: train_loss={2.3 - e * 0.2:.3f}, val_acc=0.0\n" for e in range(6))


def zero(text: str):
    return found(text).get("stuck-at-zero")


class TestStuckAtZero:
    verdict = "stuck-at-zero"

    def test_sibling_learning_rate_zero_with_a_loss_that_does_not_fall(self):
        f = zero(MIMI)
        assert f is not None and f.severity is Severity.WARN and f.evidence["value"] == "learning_rate"
        assert "grad_norm" in str(f.evidence.get("beside", ""))

    def test_sibling_loss_and_learning_rate_both_zero(self):
        fs = found(T5_ZERO)
        # the loss of 0.0 is loss-not-finite's (Trainer's nan filter); the learning rate of 0 is this finding's
        assert "loss-not-finite" in fs and fs["stuck-at-zero"].evidence["value"] == "learning_rate"

    def test_sibling_loss_zero_from_the_first_batch(self):
        # heldout27w calebmcarrou/lis-5623-uav: every batch's loss printed 0.0 over 10 epochs
        f = zero(case("heldout27w", "calebmcarrou-lis-5623-uav-train-log-log"))
        assert f is not None and f.severity is Severity.WARN and f.evidence["value"].lower() == "loss"

    def test_sibling_accuracy_zero_at_every_epoch(self):
        f = zero(ACC_ZERO)
        assert f is not None and f.evidence["value"] == "val_acc" and f.severity is Severity.INFO  # (a regression's metric is 0 too)

    def test_sibling_keras_accuracy_zero_is_a_note_after_the_answer(self):
        # heldout27b tensorflow/tensorflow#33809: a regression's Keras accuracy, 0.0000e+00 at every epoch; the thread is about
        # MirroredStrategy learning worse: the undecided answer leads
        fs = api.diagnose(case("heldout27b", "tensorflow-33809-mirrored-epochs")).findings
        assert fs[0].id == "log-inconclusive" and any(f.id == "stuck-at-zero" and f.severity is Severity.INFO for f in fs)

    def test_control_warm_up_from_zero(self):
        assert zero(WARM_UP) is None

    def test_control_a_schedule_that_ends_at_zero(self):
        assert zero(DECAYED) is None

    def test_control_grpo_loss_zero_beside_its_kl(self):
        assert zero(GRPO) is None

    def test_control_an_auxiliary_loss_at_zero(self):
        assert zero(MINIMIND) is None

    def test_control_a_validation_loss_printed_zero(self):
        assert zero(VALIDATION) is None

    def test_control_a_loss_rounded_to_zero(self):
        assert zero(ROUNDED) is None

    def test_control_accuracy_zero_at_the_first_epoch_only(self):
        assert zero(ACC_FIRST) is None

    def test_control_a_few_lines_only(self):
        # the first three steps of a run: too few to say "throughout"
        assert zero("".join(T5_ZERO.splitlines(keepends=True)[:3])) is None

    def test_control_keras_loss_zero_after_a_first_value(self):
        # heldout17w CQPES/cqpes-legacy (completed): Levenberg-Marquardt logs loss 0.0000e+00 after its first epoch, its MSE moving
        assert zero(case("heldout17w", "CQPES-cqpes-legacy-keras-lm-trainlog")) is None

    def test_control_healthy_whole_logs_keep_exit_0(self):
        for part, name in (("dev7w", "sahajrajmalla-Quantum-Neural-Networks-Binary-Classification-logs-nohup-out"),
                           ("dev7w", "c7934597-YOLOv4-pytorch-nohup-log"),
                           ("heldout30w", "sulemankhurram-thesisexperiments-train-logs-txt"),
                           ("heldout22w", "fjkrch-sign_metric_learning-results-train-log")):
            assert "stuck-at-zero" not in found(case(part, name)), name

    def test_sibling_a_crash_after_nan_is_the_crash(self):
        # a run whose loss turned nan and then crashed: the crash is the cause, the numbers its lead-up
        text = ("".join(f"{{'loss': nan, 'grad_norm': nan, 'learning_rate': {i}e-05, 'epoch': 0.0{i}}}\n" for i in range(1, 7))
                + "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    trainer.train()\n"
                "RuntimeError: CUDA error: device-side assert triggered\n")
        fs = api.diagnose(text).findings
        assert fs[0].severity is Severity.ERROR and "stuck-at-zero" not in {f.id for f in fs}


class TestUndecidedProgress:
    verdict = "log-inconclusive"

    def test_sibling_the_run_progress_is_said(self):
        # dev9 pytorch/examples#95: an LSTM language model trains normally; the thread asks why its perplexity is higher
        f = head(case("dev9", "examples-95-lstm-lm-gtx1070-ppl-gap"))
        assert f.id == "log-inconclusive" and f.severity is Severity.WARN
        assert "epoch" in f.evidence["progress"] and "6.78" in f.evidence["loss"]
        assert "ms/batch" in f.evidence["throughput"]

    def test_sibling_iteration_time_is_the_throughput(self):
        text = "".join(f"iter {n}: loss {4.2 - n / 100:.4f}, time {22 + n % 3}.{n}ms, mfu 7.48%\n" for n in range(10, 70, 10))
        f = head(text)
        assert f.id == "log-inconclusive" and "time" in f.evidence["throughput"] and "4.1" in f.evidence["loss"]

    def test_control_no_progress_lines_no_progress_said(self):
        f = head("loading the model\nmodel loaded\nstarting the server on port 8000\n")
        assert f.id == "log-inconclusive" and "progress" not in f.evidence

    def test_control_the_reporters_hang_still_decides(self):
        text = ("# Training hangs after a few steps\n\nThe training gets stuck after step 5, nothing printed after it.\n```\n"
                + "".join(f"step {i}/1000 | loss {3.2 - i * 0.01:.4f} | lr 1e-4\n" for i in range(1, 7)) + "```\n")
        assert head(text).id == "log-said-hang"

    def test_control_a_run_that_ended_is_not_undecided(self):
        text = "".join(f"epoch {e} | loss {2.0 - e / 10:.3f}\n" for e in range(1, 6)) + "Training completed.\n"
        assert "log-inconclusive" not in found(text)
