"""Controls and siblings for the driver, runtime-library and device-enumeration failures in any program's words (issue 35
item 4, diagB31): the NVIDIA driver's own library that a program cannot load, in nvidia-smi's, ffmpeg's, pynvml's and numba's
words (`driver-library-not-found`); a program's GPU backend turned off for want of a driver, platform or device
(`gpu-backend-disabled`, a warning: such programs go on with what is left) and the same where the program stops on it
(`gpu-backend-unavailable`, an error, a crash while it shuts down its consequence); and a no-GPU finding's fix in a container
(knowledge/setting_fix.py's container row). The retired parts' cases are the logs as pasted; the other lines are real ones
from the threads named beside them, or the shapes of those programs' healthy output."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a short GPU training run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"
# a miner's healthy start on an NVIDIA GPU, then its hash rate (xmr-stak's shape)
MINING = ("[2018-10-20 16:32:33] : NVIDIA: use library 'xmrstak_cuda_backend'\n"
          "[2018-10-20 16:32:33] : Starting NVIDIA GPU thread 0, no affinity.\n"
          "[2018-10-20 16:32:40] : Pool logged in.\n"
          "[2018-10-20 16:33:40] : Totals (ALL):   812.3  811.9  0.0 H/s\n")


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestDriverLibraryInAProgramsWords:
    verdict = "driver-library-not-found"

    def test_sibling_ffmpegs_hardware_context_in_sunshine(self):
        # heldout30b nixpkgs-272221: Sunshine's NVENC probe, ffmpeg cannot load libcuda.so.1 (the title quotes it too)
        f = head(case("heldout30b", "nixpkgs-272221-sunshine-libcuda"))
        assert f.id == self.verdict and f.severity is Severity.ERROR
        assert f.evidence["library"] == "libcuda.so.1" and f.evidence["first_line"] == 24  # the log's line, not the title's
        assert "ldconfig -p" in f.fix and "/run/opengl-driver/lib" in f.fix

    def test_sibling_nvidia_smi_in_an_apptainer_container(self):
        # heldout30 driftless-star-16: apptainer run --containall --nv, nvidia-smi cannot load NVML
        f = head(case("heldout30", "driftless-star-16-apptainer-nv-containall"))
        assert f.id == self.verdict and f.fix.startswith("nvidia-smi itself runs")
        assert "/.singularity.d/libs" in f.fix

    def test_sibling_pynvml_and_numba(self):
        assert head("pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found\n").id == self.verdict
        numba = "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be found.\n"
        assert head(numba).id == self.verdict

    def test_siblings_driver_too_old_and_a_cuda_runtime_library(self):
        # the driver is there but older than the CUDA: its own verdict; a CUDA runtime library is a package's, not the driver's
        assert head("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n").id == "cuda-driver-too-old"
        missing = found("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n")
        assert "cuda-library-missing" in missing and self.verdict not in missing

    def test_control_a_probe_that_falls_back_and_a_library_that_loaded(self):
        fallback = "[h264_nvenc @ 0x55] Cannot load libcuda.so.1, falling back to software encoding\n"
        loaded = ("2023-11-28 16:42:02.086115: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened "
                  "dynamic library libcuda.so.1\n")
        for text in (fallback, loaded):
            assert self.verdict not in found(text + TRAINED), text
            assert errors(text + TRAINED) == [], text

    def test_control_a_warning_on_a_machine_without_the_gpu(self):
        # heldout28 fah-client-bastet-250 (healthy): Folding@home on an all-AMD machine logs its CUDA probe as a warning
        text = case("heldout28", "fah-client-bastet-250-amd-libcuda-line")
        assert self.verdict not in found(text) and errors(text) == []

    def test_control_a_title_alone(self):
        title = "# Sunshine nvenc error `Cannot load libcuda.so.1`, defaulting to software encoding\n"
        assert self.verdict not in found(title + TRAINED)


class TestGpuBackendDisabled:
    verdict = "gpu-backend-disabled"

    def test_sibling_xmr_stak_nvidia_backend_on_an_amd_machine(self):
        # heldout30b xmr-stak-1715: an AMD RX 550; the NVIDIA backend off, the log ends there: a warning naming it
        f = found(case("heldout30b", "xmr-stak-1715-rx550-nvidia-disabled"))[self.verdict]
        assert f.severity is Severity.WARN and "NVIDIA (CUDA) backend" in f.title
        assert "nvidia-smi" in f.fix and "--noNVIDIA" in f.fix
        assert errors(case("heldout30b", "xmr-stak-1715-rx550-nvidia-disabled")) == []

    def test_sibling_an_opencl_platform_not_found(self):
        # heldout30b xmrig-amd-283: the reporter quotes the miner's line
        f = found(case("heldout30b", "xmrig-amd-283-opencl-platform-not-found"))[self.verdict]
        assert "AMD OpenCL backend" in f.title and "clinfo" in f.fix

    def test_sibling_cellposes_torch_probe_and_jaxs_cudnn(self):
        # heldout30 fractal-tasks-core-215 (cellpose: a CPU build of torch on a GPU node) and alphapulldown-342 (JAX without cuDNN)
        f = found(case("heldout30", "fractal-tasks-core-215-cellpose-torch-cuda"))[self.verdict]
        assert "torch's CUDA" in f.title and "torch.version.cuda" in f.fix
        f = found(case("heldout30", "alphapulldown-342-cudnn-backend"))[self.verdict]
        assert f.severity is Severity.WARN and "cuDNN" in f.title and 'jax[cuda12]' in f.fix

    def test_sibling_jax_names_the_older_library(self):
        line = ("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer. "
                "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
        f = found(line)[self.verdict]
        assert "older cuDNN" in f.title and "(8600)" in f.fix and "(8906)" in f.fix

    def test_control_a_probe_that_finds_one_platform_missing_and_mines_on_another(self):
        # xmr-stak#1986's shape: no AMD OpenCL platform, the AMD backend off, then the NVIDIA GPU mines: harmless, never an error
        probe = ("[2018-10-20 16:32:31] : WARNING: No AMD OpenCL platform found. Possible driver issues or wrong vendor driver.\n"
                 "[2018-10-20 16:32:31] : WARNING: backend AMD (OpenCL) disabled.\n")
        assert errors(probe + MINING) == []
        f = found(probe + MINING)
        assert self.verdict not in f and f["gpu-backend-not-needed"].severity is Severity.INFO

    def test_control_another_backend_found_the_gpu(self):
        # heldout30b nsfminer-113: "No OpenCL platforms found", then the CUDA backend uses the GTX 650: harmless, never the lead
        text = case("heldout30b", "nsfminer-113-gtx650-1gb-epoch397")
        f = found(text)
        assert self.verdict not in f and f["gpu-backend-not-needed"].severity is Severity.INFO
        assert f["gpu-backend-not-needed"].fix.startswith("nothing for this line")
        assert head(text).id != "gpu-backend-not-needed"
        # heldout30b xmr-stak-2195: no AMD platform on a GeForce GT 430's machine: the AMD line is not the run's, NVIDIA's is
        f = found(case("heldout30b", "xmr-stak-2195-gt430-arch21-cuda8"))
        assert "NVIDIA" in f[self.verdict].title and "No AMD OpenCL platform" in f["gpu-backend-not-needed"].evidence["log"]

    def test_control_a_cpu_only_job_by_design(self):
        # both GPU backends off, the CPU mines on: a warning at most
        cpu = ("[2018-10-20 16:32:31] : WARNING: backend NVIDIA disabled.\n[2018-10-20 16:32:31] : WARNING: backend AMD (OpenCL) disabled.\n"
               "[2018-10-20 16:32:31] : Starting 4x thread, affinity: 0.\n[2018-10-20 16:33:31] : Totals (ALL):   212.3  211.9  0.0 H/s\n")
        assert errors(cpu) == []

    def test_control_a_driver_warning_followed_by_progress(self):
        warned = ("WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load CUDA. (Set TF_CPP_MIN_LOG_LEVEL=0 and "
                  "rerun for more info.)\n")
        assert errors(warned + TRAINED) == []

    def test_control_healthy_backend_lists(self):
        # a backend list that found its devices, and JAX's INFO lines for the backends a GPU run does not have
        healthy = ("Found 1 OpenCL platform(s): AMD Accelerated Parallel Processing\n"
                   "[OpenCL] platform 0: NVIDIA CUDA, 1 device(s)\n"
                   "I0919 21:58:29.120949 139995721590592 xla_bridge.py:350] Unable to initialize backend 'rocm': NOT_FOUND: Could not "
                   "find registered platform with name: \"rocm\". Available platform names are: Interpreter CUDA Host\n"
                   "I0919 21:58:29.121373 139995721590592 xla_bridge.py:350] Unable to initialize backend 'tpu': module "
                   "'jaxlib.xla_extension' has no attribute 'get_tpu_client'\n")
        assert self.verdict not in found(healthy + TRAINED)
        assert errors(healthy + TRAINED) == []


class TestGpuBackendUnavailable:
    verdict = "gpu-backend-unavailable"

    def test_sibling_a_miner_whose_only_platform_lists_no_device(self):
        # heldout30b teamredminer-598: no OpenCL device on a Steam Deck, the workers exit, a segfault at shut-down
        text = case("heldout30b", "teamredminer-598-steam-deck-segfault")
        f = head(text)
        assert f.id == self.verdict and f.severity is Severity.ERROR and "OpenCL" in f.title
        sigsegv = found(text)["launcher-sigsegv"]
        assert sigsegv.severity is not Severity.ERROR and sigsegv.evidence.get("consequence_of") == self.verdict

    def test_sibling_jax_asked_for_its_gpu_platform(self):
        line = ("RuntimeError: Backend 'cuda' failed to initialize: Found CUDA version 12010, but JAX was built against version "
                "12020, which is newer. Available backends are ['cpu']\n")
        f = head(line)
        assert f.id == self.verdict and "older CUDA" in f.title

    def test_sibling_no_device_in_the_programs_error(self):
        # an error-level "no device" stays program-found-no-device's (patterns/classes19a.py)
        assert head("ERROR: Could not find/initialize a specified accelerator device (src/GPU/gpu_extra.h:57)\n").id == "program-found-no-device"

    def test_control_a_device_found_before_the_stop(self):
        # a platform's device list failed, another GPU was found and mined, then the user stopped it: not this error
        text = ("[2022-05-14 16:14:23] Failed to list OpenCL devices for platform 1.\n"
                "[2022-05-14 16:14:23] GPU 0: AMD Radeon RX 580 [gfx803] 8 GB\n"
                "[2022-05-14 16:20:00] Shutting down...\n")
        assert self.verdict not in found(text) and errors(text) == []


class TestNoGpuInAContainer:
    def test_sibling_a_container_in_a_vm(self):
        # heldout29 immich-14808: the ML container sees no GPU, other containers in the VM do: the container's options first
        f = head(case("heldout29", "immich-14808-a100-mig-vgpu"))
        assert f.id == "cuda-no-gpus-visible" and "a container" in f.evidence["setting"]
        assert f.fix.startswith("inside a container") and "MIG-<uuid>" in f.fix

    def test_sibling_a_vm_without_a_container(self):
        text = "Ubuntu guest, GPU passthrough with vfio-pci\nRuntimeError: No CUDA GPUs are available\n"
        f = head(text)
        assert f.id == "cuda-no-gpus-visible" and "a virtual machine" in f.evidence.get("setting", "")

    def test_sibling_a_pod_keeps_its_own_row(self):
        text = "$ kubectl exec trainer-0 -- docker run --gpus all img python train.py\nRuntimeError: No CUDA GPUs are available\n"
        f = head(text)
        assert "Kubernetes pod" in f.evidence.get("setting", "")

    def test_control_a_word_that_only_contains_docker(self):
        # heldout7 ds-stack-90: a title's "install-docker" is a script's name, not a container (nvidia-smi missing on the host)
        f = head(case("heldout7", "ds-stack-90-nvidia-smi-not-found-driver-loaded"))
        assert f.id == "nvidia-smi-not-found" and "setting" not in f.evidence

    def test_control_no_setting_keeps_the_findings_own_fix(self):
        f = head("RuntimeError: No CUDA GPUs are available\n")
        assert f.id == "cuda-no-gpus-visible" and "setting" not in f.evidence
