"""Controls and siblings for the verdicts diagA17 adds or changes on whole logs (issue 35, dev7w: logs people
committed to their repositories, read whole).

Each class is one verdict: `test_control_*` is the healthy whole-log shape that looks most like it and must not get
it; `test_sibling_*` is the nearest input that needs another verdict, and gets its own. The inputs are short excerpts
of the real logs (their source in each class's docstring), never the files themselves."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.findings import Severity


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def verdict(text: str):
    """The log-level answer (log-no-failure / log-inconclusive), or None when an error is the answer."""
    return next((f for f in api.diagnose(text).findings if f.id in ("log-no-failure", "log-inconclusive")), None)


# https://github.com/LIU-Hao-2002/GRPO_project/blob/0983847ee400603cbf7402314a94e1caa816bb02/logs/nohup.out (dev7w):
# three runs appended to one nohup.out, the first two failing at start, the last training to its end
DS_BANNER = (
    "[2025-04-23 21:28:26,926] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda (auto detect)\n"
    "Warning: The cache directory for DeepSpeed Triton autotune, /root/.triton/autotune, appears to be on an NFS system.\n"
    "INFO 04-23 21:28:29 __init__.py:183] Automatically detected platform cuda.\n"
)
FIRST_RUN = (
    "Traceback (most recent call last):\n"
    '  File "/mlx_devbox/users/liuhao.200207/playground/files/train.py", line 1, in <module>\n'
    "    from utils import *\n"
    '  File "/mlx_devbox/users/liuhao.200207/playground/files/utils.py", line 87\n'
    "    return pickle_data\n"
    "IndentationError: unindent does not match any outer indentation level\n"
)
SECOND_RUN = DS_BANNER + (
    "Traceback (most recent call last):\n"
    '  File "/mlx_devbox/users/liuhao.200207/playground/files/train.py", line 13, in <module>\n'
    "    peft_config=get_peft_config(model_config),\n"
    '  File "/mlx_devbox/users/liuhao.200207/playground/nlp_env/lib/python3.11/site-packages/trl/trainer/utils.py", line 904, in get_peft_config\n'
    "    raise ValueError(\n"
    "ValueError: You need to have PEFT library installed in your environment, make sure to install `peft`. Make sure to run `pip install -U peft`.\n"
)
STEPS = "".join(f"{{'grad_norm': 0.18{i}, 'learning_rate': 4.8e-07, 'completion_length': 386.5, 'reward': 0.1, 'epoch': {i}.5}}\n" for i in range(6))
LAST_RUN_ENDS = DS_BANNER + STEPS + "{'train_runtime': 21142.8256, 'train_samples_per_second': 0.005, 'train_loss': 5.25e-07, 'epoch': 25.0}\n"
# https://github.com/chengziHome/detection/blob/8bafff43c1722ddc6620af083f33a500c5051d1b/nohup.log (dev7w): out of memory,
# the same set-up printed again, and the log stops there
COCO_SETUP = "loading annotations into memory...\nDone (t=14.62s)\ncreating index...\nindex created!\n"
OOM = (
    "Traceback (most recent call last):\n"
    '  File "train_faster_rcnn.py", line 74, in <module>\n'
    "    solver.train(4)\n"
    '  File "/home/jiazhaohe/archs/solver_detection.py", line 178, in train\n'
    "    losses.backward()\n"
    "RuntimeError: CUDA out of memory. Tried to allocate 8.14 GiB (GPU 0; 10.92 GiB total capacity; 1.65 GiB already allocated; "
    "8.14 GiB free; 60.44 MiB cached)\n"
)


class TestEarlierRun:
    """A failure before the program's opening lines stand again, in a log several runs were appended to, is an earlier
    run's when what follows the restart decides the log: its end (undecided, never the failure's error) or a failure of
    its own (which leads)."""

    def test_the_earlier_runs_failures_are_kept_and_the_log_is_undecided(self):
        report = api.diagnose(FIRST_RUN + SECOND_RUN + LAST_RUN_ENDS)
        assert not [f for f in report.findings if f.severity is Severity.ERROR]
        answer = next(f for f in report.findings if f.id == "log-inconclusive")
        assert answer.evidence["started again"].startswith("line 16,")
        assert answer.evidence["ended"].startswith("line 25:")
        earlier = next(f for f in report.findings if f.id == "python-exception")
        assert earlier.severity is Severity.INFO and earlier.evidence["earlier_run"]["started_again_at"] == 16

    def test_control_one_run_that_prints_its_banner_twice_and_ends_is_healthy(self):
        assert verdict(DS_BANNER + STEPS + DS_BANNER + STEPS[:200] + "\n" + LAST_RUN_ENDS.splitlines()[-1] + "\n").id == "log-no-failure"

    def test_sibling_a_restart_that_is_cut_leaves_the_failure_the_answer(self):
        assert errors(COCO_SETUP + OOM + COCO_SETUP) == ["cuda-oom"]

    def test_sibling_the_later_runs_own_failure_leads(self):
        found = errors(DS_BANNER + OOM + DS_BANNER + SECOND_RUN.removeprefix(DS_BANNER))
        assert found and found[0] != "cuda-oom"
        assert api.diagnose(DS_BANNER + OOM + DS_BANNER + SECOND_RUN.removeprefix(DS_BANNER)).data["root_cause"]["line"] > 10

    def test_sibling_another_ranks_traceback_is_no_restart(self):
        # every rank prints the same lines: rank 1's frame after rank 0's failure is no new run (heldout4's
        # https://github.com/karpathy/nanoGPT/issues/545)
        text = ("using fused AdamW: True\ncompiling the model... (takes a ~minute)\n" * 2
                + '[rank0]: Traceback (most recent call last):\n[rank0]:   File "/home/zoe/nanoGPT/train.py", line 253, in <module>\n'
                "[rank0]: AttributeError: module 'wandb' has no attribute 'init'\n"
                '[rank1]: Traceback (most recent call last):\n[rank1]:   File "/home/zoe/nanoGPT/train.py", line 306, in <module>\n'
                "[rank1]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                "[rank1]: RuntimeError: Triton Error [CUDA]: invalid device context\n")
        report = api.diagnose(text)
        assert [f for f in report.findings if f.severity is Severity.ERROR]
        assert not [f for f in report.findings if "earlier_run" in f.evidence]

    def test_sibling_a_line_the_run_repeats_is_no_restart(self):
        # a line printed at every evaluation stands again after the failure: the same run went on, not a new one; its
        # own "Training complete" after the failure leaves the log undecided as one the job went on past (diagA21), and
        # the failure is never called an earlier run's
        report = api.diagnose(COCO_SETUP * 3 + OOM + COCO_SETUP + "Training complete\n")
        oom = next(f for f in report.findings if f.id == "cuda-oom")
        assert "earlier_run" not in oom.evidence and "went_on" in oom.evidence
        assert "started again" not in next(f for f in report.findings if f.id == "log-inconclusive").evidence


# https://github.com/And1210/IDCycleGAN/blob/fb5812d3eceabc0030b23dd1773c0bb7faa6e61e/train.out (dev7w)
EPOCHS = "".join(
    f"Saving latest model at the end of epoch {e}\nEnd of epoch {e} / 100 \t Time Taken: 1601.36 sec\n"
    f"Generator Loss: 1315.5795, Discriminator Loss: 512.5231\nlearning rate = 0.0000016\n" for e in range(44, 47)
)


class TestSlurmJobCancelled:
    """slurmstepd's cancel with no reason (scancel) ends the run: an error, not an undecided log."""

    @pytest.mark.parametrize("line", [
        "slurmstepd-sasquatch: error: *** JOB 11863 ON sasquatch CANCELLED AT 2022-05-22T12:41:13 ***",
        "slurmstepd: error: *** STEP 2556.0 ON hgx CANCELLED AT 2024-07-07T23:27:27 ***",
    ])
    def test_the_cancel_is_the_failure(self, line):
        assert errors(EPOCHS + line + "\n") == ["slurm-job-cancelled"]

    def test_control_slurmstepd_going_on_after_its_error_is_no_cancel(self):
        text = ("slurmstepd-sasquatch: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead\n"
                + EPOCHS + "Training complete\n")
        assert errors(text) == [] and verdict(text).id == "log-no-failure"

    @pytest.mark.parametrize("reason,finding", [("TIME LIMIT", "slurm-time-limit"), ("PREEMPTION", "slurm-preempted")])
    def test_sibling_a_cancel_that_names_its_reason_is_that_reason(self, reason, finding):
        assert errors(EPOCHS + f"slurmstepd: error: *** JOB 11863 ON sasquatch CANCELLED AT 2022-05-22T12:41:13 DUE TO {reason} ***\n") == [finding]


# https://github.com/didadida-r/tf-cnn/blob/8cc39bdace55630a999607c19091dce2342281a9/nohup.log (dev7w)
QUEUE_LOST = (
    "start a new sge\n"
    "queue.pl: Error, unfinished job no longer exists, log is in sge.log, last line is 'validation loss at step 100: 6.896654, "
    "the acc is: 0.045006', syncfile is ./q/sync/done.10355, return status of qstat was 256\n"
    "Possible reasons: a) Exceeded time limit? -> Use more jobs! b) Shutdown/Frozen machine? -> Run again!  Qmaster output was: "
    "Following jobs do not exist: \n205350\n"
)


class TestBatchJobVanished:
    """Kaldi's job wrappers saying the scheduler lost an unfinished job: the job is gone, an error."""

    def test_the_lost_job_is_the_failure(self):
        assert errors(QUEUE_LOST) == ["batch-job-vanished"]

    def test_control_the_wrappers_warning_that_the_job_finished_is_no_loss(self):
        text = ("**queue.py: syncfile q/done.1 was not created but job seems to have finished OK.  Probably your file-system has "
                "problems. This is just a warning.\n")
        assert "batch-job-vanished" not in ids(text)

    def test_sibling_a_job_that_failed_in_its_own_log_is_not_lost(self):
        assert "batch-job-vanished" not in ids("run.pl: job failed, log is in exp/tri1/log/align.1.log\n")


# https://github.com/Alex-Derhacobian/tensorrt_frcnn_bug/blob/d6a9a2e1cdd64245d6a41e654765722d6e5af98a/stdout.txt (dev7w)
TRT_HEAD = (
    "&&&& RUNNING TensorRT.trtexec [TensorRT v8001] # ./trtexec --onnx=/future/u/alexder/faster-rcnn/trt_port/faster_rcnn.onnx --verbose\n"
    "[08/02/2021-15:11:31] [V] [TRT] Parsing node: Resize_62 [Resize]\n"
    "[08/02/2021-15:11:31] [V] [TRT] Registering layer: Resize_62 for ONNX node: Resize_62\n"
    "[08/02/2021-15:11:31] [08/02/2021-15:11:31] [I] Finish parsing network model\n"
)


class TestTensorRTStatus:
    """A TensorRT tool's own closing status decides its run: FAILED is an error, PASSED an end."""

    def test_failed_is_the_failure(self):
        status = "[08/02/2021-15:11:31] [08/02/2021-15:11:31] &&&& FAILED TensorRT.trtexec [TensorRT v8001] # ./trtexec --onnx=faster_rcnn.onnx --verbose\n"
        assert errors(TRT_HEAD + status) == ["tensorrt-tool-failed"]

    def test_control_passed_is_a_healthy_end(self):
        text = TRT_HEAD + "&&&& PASSED TensorRT.trtexec [TensorRT v8001] # ./trtexec --onnx=faster_rcnn.onnx --verbose\n"
        assert errors(text) == [] and verdict(text).id == "log-no-failure"

    def test_sibling_a_run_cut_before_its_status_is_undecided(self):
        assert errors(TRT_HEAD) == [] and verdict(TRT_HEAD).id == "log-inconclusive"


PROGRESS = "".join(f"Epoch {e}  Loss:7{e}1299.55\n" for e in range(0, 230, 10))


class TestWholeJobEnds:
    """The whole job's own end, in the words programs print: a training, a hyper-parameter search, a server's clean
    shutdown, Horovod's benchmark total (dev7w: AlessandroCesaTs/Street_View_Generator train.out, YahavFrei/ViT-vs-CNN-
    medical-imaging logs/nohup.out, ColorDavid/ARPO logs/nohup.out, BFTrainer/BFTrainer stdout.txt)."""

    @pytest.mark.parametrize("end", [
        "Completed training with lowest loss: 750885.0555555555 reached at EPOCH: 229; Time: 53.177297170956926",
        "========================================\nOPTIMIZATION COMPLETE\n========================================\nBest Trial: 0",
        "INFO:     Shutting down\nINFO:     Waiting for application shutdown.\nINFO:     Application shutdown complete.",
        "[0]<stdout>:Img/sec per GPU: 408.8 +-79.4\n[0]<stdout>:Total img/sec on 2 GPU(s): 817.6 +-158.8",
    ])
    def test_the_end_makes_a_log_without_failure_healthy(self, end):
        assert verdict(PROGRESS + end + "\n").id == "log-no-failure"

    def test_control_a_server_that_started_has_not_ended(self):
        text = PROGRESS + "INFO:     Waiting for application startup.\nINFO:     Application startup complete.\n"
        assert verdict(text).id == "log-inconclusive"

    def test_control_an_end_followed_by_a_counter_short_of_its_total_is_no_end(self):
        assert verdict(PROGRESS + "Completed training of stage 1\nstep 12/500 loss 0.3\n").id == "log-inconclusive"

    def test_sibling_a_failure_before_the_shutdown_is_the_answer(self):
        text = PROGRESS + OOM + "INFO:     Shutting down\nINFO:     Application shutdown complete.\n"
        assert errors(text) == ["cuda-oom"]


TOKENIZER = ("Token indices sequence length is longer than the specified maximum sequence length for this model (278528 > 131072). "
             "Running this sequence through the model will result in indexing errors")


class TestForetoldError:
    """A line that foretells an error ("will result in indexing errors") reports none: beside an end, the run is healthy
    (https://github.com/ColorDavid/ARPO/blob/26f964e23098c2c4b5aed83abe390b223773ef55/logs/nohup.out, dev7w)."""

    def test_control_the_forecast_does_not_keep_an_ended_run_from_healthy(self):
        assert verdict(PROGRESS + TOKENIZER + "\n" + "Training complete\n").id == "log-no-failure"

    def test_sibling_the_error_reported_keeps_it_undecided(self):
        said = "Running this sequence through the model resulted in indexing errors"
        assert verdict(PROGRESS + said + "\n" + "Training complete\n").id == "log-inconclusive"


class TestRepeatedLinesCost:
    """A line repeated with other numbers is read once when no number stands by its number-bearing word (20,931 lines of
    "Error with mp-1184945, confirm existence" took 43 s, https://github.com/ajh011/chgcnn/blob/08da27d61b640187ee5f09f18a40a2e23dbfa7ef/logs/nohup.out,
    dev7w); a status whose number decides is read every time."""

    def test_control_the_repeated_program_line_is_remembered_as_quiet(self):
        from gpudoctor.knowledge.story import Diagnosis

        d = Diagnosis()
        d.feed([f"Error with mp-{1184945 + i}, confirm existence" for i in range(3)])
        assert b"Error with mp-, confirm existence" in d.quiet

    def test_sibling_an_exit_status_that_changes_is_read_each_time(self):
        text = "".join(f"worker {i} finished with exit code 0\n" for i in range(3)) + "worker 3 finished with exit code 1\n"
        assert errors(text) != []
