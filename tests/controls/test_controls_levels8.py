"""Controls and siblings for issue 35's eighth-round levels: CUDA kernel faults no cuda pattern named
(src/gpudoctor/knowledge/patterns/kernel8.py), structured (JSON) error-level log lines
(src/gpudoctor/knowledge/evidence.py), and the classes of messages named on an error-level log line that is
the failure (knowledge/unrecognised.message_class). Each log runs through the whole of `diagnose`; the
lines are real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from gpudoctor.core.findings import Severity
from test_controls_patterns import TB, head_id, ids

STEPS = "epoch 0 step 10 loss 2.134\nepoch 0 step 20 loss 1.876\n"
ASYNC = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
         "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


def library_traceback(line: str) -> str:
    """A traceback whose last frame is torch's (pytorch/pytorch#32893's frames)."""
    return (TB + "    main()\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 1370, in linear\n'
            "    ret = torch.addmm(bias, input, weight.t())\n" + line + "\n")


class TestCudaKernelFault:
    verdict = "cuda-kernel-fault"

    def test_control_a_capture_that_fell_back_to_eager_is_no_failure(self):
        # the same words in a warning a program survived (it ran without the graph)
        text = STEPS + "[W] CUDA graph capture failed (operation not permitted when stream is capturing), falling back to eager mode\n" + STEPS
        assert "cuda-kernel-fault" not in ids(text)
        assert not [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]

    def test_control_the_words_in_a_setting_are_no_failure(self):
        text = STEPS + "INFO: misaligned address checks enabled for the allocator\n" + STEPS
        assert "cuda-kernel-fault" not in ids(text)

    def test_sibling_an_illegal_memory_access_keeps_its_own_pattern(self):
        text = library_traceback("RuntimeError: CUDA error: an illegal memory access was encountered") + ASYNC
        assert head_id(text) == "cuda-illegal-memory-access"
        assert "cuda-kernel-fault" not in ids(text)

    def test_sibling_an_unspecified_launch_failure_keeps_its_own_pattern(self):
        text = library_traceback("RuntimeError: CUDA error: unspecified launch failure") + ASYNC
        assert head_id(text) == "cuda-launch-failure"

    def test_sibling_a_cpu_illegal_instruction_is_not_a_kernel_fault(self):
        text = STEPS + "Illegal instruction (core dumped)\n"
        assert "cuda-kernel-fault" not in ids(text)

    def test_sibling_a_misaligned_address_is_an_error_with_the_way_to_find_the_kernel(self):
        text = library_traceback("RuntimeError: CUDA error: misaligned address") + ASYNC  # pytorch/pytorch#32893
        f = finding(text, "cuda-kernel-fault")
        assert head_id(text) == "cuda-kernel-fault"
        assert f is not None and f.severity is Severity.ERROR
        assert f.evidence["fault"] == "misaligned address"
        assert "CUDA_LAUNCH_BLOCKING=1" in f.fix and "compute-sanitizer" in f.fix
        assert exit_code(api.diagnose(text)) == 1

    def test_sibling_a_capture_error_is_named_with_the_graph_fix(self):
        text = library_traceback("RuntimeError: CUDA error: operation not permitted when stream is capturing")  # NVlabs/cuHPX#11
        f = finding(text, "cuda-kernel-fault")
        assert f is not None and f.evidence["fault"] == "operation not permitted when stream is capturing"
        assert "--enforce-eager" in f.fix

    def test_sibling_an_illegal_instruction_and_a_driver_code(self):
        assert head_id(library_traceback("RuntimeError: CUDA error: an illegal instruction was encountered")) == "cuda-kernel-fault"
        assert head_id(STEPS + "CUDA_ERROR_MISALIGNED_ADDRESS failed with error misaligned address\n") == "cuda-kernel-fault"  # NVIDIA/Fuser#4970


def errors(text: str) -> list:
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestUnrecognisedFailureLoggedClass:
    """A class of message named on an error-level log line that is the failure (a program that caught the
    exception logged its message without its class)."""

    verdict = "unrecognised-failure"

    def test_control_the_message_at_warning_level_is_no_failure(self):
        text = STEPS + "2024-03-01 10:00:00,123 - WARNING - Exception in collate: stack expects a non-empty TensorList, skipping the batch\n" + STEPS
        assert not errors(text)

    def test_control_an_error_line_the_run_goes_past_does_not_decide(self):
        # logged at error level, but nothing says the call raised or the program stops: the log does not decide
        text = STEPS + "2024-03-01 10:00:00,123 - ERROR - stack expects a non-empty TensorList\n" + STEPS
        assert not errors(text)
        assert finding(text, "log-inconclusive") is not None

    def test_sibling_a_logged_call_that_raised_names_the_shape_class(self):
        text = STEPS + "2024-03-01 10:00:00,123 - ERROR - Exception in training step: stack expects a non-empty TensorList\n"
        f = finding(text, "unrecognised-failure")
        assert f is not None and f.severity is Severity.ERROR
        assert f.evidence["class"] == "tensor-shape-mismatch"
        assert f.fix.startswith("a message of the class tensor-shape-mismatch")
        assert "It is of a known class, tensor-shape-mismatch" in f.why

    def test_sibling_a_logged_stop_names_the_attribute_class_with_its_names(self):
        # lm-sys/FastChat#1458's message, logged by a runner that stops on it
        text = STEPS + "2023-05-02 10:11:12,001 - ERROR - 'Trainer' object has no attribute 'hf_deepspeed_config_orig', aborting the run\n"
        f = finding(text, "unrecognised-failure")
        assert f is not None and f.evidence["class"] == "attribute-missing"
        assert "find the package Trainer comes from" in f.fix

    def test_sibling_a_logged_failure_of_no_class_is_not_named(self):
        text = STEPS + "2024-03-01 10:00:00,123 - ERROR - Exception in training step: the reward server closed the connection\n"
        f = finding(text, "unrecognised-failure")
        assert f is not None and "class" not in f.evidence
        assert "a message of the class" not in f.fix

    def test_sibling_a_bracketed_level_says_not_supported(self):
        text = STEPS + "[E 2024-05-01 10:00:00] [trainer.py:12] Error in train_step: bf16 is not supported on this device\n"
        f = finding(text, "unrecognised-failure")
        assert f is not None and f.evidence["class"] == "feature-not-supported"
        assert exit_code(api.diagnose(text)) == 1

    def test_sibling_the_upper_case_level_line_keeps_its_claiming_pattern(self):
        text = STEPS + "ERROR 2025-08-21 19:35:25 y_server.py:245 Error in StreamActions: Currently not implemented for PI0\n"  # huggingface/lerobot#1772
        assert head_id(text) == "feature-not-supported"


class TestLogInconclusiveStructuredLevel:
    """JSON log records (structlog, zap, slog, tracing's json) at error level are error-level lines; at info
    level, and a config dump that only holds the word, they are not."""

    verdict = "log-inconclusive"

    def test_control_an_info_record_is_no_error_line(self):
        text = STEPS + '{"level":"info","ts":"2024-05-01T10:00:00Z","msg":"checkpoint saved","path":"/ckpt/step_20"}\n'
        f = finding(text, "log-inconclusive")
        assert f is not None and "error lines" not in f.evidence

    def test_control_a_config_dump_that_holds_the_word_is_no_error_line(self):
        text = STEPS + 'config: {"model": "llama-7b", "log_level": "error", "message_format": "json", "lr": 2e-05}\n'
        f = finding(text, "log-inconclusive")
        assert f is not None and "error lines" not in f.evidence

    def test_sibling_an_error_record_is_an_error_line(self):
        text = STEPS + '{"level":"error","ts":"2024-05-01T10:00:00Z","caller":"gpu/alloc.go:88","msg":"failed to allocate device","error":"device busy"}\n'
        f = finding(text, "log-inconclusive")
        assert f is not None and f.evidence["error lines"][0].startswith("line 3:")
        assert not errors(text)  # a component's error it may retry: it does not decide the run failed

    def test_sibling_an_error_record_that_says_it_stops_is_the_failure(self):
        text = STEPS + '{"msg":"trainer crashed, shutting down","level":"ERROR","logger":"runner","time":"2024-05-01T10:00:00Z"}\n'
        assert head_id(text) == "unrecognised-failure"
        assert exit_code(api.diagnose(text)) == 1

    def test_sibling_a_fatal_record_is_the_failure(self):
        text = STEPS + '{"level":"fatal","ts":1714557600.1,"msg":"error starting plugin: failed to create NVML device"}\n'
        assert head_id(text) == "unrecognised-failure"

    def test_sibling_logfmt_at_error_level_stays_an_error_line(self):
        text = STEPS + 'time="2024-05-01T10:00:00Z" level=error msg="failed to allocate device: device busy"\n'
        f = finding(text, "log-inconclusive")
        assert f is not None and "error lines" in f.evidence
