"""Controls and siblings for failed logs that no line calls an error, second pass (issue 35, the no-error-line rows of the
parts retired in the twenty-fifth session): PyTorch's architecture warning pasted without its first line
(patterns/cuda.py), nvidia-smi's header that could not read the driver's CUDA version (commands/diagnose/nvidia_smi.py),
a GPU that holds the job's memory and computes nothing beside the reporter's words that its utilisation stays at 0
(checks/gpu_activity.py), a loss that grows by orders of magnitude (knowledge/progress.py), and a title that says the
run goes no further than the pasted point (knowledge/said_hang.py). The sample's cases are the logs as pasted; the
other lines are real ones from the threads and logs named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# torch/cuda/__init__.py's warning for a GPU the build has no kernels for, without its first line
# (cloveranon/Clover-Edition#159)
ARCH_CUT = ("The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 compute_37.\n"
            "If you want to use the NVIDIA GeForce RTX 3060 Laptop GPU GPU with PyTorch, please check the instructions at "
            "https://pytorch.org/get-started/locally/\n\n"
            "  warnings.warn(incompatible_device_warn.format(device_name, capability, \" \".join(arch_list), device_name))\n")

# nvidia-smi's table (microsoft/WSL#11589's RTX 3060 row), its header's CUDA version as given
SMI = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 545.46                 Driver Version: 546.80       CUDA Version: {cuda}     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 3060 ...    On  | 00000000:01:00.0  On |                  N/A |
| N/A   54C    P8              16W /  80W |    816MiB /  6144MiB |      3%      Default |
|                                         |                      |                  N/A |
+-----------------------------------------+----------------------+----------------------+
"""

# pytorch/examples#470: a GTX 1080 Ti holding 9.5 GB at 0 %
BUSY_MEMORY = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 390.87                 Driver Version: 390.87                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX 108...  Off  | 00000000:01:00.0  On |                  N/A |
| 31%   58C    P2    70W / 250W |   9584MiB / 11170MiB |      {util}%      Default |
+-------------------------------+----------------------+----------------------+
"""
SAID_ZERO = "I run the example of imagenet, althougt I can run it successfully, but it is slow, and the Volatile GPU-Util is always 0 with command 'nvidia-smi'\n"

# TencentARC/GFPGAN#270's iteration lines (BasicSR's logger), their other fields cut
GFPGAN = ("2022-09-26 16:29:11,822 INFO: [train..][epoch:  0, iter:  25,390, lr:(2.000e-04,)] l_g_pix: {a} l_p_8: 22.9456 l_d: 0.0041\n"
          "2022-09-26 16:29:12,342 INFO: [train..][epoch:  0, iter:  25,391, lr:(2.000e-04,)] l_g_pix: {b} l_p_8: 50.4781 l_d: 0.0025\n"
          "2022-09-26 16:29:13,007 INFO: [train..][epoch:  0, iter:  25,392, lr:(2.000e-04,)] l_g_pix: {c} l_p_8: 23.5352 l_d: 0.0031\n")
# HoiM/SqueezeNet-CenterLoss-for-Caffe's solver log (dev8w): the center loss grows as the centres separate, a healthy run
CENTER = ("I0613 17:29:58.112792  1860 solver.cpp:244]     Train net output #2: center_loss = 0.500898 (* 0.008 = 0.00400718 loss)\n"
          "I0613 17:36:53.936733  1860 solver.cpp:244]     Train net output #2: center_loss = 1.39872 (* 0.008 = 0.0111898 loss)\n"
          "I0615 15:49:39.299348  1860 solver.cpp:244]     Train net output #2: center_loss = 87.1493 (* 0.008 = 0.697195 loss)\n")


class TestArchWarningCut:
    verdict = "cuda-no-kernel-image"

    def test_sibling_the_warning_without_its_first_line(self):
        f = head(case("heldout24b", "clover-edition-159-rtx3060-laptop-play"))
        assert f.id == "cuda-no-kernel-image" and f.severity is Severity.ERROR

    def test_sibling_any_one_of_its_lines(self):
        for line in ARCH_CUT.splitlines()[:2]:
            if line.strip():
                assert head(line + "\n").id == "cuda-no-kernel-image", line

    def test_sibling_the_whole_warning_keeps_its_capability(self):
        # MIC-DKFZ/nnFormer#104: the warning with its first line (sm_86), then the same two lines
        f = head(case("heldout24", "nnformer-104-rtx3090-train-run"))
        assert f.id == "cuda-no-kernel-image" and f.severity is Severity.ERROR

    def test_control_the_install_page_in_prose(self):
        # a README's line that names the same page
        text = "Please install PyTorch following the instructions at https://pytorch.org/get-started/locally/\n"
        assert "cuda-no-kernel-image" not in found(text)


class TestCudaVersionUnread:
    verdict = "gpu-reading-failed"

    def test_sibling_cuda_version_err(self, tmp_path):
        f = found(SMI.format(cuda="ERR!"))["gpu-reading-failed"]
        assert f.severity is Severity.WARN and "CUDA" in f.title and f.evidence["ERR!"] == ["CUDA Version"]

    def test_sibling_the_thread(self):
        assert head(case("heldout24b", "wsl-11589-rtx3060-smi")).id == "gpu-reading-failed"

    def test_control_a_cuda_version_read(self):
        assert "gpu-reading-failed" not in found(SMI.format(cuda="12.3"))

    def test_control_cuda_version_n_a_is_not_a_failed_reading(self):
        assert "gpu-reading-failed" not in found(SMI.format(cuda="N/A "))

    def test_control_a_fan_err_on_a_busy_box_stays_info(self):
        # cnblogs asandstar's 8x RTX 4090 (heldout22, healthy): GPU 3's fan reads ERR!
        fs = api.diagnose(case("heldout22", "cnblogs-asandstar-8x4090-smi-box")).findings
        assert all(f.severity is not Severity.ERROR for f in fs)
        assert all(f.severity is Severity.INFO for f in fs if f.id == "gpu-reading-failed")


class TestGpuJobIdle:
    verdict = "gpu-job-idle"

    def test_sibling_memory_held_at_zero_said(self):
        f = head(case("heldout24", "pytorch-examples-470-imagenet-smi"))
        assert f.id == "gpu-job-idle" and f.severity is Severity.WARN

    def test_control_the_snapshot_alone(self):
        assert "gpu-job-idle" not in found(BUSY_MEMORY.format(util=" 0"))

    def test_sibling_the_title_says_0_percent_gpu_utilization(self):
        f = head("# 0% GPU utilization\n\n" + BUSY_MEMORY.format(util=" 0"))
        assert f.id == "gpu-job-idle" and f.severity is Severity.WARN

    def test_control_busy_while_said(self):
        assert "gpu-job-idle" not in found(SAID_ZERO + BUSY_MEMORY.format(util="97"))


class TestLossDiverging:
    verdict = "loss-diverging"

    def test_sibling_orders_of_magnitude_up(self):
        text = GFPGAN.format(a="2629759188236749127024640.0000", b="11709304853075945115046903808.0000", c="367913792503799026153313796096.0000")
        f = head(text)
        assert f.id == "loss-diverging" and f.severity is Severity.WARN and "l_g_pix" in f.title

    def test_sibling_a_json_log_quotes_its_values(self):
        text = "".join(f'{{"epoch": {e}, "loss": "{v}", "lr": "0.0005"}}\n' for e, v in ((1, "6.02"), (2, "8410.5"), (3, "39012345.6")))
        assert head(text).id == "loss-diverging"

    def test_control_a_spike_that_recovers(self):
        assert "loss-diverging" not in found(GFPGAN.format(a="0.0213", b="2629.7591", c="0.0209"))

    def test_control_fp16_loss_scale_growing(self):
        # DeepSpeed's step lines: the dynamic loss scale doubles back up after an overflow, as it should
        text = "".join(f"[Rank 0] step={n}, skipped=1, lr=[0.0001], mom=[(0.9, 0.999)], loss_scale={s}, loss=2.31\n"
                       for n, s in ((10, 1), (20, 1024), (30, 65536)))
        assert "loss-diverging" not in found(text)

    def test_control_a_loss_that_grows_as_it_should(self):
        assert "loss-diverging" not in found(CENTER)

    def test_control_a_large_loss_that_stays(self):
        # iuliagroza/spoof.io's output (heldout22w, a run that completed): its RL loss stays near 3.5e10
        assert "loss-diverging" not in found(case("heldout22w", "iuliagroza-spoof.io-output-train-log"))


class TestSaidStopsHere:
    verdict = "log-said-hang"

    def test_sibling_the_title_says_it_will_not_continue(self):
        # lucidrains/DALLE-pytorch#172: "# After the program runs to this point, it will not continue<Using ...>"
        f = head(case("heldout24", "dalle-pytorch-172-three-gpu-deepspeed-start"))
        assert f.id == "log-said-hang"

    def test_sibling_the_quoted_line_is_a_jit_extension_build(self):
        f = head(case("heldout24", "dalle-pytorch-172-three-gpu-deepspeed-start"))
        assert f.evidence["stage"] == "extension-build" and f.evidence["extensions root"] == "/home/zz/.cache/torch_extensions"
        assert "find /home/zz/.cache/torch_extensions -name lock" in f.fix

    def test_control_a_root_with_shell_characters_is_not_named(self):
        text = ("# After this point it will not continue<Using /tmp/$(id)x as PyTorch extensions root... >\n\n"
                "[2021-04-07 08:57:33,300] [INFO] [logging.py:60:log_dist] [Rank 0] DeepSpeed Final Optimizer = Adam\n")
        f = found(text)["log-said-hang"]
        assert f.evidence["stage"] != "extension-build" and "$(id)" not in f.fix

    def test_control_a_question(self):
        text = ("# Why will the training not continue after the first epoch?\n\n"
                "[2021-04-07 08:57:33,300] [INFO] [logging.py:60:log_dist] [Rank 0] DeepSpeed Final Optimizer = Adam\n")
        assert "log-said-hang" not in found(text)


class TestGpustatUnsupported:
    verdict = "gpu-reading-unsupported"

    # wookayin/gpustat#122's debug line (a GeForce GT 650M on driver 390.144)
    OLD = "debianace            Tue May 24 09:21:01 2022  390.144\n[0] GeForce GT 650M  | 47'C,  {util} % |   {mb} /  1999 MB | {procs}\n"

    def test_sibling_question_marks_and_not_supported(self):
        f = found(self.OLD.format(util="??", mb=1210, procs="(Not Supported)"))["gpu-reading-unsupported"]
        assert f.severity is Severity.INFO and f.evidence["Not Supported"] == ["utilisation", "processes"]
        assert "gpu-memory-without-process" not in found(self.OLD.format(util="??", mb=1210, procs="(Not Supported)"))

    def test_control_readings_given(self):
        assert "gpu-reading-unsupported" not in found(self.OLD.format(util=" 3", mb=0, procs=""))
