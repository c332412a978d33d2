"""Controls and siblings for whole logs whose run completed (issue 35, item 2: dev10's committed job `.out` files): the end
a run shows in its own last lines is read (knowledge/ending.py: Ultralytics' "N epochs completed in H hours.", a loop's
"Reached max steps", a lower-case "done.", Hugging Face's `TrainOutput(...)`, the last epoch of a declared schedule, the one
progress bar of the run at its total), and words in data are no error lines (knowledge/mentions.py: a printed list of a
tokenizer's words, an error named by what it measures, a warning that foretells errors, git's answer to a start-up probe the
run went on past). Each has its dangerous sibling: the same end with a failure after it, an epoch's steps at their total with
more epochs to come, a run appended after a completed one and cut, the same words where they report the failure."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_diagC20 import head

# Keras's epoch lines, as Ritik-912/ASSIST_assignment's train.out prints them (dev10), without the carriage-return redraws
KERAS_EPOCH = "Epoch {e}/{n}\n89/89 - 54s 565ms/step - loss: 0.0106 - mae: 0.0729 - val_loss: 0.0105 - val_mae: 0.0730\n"
# an Ultralytics YOLOv5 run's last lines (Hrishkesh/YoloInvoiceExtraction train.out, dev10)
YOLO_END = ("   299/299        0G      1.11      0.11    0.0224      1.24        36       576: 100%|██████████| 33/33 [07:44<00:00, 14.06s/it]\n"
            "               Class    Images   Targets         P         R   mAP@0.5        F1: 100%|██████████| 4/4 [00:36<00:00,  9.09s/it]\n"
            "                 all        58       174     0.482     0.826     0.784       0.6\n"
            "\n300 epochs completed in 39.105 hours.\n")
# NTU-CompHydroMet-Lab/P2I-GAN-benchmark's train.out (dev10): its loop's own stop at its step budget
MAX_STEPS = ("2026-01-09 12:21:14,718 | INFO | Epoch 618 | step 200000/200000 | loss=0.0265\n"
             "2026-01-09 12:21:14,731 | INFO | Epoch 618 completed | train_loss=0.0243 | global_step=200000\n"
             "2026-01-09 12:22:18,649 | INFO | Validation done | val_loss=0.0557\n"
             "2026-01-09 12:22:25,998 | INFO | Reached max steps (200000). Stopping training.\n")
CRASH = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    main()\n"
         "RuntimeError: CUDA error: an illegal memory access was encountered\n")
# WanChengXue/MARLforCommunication's eval.out (dev10): one bar, redrawn with carriage returns, to its total
BAR = "\r".join(f"{100 * n // 50:3d}%|{'█' * (n // 5):<10}| {n}/50 [01:56<00:00,  2.32s/it]" for n in range(0, 51)) + "\n"
# a tokenizer's nearest words, printed as Python lists (3rdAT/Mutual_Information's log.out, dev10)
TOKENS = ("[' forget', ' forgot', ' forgotten', ' forgetting', ' fore', ' fail', ' forgive', 'forget', ',', '忘']\n"
          "[' final', '(final', 'final', '-final', ' finale', '.final', ' fatal', ' financial', ' finally', ' finite']\n")
# transformers' warning when a checkpoint's model type differs (Jingchensun/MobileVLM's train.out, dev10)
YIELD = ("You are using a model of type llama to instantiate a model of type mobilevlm. This is not supported for all "
         "configurations of models and can yield errors.\n")
GIT_PROBE = "fatal: Not a git repository (or any of the parent directories): .git\n"
STEPS = "".join(f"step {s}: loss {2.0 - s / 100:.3f} lr 0.0001\n" for s in range(1, 41))


def healthy(text: str) -> str:
    """The end quoted by a healthy answer (asserts that the answer is healthy)."""
    f = head(text)
    assert f.id == "log-no-failure" and f.severity is Severity.OK, (f.id, f.title)
    return str(f.evidence.get("ended", ""))


def undecided(text: str):
    f = head(text)
    assert f.id == "log-inconclusive", (f.id, f.title)
    return f


def failed(text: str) -> bool:
    return any(f.severity is Severity.ERROR for f in api.diagnose(text).findings)


class TestEndShown:
    def test_control_ultralytics_epochs_completed(self):
        assert healthy("Starting training for 300 epochs...\n" + YOLO_END) == "300 epochs completed in 39.105 hours."

    def test_sibling_ultralytics_end_then_traceback(self):
        assert failed("Starting training for 300 epochs...\n" + YOLO_END + CRASH)

    def test_control_reached_max_steps(self):
        assert "Reached max steps (200000)" in healthy(MAX_STEPS)

    def test_sibling_step_budget_not_reached(self):
        undecided("max_steps: 200000\n" + "".join(f"2026-01-09 12:21:14,718 | INFO | Epoch 3 | step {s}/200000 | loss=0.0{s}\n" for s in range(10, 16)))

    def test_control_lower_case_done_as_the_last_line(self):
        assert healthy("HTML Rendering: GT\nHTML Rendering: OURS\nHTML Rendering: THEIRS\ndone.\n") == "done."

    def test_sibling_shell_loop_done_is_no_end(self):
        undecided("for i in 1 2 3; do\n  python eval.py --split $i &\ndone\nwait\nLoading split 1\n")

    def test_control_trainer_output(self):
        assert healthy(STEPS + "TrainOutput(global_step=3906, training_loss=0.4188, metrics={'train_runtime': 20936.2})\n").startswith("TrainOutput(")


class TestScheduleEnd:
    def test_control_keras_last_epoch_of_its_schedule(self):
        assert healthy("".join(KERAS_EPOCH.format(e=e, n=10) for e in range(1, 11))) == "Epoch 10/10"

    def test_control_last_epoch_then_results_and_saves(self):
        text = "".join(f"Epoch {e}/30 | Train Loss: 0.08 | Val Loss: 2.36 | F1: 0.66\n" for e in range(25, 31)) + "Loss plot saved to outputs/loss_plot.png\n"
        assert healthy(text).startswith("Epoch 30/30")

    def test_sibling_an_epochs_steps_at_their_total_with_more_epochs_to_come(self):
        undecided("".join(KERAS_EPOCH.format(e=e, n=10) for e in range(1, 4)))

    def test_sibling_last_epoch_started_and_cut(self):
        # Keras prints "Epoch 10/10" as the epoch starts: its steps short of their total
        undecided("".join(KERAS_EPOCH.format(e=e, n=10) for e in range(1, 10)) + "Epoch 10/10\n30/89 [=====>........] - ETA: 30s - loss: 0.0110\n")

    def test_sibling_last_epoch_line_with_no_numbers(self):
        undecided("".join(KERAS_EPOCH.format(e=e, n=10) for e in range(1, 10)) + "Epoch 10/10\n")

    def test_sibling_completed_run_then_an_appended_run_cut(self):
        first = "".join(KERAS_EPOCH.format(e=e, n=10) for e in range(8, 11))
        undecided(first + "Epoch 1/10\n12/89 [==>...........] - ETA: 50s - loss: 0.2110\n")

    def test_sibling_completed_training_then_a_next_stage_that_goes_on(self):
        first = "".join(KERAS_EPOCH.format(e=e, n=10) for e in range(8, 11))
        undecided(first + "".join(f"Generating sample {i}: prompt tokens 128\n" for i in range(SCHEDULE_AFTER_PLUS)))

    def test_sibling_completed_training_then_a_crash(self):
        assert failed("".join(KERAS_EPOCH.format(e=e, n=10) for e in range(8, 11)) + "Running test set\n" + CRASH)

    def test_sibling_training_complete_on_rank_0_while_another_rank_died(self):
        text = ("".join(f"[rank0]: Epoch {e}/3 | loss: 0.{e} | val_acc: 0.8\n" for e in (1, 2, 3))
                + "[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 10, in <module>\n"
                + "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
                + "[rank0]: Training complete.\n")
        assert failed(text)


SCHEDULE_AFTER_PLUS = 14  # lines of a next stage: more than a completed training's results and saves


class TestOneBarToItsTotal:
    def test_control_the_runs_one_bar_at_its_total(self):
        assert healthy(BAR).startswith("100%|")

    def test_sibling_bar_short_of_its_total(self):
        undecided(BAR.rsplit("\r", 2)[0] + "\n")

    def test_sibling_a_bar_that_started_again_is_an_epochs(self):
        undecided(BAR.rstrip("\n") + "\r" + BAR)

    def test_sibling_a_loading_bar_at_its_total(self):
        # a run that hung or was killed right after it loaded its weights (dev4's qwen3vl#546 shape)
        undecided(STEPS[:0] + "Loading checkpoint shards: " + BAR.replace("\r", "\rLoading checkpoint shards: "))

    def test_sibling_a_bar_cut_in_its_count(self):
        undecided(BAR.rsplit("\r", 46)[0] + "\r 10%|█         | 2/2\n")

    def test_sibling_an_outer_bar_short_of_its_total(self):
        undecided("Doing inference...:  73%|███████▎  | 8/11 [01:29<00:29,  9.92s/it]\n" + BAR)

    def test_sibling_a_failure_printed_on_the_bars_line(self):
        assert head(BAR.rstrip("\n") + "make: *** [tcpberttrain] Error 1\n").id != "log-no-failure"

    def test_sibling_a_bar_that_names_its_epoch(self):
        undecided("Epoch 0: " + BAR.replace("\r", "\rEpoch 0: "))


class TestWordsInData:
    def test_control_tokenizer_words_are_no_error_lines(self):
        f = undecided(TOKENS + STEPS)
        assert "lines that speak of an error" not in f.evidence

    def test_control_tokenizer_words_beside_an_end(self):
        assert healthy(TOKENS + STEPS + "Training complete.\n") == "Training complete."

    def test_sibling_a_list_that_holds_a_message(self):
        f = undecided("errors: ['rank 1 failed: connection refused by 10.0.0.2', 'x', 'y']\n" + STEPS)
        assert "rank 1 failed" in str(f.evidence.get("lines that speak of an error"))

    def test_control_a_warning_that_foretells_errors(self):
        assert healthy(YIELD + STEPS + "Done.\n") == "Done."

    def test_sibling_a_line_that_ends_in_its_failure(self):
        f = undecided(YIELD + STEPS + "Evaluation on the test split failed\nDone.\n")
        assert "failed" in str(f.evidence.get("lines that speak of an error"))

    def test_control_an_error_named_by_what_it_measures(self):
        f = undecided("The program finished, evaluating reconstruction error...\n" + STEPS)
        assert "lines that speak of an error" not in f.evidence

    def test_sibling_a_measured_error_with_a_message(self):
        f = undecided(STEPS + "reconstruction error: file missing\n")
        assert "file missing" in str(f.evidence.get("lines that speak of an error"))

    def test_control_git_probe_the_run_went_on_past(self):
        f = undecided("| distributed init (rank 0): env://\n" + GIT_PROBE + "git:\n  sha: N/A, status: clean, branch: N/A\n" + STEPS)
        assert "lines that speak of an error" not in f.evidence

    def test_sibling_git_probe_where_the_log_stops(self):
        f = undecided("Cloning the dataset tools\n" + GIT_PROBE)
        assert "not a git repository" in str(f.evidence.get("lines that speak of an error")).lower()
