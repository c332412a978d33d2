"""Controls and siblings for diagB18 (issue 35, the retired heldout17's issue-index logs): failure lines of other
runtimes than Python that the excerpt held and diagnose did not read (a Lua interpreter's error line, tsl's fatal line
after its time stamp, a script's own `$0: line N:` error), and two shapes of a thread's history read as its failure (an
error the reporter's next words say is gone since, or did not stop the job; a line of a pasted code snippet read as a
program's opening line standing again). `test_control_*` is the look-alike input that must not get the verdict,
`test_sibling_*` the nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import ENDED, errors, head, head_id, healthy

from gpudoctor import api
from gpudoctor.core.findings import Severity


def verdict(text: str):
    [found] = [f for f in api.diagnose(text).findings if f.id in ("log-inconclusive", "log-no-failure")] or [None]
    return found


def kind_of(text: str) -> str:
    found = head(text)
    return found.evidence.get("kind", "") if found is not None and found.id == "unrecognised-failure" else "-"


# https://github.com/alncat/opusDSD/issues/10 (heldout17): the title quotes the error the reporter had first
OPUS_TITLE = "# RuntimeError: Expected size for first two dimensions of batch2 tensor to be: [104, 2] but got: [104, 3].\n\n"
OPUS_GONE = "Many thanks for your quick response. Now, I do not have that error anymore, so it worked!\n"
OPUS_NEXT = "However, a new error happened. This was the command:\n\n2024-02-26 13:27:46     image will be downsampled to 0.33 of original size 320\n  0%|\n"
# https://github.com/brownvc/ganimorph/issues/15 (heldout17): an ImportError fixed by another tensorpack, then a hang
GANI = ("i saw your code changes for tensorpack. You write its for tensorpack==0.8.9, but then i get the error:\n"
        "ImportError: cannot import name 'MovingAverageSummary'\n\n"
        "If i install tensorpack==0.9.4  it works. (with tensorflow 1.13)\n\n-----------\n"
        "But with multi-gpu it is not faster than with one gpu ?\n")
# https://github.com/LiYingwei/EarthVQA/issues/15 (heldout17): the run's own failure, then the thread's resolution
EARTH = ("launch.py: error: argument --master_port: invalid int value: 'train_lovedav2_seg.py'\n\n"
         "Could you please kindly remind me how to fix it?\nThanks.\n\n"
         "This problem is solved:\nI modify the  --master_port $RANDOM as -- master_port=1234.\nthe training code can run.\n")
# https://github.com/cyanysc/video-super-resolution/issues/7 (heldout11): the run's traceback, the fix, "solved! But other errors"
VSR = ('Traceback (most recent call last):\n  File "train.py", line 74, in main\n    solver.train(train_dataset)\n'
       '  File "C:\\Users\\csy\\Documents\\video-super-resolution-master\\solver.py", line 101, in _epoch_step\n    running_loss += loss.data[0]\n'
       "IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor to a Python number\n\n"
       "I guess you are using new PyTorch version. As the error says, you may change loss.data[0] to loss.item() to fix the problem.\n\n"
       "Yes, the problem is solved! Thank you!\nBut other errors appeared...\n\n-------YOUR SETTINGS_________\nContructing dataset...\nTraining...\n")
# https://github.com/openpathsampling/openpathsampling/issues/857 (heldout17): an error the reporter says did not kill the job
OPS = ("This starts off with a few errors:\n> FileNotFoundError: [Errno 2] No such file or directory: './initial_frame.trr'\n\n"
       "Though they don't seem to do kill the job.\nLater on, though, there are errors regarding reading a trr file:\n\n"
       '>   File "mdtraj/formats/xtc/trr.pyx", line 722, in mdtraj.formats.trr.TRRTrajectoryFile.seek\n'
       "> OSError: TRR Seek out of bounds: given absolute position: 3\n")


class TestSaidFixed:
    verdict = "log-inconclusive"

    @pytest.mark.parametrize("text", [
        OPUS_TITLE + "mgrageraz · comment · 2024-02-26\nHi @alncat !\n" + OPUS_GONE + OPUS_NEXT,
        GANI,
    ])
    def test_sibling_an_error_said_gone_before_another_problem_is_history(self, text):
        assert head(text) is None and not healthy(text)
        found = verdict(text)
        assert found.id == "log-inconclusive" and "is history" in found.title and found.evidence["said fixed"]
        demoted = [f for f in api.diagnose(text).findings if f.id == "unrecognised-failure"]
        assert demoted and demoted[0].severity is Severity.INFO and demoted[0].evidence["said_fixed"]["says"] == "gone"

    def test_sibling_an_error_said_not_to_stop_the_job_gives_way_to_the_later_one(self):
        found = head(OPS)
        assert found is not None and found.id == "unrecognised-failure" and found.evidence["first_line"] == 8
        assert next(f for f in api.diagnose(OPS).findings if f.id == "path-not-found").severity is Severity.INFO

    @pytest.mark.parametrize("text", [
        EARTH,  # the thread's resolution of the run's own failure: it stays the failure
        VSR,  # the run's own traceback, fixed, then other errors not shown: that run's failure stays
        OPUS_TITLE + OPUS_GONE,  # gone, and no other problem spoken of: a resolution too
        OPUS_TITLE + "Is that error gone now? However, a new error happened.\n",  # a question
        OPUS_TITLE + "I do not have that error anymore on the CPU, but on the GPU it fails.\n",  # another setup works
        OPUS_TITLE + "I did not have that error anymore, but then it came back again.\n",
        GANI.replace("If i install tensorpack==0.9.4  it works.", "If i use one GPU it works."),  # no change of a package
    ])
    def test_control_an_error_not_said_gone_stays_the_failure(self, text):
        assert head_id(text) != "-"

    def test_control_an_error_said_gone_long_before_is_not_this_one(self):
        text = "ImportError: cannot import name 'MovingAverageSummary'\n" + "step 1 loss 0.5\n" * 12 + GANI.split("\n\n", 1)[1]
        assert head_id(text) == "unrecognised-failure"


# https://github.com/Oneflow-Inc/oneflow/issues/8668 (heldout17): the failing snippet, its traceback, the working snippet
SNIPPET = ("```python\nimport oneflow\n\na = oneflow.randn(2, 2)\nb = oneflow.tensor([[1, 2], [1, 2]])\nc = oneflow.add(a, b)\n```\n\n"
           "```\ncpu:0 cpu:1\nTraceback (most recent call last):\n  File \"/path/to/test.py\", line 7, in <module>\n    c = oneflow.add(a, b)\n"
           "RuntimeError: Check failed: *default_device == *input_device Expected all tensors to be on the same device, but found at "
           "least two devices, cpu:0 (positional 0) and cpu:1 (positional 1)!\n```\n\n")
WORKING = "The code below runs fine:\n\n```python\nimport oneflow\n\na = oneflow.randn(2, 2)\nb = oneflow.randn(2, 2)\nc = oneflow.add(a, b)\n```\n"


class TestDdpDeviceMismatch:
    verdict = "ddp-device-mismatch"

    def test_sibling_oneflows_words_with_each_operands_place_are_read(self):
        found = head(SNIPPET)
        assert found is not None and found.id == "ddp-device-mismatch" and (found.evidence["device_a"], found.evidence["device_b"]) == ("cpu:0", "cpu:1")

    def test_control_a_snippet_line_pasted_again_is_no_new_run(self):
        found = head(SNIPPET + WORKING)  # (a = oneflow.randn(2, 2) stands in both snippets)
        assert found is not None and found.id == "ddp-device-mismatch" and found.severity is Severity.ERROR
        assert "earlier_run" not in found.evidence

    def test_sibling_a_programs_opening_printed_again_is_a_new_run(self):
        opening = "Loading the training configuration from configs/train.yaml\n"
        text = opening + SNIPPET.split("```\n\n", 1)[1].replace("```\n\n", "") + opening + ENDED
        found = next(f for f in api.diagnose(text).findings if f.id == "ddp-device-mismatch")
        assert found.severity is Severity.INFO and "earlier_run" in found.evidence

    def test_control_a_native_check_without_the_devices_stays_a_native_check(self):
        assert head_id("RuntimeError: Check failed: *default_device == *input_device Expected\n") == "native-check-failed"


class TestUnrecognisedFailure:
    verdict = "unrecognised-failure"

    @pytest.mark.parametrize("text,kind", [
        # https://github.com/jcjohnson/neural-style/issues/360 (heldout17)
        ("/home/ubuntu/torch/install/bin/luajit: neural-style/neural_style.lua:403: attempt to call field 'GPU' (a nil value)\n"
         "stack traceback:\n\tneural-style/neural_style.lua:403: in function 'setup_multi_gpu'\n", "lua"),
        # https://github.com/OpenNMT/OpenNMT/issues/134 (heldout17), quoted
        ("> /root/torch/install/bin/luajit: /root/torch/install/share/lua/5.1/nn/THNN.lua:109: bad argument #3 to 'v' (cannot convert "
         "'struct THLongTensor *' to 'struct THCudaTensor *')\n> stack traceback:\n", "lua"),
        # https://github.com/jcjohnson/fast-neural-style/issues/152 (heldout14): a container raises the module's error again
        ("`/home/prime/torch/install/bin/luajit: /home/prime/torch/install/share/lua/5.1/nn/Container.lua:67: `\n"
         "`In 17 module of nn.Sequential:`\n", "luarethrown"),
        # https://github.com/google-deepmind/mujoco_playground/issues/113 (heldout17): XLA's fatal line after tsl's time stamp
        ("0: reward=317.351\n2025-04-23 20:35:34.618070: F external/xla/xla/service/gpu/autotuning/gemm_fusion_autotuner.cc:1099] "
         "Non-OK-status: executable.status()\nStatus: INTERNAL: ptxas exited with non-zero error code 139, output:\n", "fatallevel"),
        # a script's own error line (heldout10's simplescaling/s1#106, heldout15's chuckcho/video-caffe#53, heldout17w's set -u)
        # (a script's redirect into a folder that is not there is path-not-found since diagB19: test_controls_diagB19.py)
        ("examples/c3d_ucf101/train_ucf101.sh: line 5: train: command not found\n", "notfound"),
        ("/data/lzm/DrugRecommend/src/models/baseline/run_deepspeed.sh: line 9: PYTHONPATH: unbound variable\n", "notfound"),
    ])
    def test_sibling_another_runtimes_error_line_is_read(self, text, kind):
        assert kind_of(text) == kind

    @pytest.mark.parametrize("text", [
        "/home/ubuntu/torch/install/bin/luajit: LuaJIT 2.1.0-beta1 -- Copyright (C) 2005-2015 Mike Pall.\n" + ENDED,
        "\t/home/prime/torch/install/share/lua/5.1/nn/THNN.lua:109: in function 'MSECriterion_updateOutput'\n" + ENDED,
        # TensorFlow's start-up E lines, printed on every healthy start (heldout16's sign-language-to-text#11)
        "2024-02-08 12:18:41.130207: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
        "Attempting to register factory for plugin cuDNN when one has already been registered\n" + ENDED,
        "2025-04-23 20:35:34.618070: I external/xla/xla/service/service.cc:152] XLA service initialized for platform CUDA\n" + ENDED,
        "see the script: line 9: it sets PYTHONPATH\n" + ENDED,
        "export PYTHONPATH=${PYTHONPATH:-}  # avoids 'unbound variable' under set -u\n" + ENDED,
    ])
    def test_control_a_look_alike_line_is_no_failure(self, text):
        assert not errors(text) and healthy(text)


# https://github.com/toru34/zhou_acl_2017/issues/3 (heldout17): the title quotes the ImportError, then the terminal session
ZHOU_RUN = ("[root@A01-R04-I220-11 zhou_acl_2017]# python3 train.py --n_epochs 20 --gpu 0\nTraceback (most recent call last):\n"
            '  File "train.py", line 35, in main\n    import _gdynet as dy # Use gpu\nImportError: No module named \'_gdynet\'\n\n'
            "Please set `--gpu -1` for cpu. I've fixed readme.\n\n"
            "[root@A01-R04-I220-11 zhou_acl_2017]# python3 train.py --n_epochs 20 --gpu -1\n[dynet] initializing CUDA\n"
            "CUDA failure in cudaGetDeviceCount(&nDevices)\nno CUDA-capable device is detected\n")


class TestModuleNotFound:
    verdict = "module-not-found"

    def test_control_a_typed_command_standing_again_is_no_programs_opening(self):
        found = {f.id: f for f in api.diagnose("# ImportError: No module named '_gdynet'\n\n" + ZHOU_RUN).findings}
        assert found["module-not-found"].severity is Severity.ERROR and "earlier_run" not in found["module-not-found"].evidence

    def test_sibling_the_same_command_run_again_after_its_failure_is_an_earlier_attempt(self):
        found = {f.id: f for f in api.diagnose(ZHOU_RUN).findings}  # (a prompt before the failure: knowledge/reruns.py Prompts)
        assert found["module-not-found"].severity is Severity.INFO and "earlier_attempt" in found["module-not-found"].evidence
        assert head_id(ZHOU_RUN) == "cuda-no-gpus-visible"
