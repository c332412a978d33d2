"""Controls and siblings for diagA16 (issue 35, the retired heldout15's wrong and called-failed answers, each as a class):
whose source a native check names (knowledge/libraries.py native_owner: torch's own tree is never an extension's); lines
that are code, not output (knowledge/lines.py CODE_LINE, a comment among code, a traceback's quoted source line); a
person's sentence that negates or asks about an error it names (knowledge/mentions.py said_in_prose), and a pinned host
allocation's failure before a segfault; an exception the program caught (knowledge/signs.py handled_after: logged, or went
on from). `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that
gets its own. Lines are real ones (threads named beside them) or the shape a program prints."""

from __future__ import annotations

import pytest
from test_controls_detect8 import errors, head_id, healthy

from gpudoctor import api
from gpudoctor.knowledge.libraries import native_owner

TB = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\n    loss.backward()\n'
FOOTER = ", please report a bug to PyTorch."


class TestWhoseNativeCheck:
    """torch's footer ends every INTERNAL ASSERT; the file the message names says whose check it is."""

    @pytest.mark.parametrize("path,owner", [
        ("/pytorch/torch/lib/c10d/reducer.cpp", "torch"),  # ModelTC/MQBench#128 (torch < 1.8's c10d in torch/lib)
        ("../torch/csrc/distributed/c10d/reducer.cpp", "torch"),
        ("/opt/conda/conda-bld/pytorch_1695392020201/work/c10/cuda/CUDACachingAllocator.cpp", "torch"),
        ("/tmp/pip-req-build-8xk2/aten/src/ATen/native/Loss.cpp", "torch"),
        ("/root/pytorch/torch/csrc/autograd/engine.cpp", "torch"),
        ("pointnet2_ops/_ext-src/src/sampling.cpp", "extension"),
        ("/home/travis/build/rusty1s/pytorch_spline_conv/csrc/cuda/weighting_cuda.cu", "extension"),
        ("/tmp/pip-req-build-x1/csrc/flash_attn/flash_api.cpp", "extension"),
        ("mmcv/ops/csrc/pytorch/cuda/roi_align_cuda.cu", "extension"),
        ("reducer.cpp", None),  # a bare name: torch's reducer.cpp and an extension's file look alike
    ])
    def test_owner_from_the_path(self, path, owner):
        assert native_owner(path) == owner

    @pytest.mark.parametrize("where", [
        "/pytorch/torch/lib/c10d/reducer.cpp\":343",  # ModelTC/MQBench#128: https://github.com/ModelTC/MQBench/issues/128
        "../torch/csrc/distributed/c10d/reducer.cpp\":343",
        "/opt/conda/conda-bld/pytorch_1670525541990/work/torch/csrc/distributed/c10d/reducer.cpp\":343",
        "reducer.cpp\":343",  # the path does not decide: no owner is claimed
    ])
    def test_control_torch_own_assert_is_no_extension_check(self, where):
        text = f'{TB}RuntimeError: grad.numel() == bucket_view.numel() INTERNAL ASSERT FAILED at "{where}{FOOTER}\n'
        # the unrecognised verdict with the line, or the user's exception where the traceback ends in the user's code
        assert head_id(text) in ("unrecognised-failure", "python-exception")
        assert not any("extension" in f.title for f in errors(text))

    @pytest.mark.parametrize("where,said", [
        ("/pytorch/torch/lib/c10d/reducer.cpp", "PyTorch's own (reducer.cpp"),
        ("reducer.cpp", "does not say whether the check is PyTorch's own or a compiled extension's"),
    ])
    def test_control_the_unrecognised_answer_says_whose_check_as_far_as_the_path_says(self, where, said):
        [found] = errors(f'RuntimeError: grad.numel() == bucket_view.numel() INTERNAL ASSERT FAILED at "{where}":343{FOOTER}\n')
        assert found.id == "unrecognised-failure" and said in found.fix

    @pytest.mark.parametrize("line", [
        "RuntimeError: false INTERNAL ASSERT FAILED at pointnet2_ops/_ext-src/src/sampling.cpp:83" + FOOTER + " CPU not supported",  # erikwijmans/Pointnet2_PyTorch#112
        'RuntimeError: x INTERNAL ASSERT FAILED at "/tmp/pip-req-build-x1/csrc/flash_attn/flash_api.cpp":12' + FOOTER,
    ])
    def test_sibling_an_extension_file_is_the_extension_check(self, line):
        assert head_id(f"{TB}{line}\n") == "extension-check-failed"


STORE_LINE = "RuntimeError: Address already in use"


class TestCodeIsNoOutput:
    """A script or a shell session pasted into a thread holds error words in code; only output is evidence."""

    @pytest.mark.parametrize("text", [
        # bigcode-project/starcoder#86: https://github.com/bigcode-project/starcoder/issues/86 (the user's finetune.py)
        "import os\nos.environ['MASTER_ADDR'] = 'localhost'\nos.environ['MASTER_PORT'] = '9994' # modify if RuntimeError: Address already in use\n",
        f'print("{STORE_LINE}")\n',
        f'echo "{STORE_LINE}"\n',
        f'msg = "{STORE_LINE}"\n',
        f'"""Retry when {STORE_LINE}."""\n',
        f"import os\n# modify if {STORE_LINE}\nos.environ['MASTER_PORT'] = '9994'\n",  # a comment among code
        f"#!/bin/bash\n# pick another port if {STORE_LINE}\nexport MASTER_PORT=29501\n",  # a shell script's comment
        f"{TB[:-20]}    port = pick()  # was: {STORE_LINE}\nValueError: no free port\n",  # a traceback's quoted source line
    ])
    def test_control_code_is_not_the_error(self, text):
        assert "store-address-in-use" not in {f.id for f in errors(text)}

    @pytest.mark.parametrize("text", [
        f"{STORE_LINE}\n",
        f"$ python train.py\n# {STORE_LINE}\n",  # a "#" line beside no code: a root prompt's, a logger's
        f"#12 3.21 {STORE_LINE}\n",  # BuildKit's step prefix
        f"root@abc:/workspace# {STORE_LINE}\n",  # printed after a root prompt
        f"MASTER_PORT=9994 torchrun train.py\n{STORE_LINE}\n",  # a shell's assignment is a command, the line after it output
    ])
    def test_sibling_output_is_the_error(self, text):
        assert head_id(text) == "store-address-in-use"


class TestProseIsNoEvidence:
    """A person's sentence that negates, asks about or supposes an error kind is no evidence of it; one that holds the
    program's own line, or says it happened, is."""

    # Eli-YiLi/PMM#3: https://github.com/Eli-YiLi/PMM/issues/3 (the maintainer's reply; the run's own line is the pinned host allocation's)
    PMM = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=296 error=2 : out of memory\n"
           "Segmentation fault (core dumped)\n")
    MAINTAINER = 'It seems not related to GPU, because GPU reports "CUDA out of memory" if batch size is too large.'

    @pytest.mark.parametrize("line", [
        MAINTAINER,
        "Is this a CUDA out of memory error?",
        "It isn't CUDA out of memory, the loss just goes to nan.",
    ])
    def test_control_prose_names_no_error(self, line):
        assert "cuda-oom" not in {f.id for f in errors(f"{line}\n")}

    def test_control_pinned_host_allocation_leads_before_the_segfault_and_the_prose(self):
        found = errors(f"{self.PMM}\n{self.MAINTAINER}\n")
        assert [f.id for f in found] == ["host-memory-exhausted"]  # the segfault is its consequence, the prose nothing

    @pytest.mark.parametrize("line", [
        "I don't know why I get RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity)",
        "When I train with 4 GPUs I get CUDA out of memory",
    ])
    def test_sibling_a_sentence_that_holds_the_error_is_evidence(self, line):
        assert head_id(f"{line}\n") == "cuda-oom"

    def test_sibling_the_device_allocator_is_the_gpu(self):
        line = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingAllocator.cpp line=296 error=2 : out of memory\n"
        assert head_id(line) == "cuda-oom"


# mozilla-ai/federated-finetuning#4: https://github.com/mozilla-ai/federated-finetuning/issues/4 (flwr logged it; the simulation ran)
LOGGED = ("ERROR :     An exception occurred !! 'ray'\n"
          "ERROR :     Traceback (most recent call last):\n"
          '  File ".venv/lib/python3.12/site-packages/flwr/server/superlink/fleet/vce/vce_api.py", line 325, in start_vce\n'
          "    backend_type = supported_backends[backend_name]\n"
          "KeyError: 'ray'\n")
BARE = LOGGED.replace("ERROR :     An exception occurred !! 'ray'\n", "").replace("ERROR :     Traceback", "Traceback")


class TestHandledException:
    """An exception the program caught (it logged the traceback, or went on counting its steps) is no error finding; one
    after which only other processes' output or a failure follows is."""

    @pytest.mark.parametrize("text", [
        LOGGED,
        LOGGED + "INFO :      [ROUND 1]\nINFO :      [ROUND 2]\n",
        BARE + "Epoch 2/3 loss=0.41\nEpoch 3/3 loss=0.33\ntraining completed\n",
    ])
    def test_control_a_caught_exception_is_undecided(self, text):
        assert not errors(text) and not healthy(text)
        [found] = [f for f in api.diagnose(text).findings if f.id == "log-inconclusive"]
        assert found.evidence["exception"].endswith("KeyError: 'ray'")

    @pytest.mark.parametrize("text", [
        BARE,  # Python's own report of an exception that ended the process
        BARE + "Epoch 2/3 loss=0.41\n",  # one line is no progress
        "[rank1]: " + BARE.replace("\n", "\n[rank1]: ").rstrip("[rank1]: ") + "[rank0]: step 12 loss 0.3\n[rank0]: step 13 loss 0.3\n",
        LOGGED + "Epoch 2/3 loss=0.41\nEpoch 3/3 loss=0.33\nsubprocess.CalledProcessError: Command 'flwr' returned non-zero exit status 1.\n",
    ])
    def test_sibling_an_exception_that_ended_a_process_is_an_error(self, text):
        assert errors(text)
