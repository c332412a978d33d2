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
