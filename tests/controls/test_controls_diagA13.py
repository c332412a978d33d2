"""diagA13 (issue 35; the retired heldout12's confidently wrong answers): each class test pairs a widened or new rule with
its control (the look-alike that must keep its verdict) and its dangerous sibling (the nearest input that needs another).
Real lines, threads beside them."""

from __future__ import annotations

import pytest
from test_controls_detect8 import ENDED, TB, head, head_id, healthy


# Tencent-RoboticsX/lifelike-agility-and-play#10: the league manager's poll, printed until the paste stops
POLL = "".join(f"[{n}] learner_id(lrngrp0) hasn't request_learner_task.\n" for n in range(8624, 8639))
# torch >= 2.4 at a rank's exit without destroy_process_group(): one warning per rank, the run ended
NOT_DESTROYED = "".join(
    f"[rank{r}]:[W1129 10:00:01.000000 12{r} ProcessGroupNCCL.cpp:1168] WARNING: process group has NOT been destroyed before we "
    "destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any "
    "pending NCCL operations have finished in this process.\n" for r in range(8))


class TestEndOfRun:
    """Healthy (exit 0) needs a line that shows the run's end; a shell loop's `done` and a program looping are none."""

    def test_sibling_a_shell_loops_done_is_no_end(self):
        paste = ("bash example_pmc_train.sh learner & \\\nfor i in {1..100}\ndo\n\tbash example_pmc_train.sh actor &\ndone\nwait`\n"
                 "but the logs show some problem `" + POLL)
        assert not healthy(paste)
        assert not healthy(POLL + "done\nwait\n")

    def test_sibling_one_message_over_and_over_after_an_end_is_a_loop(self):
        assert not healthy(ENDED + POLL)

    @pytest.mark.parametrize("tail", ["Done!\n", "Finished.\n", NOT_DESTROYED])
    def test_control_an_end_stays_an_end(self, tail):
        # a bare end in its program's capitals as the last line; every rank's warning at exit is a shutdown, not a loop
        assert healthy(ENDED + tail)


class TestDeviceMismatchWordings:
    verdict = "ddp-device-mismatch"

    @pytest.mark.parametrize("line", [
        # Alibaba-MIIL/ASL#50: THCUNN's assertion (torch <= 1.4); the maintainer: one GPU per process, set_device
        "RuntimeError: Assertion `THCTensor_(checkGPU)(state, 3, input, output, weight)' failed. Some of weight/gradient/input tensors "
        "are located on different GPUs. Please move them to a single one. at /pytorch/aten/src/THCUNN/generic/SpatialDepthwiseConvolution.cu:19",
        # yeyupiaoling/VoiceprintRecognition-Pytorch#39: stft's check, quoted without its exception in the PR's description
        "(torchaudio) stft input and window must be on the same device but got self on cuda:1 and window on cuda:0",
        # cuDNN's RNN check (aten/src/ATen/native/cudnn/RNN.cpp)
        "RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cuda:1 and parameter tensor at cuda:0",
    ])
    def test_sibling_two_gpus_in_every_wording(self, line):
        found = head(TB + '  File "/data/u/ASL/src/models/tresnet/layers/anti_aliasing.py", line 40, in __call__\n' + line + "\n")
        assert found is not None and found.id == self.verdict and "set_device(local_rank)" in found.fix

    @pytest.mark.parametrize("line", [
        "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",  # one GPU, two dtypes
        "RuntimeError: the model and its arguments are located on different nodes",
    ])
    def test_control_not_two_devices(self, line):
        assert head_id(TB + line + "\n") != self.verdict


class TestCallArgumentsRefused:
    """A call refused for its arguments at the caller's own line: the caller's or an installed package's version; never
    "in your code, fix it there" alone."""

    CALL = ('  File "/home/u/Deblurring-3D-Gaussian-Splatting/gaussian_renderer/__init__.py", line 52, in render\n'
            "    debug=pipe.debug\n")

    @pytest.mark.parametrize("message", [
        "__new__() missing 2 required positional arguments: 'depth_threshold' and 'iteration'",  # benhenryL/Deblurring-3D-Gaussian-Splatting#14
        "Linear4bit.forward() takes 2 positional arguments but 3 were given",  # pjlab-songcomposer/songcomposer#18
        "chemprop_predict() got an unexpected keyword argument 'use_gpu'",  # swansonk14/SyntheMol#5
    ])
    def test_sibling_both_causes_named_at_the_callers_line(self, message):
        found = head(TB + self.CALL + f"TypeError: {message}\n")
        assert found is not None and found.id == "unrecognised-failure" and found.evidence.get("class") == "call-arguments-refused"
        assert "your own code" in found.fix and "submodule" in found.fix

    def test_sibling_raised_inside_a_library_is_two_packages(self):
        # hiyouga/LlamaFactory#6139: accelerate calls transformers' BatchEncoding.to() as another version took it
        frames = ('  File "/opt/conda/lib/python3.10/site-packages/accelerate/utils/operations.py", line 151, in send_to_device\n'
                  "    return tensor.to(device, non_blocking=non_blocking)\n")
        assert head_id(TB + frames + "TypeError: BatchEncoding.to() got an unexpected keyword argument 'non_blocking'\n") == "library-api-mismatch"

    def test_control_another_typeerror_in_your_code_stays_yours(self):
        found = head(TB + self.CALL + "TypeError: list indices must be integers or slices, not str\n")
        assert found is not None and found.id == "python-exception" and "in your code" in found.title


class TestMemoryErrorWhichMemory:
    def test_sibling_a_librarys_own_message_does_not_say_host(self):
        # pykeen/pykeen#576: pykeen raises it when the model fits on the GPU at no batch size (a 16 GB V100)
        paste = ('raise MemoryError("The current model can\'t be trained on this hardware with these parameters.")\n'
                 "MemoryError: The current model can't be trained on this hardware with these parameters.\n")
        found = head(paste)
        assert found is not None and found.id == "memory-error-own-message"
        assert "not on the GPU" not in found.title + found.why and "GPU memory" in found.fix

    @pytest.mark.parametrize("line", [
        "MemoryError",  # ultralytics/ultralytics#9476: Python's own, no message
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.61 GiB for an array with shape (753, 536, 536) and data type float64",
        "MemoryError: std::bad_alloc",
    ])
    def test_control_pythons_own_words_are_the_hosts(self, line):
        assert head_id(TB + line + "\n") == "host-memory-exhausted"



class TestLibraryCheckouts:
    """A library run from a build tree or a source checkout raised it: not "your code, fix it there"."""

    @pytest.mark.parametrize("frames,exception", [
        # facebookresearch/DetectAndTrack#62: caffe2's Python package in a pytorch build tree
        ('  File "tools/train_net.py", line 175, in net_trainer\n    workspace.RunNet(model.net.Proto().name)\n'
         '  File "/home/vivian/HelloWorld/tracker/tools/pytorch/build/caffe2/python/workspace.py", line 180, in CallWithExceptionIntercept\n'
         "    return func(*args, **kwargs)\n", "RuntimeError: [enforce fail at pybind_state.cc:1141] success. Error running net keypoint_rcnn"),
        # Lightning-AI/lightning-thunder#448: thunder from its checkout, under torchrun
        ('  File "test.py", line 20, in <module>\n  File "lightning-thunder/thunder/distributed/__init__.py", line 434, in fsdp_transform_module\n'
         "    if p.device != device:\n", "UnboundLocalError: local variable 'p' referenced before assignment"),
    ])
    def test_sibling_a_library_checkouts_frame(self, frames, exception):
        found = head(TB + frames + exception + "\n")
        assert found is not None and found.id != "python-exception" and "fix it there" not in found.fix

    def test_control_a_users_folder_named_like_the_library(self):
        found = head(TB + '  File "/home/u/caffe2/train.py", line 12, in <module>\n' + "UnboundLocalError: local variable 'p' referenced before assignment\n")
        # (UnboundLocalError has its own class now, variable-unassigned: in the user's file it says fix that file, not upgrade)
        assert found is not None and found.id == "variable-unassigned" and "/home/u/caffe2/train.py" in found.fix
        assert "pip install -U" not in found.fix and "that frame is" not in found.fix
