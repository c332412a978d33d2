"""Controls and siblings for what a failed log shows where no line is an error (issue 35, heldout21's no-error-line
cases): a framework's start-up line that GPUs are there and unused (knowledge/gpus_unused.py), NCCL's sockets on the
loopback in a job across machines (knowledge/nccl_loopback.py), an idle GPU's reading beside the reporter's words that
the job does not use the GPU (checks/gpu_activity.py), a thread's title that says so beside a log that shows nothing of
it (knowledge/gpus_unused.py), and the reporter's words that nothing is logged past a point (knowledge/said_hang.py). The sample's cases are the logs as pasted; the other lines are real ones from the threads
named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head


# Lightning's device lines (rinongal/textual_inversion#44; Lightning-AI/pytorch-lightning#4364 for "used: True")
NOT_USED = "GPU available: True, used: False\nTPU available: False, using: 0 TPU cores\n"
USED = "GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\n"
# NCCL's interface lines of rank 0 on host axa (NVIDIA/nccl#1053)
LOOPBACK = ("axa:3048391:3048566 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo\n"
            "axa:3048391:3048566 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
            "axa:3048391:3048566 [0] NCCL INFO Using network Socket\n")


class TestGpusLeftUnused:
    verdict = "gpus-left-unused"

    def test_sibling_lightning_on_the_cpu_while_the_thread_passes_gpus(self):
        # rinongal/textual_inversion#44: "GPU available: True, used: False", and --gpus 0 read as zero GPUs
        f = head(case("heldout21", "textual-inversion-44-gpu-available-not-used"))
        assert f.id == "gpus-left-unused" and f.severity is Severity.WARN
        assert "uses none" in f.title and "--gpus 0," in f.fix and "the job asked for GPUs" in f.evidence

    def test_sibling_a_failure_the_log_names_stays_first(self):
        # ShannonAI/mrc-for-flat-nested-ner#128: --gpus="0" with ddp; DDP's device_ids error is the answer, the banner after it
        fs = api.diagnose(case("heldout13", "mrc-ner-128-ddp-device-ids-none-gpus0")).findings
        assert fs[0].severity is Severity.ERROR and fs[0].id != "gpus-left-unused"
        assert any(f.id == "gpus-left-unused" and f.severity is Severity.WARN for f in fs)

    def test_sibling_fewer_used_than_found_without_what_was_meant_is_info(self):
        # unslothai/unsloth#2425: "Num GPUs = 2." then "Num GPUs used = 1"; nothing says the job meant both
        f = found(case("dev3", "unsloth-2425-two-a10-only-one-gpu-used"))["gpus-left-unused"]
        assert f.severity is Severity.INFO and "2 GPUs are available and it uses 1" in f.title and "what decides it" in f.evidence

    def test_control_lightning_on_the_gpu(self):
        assert "gpus-left-unused" not in found("python train.py --gpus 1\n" + USED + "Epoch 0: 100%\n")

    def test_control_no_gpu_on_the_machine(self):
        # a CPU machine: "GPU available: False, used: False" (dev7w's OMatG run)
        assert "gpus-left-unused" not in found("python train.py --gpus 1\nGPU available: False, used: False\n")

    def test_control_the_cpu_chosen(self):
        assert "gpus-left-unused" not in found('trainer = Trainer(accelerator="cpu", max_epochs=3)\n' + NOT_USED)

    def test_control_a_run_that_ended_is_info(self):
        text = "python train.py --gpus 0\n" + NOT_USED + "Epoch 9: 100%\n`Trainer.fit` stopped: `max_epochs=10` reached.\n"
        assert found(text)["gpus-left-unused"].severity is Severity.INFO


class TestNcclSocketLoopback:
    verdict = "nccl-socket-loopback"

    def test_sibling_two_machines_on_the_loopback(self):
        other = LOOPBACK.replace("axa:3048391:3048566 [0]", "axb:2210837:2211004 [1]")
        f = head("torchrun --nnodes 2 --nproc_per_node 1 --node_rank 0 train.py\n" + LOOPBACK + other)
        assert f.id == "nccl-socket-loopback" and f.severity is Severity.WARN and "several machines" in f.title
        assert "NCCL_SOCKET_IFNAME=" in f.fix and "axa, axb" in " ".join(f.evidence["several nodes"])

    def test_sibling_one_process_no_node_count_is_info(self):
        # NVIDIA/nccl#1053: one rank's lines on lo; how many machines the job spans the paste does not show
        f = found(case("heldout21", "nccl-1053-bgp-unnumbered-lo-socket"))["nccl-socket-loopback"]
        assert f.severity is Severity.INFO and "what decides it" in f.evidence
        assert head(case("heldout21", "nccl-1053-bgp-unnumbered-lo-socket")).id == "log-inconclusive"

    def test_control_one_machine_two_ranks_on_the_loopback(self):
        # pytorch/pytorch#72835: two ranks of one host (ava-s0) on lo, a barrier hang from P2P, not the interface
        assert "nccl-socket-loopback" not in found(case("dev", "pytorch-72835-barrier-hang-lo-no-p2p"))

    def test_control_one_machine_set_by_environment(self):
        # SimpleTuner#1237: NCCL_SOCKET_IFNAME=lo on one machine with two GPUs
        assert "nccl-socket-loopback" not in found(case("heldout7", "simpletuner-1237-sd3-multigpu-stuck-nccl-lo"))

    def test_control_lo_among_other_interfaces_or_excluded(self):
        listed = ("axa:3048391:3048566 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ^lo,docker\n"
                  "axa:3048391:3048566 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:10.1.0.5<0>\n")
        assert "nccl-socket-loopback" not in found("torchrun --nnodes 2 train.py\n" + listed)


class TestGpuNotUsedSaid:
    verdict = "gpu-not-used"

    def test_sibling_idle_gpus_and_the_reporter_says_so(self):
        # smallcorgi/3D-Deepbox#44: "# GPU usage is 0", the TITAN Vs idle with 320 MiB
        f = head(case("heldout11", "3d-deepbox-44-nvidia-smi-gpu-util-zero"))
        assert f.id == "gpu-not-used" and f.severity is Severity.WARN and "GPU usage is 0" in f.evidence["the reporter says"]

    def test_control_an_idle_snapshot_alone_stays_info(self):
        # wookayin/gpustat#130: idle P100s pasted to show the machine
        f = found(case("heldout6", "gpustat-130-idle-p100-healthy"))["gpu-not-used"]
        assert f.severity is Severity.INFO and "the reporter says" not in f.evidence


class TestLogSaidHangNoLogAfter:
    verdict = "log-said-hang"

    def test_sibling_no_log_after_the_download(self):
        # kubeflow/trainer#1601: "there is no log information after downloading the data", pods stay Running
        f = head(case("heldout21", "kubeflow-trainer-1601-dist-mnist-pytorchjob"))
        assert f.id == "log-said-hang" and f.evidence["last line"] == "line 17: Done!"

    def test_control_an_error_the_log_names_stays_the_answer(self):
        # BVLC/caffe PR 2114: "I still not seen no output after I did that", and CUDA's peer-access error in the log
        assert head(case("heldout10", "caffe-2114-multi-gpu-pr")).id == "cuda-runtime-error"


class TestLogSaidGpuUnused:
    verdict = "log-said-gpu-unused"

    def test_sibling_the_title_says_one_gpu_of_two(self):
        # ultralytics/ultralytics#6220: "# YOLOv8 can't use the specified GPU", the CUDA:1 banner only (horovod/horovod#1378,
        # once this case, is gpus-left-unused's one-process now: its hvd.size() of one decides the cause)
        f = head(case("heldout20", "ultralytics-6220-single-gpu-select"))
        assert f.id == "log-said-gpu-unused" and f.severity is Severity.WARN and "can't use the specified GPU" in f.title
        assert "horovodrun -np" in f.fix

    def test_sibling_the_reading_decides_it_first(self):
        # smallcorgi/3D-Deepbox#44: the idle reading and the title agree: the reading's finding, the title as its evidence
        ids = [f.id for f in api.diagnose(case("heldout11", "3d-deepbox-44-nvidia-smi-gpu-util-zero")).findings]
        assert ids[0] == "gpu-not-used" and "log-said-gpu-unused" not in ids

    def test_control_a_title_that_asks(self):
        # nerfstudio-project/nerfstudio#997: "# Training does not use the Nvidia GPU, is it normal?" (a healthy run)
        assert "log-said-gpu-unused" not in found(case("heldout21", "nerfstudio-997-nerfacto-windows-gpu-use"))

    def test_control_an_error_the_log_names_stays_the_answer(self):
        text = ("# source: https://github.com/OpenNMT/OpenNMT-tf/issues/629\n# Unable to use GPU\n\n"
                "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
        fs = found(text)
        assert "log-said-gpu-unused" not in fs and head(text).severity is Severity.ERROR
