"""Controls and siblings for diagB17 (issue 35: classes that recur across the corpus's parts, each measured on the newest
part it occurs in): CUDA's own error read by CUDA's table in any program's words (knowledge/patterns/classes17b.py
`cuda-runtime-error`, with old torch's THC "invalid argument" that it printed and went on from as its control), a program's
probe that found no GPU (`program-found-no-gpu`), and an nvidia-smi snapshot whose every GPU is idle and holds no
job's memory (checks/gpu_activity.py `gpu-not-used`). `test_control_*` is the look-alike input that must not get the
verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import head_id
from test_controls_gpu import diagnosed, smi

from gpudoctor import api
from gpudoctor.core.findings import Severity


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def finding(text: str, finding_id: str):
    return next((f for f in api.diagnose(text).findings if f.id == finding_id), None)


class TestCudaRuntimeError:
    @pytest.mark.parametrize("line,error", [
        # darknet's words (pjreddie/darknet#25, heldout16), then its assert
        ("CUDA Error: __global__ function call is not configured\ndarknet: ./src/cuda.c:35: check_error: Assertion `0' failed.",
         "cudaErrorMissingConfiguration"),
        # ComfyUI's paste without its RuntimeError (Comfy-Org/ComfyUI#4578, heldout7)
        ("CUDA error: operation not supported CUDA kernel errors might be asynchronously reported at some other API call",
         "cudaErrorNotSupported"),
        # Caffe's glog check (BVLC/caffe#2114, heldout10; eric612/MobileNet-YOLO#266)
        ("F0314 10:13:03.513468  4816 p2p_sync.cpp:241] Check failed: error == cudaSuccess (51 vs. 0)  peer access has not been enabled",
         "cudaErrorPeerAccessNotEnabled"),
        ("Check failed: error == cudaSuccess (803 vs. 0)  system has unsupported display driver / cuda driver combination",
         "cudaErrorSystemDriverMismatch"),
        # old torch's THC print, "illegal" split by the paste's wrap (svishwa/crowdcount-cascaded-mtl#7, heldout16)
        ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1513363039688/work/torch/lib/THC/generic/THCTensorCopy.c line=70 "
         "error=77 : an ill egal memory access was encountered", "cudaErrorIllegalAddress"),
        # a message cut at the line's end, in old torch's raised words
        ("RuntimeError: cuda runtime error (59) : device-side assert trigg", "cudaErrorAssert"),
    ])
    def test_sibling_cuda_words_in_a_wrapper_are_read_by_the_table(self, line, error):
        found = finding(line + "\n", "cuda-runtime-error")
        assert found is not None and found.severity is Severity.ERROR and found.evidence["error"] == error
        assert error in found.title and found.fix.startswith(f"CUDA's {error}")

    @pytest.mark.parametrize("line,verdict", [
        ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda-illegal-memory-access"),  # whole: its own pattern
        ("RuntimeError: CUDA error: device-side assert triggered", "cuda-device-assert"),
        ("CUDA Error: out of memory", "cuda-oom"),  # darknet's words for an OOM (AlexeyAB/darknet#5301, heldout7)
        ("RuntimeError: CUDA error: invalid configuration argument", "cuda-invalid-launch-configuration"),
    ])
    def test_control_a_whole_message_a_specific_pattern_reads_stays_its(self, line, verdict):
        assert head_id(line + "\n") == verdict

    @pytest.mark.parametrize("line", [
        "RuntimeError: CUDA error: invalid argument",  # CUDA's catch-all for a refused argument names no fault
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        "Operation not supported on this platform, falling back to the CPU kernel",  # no CUDA wrapper
    ])
    def test_control_no_table_message_no_verdict(self, line):
        assert "cuda-runtime-error" not in ids(line + "\n")


class TestCudaRuntimeErrorThcInvalidArgument:
    verdict = "cuda-runtime-error"
    PRINTED = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument"

    def test_control_printed_then_training_goes_on_is_no_cuda_error(self):
        # pytorch/ignite#464 (heldout8): torch 1.0 prints it and goes on ("Start training"; pytorch/pytorch#15797)
        found = diagnosed(f"Loading dataset\n{self.PRINTED}\nStart training\nEpoch[1] Starts with lr=0.003\n")
        assert "cuda-runtime-error" not in found and not any(f.severity is Severity.ERROR for f in found.values())

    def test_sibling_a_table_message_in_the_same_print_is_read(self):
        # vid2vid#62's print (heldout10) of a fault CUDA's table names, its words cut by the paste
        log = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=102 error=77 : an illegal memory access was enco\n"
        found = finding(log, "cuda-runtime-error")
        assert found is not None and found.evidence["error"] == "cudaErrorIllegalAddress" and found.evidence["code"] == "77"


class TestProgramFoundNoGpu:
    @pytest.mark.parametrize("line", [
        "(task, pid=201122) torch.cuda.is_available(): False",  # skypilot-org/skypilot#2510 (dev3)
        "(task, pid=201122) torch.cuda.device_count(): 0",
        "Number of GPUs: 0",  # pytorch/serve#403 (heldout5): TorchServe's count on a ROCm machine
        "WARNING:root:No GPU found. Conversion on CPU is very slow.",  # binary-husky/gpt_academic#1717 (heldout16)
        "cuda available: torch.cuda.is_available() = False",
    ])
    def test_sibling_a_probe_that_found_no_gpu_is_said(self, line):
        found = finding(line + "\n", "program-found-no-gpu")
        assert found is not None and found.severity is Severity.WARN and "CUDA_VISIBLE_DEVICES" in found.fix

    @pytest.mark.parametrize("line", [
        "torch.cuda.is_available(): True",
        "    if not torch.cuda.is_available():",  # the code that asks
        "Number of GPUs: 8",
        "No GPU to monitor.",  # nvtop's own line: gpu-monitor-no-gpu
    ])
    def test_control_a_probe_that_found_gpus_or_the_code_that_asks(self, line):
        assert "program-found-no-gpu" not in ids(line + "\n")

    def test_sibling_torchs_own_error_is_its_error(self):
        # torch raising where the code needs CUDA: the error, not the probe's warning
        assert head_id("RuntimeError: No CUDA GPUs are available\n") == "cuda-no-gpus-visible"

    def test_control_a_run_that_ended_well_on_the_cpu_stays_healthy(self):
        log = "torch.cuda.is_available(): False\nepoch 1 loss 0.52\nepoch 2 loss 0.41\nTraining finished.\n"
        assert not any(f.severity is Severity.ERROR for f in api.diagnose(log).findings)


class TestGpuNotUsed:
    def test_sibling_every_gpu_idle_and_empty_is_not_used(self):
        # tmbdev/clstm#147 (heldout16): 8 MiB and 0 % on the one GPU while the program trains; heldout7's deepracer#58 the same
        found = diagnosed(smi([(0, 9, 8), (0, 9, 4)], none_found=True))
        assert "gpu-not-used" in found and found["gpu-not-used"].severity is Severity.INFO

    @pytest.mark.parametrize("rows", [
        [(0, 60, 4332), (0, 58, 4332)],  # idle but holding a job's memory (a job between steps, or waiting): not this
        [(97, 310, 30000), (0, 9, 4)],  # one GPU works: gpu-unused's, not this
        [(3, 70, 500), (40, 90, 600)],  # one computes a little
    ])
    def test_control_a_gpu_that_holds_a_job_or_works_is_not_unused(self, rows):
        assert "gpu-not-used" not in diagnosed(smi(rows, none_found=True))
