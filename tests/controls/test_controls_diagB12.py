"""Controls and siblings for diagB12 (issue 35: the retired heldout11, entries 58..113). A failure's own line that holds
no trigger word, read in a short paste (knowledge/story.py `Diagnosis.is_failure_line`, commands/diagnose/reader.py);
the classes in knowledge/patterns/classes12b.py; torch's `Invalid device id` read by cuda-invalid-device-ordinal and
torch < 1.10's wordings by ddp-device-mismatch. `test_control_*` is the look-alike input that must not get the verdict,
`test_sibling_*` the nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def paste(*lines: str) -> str:
    """A thread as the corpus stores it: a person's sentences around the pasted line."""
    return "\n".join(["owner/project · issue #1 · open · Python", "# Multi GPU training", "",
                      "user · description · 2020-07-21", *lines, ""])


class TestFailureLineWithoutTrigger:
    verdict = "ddp-device-mismatch"

    @pytest.mark.parametrize("line", [
        # the exception's class left out, alone on its line (ChenDarYen/Key-Locked-Rank-One-Editing-for-Text-to-Image-Personalization#3)
        "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (when checking argument "
        "for argument index in method wrapper_CUDA__index_select)",
        # as inline code, the head of torch < 1.10's message alone (torch-points3d/torch-points3d#347)
        "`Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'`",
        # Lua/Torch7's error: its location, then the message (DmitryUlyanov/texture_nets#83)
        "```bash\nInstanceNormalization.lua:50: arguments are located on different GPUs at\n "
        "/home/u/torch/extra/cutorch/lib/THC/generated/../generic/THCTensorMathReduce.cu:38\nstack traceback:\n        [C]: in function 'mean'\n```",
    ])
    def test_sibling_a_message_pasted_without_its_class_is_read(self, line):
        assert head_id(paste("I wrapped the model in DataParallel and got the device error below:", "", line)) == self.verdict

    def test_control_a_sentence_that_only_mentions_the_message_is_no_failure(self):
        # the dangerous sibling: a healthy paste whose prose names the message it no longer gets
        text = paste("I used to get Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! "
                     "but after moving the batch to the model's device it trains fine now.")
        assert self.verdict not in ids(text) and head(text) is None

    def test_sibling_a_glog_error_record_is_an_error_line(self):
        # facebookresearch/habitat-sim#504: the simulator's E records hold no trigger word; read, they are the lead
        text = paste("When I ran the script, I got these errors", "",
                     "`WARNING: Logging before InitGoogleLogging() is written to STDERR",
                     "E0228 04:58:23.710914  3021 ResourceManager.cpp:95] Cannot load from file data/scene_datasets/gibson/Rosser.glb",
                     "E0228 04:58:23.713742  3021 Simulator.cpp:107] cannot load data/scene_datasets/gibson/Rosser.glb")
        found = api.diagnose(text).findings
        assert found[0].id == "log-inconclusive" and "Cannot load from file" in str(found[0].evidence.get("error lines"))

    def test_control_a_glog_info_record_is_not(self):
        text = paste("I1217 20:16:23.147665  4220 PhysicsManager.cpp:33] Deconstructing PhysicsManager")
        found = api.diagnose(text).findings
        assert found[0].id == "log-inconclusive" and "error lines" not in found[0].evidence


class TestDeviceMismatchOldWordings:
    verdict = "ddp-device-mismatch"

    def test_sibling_both_operands_on_the_cpu(self):
        # adapter-hub/adapters#100: torch < 1.10's checkSameGPU says "them" when both operands are on the CPU
        line = ("RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU "
                "(while checking arguments for addmm)\n")
        found = head(TB + line)
        assert found is not None and found.id == self.verdict and "gpus" not in found.evidence

    def test_sibling_the_head_alone_names_two_gpus(self):
        found = head(TB + "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'\n")
        assert found is not None and found.id == self.verdict and found.evidence["gpus"] == "two GPUs"

    def test_control_a_sentence_about_moving_tensors_to_the_gpu(self):
        assert self.verdict not in ids(paste("Error fixed: all tensors need to be on GPU before the forward pass."))


class TestInvalidDeviceId:
    verdict = "cuda-invalid-device-ordinal"

    @pytest.mark.parametrize("line", [
        "AssertionError: Invalid device id",  # open-mmlab/mmskeleton#304; frostinassiky/gtad#36 (DataParallel's device_ids)
        "RuntimeError: CUDA error (10): invalid device ordinal",  # open-mmlab/mmskeleton#55
    ])
    def test_sibling_both_refusals_are_a_gpu_the_machine_lacks(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "--gpus" in found.fix and "LOCAL_RANK" in found.fix

    def test_control_a_web_apis_device_id(self):
        assert self.verdict not in ids(TB + "fastapi.exceptions.HTTPException: 400 Invalid device ID\n")


class TestNvrtcArchUnknown:
    verdict = "nvrtc-arch-unknown"

    @pytest.mark.parametrize("line", [
        "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)",  # pytorch/pytorch#47658
        "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch) nvrtc compilation failed:",  # chengxuxin/expressive-humanoid#9
    ])
    def test_sibling_the_runtime_compiler_refusing_the_gpu(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "cu118" in found.fix

    def test_control_nvcc_building_an_extension_is_not_nvrtc(self):
        # OpenDriveLab/DriveAdapter#11: the toolkit's compiler refusing compute_89 (a build's answer, not this one)
        assert self.verdict not in ids("nvcc fatal   : Unsupported gpu architecture 'compute_89'\n")

    def test_sibling_a_build_without_kernels_for_the_gpu_keeps_its_own(self):
        assert head_id(TB + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == "cuda-no-kernel-image"


class TestTorchScalarIndexed:
    verdict = "torch-scalar-indexed"
    # thangvubk/video-super-resolution#7
    LINE = "IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor to a Python number\n"

    def test_sibling_the_error_names_the_line_to_change(self):
        log = TB + '  File "/home/u/solver.py", line 101, in _epoch_step\n    running_loss += loss.data[0]\n' + self.LINE
        found = head(log)
        assert found is not None and found.id == self.verdict and "solver.py:101" in found.fix and ".item()" in found.fix

    def test_control_torch_04s_warning_is_survived(self):
        # pytorch/pytorch#9453: the same words as a UserWarning in a healthy run
        log = ("9453.py:118: UserWarning: invalid index of a 0-dim tensor. This will be an error in PyTorch 0.5. Use tensor.item() "
               "to convert a 0-dim tensor to a Python number\n")
        assert self.verdict not in ids(log) and head(log) is None

    def test_sibling_another_index_error_is_not_the_api_change(self):
        assert head_id(TB + "IndexError: index 0 is out of bounds for dimension 0 with size 0\n") != self.verdict


def test_sibling_cutorchs_error_gets_torch7s_step_and_torchs_keeps_its_own():
    # DmitryUlyanov/texture_nets#83 (Lua Torch7) beside switchablenorms/Sparse_SwitchNorm#3 (torch 0.4's THC, DataParallel)
    lua = head(paste("InstanceNormalization.lua:50: arguments are located on different GPUs at", "stack traceback:"))
    torch = head(TB + "RuntimeError: arguments are located on different GPUs at /pytorch/aten/src/THC/generic/THCTensorMathCompareT.cu:31\n")
    assert lua is not None and "cutorch.setDevice" in lua.fix
    assert torch is not None and torch.id == lua.id and "cutorch" not in torch.fix and "DataParallel" in torch.fix


class TestExtensionCheckFailed:
    verdict = "extension-check-failed"

    @pytest.mark.parametrize("line,where,reason", [
        # isl-org/StableViewSynthesis#9 (quoted in a sentence), erikwijmans/Pointnet2_PyTorch#112, pyg-team/pytorch_geometric#2795
        ('But it raise error "RuntimeError: tgtidx.size(0) == 1 * nelems INTERNAL ASSERT FAILED at "generated/list_to_map_cuda.cpp":10, '
         'please report a bug to PyTorch. nelems of tgtidx does not match"', "list_to_map_cuda.cpp:10", "nelems of tgtidx does not match"),
        ("RuntimeError: false INTERNAL ASSERT FAILED at pointnet2_ops/_ext-src/src/sampling.cpp:83, please report a bug to PyTorch. "
         "CPU not supported (furthest_point_sampling at pointnet2_ops/_ext-src/src/sampling.cpp:83)", "sampling.cpp:83", "CPU not supported"),
        ('RuntimeError: INTERNAL ASSERT FAILED at "/home/travis/build/rusty1s/pytorch_spline_conv/csrc/cuda/weighting_cuda.cu":47, '
         "please report a bug to PyTorch. Input mismatch", "weighting_cuda.cu:47", "Input mismatch"),
    ])
    def test_sibling_the_extensions_check_is_named(self, line, where, reason):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict
        assert found.evidence["where"] == where and found.evidence["reason"] == reason and where in found.fix

    @pytest.mark.parametrize("line,verdict", [
        # torch's own asserts are not an extension's (pytorch/pytorch#149822; the allocator's NVML assert keeps its answer)
        ('RuntimeError: t == DeviceType::CUDA INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/impl/CUDAGuardImpl.h":28, please report a bug '
         "to PyTorch.", "unrecognised-failure"),
        ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to '
         "PyTorch.", "cuda-oom-nvml-assert"),
    ])
    def test_control_torchs_own_asserts(self, line, verdict):
        assert head_id(TB + line + "\n") == verdict != self.verdict
