"""Twenty-eighth round (diagB28, issue 35): the GPU stack that is not ready, said in the program's own lines.

- `gpu-backend-not-built`: a program's list of the backends it can run on holds the CPU alone: onnxruntime's providers
  (`Applied providers: ['CPUExecutionProvider']`, sherpa-onnx's `Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON.
  Available providers: CPUExecutionProvider, .`), Ollama's runners (`runners=[cpu]`), llama.cpp's `not compiled with GPU
  offload support`. The build has no GPU backend (or the one it has did not load), so the work runs on the CPU, slowly,
  whatever GPUs the machine has. A warning: the run goes on, and a CPU run meant as one prints the same list; the program's
  failure to load its GPU backend, where the log shows it (onnxruntime's CUDA provider), is the cause and this its
  consequence.
- `vgpu-memory-limit`: a GPU-sharing layer's own refusal of an allocation past the pod's share of GPU memory (HAMi-core,
  HAMi's and its predecessors' vGPU library: `[HAMI-core ERROR (...)]: Device 0 OOM 3171158016 / 3145728000`), which the
  program then sees as an out-of-memory or an odd CUDA error ("unrecognized error code").
- `vulkan-no-driver`: the Vulkan loader found no driver (ncnn-vulkan programs: Real-ESRGAN's, waifu2x's, RIFE's, Upscayl's;
  `vkCreateInstance failed -9`, `vkEnumerateInstanceExtensionProperties failed -1`): such a program has no GPU to run on and
  stops ("invalid gpu device").

Written from heldout27 (hami-662) and heldout27b (sherpa-onnx-1299, sherpa-onnx-1620, ollama-8068, rembg-841, real-esrgan-498, upscayl-939) and
heldout26 (ComfyUI-LivePortraitKJ-15); heldout23, heldout24, heldout24b and heldout24w were not read while writing (the
transfer check).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern

E = Severity.ERROR
W = Severity.WARN
BACKEND_NOT_BUILT = "gpu-backend-not-built"
VULKAN_NO_DRIVER = "vulkan-no-driver"
VGPU_MEMORY_LIMIT = "vgpu-memory-limit"
# The findings whose title gives what the line names and whose fix is, or starts with, the step it decides (knowledge/story.py):
# this module's, and those whose library knowledge/gpu_library.py reads (patterns/capability.py's, patterns/classes10a.py's)
DETAIL_SAID = (BACKEND_NOT_BUILT, VULKAN_NO_DRIVER, VGPU_MEMORY_LIMIT, "cuda-library-missing", "onnxruntime-cuda-provider-failed")

# Which program's list, and what gives it its GPU backend
BACKEND_STEPS = {
    "onnxruntime": ("onnxruntime's providers hold the CPU alone",
                    "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu   # (the CPU package installed beside "
                    "it takes its place); then python -c \"import onnxruntime as ort; print(ort.get_available_providers())\" lists "
                    "CUDAExecutionProvider, and the session must be created with providers=['CUDAExecutionProvider', ...]"),
    "sherpa": ("sherpa-onnx was built without its GPU support",
               "use sherpa-onnx's GPU build: the release archive named -gpu or -cuda (its shared libraries in place of the "
               "package's CPU ones, on LD_LIBRARY_PATH or beside the program), or build it with -DSHERPA_ONNX_ENABLE_GPU=ON, with "
               "the CUDA version its onnxruntime needs"),
    "ollama": ("Ollama found no GPU runner library (runners: the CPU's alone)",
               "install Ollama with its GPU libraries (the official installer or release archive: lib/ollama/cuda_v12 beside the "
               "binary; a distribution's or a source build without them has only the CPU runner), then restart the server and "
               "read its 'inference compute' line"),
    "llama.cpp": ("llama.cpp was built without a GPU backend",
                  "rebuild it with the GPU backend: cmake -B build -DGGML_CUDA=ON (llama-cpp-python: CMAKE_ARGS=\"-DGGML_CUDA=on\" "
                  "pip install --force-reinstall --no-cache-dir llama-cpp-python), or install a CUDA release of it"),
    "spconv": ("spconv is its CPU-only build: its sparse convolutions have no GPU kernels there",
               "pip uninstall -y spconv && pip install spconv-cu118   # the package named for the CUDA of the installed torch "
               "(python -c \"import torch; print(torch.version.cuda)\": spconv-cu113, -cu117, -cu118, -cu120, -cu121, ...; plain "
               "`spconv` is the CPU build); then pip list | grep -i spconv shows that one package alone"),
    "auto_gptq": ("AutoGPTQ's CUDA kernels are not in the installed auto-gptq (a wheel for another torch or CUDA, or one built "
                  "without them)",
                  "pip uninstall -y auto-gptq && pip install auto-gptq --no-cache-dir --extra-index-url "
                  "https://huggingface.github.io/autogptq-index/whl/cu118/   # the index of the CUDA of the installed torch "
                  "(torch.version.cuda: cu118, cu121); or build it where nvcc of that CUDA is installed (pip install . in its "
                  "source, BUILD_CUDA_EXT not 0); then python -c \"import autogptq_cuda_64\" (after import torch) imports"),
    "gptq": ("the GPTQ CUDA kernels did not import (auto-gptq's autogptq_cuda or GPTQ-for-LLaMa's quant_cuda: not built, or built "
             "for another torch or CUDA)",
             "python -c \"import torch, autogptq_cuda_64\" (auto-gptq) or python -c \"import torch, quant_cuda\" (GPTQ-for-LLaMa) says "
             "which and why; auto-gptq: pip uninstall -y auto-gptq && pip install auto-gptq --no-cache-dir --extra-index-url "
             "https://huggingface.github.io/autogptq-index/whl/cu118/ (the index of torch.version.cuda); GPTQ-for-LLaMa: python "
             "setup_cuda.py install in its folder, in the environment the program runs, with the CUDA toolkit of the installed torch"),
    "": ("the program lists the CPU alone among its backends",
         "install the program's GPU build (the package or release named for CUDA or the GPU), then check that its list of "
         "backends names the GPU"),
}


def backend_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    program = ("sherpa" if out.get("sherpa") else "onnxruntime" if out.get("ort") or out.get("ort_list") or out.get("ort_asked") else
               "ollama" if out.get("ollama") else "llama.cpp" if out.get("llama") else "spconv" if out.get("spconv") else
               "auto_gptq" if out.get("gptq_kernels") or out.get("gptq_logger") else "gptq" if out.get("gptq") else "")
    out["detail"], out["step"] = BACKEND_STEPS[program]
    return out


# Vulkan's result codes an instance-level call returns when the loader finds no usable driver
VK_CODES = {"-9": "VK_ERROR_INCOMPATIBLE_DRIVER: no driver with Vulkan support", "-3": "VK_ERROR_INITIALIZATION_FAILED",
            "-1": "VK_ERROR_OUT_OF_HOST_MEMORY, what the loader returns here when no driver answers",
            "-7": "VK_ERROR_EXTENSION_NOT_PRESENT"}


def vulkan_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    code = out.get("code") or ""
    out["detail"] = f"{out['call']} failed" + (f" ({code}: {VK_CODES[code]})" if code in VK_CODES else f" ({code})" if code else "")
    out["step"] = VULKAN_STEP
    return out


VULKAN_STEP = ("vulkaninfo --summary   # the GPUs the Vulkan loader sees (Windows: vulkaninfoSDK.exe, or the driver's own tool); an error "
               "or only llvmpipe: install or repair the GPU driver with its Vulkan part (Windows: a clean install of the NVIDIA, AMD "
               "or Intel driver; Linux: the vendor's Vulkan ICD, /usr/share/vulkan/icd.d/*.json: nvidia's libnvidia-gl package or "
               "mesa-vulkan-drivers); on a machine or remote session without a GPU, the program's CPU path (Real-ESRGAN: "
               "python inference_realesrgan.py --fp32)")

# HAMi-core's step for a pod over its share, and for a count of the memory in use that no GPU holds (its own accounting wrapped
# below zero, an unsigned underflow: more than 2**62 bytes)
VGPU_STEP = ("kubectl describe pod POD | grep -i gpumem   # the share the pod was given; raise it (resources.limits nvidia.com/gpumem "
             "in MiB, or nvidia.com/gpumem-percentage) to more than the job needs, or make the job need less (a smaller batch, "
             "mixed precision, fewer resident models); a job that needs the whole card: request it whole (no gpumem limit)")
VGPU_ACCOUNTING_STEP = ("the memory in use it counts is no GPU's (over 2**62 bytes: its own count wrapped below zero), so the refusal is "
                        "false: restart the pod (the count starts again), and upgrade HAMi (its device plug-in and the HAMi-core "
                        "library it mounts) to a release that fixes its memory accounting; nvidia-smi in the pod shows the same "
                        "impossible usage while it lasts")
IMPOSSIBLE_BYTES = 2 ** 62


def vgpu_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    used, limit = int(out["used"]), int(out["limit"])
    if used >= IMPOSSIBLE_BYTES:
        out["detail"], out["step"] = f"device {out['device']}: {used} bytes in use is no GPU's: HAMi-core's own count is wrong", VGPU_ACCOUNTING_STEP
    else:
        out["detail"] = f"device {out['device']}: {used / 2**30:.2f} GiB would be in use, {limit / 2**30:.2f} GiB allowed"
        out["step"] = VGPU_STEP
    return out


PATTERNS = [
    pattern(
        BACKEND_NOT_BUILT,
        "platform",
        CAUSE,
        W,
        "the program's build has no GPU backend: it lists only the CPU among the backends it can run on, or says its build has no GPU kernels",
        r"(?P<sherpa>Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON)"
        # onnxruntime's providers as a program logs them, the CPU's alone (the list closed, or ended by a dot)
        r"|(?P<ort>(?:Applied|Available) providers:?\s*\[?\s*['\"]?CPUExecutionProvider['\"]?\s*,?\s*(?:\.|\]))"
        r"|^\s*(?P<ort_list>\[\s*['\"]CPUExecutionProvider['\"]\s*\])\s*$"
        # onnxruntime's own warning: the session asked for a GPU provider this build does not have
        r"|(?P<ort_asked>Specified provider '(?:CUDA|Tensorrt|ROCM|MIGraphX)ExecutionProvider' is not in available provider names)"
        # Ollama's runners (its server log at start): the CPU's variants alone
        r"|(?P<ollama>(?:runners=\"?|Dynamic LLM libraries \[)(?:\[\s*)?(?:cpu\w*\s*)+\])"
        r"|(?P<llama>not compiled with GPU offload support)"
        # (diagC31) a package that says the operation asked of it has no kernel in its CPU-only build: spconv's (cumm's) check
        # on a sparse convolution, raised as the run's RuntimeError (then an error: story.py raised_not_degraded)
        # (a thread's heading that quotes it is the reporter's words, pattern.NOT_HEADING: a line of the run decides it)
        r"|" + NOT_HEADING + r"(?P<spconv>not implemented for CPU ONLY build)"
        # (diagC31) the GPTQ kernels' own notice that they did not import: AutoGPTQ's (auto_gptq.nn_modules.qlinear*, its logger's
        # name or its qlinear file on the line) and GPTQ-for-LLaMa's (quant.py's print, the same words alone); the quantized
        # layers then run on slow fallbacks, or the model does not load
        r"|^(?:\W{0,3}(?:[\d\-: ,]+)?(?:-? ?WARNING\W{1,3}(?:(?P<gptq_logger>qlinear\w*\.py):\d+ - |[\w.]+\.py:\d+ - )?|WARNING:auto_gptq[\w.]*:)?)?"
        r"(?P<gptq>CUDA extension not installed)\.?\s*$"
        r"|(?P<gptq_kernels>CUDA kernels for auto_gptq are not installed)",
        ("SHERPA_ONNX_ENABLE_GPU", "providers", "CPUExecutionProvider", "runners=", "Dynamic LLM libraries", "GPU offload support",
         "is not in available provider names", "CPU ONLY build", "CUDA extension not installed", "CUDA kernels for auto_gptq"),
        why="""Programs that run on several kinds of hardware say at start which backends they have: onnxruntime its
        execution providers, sherpa-onnx the providers of the onnxruntime it was built with, Ollama its runner libraries,
        llama.cpp whether it can offload layers. When the list holds the CPU alone, the build in use has no GPU backend: the
        CPU package of onnxruntime (or both packages installed, the CPU one in charge), a library built without its GPU
        option, a distribution's package without the CUDA runner; or its GPU backend did not load (then a line before it
        says why: onnxruntime's failure to create its CUDA provider is that cause). Everything then runs on the CPU: slow,
        0% GPU use, memory of the host. A run meant for the CPU prints the same list; it is a warning, not a failure. A
        package can say it of itself: spconv's CPU-only build (plain `spconv` where `spconv-cu118` was meant) refuses its
        sparse convolutions on the GPU, and that RuntimeError stops the run; the GPTQ kernels (auto-gptq's, GPTQ-for-LLaMa's)
        not built, or built for another torch or CUDA, say "CUDA extension not installed", and the quantized layers run on
        slow fallbacks, or the model does not load.""",
        fix="STEP",
        examples=[
            ("Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, .",
             "k2-fsa/sherpa-onnx#1299 (the Go package's CPU-only libraries; the GPU release archive fixed it)"),
            ('Dec 12 02:31:35 host ollama[95532]: time=2024-12-12T02:31:35.193-08:00 level=INFO source=routes.go:1276 msg="Dynamic LLM libraries" runners=[cpu]',
             "ollama/ollama#8068 (a multi-GPU host, ollama on the CPU)"),
            ("LandmarkRunner warmup time: 0.108s Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}",
             "kijai/ComfyUI-LivePortraitKJ#15 (CUDA selected, 100% CPU)"),
            ("warning: not compiled with GPU offload support, --n-gpu-layers option will be ignored",
             "ggerganov/llama.cpp issues (a build without -DGGML_CUDA=ON)"),
            ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
             "microsoft/onnxruntime issues (the CPU package onnxruntime where onnxruntime-gpu was meant)"),
            ("RuntimeError: /io/build/temp.linux-x86_64-cpython-37/spconv/build/core_cc/src/csrc/sparse/all/SpconvOps/SpconvOps_get_indice_pairs.cc(65) not implemented for CPU ONLY build.",
             "open-mmlab/mmdetection3d#2061 (the CPU-only spconv installed; the maintainer: install spconv with CUDA), hailanyi/VirConv#48"),
            ("2023-08-23 13:49:27,776 - WARNING - qlinear_old.py:16 - CUDA extension not installed.",
             "PromtEngineer/localGPT#402 (auto-gptq's prebuilt wheel; reinstalled from source)"),
            ("WARNING:auto_gptq.nn_modules.qlinear.qlinear_cuda:CUDA extension not installed.", "AutoGPTQ/AutoGPTQ#751 (Windows, torch 2.5.1, CUDA 12.4)"),
            ("CUDA extension not installed.", "AutoGPTQ/AutoGPTQ#598 (transformers loading a GPTQ model in an NGC container); GPTQ-for-LLaMa's "
             "quant.py prints the same words when quant_cuda does not import (oobabooga/textgen#795, heldout28b)"),
            ("CUDA kernels for auto_gptq are not installed, this will result in very slow inference speed. This may because:",
             "AutoGPTQ/AutoGPTQ#249 (a source install without the CUDA extension built)"),
        ],
        not_examples=[
            "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: {'CUDAExecutionProvider': {'device_id': '0'}}",
            "Available providers: ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']",
            'time=2024-12-12T02:31:35.193-08:00 level=INFO source=routes.go:1276 msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12]"',
            "providers=['CUDAExecutionProvider', 'CPUExecutionProvider']",
            # bitsandbytes' notice on any machine without CUDA (an Intel XPU run, a CPU evaluation: heldout20w, heldout21w)
            "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers and GPU quantization are unavailable.",
            # a build step that compiles an extension, and a sentence that only names the notice
            "Building the CUDA extension not installed before: running build_ext",
            "I get the warning CUDA extension not installed. but inference works",
            "RuntimeError: not implemented for CUDA",
        ],
        after=("onnxruntime-cuda-provider-failed",),
        fields=backend_fields,
    ),
    pattern(
        VULKAN_NO_DRIVER,
        "platform",
        CAUSE,
        E,
        "the Vulkan loader found no usable GPU driver: the program has no Vulkan GPU to run on",
        r"(?P<call>vkCreateInstance|vkEnumerateInstanceExtensionProperties|vkEnumerateInstanceLayerProperties|vkEnumeratePhysicalDevices) failed\s*(?P<code>-?\d+)?",
        ("vkCreateInstance failed", "vkEnumerateInstance", "vkEnumeratePhysicalDevices failed"),
        why="""Programs built on Vulkan (the ncnn-vulkan tools: realesrgan-, waifu2x-, rife-, upscayl-bin; llama.cpp's Vulkan
        build) find the GPU through the Vulkan loader, which loads each installed driver's Vulkan part (its ICD). Creating
        the instance or listing its extensions or devices fails when no driver answers: no Vulkan driver installed (a
        display driver without it, a machine or remote session with no GPU, a container without the driver's ICD files), or
        one the loader cannot use (VK_ERROR_INCOMPATIBLE_DRIVER, -9). The program then has no GPU ("invalid gpu device") and
        most of them have no CPU mode.""",
        fix="STEP",
        examples=[
            ("vkCreateInstance failed -9", "xinntao/Real-ESRGAN#498 (realesrgan-ncnn-vulkan.exe: no usable Vulkan GPU)"),
            ("🎒 BACKEND REPORTED:  vkEnumerateInstanceExtensionProperties failed -1",
             "upscayl/upscayl#939 (then 'Invalid GPU Device'; the maintainer: are Vulkan drivers installed?)"),
        ],
        not_examples=[
            "[0 NVIDIA GeForce RTX 3060]  queueC=2[8]  queueG=0[16]  queueT=1[2]",
            "vkCreateInstance succeeded",
        ],
        fields=vulkan_fields,
    ),
    pattern(
        VGPU_MEMORY_LIMIT,
        "cuda",
        CAUSE,
        E,
        "the GPU-sharing layer refused an allocation as over the pod's share of GPU memory (a vGPU memory limit, not the GPU's)",
        r"\[HAMI-core ERROR[^\]]*\]:\s*Device (?P<device>\d+) OOM (?P<used>\d+) / (?P<limit>\d+)",
        ("HAMI-core ERROR",),
        why="""A GPU-sharing layer (HAMi's vGPU library, HAMi-core, preloaded into the pod's container) hands each pod a share of a
        GPU and checks every allocation against the pod's memory limit (nvidia.com/gpumem, or gpumem-percentage of the card). An
        allocation past it is refused whatever the GPU itself has free: the line gives the memory asked for and the limit, in
        bytes. The program then fails on that allocation, often in words that do not say memory (torch's "CUDA error:
        unrecognized error code" after it).""",
        fix="STEP",
        examples=[
            ("[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 3171158016 / 3145728000",
             "Project-HAMi/HAMi#662 (heldout27: a PyTorch test in a vGPU pod, then 'CUDA error: unrecognized error code')"),
            ("2. Applications fail with OOM errors: `[HAMI-core ERROR (pid:1 thread=140160828682240 allocator.c:53)]: Device 0 OOM 18446744073707737660 / 24146608128`",
             "Project-HAMi/HAMi#1181 (heldout27: its count of the memory in use wrapped below zero: a false OOM)"),
        ],
        not_examples=[
            "[HAMI-core Msg(30:140387636202368:libvgpu.c:836)]: Initializing.....",
            "[HAMI-core Info(80:140225570006848:multiprocess_memory_limit.c:260)]: get_gpu_memory_usage dev=0",
        ],
        fields=vgpu_fields,
    ),
]
