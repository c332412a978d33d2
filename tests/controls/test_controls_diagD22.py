"""Controls and siblings for diagD22 (issue 35: a framework's own words that it cannot do what the job asked,
knowledge/patterns/classes22d.py): a program that runs on one GPU refusing a run that gave it several
(`single-gpu-program`), and Windows failing to start a console script's launcher .exe (`windows-launcher-failed`).
`test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its
own. Lines are real ones (their threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head
from test_controls_diagD21 import ids, no_error

from gpudoctor import api


class TestSingleGpuProgram:
    def test_sibling_unsloth_refuses_several_gpus(self):
        # unslothai/unsloth#724 (dev3): a notebook on a machine whose GPUs are all visible
        found = head(TB + "RuntimeError: Unsloth currently does not work on multi GPU setups - sadly we are a 2 brother team "
                     "so enabling it will require much more work, so we have to prioritize. Please understand!\n")
        assert found is not None and found.id == "single-gpu-program" and "Unsloth" in found.title
        assert "CUDA_VISIBLE_DEVICES=0 python train.py" in found.fix

    def test_sibling_mmcv_points_at_its_distributed_wrapper(self):
        # open-mmlab/mmdetection3d#603 (heldout20): mmcv's own message, the thread's title
        found = head("# MMDataParallel only supports single GPU training, if you need to train with multiple GPUs, please use "
                     "MMDistributedDataParallelinstead.\n")
        assert found is not None and found.id == "single-gpu-program" and "dist_train.sh" in found.fix

    def test_sibling_a_feature_the_program_lacks_stays_feature_not_supported(self):
        # huggingface/lerobot#1772 (heldout4): not about GPUs
        line = "ERROR 2025-08-21 19:35:25 y_server.py:245 Error in StreamActions: Currently not implemented for PI0\n"
        assert "single-gpu-program" not in ids(line) and "feature-not-supported" in ids(line)

    @pytest.mark.parametrize("line", [
        # unslothai/unsloth#53 (heldout19, not failed): the maintainer's sentence in a run that went on
        "@fst813 Oh Unsloth currently only works on 1 GPU (multi GPU in a future release). So it'll just use 1 GPU for now",
        # VisualComputingInstitute/TrackR-CNN#29 (heldout10): a maintainer's sentence, not the program's message
        "Multi-gpu training with TrackR-CNN is not supported. We produced all results using a single gpu.",
        # QwenLM/Qwen2.5-Omni#63 (dev4): vLLM's warning that a feature is off on these GPUs
        "(VllmWorker rank=0 pid=4149980) WARNING 03-29 08:10:03 [custom_all_reduce.py:137] Custom allreduce is disabled "
        "because it's not supported on more than two PCIe-only GPUs.",
    ])
    def test_control_a_sentence_or_a_warning_about_gpus(self, line):
        assert "single-gpu-program" not in ids(line + "\n") and no_error(line + "\n")


class TestWindowsLauncherFailed:
    def test_sibling_the_shim_alone(self):
        # meta-llama/llama#611 (dev6): torchrun.exe on Windows
        found = head("failed to create process.\n")
        assert found is not None and found.id == "windows-launcher-failed" and "torch.distributed.run" in found.fix

    def test_sibling_after_the_program_that_starts_torchrun(self):
        # hiyouga/LLaMA-Factory#3953 (heldout20): llamafactory-cli's own line, then the shim's words
        found = head("llamafactory.cli - Initializing distributed tasks at: 127.0.0.1:29437 failed to create process.\n")
        assert found is not None and found.id == "windows-launcher-failed" and "llamafactory.cli" in found.title

    def test_sibling_a_command_not_on_path_is_not_the_launcher(self):
        # cmd.exe's own words: no launcher ran at all
        assert "windows-launcher-failed" not in ids("'torchrun' is not recognized as an internal or external command,\n")

    @pytest.mark.parametrize("line", [
        "If torchrun says 'failed to create process.', reinstall it",
        "Creating process group with backend gloo",
    ])
    def test_control_advice_and_a_process_group(self, line):
        assert "windows-launcher-failed" not in ids(line + "\n") and no_error(line + "\n")


class TestDdpNothingToTrain:
    def test_sibling_a_title_keeps_the_start_of_torchs_message(self):
        # ultralytics/ultralytics#225 (heldout19): YOLOv8.0.3 started DDP itself with no device given
        found = head("# RuntimeError: DistributedDataParallel is not needed\n")
        assert found is not None and found.id == "ddp-nothing-to-train" and "device=0" in found.fix

    def test_sibling_a_parameter_ddp_never_used_is_another_verdict(self):
        # the nearest DDP refusal: parameters that do train, but not all of them reached the loss
        line = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss.\n")
        assert "ddp-nothing-to-train" not in ids(TB + line)

    def test_control_the_raise_line_of_torchs_source(self):
        line = ("    raise RuntimeError(\"DistributedDataParallel is not needed when a module doesn't have any parameter that "
                "requires a gradient.\")\n")
        assert "ddp-nothing-to-train" not in ids(line) and no_error(line)


def test_lightnings_message_with_the_rendered_apostrophe_is_its_own():
    # Lightning-AI/pytorch-lightning#18728 (heldout19): a quote that kept the typographic apostrophe (was unrecognised)
    found = head("> RuntimeError: Lightning can\u2019t create new processes if CUDA is already initialized. Did you manually call "
                 "torch.cuda.* functions, have moved the model to the device, or allocated memory on the GPU any other way?\n")
    assert found is not None and found.id == "lightning-cuda-initialized"


def test_an_undecided_log_launched_on_windows_or_macos_says_torch_has_no_nccl_there():
    # open-mmlab/mmpretrain#1942 (heldout5): a multi-GPU launch on Windows 10 that stops after start-up, no error line
    log = ("C:\\Users\\u\\mmpretrain> python -m torch.distributed.launch --nproc_per_node=2 tools/train.py cfg.py --launcher pytorch\n"
           "NOTE: Redirects are currently not supported in Windows or MacOS.\n")
    found = api.diagnose(log).findings[0]
    assert found.id == "log-inconclusive" and 'backend="gloo"' in found.fix and "Windows or macOS" in found.fix
    # the same launch on Linux: no word of the platform
    linux = api.diagnose(log.replace("NOTE: Redirects are currently not supported in Windows or MacOS.\n", "")).findings[0]
    assert 'backend="gloo"' not in linux.fix


def test_a_traceback_cut_on_windows_or_macos_says_torch_has_no_nccl_there():
    # meta-llama/llama#430 (dev6): macOS, the traceback cut inside init_process_group
    log = ("NOTE: Redirects are currently not supported in Windows or MacOs.\n"
           "Traceback (most recent call last):\n"
           '  File "/Users/u/llama/example_chat_completion.py", line 104, in <module>\n    fire.Fire(main)\n'
           '  File "/Users/u/llama/llama/generation.py", line 62, in build\n    torch.distributed.init_process_group("nccl")\n')
    found = api.diagnose(log).findings[0]
    assert found.id == "unrecognised-failure" and 'backend="gloo"' in found.fix
    assert 'backend="gloo"' not in api.diagnose(log.split("\n", 1)[1]).findings[0].fix  # no note: no word of the platform
