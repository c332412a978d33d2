"""Controls and siblings for diagB13 (issue 35: the retired heldout12's lines that decide a cause): the classes in
knowledge/patterns/classes13b.py (a program of the container stack not installed, a lost X display, a distributed
sampler's own assert, DataParallel's gathered scalar loss), DDP's unfinished-reduction message cut by a paste and the zip
reader's "invalid header" read by the existing rules. `test_control_*` is the look-alike input that must not get the
verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


class TestUnfinishedReductionCut:
    verdict = "ddp-unused-parameters"

    @pytest.mark.parametrize("line", [
        "RuntimeError: Expected to have finish",  # open-mmlab/Amphion#45 (the paste ends there)
        "RuntimeError: Expected to have finished reduction in the prior",
    ])
    def test_sibling_a_cut_message_is_ddps(self, line):
        found = head("```bash\n" + line + "\n```\n")
        assert found is not None and found.id == self.verdict and "find_unused_parameters=True" in found.fix

    def test_sibling_the_static_graph_wording_keeps_its_own(self):
        # pytorch/pytorch#97030: the same head, then static_graph's sentence
        line = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
                "that your training graph has changed in this iteration, e.g., one parameter is used in first iteration, but then got "
                "unused in the second iteration. this is not compatible with static_graph set to True.\n")
        assert head_id(TB + line) == "ddp-static-graph-changed"

    def test_control_a_message_that_only_starts_alike(self):
        assert self.verdict not in ids(TB + "RuntimeError: Expected to have finishing touches applied before export\n")


class TestCheckpointZipHeader:
    verdict = "checkpoint-corrupt"
    # tomassosorio/OCR_tablenet#7; unit8co/darts#2254 quotes the same words in a sentence
    HEADER = "RuntimeError: [enforce fail at inline_container.cc:145] . PytorchStreamReader failed reading zip archive: invalid header or archive is corrupted"

    def test_sibling_the_invalid_header_wording(self):
        found = head(f"{TB}{self.HEADER}\n")
        assert found is not None and found.id == self.verdict and "download it again" in found.fix

    def test_control_a_whole_archive_without_torchs_file(self):
        # a readable zip that is not a torch.save checkpoint: no truncation, another answer
        assert self.verdict not in ids(TB + "RuntimeError: PytorchStreamReader failed locating file data.pkl: file not found\n")


class TestContainerRuntimeBinaryMissing:
    verdict = "container-runtime-binary-missing"

    @pytest.mark.parametrize("line,step", [
        # domesticatedviking/TextyMcSpeechy#47 (WSL's distro docker without runc)
        ("ERRO[0000] failed to create NVIDIA Container Runtime: error constructing low-level runtime: error locating runtime: no runtime "
         "binary found from candidate list: [docker-runc runc crun]", "Docker Desktop"),
        # NVIDIA/nvidia-container-runtime#68 (a package release without the hook)
        ("docker: Error response from daemon: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/"
         "io.containerd.runtime.v1.linux/moby/af42/log.json: no such file or directory): nvidia-container-runtime did not terminate "
         "sucessfully: 2019/07/23 17:28:30 ERROR: nvidia-container-runtime: inject NVIDIA hook: stat /usr/bin/nvidia-container-runtime-hook: "
         "no such file or directory", "nvidia-container-toolkit"),
        # NVIDIA/nvidia-docker#958
        ('docker: Error response from daemon: OCI runtime create failed: exec: "nvidia-container-runtime-hook": executable file not found '
         "in $PATH: unknown.", "nvidia-container-toolkit"),
        # NVlabs/BundleSDF#95 (the daemon configured with a runtime that is not installed)
        ('failed to create shim task: OCI runtime create failed: exec: "nvidia-container-runtime": executable file not found in $PATH: unknown',
         "nvidia-ctk runtime configure"),
    ])
    def test_sibling_the_missing_program_and_what_installs_it(self, line, step):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_control_a_container_without_nvidia_smi(self):
        # NVIDIA/nvidia-docker#858: the container started; the image has no nvidia-smi of its own (the hook did not run)
        line = ('docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused '
                '"exec: \\"nvidia-smi\\": executable file not found in $PATH": unknown.\n')
        assert self.verdict not in ids(line)

    def test_sibling_no_gpu_driver_registered_keeps_its_own(self):
        # huggingface/text-generation-inference#1312: docker has no GPU device driver at all
        line = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
        assert head_id(line) == "docker-gpu-runtime-missing"


class TestDisplayUnavailable:
    verdict = "display-unavailable"

    @pytest.mark.parametrize("line", [
        'XIO:  fatal IO error 25 (Inappropriate ioctl for device) on X server "localhost:10.0"',  # mikemikezhu/FedILC#1
        "_tkinter.TclError: no display name and no $DISPLAY environment variable",  # laddng/LiPlate#1
        "(image:1): Gtk-WARNING **: cannot open display: ",  # AIZOOTech/FaceMaskDetection#90
    ])
    def test_sibling_a_lost_or_missing_display(self, line):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and "MPLBACKEND=Agg" in found.fix

    def test_sibling_the_rank_that_lost_it_before_the_launchers_report(self):
        # PANPEIWEN/Infrared-Small-Target-Detection-Segmentation-Framework#2: rank 0's Xlib exit, then torch.distributed.launch
        found = api.diagnose("\n".join([
            'XIO:  fatal IO error 0 (Success) on X server "localhost:12.0"',
            "      after 48420 requests (48420 known processed) with 2336 events remaining.",
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1675421 closing signal SIGTERM",
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1675420) of binary: /home/u/bin/python",
        ])).findings
        assert found[0].id == self.verdict and found[0].evidence.get("display") == "localhost:12.0"

    def test_control_an_opencv_built_without_a_gui(self):
        # opencv/opencv-python#690: the headless wheel has no GTK at all; no display would help
        line = ("cv2.error: OpenCV(4.5.1) ../modules/highgui/src/window_gtk.cpp:641: error: (-2:Unspecified error) GTK backend is not "
                "available in function 'cvInitSystem'\n")
        assert self.verdict not in ids(TB + line)


LIGHTNING = ('  File "/home/u/miniconda3/envs/ts/lib/python3.10/site-packages/pytorch_lightning/overrides/distributed.py", line 213, in __init__\n'
             "    assert self.num_samples >= 1 or self.total_size == 0\n")


class TestSamplerFewerSamples:
    verdict = "sampler-fewer-samples-than-ranks"

    @pytest.mark.parametrize("log", [
        TB + LIGHTNING + "AssertionError\n",  # unit8co/darts#1945 (predict with devices='auto')
        "The training is successful but while predicting I am getting assertion error\n\n" + LIGHTNING + "\nplease help\n",  # unit8co/darts#1966 (cut)
        # pytorch/pytorch#49172 (torch 1.7's DistributedSampler, 7 ranks for 3 samples)
        TB + '  File "/opt/anaconda/lib/python3.6/site-packages/torch/utils/data/distributed.py", line 107, in __iter__\n'
        "    assert len(indices) == self.total_size\nAssertionError\n",
    ])
    def test_sibling_the_samplers_own_assert(self, log):
        found = head(log)
        assert found is not None and found.id == self.verdict and "devices=1" in found.fix

    def test_control_the_programs_own_bare_assert(self):
        log = TB + '  File "/home/u/data.py", line 40, in __init__\n    assert len(self.items) > 0\nAssertionError\n'
        assert head_id(log) != self.verdict


GATHER = ("/home/u/envs/lanedet/lib/python3.8/site-packages/torch/nn/parallel/_functions.py:65: UserWarning: Was asked to gather along "
          "dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector.\n"
          "  warnings.warn('Was asked to gather along dimension 0, but all '\n")


class TestGatheredScalarLoss:
    verdict = "dataparallel-scalar-loss-gathered"

    @pytest.mark.parametrize("failure", [
        # Turoad/lanedet#78: the traceback cut inside backward, at _make_grads
        TB + '  File "/home/u/lanedet/engine/runner.py", line 75, in train_epoch\n    loss.backward()\n'
        '  File "/home/u/envs/lanedet/lib/python3.8/site-packages/torch/autograd/__init__.py", line 141, in backward\n'
        "    grad_tensors_ = _make_grads(\n",
        # backward's own refusal of the vector
        TB + '  File "/home/u/train.py", line 75, in train_epoch\n    loss.backward()\n'
        "RuntimeError: grad can be implicitly created only for scalar outputs\n",
        # mlfoundations/open_clip#45: the gathered logit scale (8 GPUs) multiplied into the features
        "2022-03-18,06:20:51 | INFO | Start epoch 0\n" + TB + '  File "CLIP_model/training/train.py", line 97, in forward\n'
        "    logits_per_image = logit_scale * image_features @ text_features.T\n"
        "RuntimeError: The size of tensor a (8) must match the size of tensor b (1024) at non-singleton dimension 1\n",
    ])
    def test_sibling_the_gathered_vector_used_as_a_scalar(self, failure):
        found = api.diagnose(GATHER + failure).findings
        assert found[0].id == self.verdict and "loss.mean()" in found[0].fix
        assert "dataparallel-gathered-scalars" not in [f.id for f in found]  # the warning is told as the cause's, not twice

    def test_control_the_warning_in_a_run_that_goes_on(self):
        # jnhwkim/CLIP-ViL#2: the warning, then iterations: the code reduces the vector (or the log does not say)
        log = GATHER + "iter 0 (epoch 0), train_loss = 9.158, time/batch = 25.627\nRead data: 0.0002460479736328125\niter 1000\n"
        assert head(log) is None and "dataparallel-gathered-scalars" in ids(log)

    def test_control_another_failure_after_the_warning_keeps_its_own(self):
        log = GATHER + TB + '  File "/home/u/data.py", line 12, in __getitem__\n    return self.items[key]\nKeyError: \'input_ids\'\n'
        assert head_id(log) not in ("-", self.verdict)

    def test_sibling_the_refusal_without_the_warning_is_not_decided(self):
        # a non-scalar loss of the program's own making (no DataParallel): not this class
        log = TB + '  File "/home/u/train.py", line 75, in train_epoch\n    loss.backward()\nRuntimeError: grad can be implicitly created only for scalar outputs\n'
        assert head_id(log) not in ("-", self.verdict)


class TestPleaseInstallNamedPackage:
    verdict = "setup-refused-by-program"

    def test_sibling_a_check_that_names_the_package_to_install(self):
        # ckkelvinchan/RealBasicVSR#11 (mmediting's check for PyAV), quoted in a sentence as the thread has it
        found = head("when running 'mim train mmedit configs/x.py --gpus 3 --launcher pytorch', error occurred, "
                     "AssertionError: Please install av to use video compression.\n")
        assert found is not None and found.id == self.verdict and "Please install av" in found.fix

    @pytest.mark.parametrize("log", [
        # hpcaitech/Open-Sora#251: colossalai's warning; the run goes on with the unfused kernel
        "/x/colossalai/shardformer/layer/normalization.py:45: UserWarning: Please install apex from source (https://github.com/NVIDIA/apex) "
        "to use the fused layernorm kernel\n",
        TB + "RuntimeError: the backend failed to load. Please install it again and retry\n",  # no package named
    ])
    def test_control_a_warning_or_a_message_that_names_nothing(self, log):
        assert self.verdict not in ids(log)


class TestLoadFileNotSavedData:
    verdict = "load-file-not-saved-data"
    LOAD = TB + '  File "/x/site-packages/torch/serialization.py", line 920, in _legacy_load\n    magic_number = pickle_module.load(f, **pickle_load_args)\n'

    @pytest.mark.parametrize("line,step", [
        ("_pickle.UnpicklingError: invalid load key, 'v'.", "git lfs pull"),  # hhj1897/face_parsing#3
        ("UnpicklingError: invalid load key, '<'.", "web page"),  # nengo/nengo#1692
        ("_pickle.UnpicklingError: invalid load key, '\\x0a'.", "cut or corrupted"),  # Puzer/stylegan-encoder#29
        # pytorch/pytorch#150998: torch 2.6's weights-only unpickler names the byte by its code (118: 'v')
        ("Please file an issue with the following so that we can make `weights_only=True` compatible with your use case: "
         "WeightsUnpickler error: Unsupported operand 118", "git lfs pull"),
    ])
    def test_sibling_what_the_first_byte_says_the_file_is(self, line, step):
        found = head(self.LOAD + line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_control_a_weights_only_refusal_of_a_healthy_files_class(self):
        # voicepaw/so-vits-svc-fork#348: torch's weights-only load refusing a class the file holds; the file is fine
        line = ("_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` will likely "
                "succeed. WeightsUnpickler error: Unsupported class numpy.core.multiarray._reconstruct\n")
        assert self.verdict not in ids(self.LOAD + line)
