"""Controls and siblings for the answers that led with the wrong line (issue 35, "never confidently
wrong"): read from the development samples' failed logs whose headline named another cause. One class
per verdict: the look-alike that must not get it and the nearest input that needs another verdict.
The lines are real ones from the samples' threads (named beside each); each runs through `diagnose`."""

from __future__ import annotations

from pathlib import Path

from gpudoctor import api
from test_controls_patterns import TB, head_id, ids

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "log_sample"

# torchrun's start-up notice (every torchrun job prints it, healthy or not)
OMP = (
    "WARNING:torch.distributed.run:\n*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being "
    "overloaded, please further tune the variable for optimal performance in your application as needed. \n"
    "*****************************************\n"
)
STEPS = "".join(f"step {i} loss {1.0 / (i + 1):.3f}\n" for i in range(5))


def case(part: str, name: str) -> str:
    return (SAMPLES / part / f"{name}.log").read_text(encoding="utf-8")


class TestLogInconclusiveLeads:
    """A log with no failure in it: the answer (it does not decide / it ended well) leads, the notices follow."""

    verdict = "log-inconclusive"

    def test_control_a_torchrun_run_that_ended_well_leads_with_no_failure(self):
        found = ids(OMP + STEPS + "Training completed. Do not forget to share your model!\n")
        assert found[0] == "log-no-failure" and "launcher-omp-threads" in found

    def test_sibling_a_torchrun_log_cut_after_its_notice_does_not_decide(self):
        # unslothai/unsloth#3031: cut after the OMP_NUM_THREADS banner
        found = ids(case("dev3", "unsloth-3031-torchrun-8-sft-cut"))
        assert found[0] == "log-inconclusive" and found[1:] == ["launcher-omp-threads"]

    def test_sibling_the_notice_never_heads_a_failure_the_log_shows(self):
        log = OMP + STEPS + TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n"
        found = ids(log)
        assert found[0] == "cuda-oom" and found.index("launcher-omp-threads") > 0

    def test_sibling_a_warning_that_may_be_the_trouble_stays_ahead_of_the_answer(self):
        # huggingface/text-generation-inference#1778: the Flash Attention models could not be imported
        found = ids(case("dev5", "tgi-1778-medusa-flash-attention-not-installed-warnings"))
        assert found.index("tgi-flash-attention-unavailable") < found.index("log-inconclusive")


class TestDdpDeviceMismatchConvTypes:
    """cuDNN's "Input type (...) and weight type (...) should be the same" names devices only in its types."""

    verdict = "ddp-device-mismatch"

    def test_control_half_and_float_on_one_gpu_is_a_dtype_mismatch(self):
        # ultralytics/yolov5#475: DataParallel with half inputs and float weights, both on the GPU
        log = TB + "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same\n"
        assert "ddp-device-mismatch" not in ids(log)
        assert head_id(log) == "value-type-refused"  # the dtype class (patterns/classes8.py), not a device

    def test_control_float_and_half_on_the_cpu(self):
        assert "ddp-device-mismatch" not in ids(TB + "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same\n")

    def test_sibling_cpu_input_for_a_gpu_weight(self):
        log = TB + "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same\n"
        assert head_id(log) == "ddp-device-mismatch"

    def test_sibling_gpu_input_for_a_cpu_weight(self):
        log = TB + "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same\n"
        assert head_id(log) == "ddp-device-mismatch"


class TestCudaAllocSizeImpossible:
    def test_control_a_memory_report_is_no_failure(self):
        log = STEPS + "memory: allocated 21.3 GiB, reserved 22.0 GiB, max reserved 23.1 GiB\nTraining completed.\n"
        assert "cuda-alloc-size-impossible" not in ids(log)

    def test_sibling_a_real_shortage_is_an_oom(self):
        log = TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.30 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n"
        assert head_id(log) == "cuda-oom"

    def test_sibling_more_than_an_exabyte_is_a_wrong_size(self):
        # zai-org/ChatGLM-6B#790: torch.arange(seq_len) in the rotary embedding
        found = ids(case("dev4", "chatglm-790-multigpu-demo-oom-more-than-1eb"))
        assert found[0] == "cuda-alloc-size-impossible" and "cuda-oom" not in found


class TestLauncherChildExitPipelineStep:
    """A pipeline script's exception that says the step it ran exited non-zero: the step's error is elsewhere."""

    verdict = "launcher-child-exit"

    def test_control_a_worker_restarted_after_a_non_zero_exit_is_no_report(self):
        log = STEPS + "WARNING: a data worker exited with non-zero status 1, restarting it (1/3)\n" + STEPS + "Training completed.\n"
        assert "launcher-child-exit" not in ids(log)

    def test_sibling_the_users_own_runtime_error_is_theirs(self):
        log = TB + "RuntimeError: the batch has 0 samples after filtering\n"
        assert head_id(log) == "python-exception"

    def test_sibling_the_step_that_exited_non_zero(self):
        # deepspeedai/DeepSpeedExamples#437: DeepSpeed-Chat's train.py; the step's error is in its training.log
        found = api.diagnose(case("dev4", "dsexamples-437-step1-nonzero-status-see-training-log")).findings
        assert found[0].id == "launcher-child-exit"
        assert "python-exception" not in [f.id for f in found]


class TestUnrecognisedFailureFatalSignalExit:
    """torchrun's summary of a worker killed by a signal that is itself the failure and that no pattern tells."""

    verdict = "unrecognised-failure"

    SUMMARY = (
        "E0902 14:11:47.447608 140430924072128 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: {code}) "
        "local_rank: 1 (pid: 1040070) of binary: /home/u/miniconda3/envs/internvl/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )

    def test_control_a_worker_stopped_by_sigterm_is_only_a_consequence(self):
        found = api.diagnose(self.SUMMARY.format(code="-15")).findings
        assert "unrecognised-failure" not in [f.id for f in found]

    def test_control_exit_code_1_is_only_a_summary(self):
        assert "unrecognised-failure" not in ids(self.SUMMARY.format(code="1"))

    def test_sibling_sigsegv_has_its_own_pattern(self):
        assert head_id(self.SUMMARY.format(code="-11")) == "launcher-sigsegv"

    def test_sibling_sigfpe_is_named_as_the_failure(self):
        # OpenGVLab/InternVL#553: local rank 1 died with exit code -8
        found = api.diagnose(case("dev4", "internvl-553-lora-exitcode-8-sigfpe")).findings
        assert found[0].id == "unrecognised-failure" and "SIGFPE" in found[0].title
        assert found[1].id == "torchrun-child-failed" and found[1].evidence.get("consequence_of") == "unrecognised-failure"


class TestUnrecognisedFailureHandledFallback:
    """A warning that a component caught an exception and fell back: the traceback it prints was handled."""

    verdict = "unrecognised-failure"

    # huggingface/optimum#1439: ORTModule could not export to ONNX and training went on in PyTorch
    WARNING = (
        "2023-10-26 09:46:58,557 orttraining [WARNING] - Fallback to PyTorch due to exception <class "
        "'onnxruntime.training.ortmodule._fallback_exceptions.ORTModuleONNXModelException'> was triggered. Report this issue "
        "with a minimal repro at https://www.github.com/microsoft/onnxruntime. See details below:\n\n"
        "RuntimeError: There was an error while exporting the PyTorch model to ONNX: \n\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.9/site-packages/onnxruntime/training/ortmodule/_utils.py", line 325, in get_exception_as_string\n'
        "    raise exception\n"
        '  File "/opt/conda/lib/python3.9/site-packages/torch/onnx/utils.py", line 506, in export\n'
        "    _export(\n"
    )

    def test_control_the_caught_exports_traceback_is_no_failure(self):
        report = api.diagnose(self.WARNING + STEPS)
        assert not [f for f in report.findings if f.severity.value == "error"]
        assert case("dev4", "optimum-pr1439-ort-zero3-fallback-to-pytorch-warning").count("Fallback to PyTorch") == 1
        assert "unrecognised-failure" not in ids(case("dev4", "optimum-pr1439-ort-zero3-fallback-to-pytorch-warning"))

    def test_sibling_a_crash_after_the_fallback_is_still_a_failure(self):
        log = self.WARNING + STEPS + TB + "RuntimeError: the exported graph has no output named 'loss'\n"
        assert head_id(log) in ("unrecognised-failure", "python-exception")

    def test_sibling_a_fallback_at_error_level_is_no_warning(self):
        # (with no step after it: steps counting on after the traceback say the job went on past it whatever the level,
        # knowledge/progress.py, tests/controls/test_controls_diagA18.py)
        log = self.WARNING.replace("[WARNING]", "[ERROR]")
        assert head_id(log) == "unrecognised-failure"
