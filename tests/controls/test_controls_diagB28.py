"""Controls and siblings for the GPU stack that is not ready, said in its own lines (issue 35, the no-error-line, library
and project-specific rows of the parts retired in the twenty-seventh session): a GPU library that cannot be loaded, read
by which part of the stack its file is (`cuda-library-missing`, `driver-library-not-found`, the dependency
`onnxruntime-cuda-provider-failed` names; knowledge/gpu_library.py), a program's own line that it found no GPU in the
many wordings programs use (`program-found-no-gpu`), a program's list of backends that holds the CPU alone
(`gpu-backend-not-built`), a kernel library's own refusal of the GPU's architecture (`gpu-arch-check-failed`), the Vulkan
loader that found no driver (`vulkan-no-driver`), and a crash-looping pod whose own fatal line the log holds
(`unrecognised-failure`'s lead). The sample's cases are the logs as pasted; the other lines are real ones from the
threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a short GPU training run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestCudaLibraryMissing:
    verdict = "cuda-library-missing"

    def test_sibling_paddles_dll_named_with_its_cudnn_version(self):
        # heldout27b paddle-39256: paddle.utils.run_check() on Windows, cuDNN 8's DLL not found
        f = found(case("heldout27b", "paddle-39256-windows-run-check-cudnn"))["cuda-library-missing"]
        assert f.severity is Severity.ERROR and "cudnn64_8.dll (cuDNN 8)" in f.title
        assert f.fix.startswith("Paddle was built for cuDNN 8") and "where cudnn64_8.dll" in f.fix

    def test_sibling_torch_windows_dll_and_linux_runtime(self):
        # torch's own loader on Windows (pytorch/pytorch#86591's shape) and a Linux extension's import (CannyLab/tsne-cuda#126)
        win = ('OSError: [WinError 126] The specified module could not be found. Error loading '
               '"C:\\Users\\me\\miniconda3\\envs\\t\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.\n')
        f = found(win)["cuda-library-missing"]
        assert "cuDNN 8" in f.title and "ships with torch" in f.fix
        f = found("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n")["cuda-library-missing"]
        assert "CUDA 11" in f.title and "nvidia-cuda-runtime-cu11" in f.fix

    def test_control_optional_probes_the_run_went_past(self):
        # NCCL's net plug-in probe (INFO, then its internal implementation), torchvision's image extension, numa and libtpu
        # probes, TensorFlow's dso_loader warning (its own verdict), then a run that trains and ends
        probes = ("node1:1697707:1697707 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
                  "cannot open shared object file: No such file or directory\n"
                  "/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
                  "libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n"
                  "Warning: Failed to set NUMA affinity: libnuma.so: cannot open shared object file: No such file or directory\n"
                  "INFO:2025-11-01 01:06:35,616:jax._src.xla_bridge:925: Unable to initialize backend 'tpu': INTERNAL: Failed to "
                  "open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory\n")
        assert "cuda-library-missing" not in found(probes + TRAINED)
        assert errors(probes + TRAINED) == []
        tf = ("2021-04-28 17:38:36.167870: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
              "library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n")
        assert "cuda-library-missing" not in found(tf)

    def test_control_other_libraries(self):
        for line in ("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n",
                     "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\x\\torch\\lib\\shm.dll\" or one of its dependencies.\n"):
            assert "cuda-library-missing" not in found(line), line


class TestDriverLibraryNotFound:
    verdict = "driver-library-not-found"

    def test_sibling_a_program_in_a_session_without_the_driver(self):
        # heldout27b textgen-6632: llama_cpp_cuda on a Colab session without a GPU runtime
        f = head(case("heldout27b", "textgen-6632-colab-gguf-load"))
        assert f.id == "driver-library-not-found" and f.severity is Severity.ERROR
        assert "nvidia-smi" in f.fix

    def test_sibling_the_device_plugins_info_line(self):
        # heldout27 amazon-eks-ami-1618: the device plug-in's own start-up line, cut by the terminal's box
        assert "driver-library-not-found" in found(case("heldout27", "amazon-eks-ami-1618-g3-device-plugin"))

    def test_control_a_healthy_plugin_and_a_cuda_library(self):
        assert "driver-library-not-found" not in found("I0525 19:15:11.423875       1 factory.go:48] Detected NVML platform: found NVML library\n")
        assert "driver-library-not-found" not in found("ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n")


class TestOnnxruntimeDependencyNamed:
    verdict = "onnxruntime-cuda-provider-failed"

    def test_sibling_the_dependency_decides_the_cuda_version(self):
        # heldout27b sherpa-onnx-1465: a CUDA 11 build of onnxruntime on a CUDA 12.4 machine
        f = found(case("heldout27b", "sherpa-onnx-1465-cuda124-provider"))["onnxruntime-cuda-provider-failed"]
        assert "libcublasLt.so.11 (cuBLAS of CUDA 11)" in f.title and "onnxruntime was built for CUDA 11" in f.fix

    def test_sibling_windows_words(self):
        # heldout27b rembg-841: onnxruntime-gpu 1.28 (CUDA 13) without its DLLs
        f = found("Error loading onnxruntime_providers_cuda.dll: cublasLt64_13.dll is missing\n['CPUExecutionProvider']\n")
        assert "cublasLt64_13.dll (cuBLAS of CUDA 13)" in f["onnxruntime-cuda-provider-failed"].title

    def test_control_providers_with_cuda(self):
        assert found("Available providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n" + TRAINED) == {} or \
            errors("Available providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n" + TRAINED) == []


class TestProgramFoundNoGpu:
    verdict = "program-found-no-gpu"

    def test_sibling_wordings(self):
        lines = (
            # torch's autocast, on a machine where torch sees no CUDA (heldout27b tortoise-fast-9)
            "C:\\Python310\\lib\\site-packages\\torch\\amp\\autocast_mode.py:202: UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling\n",
            # RVC's, in capitals (heldout27b rvc-2067)
            "NO GPU DETECTED: falling back to CPU - this may take a while\n",
            # SD.Next on ZLUDA: ROCm's runtime found no GPU agent (heldout27b sdnext-4101)
            "13:25:40-858962 WARNING  ROCm: no agent was found\n",
        )
        for line in lines:
            assert "program-found-no-gpu" in found(line), line

    def test_sibling_rocms_words_get_rocms_step(self):
        f = found("13:25:40-858962 WARNING  ROCm: no agent was found\n")["program-found-no-gpu"]
        assert f.fix.startswith("ROCm's runtime found no GPU agent: rocminfo")

    def test_sibling_the_same_words_as_an_error_stop_the_program(self):
        # heldout27b tortoise-fast-145: tortoise's own check, raised (it stops): program-found-no-device
        f = head("RuntimeError: Error: You set cuda=True but no cuda device found.\n")
        assert f.id == "program-found-no-device" and f.severity is Severity.ERROR

    def test_control_a_gpu_found(self):
        for line in ("GPU detected: NVIDIA GeForce RTX 3080\n", "torch.cuda.is_available(): True\n",
                     "User provided device_type of 'cuda', and CUDA is available\n"):
            assert "program-found-no-gpu" not in found(line + TRAINED), line


class TestGpuBackendNotBuilt:
    verdict = "gpu-backend-not-built"

    def test_sibling_sherpa_ollama_onnxruntime(self):
        # heldout27b sherpa-onnx-1299, ollama-8068; heldout26 ComfyUI-LivePortraitKJ-15
        for line in ("Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, .\n",
                     'Dec 12 02:31:35 host ollama[95532]: time=2024-12-12T02:31:35.193-08:00 level=INFO source=routes.go:1276 msg="Dynamic LLM libraries" runners=[cpu]\n',
                     "Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}\n"):
            f = found(line).get("gpu-backend-not-built")
            assert f is not None and f.severity is Severity.WARN, line

    def test_control_lists_with_a_gpu_backend(self):
        for line in ("Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: {'CUDAExecutionProvider': {'device_id': '0'}}\n",
                     'time=2024-12-12T02:31:35.193-08:00 level=INFO source=routes.go:1276 msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12]"\n',
                     "Available providers: ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']\n"):
            assert "gpu-backend-not-built" not in found(line + TRAINED), line

    def test_sibling_the_provider_that_failed_is_the_cause(self):
        # onnxruntime's own failure to load its CUDA provider explains the CPU-only list after it
        text = ("2022-01-31 20:57:03.234399301 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:535 CreateExecutionProviderInstance] "
                "Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/reference/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.\n"
                "Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}\n")
        assert head(text).id == "onnxruntime-cuda-provider-failed"


class TestGpuArchCheckFailed:
    verdict = "gpu-arch-check-failed"

    def test_sibling_a_kernel_librarys_words(self):
        # heldout27b wan2gp-161 (a GTX 1070 Ti), wan2gp-50 (an RTX 2080 Ti)
        for line in ("ValueError: Unsupported CUDA architecture: sm61\n", "Unsupported CUDA architecture: sm75\n"):
            assert "gpu-arch-check-failed" in found(line), line

    def test_control_an_architecture_listed(self):
        assert "gpu-arch-check-failed" not in found("CUDA architecture: sm_86\nSupported CUDA architectures: sm80 sm86 sm89 sm90\n" + TRAINED)


class TestVulkanNoDriver:
    verdict = "vulkan-no-driver"

    def test_sibling_ncnn_vulkan_programs(self):
        # heldout27b real-esrgan-498 (realesrgan-ncnn-vulkan.exe), upscayl-939 (upscayl-bin)
        f = found(case("heldout27b", "real-esrgan-498-ncnn-vulkan-cpu"))["vulkan-no-driver"]
        assert f.severity is Severity.ERROR and "vulkaninfo" in f.fix
        assert "vulkan-no-driver" in found(case("heldout27b", "upscayl-939-vk-extension-props"))

    def test_control_a_vulkan_device_listed(self):
        # ncnn's healthy start-up: the GPU the loader found
        healthy = ("[0 NVIDIA GeForce RTX 3060]  queueC=2[8]  queueG=0[16]  queueT=1[2]\n"
                   "[0 NVIDIA GeForce RTX 3060]  bugsbn1=0  bugbilz=0  bugcopc=0  bugihfa=0\n"
                   "[0 NVIDIA GeForce RTX 3060]  fp16-p/s/a=1/1/1  int8-p/s/a=1/1/1\n")
        assert "vulkan-no-driver" not in found(healthy + "output.png done\n")


class TestPodLead:
    verdict = "unrecognised-failure"

    def test_sibling_the_pods_own_fatal_line_is_the_lead(self):
        # heldout27 gpu-monitoring-tools-120: dcgm-exporter crash-looping, its logs pasted after the status
        f = head(case("heldout27", "gpu-monitoring-tools-120-dcgm-exporter-pods"))
        assert f.id == "unrecognised-failure"
        assert any("level=fatal" in line for line in f.evidence.get("lines that speak of an error", []))

    def test_control_all_pods_running(self):
        pods = ("NAME                                       READY   STATUS    RESTARTS   AGE\n"
                "nvidia-device-plugin-daemonset-42pzg       1/1     Running   0          3d20h\n"
                "nvidia-dcgm-exporter-4f8fz                 1/1     Running   0          3d20h\n"
                "gpu-feature-discovery-x7b2k                1/1     Running   0          3d20h\n")
        assert errors(pods) == []


class TestVgpuMemoryLimit:
    verdict = "vgpu-memory-limit"

    def test_sibling_hami_core_refused_the_allocation(self):
        # heldout27 hami-662: the pod's vGPU share exceeded, torch then says "unrecognized error code"
        f = head(case("heldout27", "hami-662-vgpu-pytorch-test"))
        assert f.id == "vgpu-memory-limit" and f.evidence.get("limit") == "3145728000" and "gpumem" in f.fix

    def test_sibling_a_count_no_gpu_holds_is_hami_cores_own(self):
        # heldout27 hami-1181: 18446744073707737660 bytes in use: its accounting wrapped below zero, a false OOM
        f = head(case("heldout27", "hami-1181-vgpu-inference-memory"))
        assert f.id == "vgpu-memory-limit" and "wrapped below zero" in f.fix and "gpumem" not in f.fix

    def test_control_hami_cores_own_start_up(self):
        lines = ("[HAMI-core Msg(30:140387636202368:libvgpu.c:836)]: Initializing.....\n"
                 "[HAMI-core Msg(30:140387636202368:libvgpu.c:855)]: Initialized\n")
        assert errors(lines + TRAINED) == []


class TestGpuDriverUnusableInAContainer:
    verdict = "gpu-driver-unusable"

    def test_sibling_nvml_unknown_error_after_a_first_job(self):
        # heldout27 aks-3680: the first job used the A100, later ones got NVML's Unknown Error: the container's lost access first
        f = head(case("heldout27", "aks-3680-a100-nodepool-nvml"))
        assert f.id == "gpu-driver-unusable" and f.fix.startswith("inside a container or a pod that had the GPU")

    def test_control_a_healthy_nodes_nvidia_smi(self):
        smi = ("+-----------------------------------------------------------------------------------------+\n"
               "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
               "|-----------------------------------------+------------------------+----------------------+\n"
               "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
               "|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |\n"
               "| N/A   33C    P0             62W /  400W |       4MiB /  81920MiB |      0%      Default |\n"
               "+-----------------------------------------+------------------------+----------------------+\n")
        assert errors(smi) == []

    def test_sibling_the_driver_missing_and_torchs_cpu_build_keep_their_own(self):
        # the siblings the GPU-stack readers must leave as they were
        assert head("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n").id == "cuda-no-driver"
        assert head("AssertionError: Torch not compiled with CUDA enabled\n").id == "cuda-torch-cpu-build"
        assert head("RuntimeError: CUDA error: no kernel image is available for execution on the device\n").id == "cuda-no-kernel-image"


class TestCudaLibraryMissingInMoreWords:
    verdict = "cuda-library-missing"

    def test_sibling_ctranslate2_and_cudnn_words(self):
        for line, named in (("RuntimeError: Library cublas64_12.dll is not found or cannot be loaded\n", "cuBLAS of CUDA 12"),
                            ("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!\n", "cuDNN 8"),
                            ("Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}\n", "cuDNN 9")):
            assert named in found(line)["cuda-library-missing"].title, line

    def test_control_bitsandbytes_cpu_notice_and_an_onnxruntime_cpu_run(self):
        # bitsandbytes says this on any machine without CUDA (heldout20w's Intel XPU run); a CPU run meant as one
        text = ("/venv/lib/python3.10/site-packages/bitsandbytes/cextension.py:31: UserWarning: The installed version of bitsandbytes "
                "was compiled without GPU support. 8-bit optimizers and GPU quantization are unavailable.\n")
        assert errors(text + TRAINED) == [] and "gpu-backend-not-built" not in found(text + TRAINED)
