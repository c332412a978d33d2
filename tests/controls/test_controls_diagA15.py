"""Controls and siblings for diagA15 (issue 35, the retired heldout14's called-healthy and wrong answers, each as a class):
a harness's or a script's failure status beside a launcher's SUCCEEDED is no healthy run (knowledge/evidence.py's
"status", a wrapper's "Error: ... crashed"); a name of torch's own API missing is a torch version mismatch, not a missing
`.module` (knowledge/patterns/ddp.py's torch-api-version, and the undecided ddp-wrapper-private-attribute); which words make
an out-of-memory line the GPU's or the host's (cuda-oom, host-memory-exhausted). `test_control_*` is the harmless or
look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones
(threads named beside them) or the shape a harness prints."""

from __future__ import annotations

import pytest
from test_controls_detect8 import head, head_id, healthy

from gpudoctor import api

# torch elastic's agent ending its own worker group well (NVlabs/imaginaire#131: https://github.com/NVlabs/imaginaire/issues/131)
SUCCEEDED = (
    "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 seconds for other agents to finish.\n"
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other agents to finish\n"
    "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0007641315460205078 seconds\n"
)


class TestFailureStatusBesideAnEnd:
    """A status word a harness or a script writes for a step it ran is a failure, whatever the launcher says of its own
    worker group; counts of none, metrics, flags, paths, optional parts and a retry that went on are not."""

    verdict = "unrecognised-failure"

    @pytest.mark.parametrize("line", [
        "# error : vid2vid_street.yaml >> /tmp/unit_test.log [Failure] in run test bash scripts/test_training.sh",  # NVlabs/imaginaire#131
        "[  FAILED  ] ProcessGroupNCCLTest.testAllreduce (1203 ms)",  # googletest
        "✗ vid2vid_street.yaml",
        "vid2vid_street.yaml ... FAILED",
        "FAIL: test_allreduce (test_dist.DistTest)",  # unittest
        "FAILED (failures=1, errors=2)",
        "Error: training script crashed",  # a wrapper's own words
        "Process finished with exit code 1",  # PyCharm (heldout6's mmsr-19)
        "make: *** [Makefile:3: test] Error 1",
        "subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit status 1.",
        "run_test failed with exit code 2",
    ])
    def test_sibling_a_failure_status_beside_succeeded_is_not_healthy(self, line):
        found = head(f"{line}\n{SUCCEEDED}")
        assert found is not None and not healthy(f"{line}\n{SUCCEEDED}")

    def test_sibling_the_status_line_is_what_the_answer_shows(self):
        found = head(f"# error : vid2vid_street.yaml >> /tmp/unit_test.log [Failure] in run test bash scripts/test_training.sh\n{SUCCEEDED}")
        assert found is not None and found.id == self.verdict and found.evidence["kind"] == "status"
        assert "[Failure]" in found.evidence["what"]

    @pytest.mark.parametrize("line", ["vid2vid: failure", "Test vid2vid failed", "and then the evaluation step failed."])
    def test_sibling_a_failure_word_no_rule_reads_beside_an_end_is_undecided(self, line):
        report = api.diagnose(f"{line}\n{SUCCEEDED}")
        [found] = [f for f in report.findings if f.id in ("log-inconclusive", "log-no-failure")]
        assert found.id == "log-inconclusive" and found.evidence["ended"].startswith("INFO:torch.distributed.elastic")
        assert found.evidence["lines that speak of an error"][0] == f"line 1: {line}" and not healthy(f"{line}\n{SUCCEEDED}")

    @pytest.mark.parametrize("line", [
        "Tests: 12 passed, 0 failed", "failures: 0", "[OK] vid2vid_street.yaml", "FAILED: 0", "failed=0", "Failure rate: 0.01",
        "python train.py --max-failures 3 --ignore-failure",
        "Failed to load optional plugin libnccl-net.so, falling back to internal implementation",
        "saving /data/failed_samples/x.png", "[FAILED] download of shard 3, retrying\n[OK] download of shard 3",
        "test_bf16 (test_dist.DistTest) ... expected failure", "➜  repo git:(main) ✗ python train.py", "[  PASSED  ] 12 tests.",
        "Error: 0.0123",
        # words inside a line, not its status: prose that says the error is gone, a setting, a comment (earlier controls' lines)
        "with --shm-size=16g the Bus error from last week is gone: line 19 of run_train.sh now passes",
        "torch._dynamo.config.suppress_errors = False  # fail loudly", "python train.py --ignore-failure",
    ])
    def test_control_harmless_words_beside_succeeded_stay_healthy(self, line):
        assert healthy(f"{line}\n{SUCCEEDED}")


# JingyunLiang/VRT#22 (https://github.com/JingyunLiang/VRT/issues/22): torch older than 1.9; the maintainer: upgrade PyTorch
STATIC_GRAPH = "AttributeError: 'DistributedDataParallel' object has no attribute '_set_static_graph'"


class TestTorchApiVersion:
    """A name of torch's own (a DDP method, a function or a module of torch, torch.distributed, torch.cuda, torch.nn) that
    the installed torch lacks is its version; the model's own attribute read through the wrapper stays `.module`; a private
    name torch does not define does not decide, and says both."""

    verdict = "torch-api-version"

    @pytest.mark.parametrize("line", [
        STATIC_GRAPH,
        "AttributeError: module 'torch' has no attribute 'compile'",
        "AttributeError: module 'torch.cuda' has no attribute 'is_bf16_supported'",
        "AttributeError: module 'torch.distributed' has no attribute 'all_gather_into_tensor'",  # deepspeedai/Megatron-DeepSpeed#254
    ])
    def test_sibling_torchs_own_name_is_the_torch_version(self, line):
        found = head(line)
        assert found is not None and found.id == self.verdict
        assert "added in torch" in found.fix and "torch.__version__" in found.fix

    def test_sibling_a_private_name_of_torchs_own_module_is_the_torch_version(self):
        # NVIDIA/apex#1529: apex reading torch.distributed._all_gather_base on torch 1.7.1
        assert head_id("AttributeError: module 'torch.distributed' has no attribute '_all_gather_base'") == self.verdict
        # a torch without CUDA keeps its own answer; another package's private name is not torch's
        assert head_id("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'") == "cuda-torch-cpu-build"
        assert head_id("AttributeError: module 'torchvision' has no attribute '_is_tracing'") != self.verdict

    def test_sibling_an_internal_of_torchs_own_class_is_the_torch_version(self):
        # ruotianluo/ImageCaptioning.pytorch#102: a prefetching loader reading torch 1.3's iterator internals on torch 1.2
        found = head("AttributeError: '_MultiProcessingDataLoaderIter' object has no attribute '_send_idx'")
        assert found is not None and found.id == self.verdict and "torch.__version__" in found.fix
        assert head_id("AttributeError: 'MyDataLoaderIter' object has no attribute '_send_idx'") != self.verdict

    @pytest.mark.parametrize(("line", "other"), [
        ("AttributeError: 'DistributedDataParallel' object has no attribute 'generate'", "ddp-wrapper-attribute"),
        ("AttributeError: 'DistributedDataParallel' object has no attribute '_backbone'", "ddp-wrapper-private-attribute"),
    ])
    def test_control_the_models_attribute_is_not_the_torch_version(self, line, other):
        assert head_id(line) == other

    def test_control_a_private_name_says_both_and_what_decides(self):
        found = head("AttributeError: 'DistributedDataParallel' object has no attribute '_backbone'")
        assert found is not None and "model.module._backbone" in found.fix and "torch.__version__" in found.fix

    @pytest.mark.parametrize("line", [
        "AttributeError: module 'torch' has no attribute 'join'",  # a DDP method's name, not torch's
        "AttributeError: module 'torch.distributed' has no attribute 'ProcessGroupNCCL'",  # a build without NCCL (Lightning-AI/lightning-thunder#512)
        "AttributeError: module 'torchvision' has no attribute 'compile'",
    ])
    def test_control_another_owners_name_is_not_a_torch_release(self, line):
        assert head_id(line) != self.verdict


class TestMemoryHostOrDevice:
    """The CUDA runtime's or driver's allocation status makes an out-of-memory line the GPU's, whatever wraps it
    (std::bad_alloc, MemoryError); a plain bad_alloc, the OS's ENOMEM, torch's CPU allocator and pinned host memory are the
    host's."""

    @pytest.mark.parametrize("line", [
        "MemoryError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory",  # GradientSpaces/WildGS-SLAM#60
        "terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        "pygpu.gpuarray.GpuArrayException: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY: out of memory",  # ndrplz/dreyeve#23
    ])
    def test_sibling_a_cuda_allocation_status_is_the_gpus(self, line):
        assert head_id(line) == "cuda-oom"

    @pytest.mark.parametrize("line", [
        "MemoryError: std::bad_alloc",
        "OSError: [Errno 12] Cannot allocate memory",  # ClementPinard/FlowNetPytorch#85 (fork of DataLoader workers)
        "RuntimeError: [enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)",
        # talmolab/sleap#2001: pinned host memory the CUDA driver could not page-lock
        "2024-10-22 09:22:17.233972: E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    ])
    def test_control_the_hosts_memory_is_not_the_gpus(self, line):
        assert head_id(line) == "host-memory-exhausted"

    def test_control_a_pinned_allocation_notice_is_no_failure(self):
        # NCCL's INFO line timing its host allocation (NVIDIA/nccl#983's log) names cudaHostAlloc and fails nothing
        line = "4c217144f0b1:113168:113179 [0] NCCL INFO init.cc:327 Cuda Host Alloc Size 4 pointer 0x7f2b32600200 seconds: cudaHostAlloc=6.2093e-05"
        assert not any(f.id in ("cuda-oom", "host-memory-exhausted") for f in api.diagnose(line).findings)
