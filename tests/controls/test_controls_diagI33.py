"""Controls and siblings for the classes of the thirty-third round (issue 35 items 3 and 4, diagI33): failed logs of the
retired parts where the log holds the failure and the answer was not right, sorted by the class of their message.

- an exception whose class is written in lower case after its module (OpenCV's `cv2.error`, `zlib.error`, `struct.error`,
  `socket.timeout`): the line that ends the traceback, not a traceback cut before it;
- OpenCV's assertion that the image it was given is empty (`!_src.empty()`, `!ssize.empty()`: `cv2.imread` returned None, a
  capture returned no frame);
- a batch script's environment set-up that failed (conda's `activate` in a shell conda never initialised, Lmod's unknown
  module): the job ran without the environment it names;
- a file or folder a Go program (Singularity/Apptainer, docker, kubectl) did not find, in its `lstat PATH: no such file or
  directory` words;
- a bare `Killed` right under the program's own traceback: the program's error, then its process tree stopped (sglang kills
  its own server after a failed warm-up), not the kernel's OOM killer;
- a log several runs were appended to, where the last run failed with an exception no pattern names: the last run's failure,
  not an earlier run's named one.

The sample's cases are the logs as pasted; the other lines are real ones from the threads named beside them."""

from __future__ import annotations

from pathlib import Path

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a short run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def first_error(text: str):
    return next(f for f in api.diagnose(text).findings if f.severity is Severity.ERROR)


# hoanglehaithanh/Traffic-Sign-Detection#6
CVT_EMPTY = ("Traceback (most recent call last):\n"
             '  File "main.py", line 387, in <module>\n'
             "    main(args)\n"
             '  File "main.py", line 299, in main\n'
             "    roi = cv2.cvtColor(roi, cv2.COLOR_BGR2HSV)\n"
             "cv2.error: OpenCV(3.4.4) C:\\projects\\opencv-python\\opencv\\modules\\imgproc\\src\\color.cpp:181: error: "
             "(-215:Assertion failed) !_src.empty() in function 'cv::cvtColor'\n")

# breuderink/eegtools#18 (a zip file cut in its download)
ZLIB = ("Traceback (most recent call last):\n"
        '  File "E:/BCI/eegtools-master/examples/ex_csp_motor_imagery.py", line 18, in <module>\n'
        "    d = eegtools.data.bcicomp3_4a.load('aa')\n"
        '  File "C:\\Anaconda3\\envs\\py27\\lib\\zipfile.py", line 684, in read1\n'
        "    max(n - len_readbuffer, self.MIN_READ_SIZE)\n"
        "zlib.error: Error -3 while decompressing: invalid distance too far back\n")


class TestLowerCaseExceptionClass:
    verdict = "unrecognised-failure"

    def test_sibling_cv2_error_ends_the_traceback(self):
        # heldout32e 0d3ng/object-detection-vino: the VPU's refusal is the exception line, not a traceback cut before it
        f = first_error(case("heldout32e", "0d3ng-object-detection-vino-error-log"))
        assert "cut" not in f.title and "Unsupported network precision" in str(f.evidence) and "cv2.error" in str(f.evidence)

    def test_sibling_zlib_error_read(self):
        f = first_error(ZLIB)
        assert "cut" not in f.title and "zlib.error" in str(f.evidence)

    def test_control_a_logger_call_quoted_under_a_frame_is_code(self):
        # the source line a frame quotes is what ran, never the exception: the ValueError under it ends the traceback
        text = ("Traceback (most recent call last):\n"
                '  File "/home/u/train.py", line 12, in <module>\n'
                "    log.error: int = check(x)\n"
                "ValueError: x must be positive\n")
        assert "ValueError" in str(first_error(text).evidence)


class TestOpenCVImageEmpty:
    verdict = "opencv-image-empty"

    def test_sibling_cvtcolor_of_an_image_not_read(self):
        f = first_error(CVT_EMPTY)
        assert f.id == self.verdict and "imread" in f.fix

    def test_sibling_resize_words(self):
        # a resize given an empty frame (OpenCV 4's words: ssize)
        text = ("Traceback (most recent call last):\n"
                '  File "demo.py", line 40, in <module>\n'
                "    img = cv2.resize(frame, (640, 480))\n"
                "cv2.error: OpenCV(4.5.1) /tmp/pip-req-build-jr1ur_cf/opencv/modules/imgproc/src/resize.cpp:4051: error: "
                "(-215:Assertion failed) !ssize.empty() in function 'resize'\n")
        assert first_error(text).id == self.verdict

    def test_sibling_another_opencv_assert_is_not_an_empty_image(self):
        # heldout32e 0d3ng: the VPU refusing FP32 is OpenCV's error too, not an empty image
        assert self.verdict not in found(case("heldout32e", "0d3ng-object-detection-vino-error-log"))

    def test_control_handled_and_logged_as_a_warning(self):
        text = ("WARNING: skipping frame 12: OpenCV(4.5.1) resize.cpp:4051: error: (-215:Assertion failed) !ssize.empty() "
                "in function 'resize'\n") + TRAINED
        assert errors(text) == []


class TestOpenCVCheckFailed:
    verdict = "opencv-check-failed"

    def test_sibling_a_vpu_refusing_the_models_precision(self):
        # heldout32e 0d3ng/object-detection-vino: the DNN target's refusal, with the step for its backend
        f = first_error(case("heldout32e", "0d3ng-object-detection-vino-error-log"))
        assert f.id == self.verdict and "FP16" in f.fix and "DNN_TARGET_CPU" in f.fix

    def test_sibling_an_empty_image_is_its_own(self):
        assert first_error(CVT_EMPTY).id == "opencv-image-empty"

    def test_control_gstreamer_warning(self):
        text = ("[ WARN:0] global /tmp/pip-req-build/opencv/modules/videoio/src/cap_gstreamer.cpp (935) open OpenCV | GStreamer "
                "warning: Cannot query video position: status=0, value=-1, duration=-1\n") + TRAINED
        assert errors(text) == []


# the batch script's first lines in a Slurm stderr (conda/conda#8536 and heldout32e nmank/ModuleRefinement)
CONDA_INIT = ("CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.\n"
              "To initialize your shell, run\n\n    $ conda init <SHELL_NAME>\n\n"
              "Currently supported shells are:\n  - bash\n  - fish\n  - tcsh\n  - xonsh\n  - zsh\n  - powershell\n\n"
              "See 'conda init --help' for more information and options.\n\n"
              "IMPORTANT: You may need to close and restart your shell after running 'conda init'.\n\n\n")
# NOAA-EMC/rrfs-workflow#962
LMOD = ('Lmod has detected the following error: The following module(s) are unknown: "libfabric/1.20.1"\n\n'
        'Please check the spelling or version number. Also try "module spider ..."\n'
        "It is also possible your cache file is out-of-date; it may help to try:\n"
        '  $ module --ignore_cache load "libfabric/1.20.1"\n')


TB_RUN = 'Traceback (most recent call last):\n  File "/home/u/run.py", line 3, in <module>\n    import torch\n'


class TestJobEnvironmentSetUp:
    verdict = "job-environment-not-set-up"

    def test_sibling_conda_and_lmod_in_a_slurm_err(self):
        f = first_error(case("heldout32e", "nmank-modulerefinement-slurm-err"))
        assert f.id == self.verdict and "conda shell.bash hook" in f.fix

    def test_sibling_lmod_alone(self):
        f = first_error(LMOD)
        assert f.id == self.verdict and "module spider" in f.fix

    def test_sibling_conda_then_the_import_it_caused(self):
        # the job ran in the node's Python, without the environment's packages
        text = CONDA_INIT + (TB_RUN + "ModuleNotFoundError: No module named 'torch'\n")
        assert first_error(text).id == self.verdict and "module-not-found" in found(text)

    def test_sibling_conda_then_the_time_limit(self):
        # heldout20w jshe2304/smilesVAE: conda's set-up failed, then Slurm cancelled the job at its time limit: the limit is
        # the job's end, the set-up told after it
        assert errors(case("heldout20w", "jshe2304-smilesVAE-train-err"))[:2] == ["slurm-time-limit", self.verdict]

    def test_control_conda_failed_but_the_job_ran_to_its_end(self):
        # the job's own output after it, to its end: the script went on in an environment that had what it needed
        text = CONDA_INIT + "".join(f"epoch {i} iter {j} loss {1.0 / (i + j + 1):.4f}\n" for i in range(3) for j in range(5)) + TRAINED
        assert errors(text) == []


class TestGoToolPathNotFound:
    verdict = "path-not-found"

    def test_sibling_singularity_overlay_image(self):
        f = first_error(case("heldout32e", "shark-nlp-diffuseq-log-err"))
        assert f.id == self.verdict and "/scratch/ad6489/thesis/DiffuSeq/overlay_img2" in f.fix

    def test_sibling_singularity_image(self):
        # nipreps/fmriprep#2787
        text = ("FATAL:   could not open image /om2/user/smeisler/fmriprep_22.0.0rc0.sif: failed to retrieve path for "
                "/om2/user/smeisler/fmriprep_22.0.0rc0.sif: lstat /net/vast-storage.ib.cluster/scratch/vast/gablab/smeisler/"
                "fmriprep_22.0.0rc0.sif: no such file or directory\n")
        assert first_error(text).id == self.verdict

    def test_control_a_device_node_keeps_its_verdict(self):
        text = ('docker: Error response from daemon: linux runtime spec devices: error gathering device information while adding '
                'custom device "/dev/nvidia0": lstat /dev/nvidia0: no such file or directory.\n')
        assert first_error(text).id != self.verdict

    def test_control_a_warning_is_no_failure(self):
        text = "WARNING: stat /etc/localtime: no such file or directory, using UTC\n" + TRAINED
        assert errors(text) == []


class TestKilledUnderATraceback:
    verdict = "launcher-sigkill"

    def test_sibling_sglang_warmup_then_killed(self):
        # heldout32b sglang-2468: the warm-up request failed, then sglang stopped its own process tree
        f = first_error(case("heldout32b", "sglang-2468-quick-start-mistral-7b"))
        assert f.id != "launcher-sigkill" and "502" in str(f.evidence)

    def test_control_killed_after_progress_stays_the_kill(self):
        text = TRAINED.replace("Training complete.\n", "") + "Killed\n"
        assert first_error(text).id == "launcher-sigkill"

    def test_control_killed_long_after_a_handled_traceback(self):
        text = ("Traceback (most recent call last):\n"
                '  File "/home/u/train.py", line 3, in <module>\n'
                "    import wandb\n"
                "ModuleNotFoundError: No module named 'wandb'\n"
                + "".join(f"step {i} loss {1.0 / (i + 1):.4f}\n" for i in range(40)) + "Killed\n")
        assert "launcher-sigkill" in errors(text)


class TestLastRunDecides:
    verdict = "python-exception"

    def test_sibling_appended_runs_last_one_failed_in_collate(self):
        # heldout31w Dane-ME/keypoint-detection: nine starts in one file; the last two fail in torch.stack in the collate
        f = first_error(case("heldout31w", "dane-me-keypoint-detection-outputs-training-log"))
        assert f.id == self.verdict and "dataloader.py:2" in f.title and "pad every input" in f.fix

    def test_control_an_earlier_run_failed_the_last_trained_to_its_end(self):
        start = "2025-05-23 17:34:16,771 - === Starting Training Pipeline ===\n"
        text = (start + "2025-05-23 17:34:17,017 - An error occurred: Given groups=1, weight of size [16, 3, 3, 3], expected "
                "input[2, 1, 224, 224] to have 3 channels, but got 1 channels instead\n" + start.replace("17:34:16", "17:40:02")
                + "".join(f"2025-05-23 17:4{i}:00,000 - Epoch {i}/5 - loss: {1.0 / (i + 1):.4f}\n" for i in range(1, 6))
                + "2025-05-23 17:47:00,000 - Training complete.\n")
        assert errors(text) == []


class TestSubmoduleNotFound:
    verdict = "module-not-found"

    def test_sibling_a_wheel_without_the_repository_folder(self):
        # heldout32 Megatron-LM#870: megatron imports (the megatron_core wheel), megatron.training is the repository's
        f = first_error(case("heldout32", "megatron-lm-870-mcore-no-training-module"))
        assert f.id == self.verdict and "megatron" in f.fix and "PYTHONPATH" in f.fix

    def test_sibling_a_module_removed_from_its_package(self):
        # xinntao/Real-ESRGAN#777 (torchvision 0.17 removed transforms.functional_tensor; basicsr imports it)
        f = first_error("ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'\n")
        assert f.id == self.verdict and "torchvision" in f.fix and "version" in f.fix

    def test_control_a_top_level_module_keeps_the_environment_step(self):
        f = first_error("ModuleNotFoundError: No module named 'llamafactory'\n")
        assert f.id == self.verdict and "PYTHONPATH" not in f.fix and "which python" in f.fix


class TestEstimatorNotFitted:
    def test_sibling_fitted_attribute_read_before_fit(self):
        # heldout32e DanielBerns/weather_forecast: MultiOutputRegressor.estimators_ read before fit
        f = first_error(case("heldout32e", "danielberns-weather-forecast-logs-error-txt"))
        assert "fit" in f.fix.split(";")[0] and "estimators_" in f.fix

    def test_sibling_lasso_coef(self):
        # scikit-learn/scikit-learn#20224
        text = ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
                "AttributeError: 'Lasso' object has no attribute 'coef_'\n")
        assert "fit" in first_error(text).fix

    def test_control_a_plain_attribute_keeps_the_version_step(self):
        text = (TB_RUN.replace("import torch", "fabric.init_module()")
                + "AttributeError: 'Fabric' object has no attribute 'init_module'\n")
        assert "not fitted" not in first_error(text).fix


class TestEscapedQuotes:
    verdict = "backend-not-built"

    def test_sibling_a_repr_pasted_message(self):
        # heldout32 accelerate#141: the message pasted with its apostrophe escaped
        f = first_error(case("heldout32", "accelerate-141-windows-no-nccl-gloo"))
        assert f.id == "backend-not-built" and "gloo" in f.fix

    def test_control_a_windows_path_keeps_its_backslashes(self):
        text = "FileNotFoundError: [Errno 2] No such file or directory: 'C:\\\\data\\\\train\\\\'\n"
        assert first_error(text).id == "path-not-found"


DEV10 = Path(__file__).resolve().parents[1] / "fixtures" / "log_sample" / "dev10"


def dev10(name: str) -> str:
    """A dev10 case (whole job output files, development part)."""
    return (DEV10 / f"{name}.log").read_text(encoding="utf-8")


class TestHdf5ObjectMissing:
    verdict = "hdf5-object-missing"

    def test_sibling_ground_truth_without_its_dataset(self):
        # dev10 rcvlab/AIIMLab: the .h5 ground truth has no 'density' dataset
        f = first_error(dev10("rcvlab-aiimlab-crowd-counting-train-out"))
        assert f.id == self.verdict and "h5ls" in f.fix

    def test_sibling_h5py3_words(self):
        # maawoo/gedixr#3
        text = (TB_RUN.replace("import torch", "shots = f[f'{beam}/shot_number'][()]")
                + "KeyError: \"Unable to synchronously open object (object 'shot_number' doesn't exist)\"\n")
        assert first_error(text).id == self.verdict

    def test_control_a_dicts_key_is_another_class(self):
        text = TB_RUN.replace("import torch", "x = batch['density']") + "KeyError: 'density'\n"
        assert first_error(text).id != self.verdict


class TestBitsandbytesOutOfMemory:
    verdict = "bitsandbytes-out-of-memory"

    def test_sibling_paged_memory_under_wsl(self):
        # dev9 InternLM/xtuner#319: the line is in the log (the answer said no line showed it)
        f = first_error(case("dev9", "xtuner-319-wsl-qlora-train"))
        assert f.id == self.verdict and "paged" in f.fix and "wslconfig" in f.fix

    def test_sibling_another_cuda_error_keeps_cudas_table(self):
        text = "Error invalid device function at line 508 in file /home/s/bitsandbytes-main/csrc/ops.cu\n"
        assert first_error(text).id == "cuda-no-kernel-image"

    def test_control_the_title_alone(self):
        text = ("# wsl ubuntu 22.04：xtuner train : Error out of memory at line 380 in file "
                "/mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/pythonInterface.c\n") + TRAINED
        assert self.verdict not in errors(text)


class TestLocalRequestProxied:
    verdict = "local-request-proxied"

    def test_sibling_sglang_warmup(self):
        f = first_error(case("heldout32b", "sglang-2468-quick-start-mistral-7b"))
        assert f.id == self.verdict and "no_proxy" in f.fix

    def test_control_a_remote_gateway(self):
        text = "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://huggingface.co/api/models/x\n"
        assert self.verdict not in errors(text)

    def test_control_a_server_not_ready(self):
        text = "AssertionError: res=<Response [503]>, res.text=''\n"
        assert self.verdict not in errors(text)


class TestMpirunProgramNotStarted:
    verdict = "mpirun-program-not-started"

    def test_sibling_openhpc_prun_without_python(self):
        # dev10 bi-altgg slurm.out: prun found no python3 on the batch job's PATH
        f = first_error(dev10("bi-altgg-afai-vs-haldane-slurm-out"))
        assert f.id == self.verdict and "module load" in f.fix and "python3" in f.fix

    def test_control_prun_starting_the_program(self):
        text = "[prun] Master compute host = c1\n[prun] Resource manager = slurm\n[prun] Launch cmd = mpirun python3 train.py\n" + TRAINED
        assert errors(text) == []


class TestLightningGpusUnavailable:
    verdict = "lightning-gpus-unavailable"

    def test_sibling_no_gpu_at_all(self):
        # dev10 kanadem/TwitterRumorDetection: gpus=[0] on a machine with none
        f = first_error(dev10("kanadem-twitterrumordetection-train-out"))
        assert f.id == self.verdict and f.fix.startswith("this process sees no GPU at all")

    def test_control_an_index_past_the_gpus_keeps_the_index_step(self):
        text = ("lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [1]\n"
                " But your machine only has: [0]\n")
        f = first_error(text)
        assert f.id == self.verdict and not f.fix.startswith("this process sees no GPU")


class TestModuleShadowedByAFile:
    verdict = "module-not-found"

    def test_sibling_not_a_package(self):
        # heldout27 cuquantum#76: "'cusvaer' is not a package": a single module of that name was imported
        f = first_error(case("heldout27", "cuquantum-76-apptainer-appliance"))
        assert f.id == self.verdict and f.fix.startswith("cusvaer was imported as a single module")

    def test_control_a_plain_dotted_name_keeps_the_submodule_step(self):
        f = first_error("ModuleNotFoundError: No module named 'torch.distributed.elastic'\n")
        assert f.fix.startswith("Python imported torch and found no torch.distributed.elastic")


class TestOpenCVWithoutGui:
    verdict = "opencv-check-failed"

    def test_sibling_imshow_in_a_headless_build(self):
        # heldout28 LivePortrait#76: the reporter's second error (the thread's fix: another opencv-python)
        text = ("Traceback (most recent call last):\n  File \"inference.py\", line 40, in <module>\n    cv2.imshow('x', frame)\n"
                "cv2.error: OpenCV(4.10.0) /io/opencv/modules/highgui/src/window.cpp:1301: error: (-2:Unspecified error) The function is "
                "not implemented. Rebuild the library with Windows, GTK+ 2.x or Cocoa support. If you are on Ubuntu or Debian, install "
                "libgtk2.0-dev and pkg-config, then re-run cmake or configure script in function 'cvShowImage'\n")
        f = first_error(text)
        assert f.id == self.verdict and "opencv-python-headless" in f.fix

    def test_control_a_display_missing_keeps_its_verdict(self):
        text = ("cv2.error: OpenCV(4.6.0) /io/opencv/modules/highgui/src/window_gtk.cpp:635: error: (-2:Unspecified error) Can't "
                "initialize GTK backend in function 'cvInitSystem'\n")
        assert first_error(text).id != self.verdict
