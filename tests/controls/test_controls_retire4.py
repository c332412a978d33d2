"""Controls and siblings for the wrong answers of the retired held-out part heldout4 (issue 35): failure
lines a program writes in its own words that the detector passed over (an error-level line saying a call
failed, fish's report of a killed job, an exception reported after the program's own words or a full-width
colon, a refused value, a loss that turned NaN), a notice's stack read as a traceback, and the
pg-not-initialized reading a launcher in the log contradicts. One class per rule: the look-alike that must
not get it and the nearest line that needs another verdict. Lines are real ones (threads named beside
them); each runs through `diagnose`."""

from __future__ import annotations

from gpudoctor import api
from test_controls_patterns import TB, head_id, ids

LEROBOT_INFO = "INFO 2025-08-21 19:35:25 y_server.py:175 Received observation #0 | Avg FPS: 0.00 | Target: 30.00 | One-way latency: 55.49ms\n"
NANOGPT_STEPS = "".join(f"2023-03-22 09:31:{10 + i:02d} iter {2920 + 10 * i}: loss {3.98 + i / 100:.4f}, time 1099.34ms, mfu 15.34%\n" for i in range(4))
# lightning-thunder#1472's traceback: a helper's barrier after the default group was gone
BARRIER_TB = (
    "Process process 1:\nTraceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap\n    self.run()\n'
    '  File "/opt/pytorch/lightning-thunder/thunder/tests/distributed/helper.py", line 144, in _run\n    torch.distributed.barrier()\n'
)
# huggingface/lerobot#3108: torch.compile's notice, then the stack it found the op in
NOTICE = (
    "skipping cudagraphs due to skipping cudagraphs due to cpu device (cat). Found from : \n"
    '   File "/home/u/.local/lib/python3.10/site-packages/lerobot/policies/pi0/modeling_pi0.py", line 751, in forward\n'
    "    time = self.sample_time(actions.shape[0], actions.device)\n"
    '  File "/home/u/.local/lib/python3.10/site-packages/lerobot/policies/pi0/modeling_pi0.py", line 100, in sample_beta\n'
    "    return dist.sample((bsize,)).to(device)\n"
)


def unrecognised_kind(text: str) -> str:
    """The evidence kind of the unrecognised failure the answer leads with ('' when it leads with another)."""
    found = api.diagnose(text).findings
    if not found or found[0].id != "unrecognised-failure":
        return ""
    return str(found[0].evidence.get("kind", ""))


class TestErrorLevelCallFailed:
    """An error-level line that says a call raised (evidence 'errorraised')."""

    verdict = "unrecognised-failure"

    def test_control_an_error_level_retry_is_no_failure_of_its_own(self):
        assert "unrecognised-failure" not in ids(LEROBOT_INFO + "ERROR 2025-08-21 19:35:25 y_server.py:245 Connection to the robot lost, retrying in 1 s\n")

    def test_control_not_supported_at_warning_level(self):
        assert "unrecognised-failure" not in ids(LEROBOT_INFO + "WARNING 2025-08-21 19:35:25 y_server.py:245 flash attention not supported on this GPU, using the math kernel\n")

    def test_control_a_driver_refusing_an_optional_request_it_does_not_implement(self):
        # kubernetes-sigs/dra-driver-nvidia-gpu#1423: repeated while the driver works
        line = ('E0902 20:48:24.809602       1 nonblockinggrpcserver.go:180] "handling stream failed" err="rpc error: code = Unimplemented '
                'desc = device health reporting is not supported by this driver" logger="dra" requestID=139\n')
        assert "unrecognised-failure" not in ids(line * 3)

    def test_sibling_the_server_handler_raised(self):
        # huggingface/lerobot#3861: the handler's exception, at error level
        log = LEROBOT_INFO + "ERROR y_server.py:266 Error in StreamActions: stack expects a non-empty TensorList\n"
        assert unrecognised_kind(log) == "errorraised"

    def test_sibling_a_handler_refusing_what_it_does_not_support_is_that_class(self):
        # huggingface/lerobot#2338 and #1772: the message says what is not supported (knowledge/patterns/classes7.py)
        log = LEROBOT_INFO + "ERROR 2025-10-29 05:30:24 /_server.py:636 Exception calling application: Policy type groot not supported. Supported policies: ['act', 'smolvla', 'diffusion', 'tdmpc', 'vqbet', 'pi0', 'pi05']\n"
        assert head_id(log) == "feature-not-supported"
        assert head_id(LEROBOT_INFO + "ERROR 2025-08-21 19:35:25 y_server.py:245 Error in StreamActions: Currently not implemented for PI0\n") == "feature-not-supported"

    def test_sibling_an_error_level_line_that_says_it_stops(self):
        assert unrecognised_kind("2023-05-02 10:11:12,001 - ERROR - Data loader crashed, aborting the epoch\n") == "errorending"


class TestFishKilledJob:
    """fish's report of a job killed by a signal, glued to a progress bar (evidence 'fishkill')."""

    verdict = "unrecognised-failure"

    def test_control_fish_says_a_background_job_ended(self):
        assert "unrecognised-failure" not in ids("fish: Job 1, 'python train.py &' has ended\n")

    def test_sibling_the_job_killed_at_evaluation(self):
        # huggingface/lerobot#755
        log = ("INFO 2025-02-20 20:08:26 ts/train.py:252 Eval policy at step 20000\n"
               "Stepping through eval batches:   0%|          | 0/1 [00:00<?, ?it/s]fish: Job 1, 'python lerobot/scripts/train.py…' terminated by signal     --policy.type=act\n")
        assert unrecognised_kind(log) == "fishkill"

    def test_sibling_zsh_reports_its_segfault_its_own_way(self):
        assert unrecognised_kind("zsh: segmentation fault  python train.py\n") == "shellkill"


class TestReportedException:
    """A program's own report of an exception it caught: its words, then the class and message (evidence 'reported')."""

    verdict = "unrecognised-failure"

    def test_control_an_error_report_without_an_exception(self):
        assert "unrecognised-failure" not in ids("An error occurred: see the log above\n")

    def test_sibling_the_caught_exception_with_a_dash(self):
        # the shape of Lightning-AI/lightning-thunder#368 (its UnboundLocalError now has its own class, variable-unassigned)
        assert unrecognised_kind("An error occurred: ZeroDivisionError – float division by zero\n") == "reported"

    def test_sibling_the_bare_exception_line_is_the_exception_itself(self):
        found = api.diagnose("ZeroDivisionError: float division by zero\n").findings
        assert found[0].id == "unrecognised-failure" and found[0].evidence.get("exception") == "ZeroDivisionError"


class TestPythonExceptionAfterFullWidthColon:
    """An exception quoted after a full-width colon (a paste written in Chinese): the exception pattern reads it."""

    verdict = "python-exception"

    def test_control_a_class_name_in_prose_is_no_exception(self):
        assert "unrecognised-failure" not in ids("提示：ValueError 的处理已开启\n")

    def test_sibling_the_quoted_exception(self):
        # OpenBMB/MiniCPM-V#361
        found = api.diagnose("报错：AttributeError: 'list' object has no attribute 'to'\n").findings
        assert found[0].id == "unrecognised-failure" and found[0].evidence.get("exception") == "AttributeError"

    def test_sibling_a_known_error_after_the_colon_gets_its_own_pattern(self):
        assert head_id("报错：torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n") == "cuda-oom"


class TestRefusedValue:
    """A program refusing a value it was given (evidence 'invalid'), even wrapped by a GUI."""

    verdict = "unrecognised-failure"

    def test_control_a_value_replaced_and_the_run_goes_on(self):
        assert "unrecognised-failure" not in ids("'auto' is not a valid device, using cuda:0 instead\n")

    def test_sibling_the_gui_wrapped_settings_string(self):
        # kohya-ss/sd-scripts#1740
        log = ("09:00:06-852605 INFO     Validating optimizer arguments...\n"
               "09:00:06-853606 INFO     ' scale_parameter=False relative_step=False\n"
               "                         warmup_init=False' is not a valid settings string.\n")
        assert unrecognised_kind(log) == "invalid"

    def test_sibling_the_enum_refusal_raised_as_an_exception(self):
        found = api.diagnose(TB + "ValueError: 'fp8' is not a valid PrecisionType\n").findings
        assert found[0].evidence.get("exception") == "ValueError"


class TestLossNotFinite:
    verdict = "loss-not-finite"

    def test_control_finite_losses(self):
        assert "loss-not-finite" not in ids(NANOGPT_STEPS + "skip_nan_loss=True, loss: 2.31\n")

    def test_control_the_fp16_loss_scaler_skipping_a_step(self):
        assert "loss-not-finite" not in ids(NANOGPT_STEPS + "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n")

    def test_sibling_the_loss_turns_nan(self):
        # karpathy/nanoGPT#215
        log = NANOGPT_STEPS + "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%\n2023-03-22 09:33:02 iter 3020: loss nan, time 1015.95ms, mfu 14.36%\n"
        # a warning (the run goes on; one nan step under fp16's scaler is skipped, not fatal) that leads the answer
        found = api.diagnose(log).findings
        assert found[0].id == "loss-not-finite" and found[0].severity.value == "warn"

    def test_sibling_anomaly_detection_raises_on_the_op(self):
        log = TB + "RuntimeError: Function 'Log1PBackward0' returned nan values in its 0th output.\n"
        assert "loss-not-finite" not in ids(log) and head_id(log) == "training-stopped-nonfinite"


class TestNoticeStack:
    """torch.compile's 'Found from :' notice and its stack: no traceback, so no failure."""

    verdict = "unrecognised-failure"

    def test_control_the_cudagraphs_notice_with_its_stack(self):
        assert "unrecognised-failure" not in ids(NOTICE)

    def test_sibling_the_same_frames_without_the_notice(self):
        assert head_id(NOTICE.split("\n", 1)[1]) == "unrecognised-failure"

    def test_sibling_a_traceback_after_the_notice(self):
        assert head_id(NOTICE + TB + "KeyError: 'input_ids'\n") in ("python-exception", "unrecognised-failure")


class TestPgNotInitializedReading:
    """The line says no default group existed when the call ran; a launcher in the log rules out 'plain python'."""

    verdict = "pg-not-initialized"

    def test_control_a_group_that_was_initialised(self):
        assert "pg-not-initialized" not in ids("INFO: process group initialized: backend=nccl, world_size=8\n")

    def test_sibling_under_torchrun_the_answer_names_the_path_not_the_launcher(self):
        # karpathy/nanoGPT#289
        log = ("torchrun --standalone --nproc_per_node=2 train.py config/train_shakespeare_char.py\n"
               "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n")
        found = api.diagnose(log).findings
        assert found[0].id == "pg-not-initialized"
        assert not found[0].fix.startswith("torchrun") and "destroy_process_group" in found[0].fix

    def test_sibling_a_barrier_after_the_group_was_destroyed(self):
        # Lightning-AI/lightning-thunder#1472
        log = BARRIER_TB + "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n"
        found = api.diagnose(log).findings
        assert found[0].id == "pg-not-initialized" and "already" in found[0].why

    def test_sibling_a_destroyed_nccl_group_is_another_failure(self):
        assert "pg-not-initialized" not in ids(TB + "RuntimeError: NCCL error: invalid usage, NCCL communicator was aborted on rank 0.\n")
