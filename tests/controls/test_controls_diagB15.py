"""Controls and siblings for diagB15 (issue 35: the retired heldout14's lines that decide a cause, and its cut tracebacks):
the classes in knowledge/patterns/classes15b.py (a draw from an empty population, inference tensors outside inference mode,
a TensorFlow op no device it was pinned to takes, mpirun not starting the program), the rules they widen (detectron2's
diverged proposals, torch 0.4's THCudaCheck unknown error at CUDA's start, docker's --gpus on a CPU run), and what the
unrecognised answer says of a traceback cut before its exception line (its last frame's log line, code and owner; what to
paste). `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets
its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


HEALTHY = "epoch 1 step 100 loss 0.532\nepoch 1 step 200 loss 0.511\nTraining finished.\n"


class TestDrawFromEmptyPopulation:
    verdict = "draw-from-empty-population"

    @pytest.mark.parametrize("line,step", [
        # mabaorui/OnSurfacePrior#2: np.random.choice(SP_NUM//10, ...) with SP_NUM 0
        ("ValueError: a must be greater than 0 unless no samples are taken", "count of 0"),
        ("ValueError: 'a' cannot be empty unless no samples are taken", "is empty"),  # zhykoties/TimeSeries#8
        ("IndexError: Cannot choose from an empty sequence", "ls the path"),  # ZYK100/MMN#2: a file list that found nothing
        ("ValueError: Sample larger than population or is negative", "more items than there are"),  # zhangzjn/FReeNet#11
    ])
    def test_sibling_each_draw_and_what_decides_it(self, line, step):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_sibling_an_empty_dataset_under_a_sampler_keeps_its_own(self):
        # ikea-asm's zero clips: torch's RandomSampler over an empty dataset
        assert head_id(TB + "ValueError: num_samples should be a positive integer value, but got num_samples=0\n") == "sampler-zero-samples"

    def test_control_a_healthy_run_that_draws(self):
        log = "    idx = np.random.choice(len(files), 16)  # a must be greater than 0\n" + HEALTHY
        assert self.verdict not in ids(log)


class TestArrayIndexedPastItsDimensions:
    verdict = "array-indexed-past-its-dimensions"
    # andabi/music-source-separation#1: the frame that indexes two axes
    FRAME = '  File "/home/kelsey/music-source-separation/preprocess.py", line 36, in get_src1_src2_wav\n    return wav[:, 0], wav[:, 1]\n'

    @pytest.mark.parametrize("line", [
        "IndexError: too many indices for array",  # andabi/music-source-separation#1 (numpy before 1.19)
        "IndexError: too many indices for array: array is 1-dimensional, but 2 were indexed",  # uzh-rpg/rpg_public_dronet#48
        "IndexError: too many indices for tensor of dimension 1",  # torch's wording
    ])
    def test_sibling_each_wording(self, line):
        found = head(TB + self.FRAME + line + "\n")
        assert found is not None and found.id == self.verdict and "print(x.shape)" in found.fix

    def test_sibling_an_index_past_the_end_is_not_this(self):
        # a position past an axis's length: another failure (the catch-all reads it)
        assert head_id(TB + self.FRAME + "IndexError: index 5 is out of bounds for axis 0 with size 5\n") != self.verdict

    def test_control_a_healthy_log_that_indexes(self):
        assert self.verdict not in ids("    left = wav[:, 0]  # too many indices for array if mono\n" + HEALTHY)


class TestSyncbnReplicasNotConnected:
    verdict = "syncbn-replicas-not-connected"
    # wuhuikai/FastFCN#56 (heldout14): encoding's SyncBN frame, then the error
    FRAME = ('  File "/home/u/anaconda3/lib/python3.6/site-packages/encoding/nn/syncbn.py", line 58, in forward\n'
             "    mean, inv_std = self._slave_pipe.run_slave(_ChildMessage(xsum, xsqsum, N))\n")

    def test_sibling_the_unconnected_replica(self):
        found = head(TB + self.FRAME + "AttributeError: 'NoneType' object has no attribute 'run_slave'\n")
        assert found is not None and found.id == self.verdict and "torch.nn.BatchNorm2d" in found.fix

    def test_sibling_another_none_in_torchs_syncbatchnorm_is_not_this(self):
        # pytorch/pytorch#49730: torch's own SyncBatchNorm with track_running_stats=False
        log = TB + '  File "/x/lib/python3.8/site-packages/torch/nn/modules/_functions.py", line 12, in forward\n' \
            "AttributeError: 'NoneType' object has no attribute 'dtype'\n"
        assert head_id(log) != self.verdict

    def test_control_the_frames_source_line_alone(self):
        assert self.verdict not in ids("    mean, inv_std = self._slave_pipe.run_slave(_ChildMessage(xsum, xsqsum, N))\n" + HEALTHY)


class TestDatasetReportedEmpty:
    verdict = "dataset-reported-empty"

    def test_sibling_an_empty_count_before_a_cut_traceback_is_the_lead(self):
        # ZFTurbo/Music-Source-Separation-Training#16: the count, then a traceback cut in the first epoch's loop
        log = ("Loading songs data from cache: results/metadata_1.pkl. If you updated dataset remove metadata_1.pkl before training!\n"
               "Found tracks in dataset: 0\n" + TestCutTraceback.CUT)
        report = api.diagnose(log)
        assert not report.ok and self.verdict in [f.id for f in report.findings]

    @pytest.mark.parametrize("line", [
        "  num reg images / 正則化画像の数: 0",  # kohya: no regularisation images, a healthy run (dev4/bitsandbytes-169)
        "Found 0 corrupted images, skipping none",
        "Found 12000 images belonging to 10 classes.",
    ])
    def test_control_counts_that_are_not_an_empty_dataset(self, line):
        assert self.verdict not in ids(line + "\n" + HEALTHY)


class TestInferenceTensorOutsideInferenceMode:
    verdict = "inference-tensor-outside-inference-mode"

    @pytest.mark.parametrize("line", [
        # lucidrains/gigagan-pytorch#36; unslothai/unsloth#2434; hiyouga/LlamaFactory#184
        "RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update",
        "RuntimeError: Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.",
        "RuntimeError:Inference tensors can't be saved for backward.To work around you can make a clone to get a normal tensor and use it in autograd",
    ])
    def test_sibling_each_wording(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "inference_mode=False" in found.fix

    def test_sibling_a_tensor_outside_autograd_is_not_this(self):
        # no_grad's tensor given to backward: another cause, never named as inference mode
        log = TB + "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"
        assert self.verdict not in ids(log)

    def test_control_a_configuration_that_names_inference_mode(self):
        assert self.verdict not in ids("  inference_mode: true\n  inference tensors are cloned before training\n" + HEALTHY)


class TestTfOpNoGpuPlacement:
    verdict = "tf-op-no-gpu-placement"

    @pytest.mark.parametrize("line,reason", [
        # tensorflow/models#4548: an op with no GPU kernel
        ("InvalidArgumentError (see above for traceback): Cannot assign a device for operation 'InceptionV4/Logits/Predictions': Could not "
         "satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.", "no GPU kernel"),
        # Breta01/handwriting-ocr#56: a TensorArray gradient colocated with CPU ops
        ("InvalidArgumentError: Cannot assign a device for operation 'gradients/map/while/map/while/TensorArrayWrite/TensorArrayWriteV3_grad/"
         "TensorArrayGrad/TensorArrayGradV3/f_acc': Could not satisfy explicit device specification '' because the node was colocated with a "
         "group of nodes that required incompatible device '/job:l", "share a device"),
    ])
    def test_sibling_why_it_cannot_be_placed(self, line, reason):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and reason in found.fix and "allow_soft_placement=True" in found.fix

    def test_sibling_no_gpu_registered_keeps_its_own(self):
        # tensorflow/tensorflow#8093: the GPU itself is not registered
        line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device to node 'gradients/ff_1/add_grad/"
                "BroadcastGradientArgs': Could not satisfy explicit device specification '/device:GPU:0' because no devices matching that "
                "specification are registered in this process; available devices: /job:localhost/replica:0/task:0/cpu:0\n")
        assert head_id(line) == "tensorflow-gpu-not-visible"

    def test_control_tensorflow_placing_ops_on_its_gpu(self):
        log = ("2018-04-25 13:29:00.631243: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Found device 0 with properties:\n"
               "2018-04-25 13:29:01.000000: I tensorflow/core/common_runtime/placer.cc:54] gradients/map/while/TensorArrayGradV3: (TensorArrayGradV3)/job:localhost/replica:0/task:0/device:GPU:0\n"
               + HEALTHY)
        assert self.verdict not in ids(log)


class TestTensorflowGpuLibrariesNotLoaded:
    verdict = "tensorflow-gpu-libraries-not-loaded"
    # JdeRobot/BehaviorMetrics#385: the libraries named on the lines before TensorFlow's summary
    LOG = ("2022-07-10 15:08:09.276131: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
           "2022-07-10 15:08:09.276917: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please "
           "make sure the missing libraries mentioned above are installed properly if you would like to use GPU.\nSkipping registering GPU devices...\n")

    def test_sibling_the_missing_libraries_are_named_and_the_run_is_not_failed(self):
        report = api.diagnose(self.LOG + HEALTHY)
        found = next((f for f in report.findings if f.id == self.verdict), None)
        assert found is not None and "libcudnn.so.8" in found.fix and report.ok  # a warning: a CPU-only run that went on

    def test_control_tensorflow_that_opened_its_libraries(self):
        log = ("2020-05-19 23:00:45.870715: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened dynamic library libcudnn.so.7\n"
               "2019-12-01 20:12:55.601941: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.\n"
               + HEALTHY)
        assert self.verdict not in ids(log)


class TestMpirunProgramNotStarted:
    verdict = "mpirun-program-not-started"
    # TRI-ML/dd3d#6: Open MPI's help text, the program and the node on the lines under it
    ACCESS = ("--------------------------------------------------------------------------\n"
              "mpirun was unable to launch the specified application as it could not access\n"
              "or execute an executable:\n\nExecutable: ./script/train.py\nNode: shaxbw06\n\n"
              "while attempting to start process rank 0.\n")
    # JuliaParallel/MPI.jl#237: the program not on the PATH
    FIND = ("mpirun was unable to find the specified executable file, and therefore\ndid not launch the job.  This error was first "
            "reported for process\nrank 0; it may have occurred for other processes as well.\n\nNode:       dsigler-31368s\nExecutable: julia\n")

    def test_sibling_a_script_without_its_interpreter(self):
        found = head(self.ACCESS)
        assert found is not None and found.id == self.verdict
        assert "python ./script/train.py" in found.fix and "shaxbw06" in found.fix

    def test_sibling_a_program_not_on_the_path(self):
        found = head(self.FIND)
        assert found is not None and found.id == self.verdict and "julia is not on the PATH" in found.fix

    def test_sibling_a_rank_that_started_and_died_keeps_its_own(self):
        line = "mpirun noticed that process rank 0 with PID 0 on node gpu01 exited on signal 9 (Killed).\n"
        assert head_id(line) == "mpi-rank-failed"

    def test_control_a_healthy_mpirun_start(self):
        log = "+ mpirun -np 2 -H localhost:2 -x PATH python train.py\n[1,0]<stdout>:Executable: python\n" + HEALTHY
        assert self.verdict not in ids(log)


class TestWidened:
    def test_sibling_detectron2_diverged_proposals(self):
        # facebookresearch/Detic#22: an 8-GPU config run on one GPU
        found = head(TB + "FloatingPointError: Predicted boxes or scores contain Inf/NaN. Training has diverged.\n")
        assert found is not None and found.id == "training-stopped-nonfinite" and "per GPU" in found.fix

    def test_control_detectron2_events_with_a_finite_loss(self):
        log = ("[02/04 01:35:21 d2.utils.events]:  eta: 1 day, 12:22:15  iter: 680  total_loss: 0.9863  loss_cls: 0.04699  "
               "lr: 0.013586  max_mem: 4325M\n") + HEALTHY
        assert "training-stopped-nonfinite" not in ids(log)

    def test_sibling_thcudacheck_unknown_error_at_cuda_start(self):
        # AbnerHqC/GaitSet#70: torch 0.4, at self.encoder.cuda()
        line = "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1533672544752/work/aten/src/THC/THCGeneral.cpp line=74 error=30 : unknown error\n"
        assert head_id(line) == "cuda-init-unknown-error"

    def test_sibling_thcudacheck_of_a_kernel_keeps_its_own(self):
        # NVIDIA/vid2vid#62: an illegal access reported by THC's copy, not CUDA's start
        line = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=102 error=77 : an illegal memory access was encountered\n"
        assert head_id(line) == "cuda-illegal-memory-access"

    def test_sibling_docker_gpus_on_a_cpu_run_names_dropping_the_flag(self):
        # knaw-huc/loghi#18: the script passed --gpus all with GPU=-1
        found = head('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n')
        assert found is not None and found.id == "docker-gpu-runtime-missing" and "drop --gpus" in found.fix


class TestCutTraceback:
    # MrZihan/Sim2Real-VLN-3DFF#7 (heldout14): the paste ends after the frame's source line
    CUT = ('Traceback (most recent call last):\n'
           '  File "/home/u/VLN_3DFF/run.py", line 88, in <module>\n'
           '    main()\n'
           '  File "/home/u/VLN_3DFF/vlnce_baselines/waypoint_networks/utils.py", line 295, in depth_to_3D\n'
           "    xys = torch.vstack((torch.mul(xs, depth), torch.mul(ys, depth), -depth))\n"
           "I1030 10:00:00 other output\n")
    # a library's frame last (vCLIMB_Benchmark#8: DataParallel re-raising a replica's exception)
    LIBRARY = ('Traceback (most recent call last):\n'
               '  File "/root/vCLIMB/model/iCaRL_conLoss.py", line 127, in train\n'
               "    feature = self.feature_encoder(video, get_emb = True).data.cpu().numpy()\n"
               '  File "/root/miniconda3/envs/v/lib/python3.8/site-packages/torch/nn/parallel/parallel_apply.py", line 86, in parallel_apply\n'
               "    output.reraise()\n"
               "more output\n")

    def test_sibling_the_last_frame_its_line_code_and_what_to_paste(self):
        found = head(self.CUT)
        assert found is not None and found.id == "unrecognised-failure"
        assert "line 4 of this log" in found.fix and "running `xys = torch.vstack(" in found.fix and "(your code)" in found.fix
        assert "the lines that follow line 4 of this log" in found.fix and "tee run.log" in found.fix

    def test_sibling_a_library_frame_is_named_with_its_owner_and_the_caller(self):
        found = head(self.LIBRARY)
        assert found is not None and found.id == "unrecognised-failure"
        assert "(torch's code)" in found.fix and "(`feature = self.feature_encoder(" in found.fix
        assert "Caught SomeError in replica 0" in found.fix

    def test_sibling_the_log_ends_inside_the_source_line(self):
        # pusa-vidgen#15 (heldout14): the paste stops two letters into the frame's code
        log = ('[rank2]: Traceback (most recent call last):\n'
               '[rank2]:   File "/x/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1762, in _call_impl\n'
               "[rank2]:     re")
        found = head(log)
        assert found is not None and "(the log ends inside that line)" in found.fix and "--tee 3" in found.fix

    def test_control_another_programs_line_after_the_frame_is_not_its_code(self):
        log = self.CUT.replace("    xys = torch.vstack((torch.mul(xs, depth), torch.mul(ys, depth), -depth))\n", "")
        found = head(log)
        assert found is not None and "running `" not in found.fix and "line 4 of this log" in found.fix

    def test_sibling_the_whole_traceback_is_read_not_called_cut(self):
        found = head(self.CUT.replace("I1030 10:00:00 other output\n", "RuntimeError: shape mismatch\n"))
        assert found is not None and "was cut from the paste" not in found.fix

    def test_control_a_cut_traceback_is_never_healthy(self):
        assert not api.diagnose(self.CUT).ok
