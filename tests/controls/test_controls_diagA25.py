"""Controls and siblings for diagA25 (issue 35: the fix for the setting the log shows; knowledge/setting.py reads the
setting, knowledge/setting_fix.py chooses the fix). No verdict is new: a finding keeps its id and cause, and takes the fix
of the setting its log shows. `test_sibling_*` is the thread whose setting decides another fix; `test_control_*` the same
finding on a plain machine, or in a log that names the setting only in passing (a link, a path), which keeps its own fix.
Lines and cases are real ones (threads named beside them)."""

from __future__ import annotations

import pytest

from test_controls_classes6 import case
from test_controls_detect8 import head

from gpudoctor import api
from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.setting import SettingSeen, program_of

SMI_FAILED = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is "
              "installed and running.\n")
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
SMI_MISSING = "bash: nvidia-smi: command not found\n"


def setting_of(text: str):
    reader = SettingSeen()
    reader.feed(text.encode())
    reader.end()
    return reader.setting()


class TestGpuDriverUnusable:
    verdict = "gpu-driver-unusable"

    def test_sibling_wsl_takes_the_windows_driver(self):
        found = head(case("heldout24b", "wsl-9134-windows-2x-gpu-smi"))  # microsoft/WSL#9134
        assert found.id == self.verdict and "wsl --update" in found.fix and "nvidia-smi.exe" in found.fix
        assert "dkms" not in (found.fix + found.why).lower() and "no Linux driver inside WSL" in found.fix

    def test_sibling_wsl_kernel_line_shows_it(self):
        # microsoft/WSL#13027's template: the kernel's name says WSL 2 without the tracker's header
        found = head("Linux version 5.15.167.4-microsoft-standard-WSL2\n" + SMI_FAILED)
        assert found.id == self.verdict and "wsl --update" in found.fix and found.evidence["setting"].startswith("WSL: line 1")

    def test_control_plain_linux_keeps_its_fix(self):
        found = head(SMI_FAILED)
        assert found.id == self.verdict and "dkms status" in found.fix and "setting" not in found.evidence

    def test_sibling_a_vm_takes_the_passthrough(self):
        found = head(case("heldout18", "cloud-hypervisor-4353-passthrough-nvidia-smi-fails"))  # cloud-hypervisor/cloud-hypervisor#4353
        assert found.id == self.verdict and "vfio-pci" in found.fix and "dkms" not in found.fix

    def test_control_a_link_to_passthrough_docs_is_no_vm(self):
        found = head("see https://docs.nvidia.com/datacenter/tesla/gpu-passthrough/index.html\n" + SMI_FAILED)
        assert found.id == self.verdict and "dkms status" in found.fix

    def test_control_a_link_to_wsl_docs_is_no_setting(self):
        text = "see https://docs.nvidia.com/cuda/wsl-user-guide/index.html and /mnt/c/Users/me/data\n" + SMI_FAILED
        found = head(text)
        assert found.id == self.verdict and "dkms status" in found.fix


class TestNvidiaSmiNotFound:
    verdict = "nvidia-smi-not-found"

    def test_sibling_a_clusters_login_node(self):
        found = head(case("heldout24b", "abdn-hpc-1-login-node-smi"))  # AidenDurrant/abdn-hpc#1: module load, then a Slurm job
        assert found.id == self.verdict and "srun --gres=gpu:1" in found.fix and "module load cuda" in found.fix

    def test_sibling_windows_cmd(self):
        line = "'nvidia-smi' is not recognized as an internal or external command,\n"  # JiahuiYu/generative_inpainting#159
        found = head(line)
        assert found.id == self.verdict and "where nvidia-smi" in found.fix and "lsmod" not in found.fix

    def test_control_a_plain_shell_keeps_its_fix(self):
        found = head(SMI_MISSING)
        assert found.id == self.verdict and "nvidia-utils" in found.fix

    def test_control_a_word_about_modules_is_no_cluster(self):
        found = head("pip install flash-attn  # the module loads fine\n" + SMI_MISSING)
        assert found.id == self.verdict and "srun" not in found.fix


class TestCudaNoDriver:
    verdict = "cuda-no-driver"

    def test_sibling_a_kubeflow_pod(self):
        found = head(case("heldout23", "kubeflow-notebooks-68-pytorch-cuda-notebook"))  # kubeflow/notebooks#68
        assert found.id == self.verdict and "nvidia.com/gpu: 1" in found.fix and "runtimeClassName" in found.fix

    def test_control_a_link_to_kubernetes_docs_is_no_pod(self):
        line = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
                "http://www.nvidia.com/Download/index.aspx\n")  # facebookresearch/pytorch3d#1259
        found = head("docs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/\n" + line)
        assert found.id == self.verdict and found.fix.startswith("nvidia-smi")


class TestLightningGpusUnavailable:
    verdict = "lightning-gpus-unavailable"

    def test_sibling_a_ray_tune_trial_given_no_gpu(self):
        found = head(case("heldout23", "ray-lightning-84-tune-ddp-gpus-empty"))  # ray-project/ray_lightning#84
        assert found.id == self.verdict and "resources_per_trial" in found.fix and "none of the cluster's 14 GPUs" in found.fix

    def test_control_the_same_message_without_ray_keeps_its_fix(self):
        text = ("pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0]\n"
                " But your machine only has: []\n")  # ray-project/ray_lightning#84, without Ray's lines
        found = head(text)
        assert found.id == self.verdict and "resources_per_trial" not in found.fix and "a count, not an index" in found.fix


class TestCudaInvalidDeviceOrdinal:
    verdict = "cuda-invalid-device-ordinal"
    LINE = "RuntimeError: CUDA error: invalid device ordinal\n"  # SCLBD/LETR#5, microsoft/unilm#511

    def test_sibling_a_slurm_job_asks_for_its_gpus(self):
        found = head("#SBATCH --ntasks-per-node=4\n#SBATCH --gres=gpu:2\n" + self.LINE)
        assert found.id == self.verdict and "--gres=gpu:N" in found.fix and "SLURM_LOCALID" in found.fix

    def test_control_a_plain_run_keeps_its_fix(self):
        found = head(self.LINE)
        assert found.id == self.verdict and "SLURM_LOCALID" not in found.fix


class TestCudaNoKernelImage:
    verdict = "cuda-no-kernel-image"

    def test_sibling_llama_cpp_kernel(self):
        found = head(case("heldout24b", "qwen35-dgx-spark-3-llama-server-run"))  # llama-server on a GB10
        assert found.id == self.verdict and "llama.cpp" in found.title and "torch build" not in found.title
        assert "CMAKE_CUDA_ARCHITECTURES" in found.fix and not found.fix.startswith("pip install torch")

    def test_sibling_a_custom_nodes_kernel(self):
        found = head(case("heldout24b", "comfyui-nunchaku-67-windows-startup"))  # nunchux-ai/ComfyUI-nunchaku#67
        assert found.id == self.verdict and found.title.startswith("nunchaku") and "gemv_awq.cu" in found.why

    def test_control_torchs_own_kernel_keeps_its_fix(self):
        text = NO_KERNEL + "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):\n"
        found = head(text)
        assert found.id == self.verdict and found.fix.startswith("pip install torch") and "torch build" in found.title


class TestCudaOom:
    verdict = "cuda-oom"
    LINE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 22.18 GiB of which "
            "3.47 GiB is free.\n")  # OpenBMB/MiniCPM-V#640

    def test_sibling_vllm_serve(self):
        found = head(case("heldout24b", "minicpm-v-640-a10-vllm-serve-start"))
        assert found.id == self.verdict and "--max-model-len" in found.fix and "gradient accumulation" not in found.fix

    def test_control_training_keeps_its_fix(self):
        found = head(self.LINE)
        assert found.id == self.verdict and "gradient accumulation" in found.fix

    def test_control_vllm_inside_a_training_job_keeps_its_fix(self):
        # TRL's GRPO generates with vLLM and trains in the same job: vLLM is a component, the OOM the training's
        frames = ('  File "/usr/local/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 912, in _generate_and_score_completions\n'
                  '  File "/usr/local/lib/python3.11/site-packages/vllm/entrypoints/llm.py", line 465, in generate\n')
        found = head("Traceback (most recent call last):\n" + frames + self.LINE)
        assert found.id == self.verdict and "gradient accumulation" in found.fix

    def test_control_vllm_installed_is_no_engine(self):
        found = head("Successfully installed vllm-0.6.3 xformers-0.0.27\n" + self.LINE)
        assert found.id == self.verdict and "gradient accumulation" in found.fix


def test_the_reader_keeps_each_settings_first_line():
    setting = setting_of("$ srun --gres=gpu:1 python train.py\nkubectl get pods\n(pid=123, ip=10.0.0.1) hello\n")
    # (a training script started shows a training job too: diagC30)
    assert [(s.setting, s.line) for s in setting.shown] == [("cluster", 1), ("training", 1), ("pod", 2), ("ray", 3)]


class TestGpuLost:
    verdict = "gpu-lost"
    HANDLES = ("Unable to determine the device handle for GPU0: 0000:C1:00.0: Unknown Error\n"
               "Unable to determine the device handle for GPU1: 0000:E1:00.0: Unknown Error\nNo devices were found\n")  # microsoft/WSL#13027

    def test_sibling_inside_wsl_is_windows_to_pass_in(self):
        found = next(f for f in api.diagnose(case("heldout23", "wsl-13027-tcc-wddm-mixed")).findings if f.id == self.verdict)
        assert found.severity is Severity.ERROR and "TCC" in found.fix and "reseat" not in found.fix and "fell off" not in found.title

    def test_sibling_inside_a_vm_is_the_passthrough(self):
        found = head(case("heldout18", "qubes-10036-rtx5070-hvm-no-devices"))  # QubesOS/qubes-issues#10036: an HVM's passthrough
        assert found.id == self.verdict and "vfio-pci" in found.fix and "reseat" not in found.fix

    def test_control_a_linux_host_keeps_the_lost_gpu(self):
        found = next(f for f in api.diagnose(self.HANDLES).findings if f.id == self.verdict)
        assert found.severity is Severity.ERROR and "reboot" in found.fix


class TestCudaDriverTooOld:
    verdict = "cuda-driver-too-old"
    LINE = ("RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU driver by downloading "
            "and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n")  # pytorch-style-transfer#1's shape

    def test_sibling_on_colab_the_driver_is_the_hosts(self):
        found = head(case("heldout14", "style-transfer-pytorch-1-colab-driver-too-old"))  # crowsonkb/style-transfer-pytorch#1
        assert found.id == self.verdict and "cannot be updated" in found.fix and "restart the runtime" in found.fix

    def test_sibling_a_rented_gpu(self):
        found = head("I am running this on RunPod with the pytorch 2.4 template\n" + self.LINE)
        assert found.id == self.verdict and "Max CUDA" in found.fix

    def test_control_a_link_to_a_colab_notebook_is_no_setting(self):
        found = head("notebook: https://colab.research.google.com/drive/1abc\n" + self.LINE)
        assert found.id == self.verdict and found.fix.startswith("nvidia-smi")

    def test_sibling_another_programs_kernel_names_it_not_torch(self):
        found = head(case("heldout18", "colabfold-234-ptx-unsupported-toolchain"))  # sokrypton/ColabFold#234: jaxlib's PTX on Colab
        assert found.id == self.verdict and "jaxlib" in found.title and "torch" not in found.title and "cannot be updated" in found.fix


@pytest.mark.parametrize("path,program", [
    ("/opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu", "llama.cpp"),  # llama-server on a GB10
    ("C:\\Users\\muyang\\Desktop\\nunchaku-dev\\src\\kernels\\awq\\gemv_awq.cu", "nunchaku"),  # nunchux-ai/ComfyUI-nunchaku#67
    ("/usr/local/cuda/include/thrust/system/cuda/detail/util.h", ""),  # the toolkit's header: no program named
    ("/home/u/work/src/x.cu", ""),  # a folder that holds projects, not one
])
def test_the_program_a_native_source_belongs_to(path, program):
    assert program_of(path) == program
