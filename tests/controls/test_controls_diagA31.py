"""Controls and siblings for diagA31 (issue 35: out of memory and a build without the GPU's architecture in any program's
words): `gpu-memory-refused` and `gpu-arch-missing` (knowledge/patterns/classes31a.py), told as `cuda-oom` and
`cuda-no-kernel-image`, and the fix a native program gets for them (knowledge/setting_fix.py, setting NATIVE_PROGRAM: no
Python in the log). `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest
one that gets its own. Lines are real ones (threads named beside them); the retired parts' cases are the logs as pasted."""

from __future__ import annotations

import pytest
from test_controls_classes6 import case
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api
from gpudoctor.core.findings import Severity

OOM, ARCH = "cuda-oom", "cuda-no-kernel-image"
# a miner that keeps hashing: the run goes on
HASHING = "".join(f"[2023-02-09 16:0{i}:00] GPU#0: 31.{i} MH/s, shares 1{i}/1{i}\n" for i in range(3))


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


class TestMemoryInAProgramsWords:
    @pytest.mark.parametrize("part,name", [
        ("heldout30b", "nsfminer-45-initepoch-out-of-memory"),  # "CUDA error in func initEpoch at line 93 out of memory"
        ("heldout30b", "rigel-20-five-3060ti-insufficient-memory"),  # "GPU#0 error: insufficient memory"
        ("heldout30b", "rigel-78-twelve-rtx2060-insufficient-memory"),  # the same, quoted after the reporter's prose
        ("heldout30b", "nsfminer-113-gtx650-1gb-epoch397"),  # "requires 4.17 GB ... from total of 1024.00 MB available"
    ])
    def test_sibling_a_miners_own_words_are_out_of_memory_in_its_own_terms(self, part, name):
        f = head(case(part, name))
        assert f is not None and f.id == OOM
        # a native program (no Python in the log): its own options, the GPU's other processes, the card; not PyTorch's levers
        assert "gradient" not in f.fix and "PYTORCH_CUDA_ALLOC_CONF" not in f.fix and "page file" in f.fix

    def test_sibling_what_the_program_needs_against_what_the_device_has_leads_the_fix(self):
        f = head(case("heldout30b", "nsfminer-113-gtx650-1gb-epoch397"))
        assert f.evidence["requested"] == "4.17 GB" and f.evidence["available"] == "1024.00 MB"
        assert f.fix.startswith("the program needs 4.17 GB")

    @pytest.mark.parametrize("line", [
        "GPU 0: insufficient memory for DAG epoch 385. GPU 0 will be paused.",  # Lolliedieb/lolMiner-releases#77
        " CUDA device GeForce GTX 960  has insufficient GPU memory. 2096168960  bytes of memory found < 2659188352  bytes of memory required",  # ethminer#994
        "Error: not enough memory on GPU 0 to create DAG. Current epoch requires 6927 MB memory for DAG but this device has only 4080 MB.",  # RainbowMiner#3066
        "ggml_vulkan: Device memory allocation of size 118497280 failed.",  # ggml-org/llama.cpp#15256
        "OpenCL error: CL_MEM_OBJECT_ALLOCATION_FAILURE",  # PRiME-project/PRiMEStereoMatch#1
    ])
    def test_sibling_other_programs_words_for_the_gpus_memory(self, line):
        assert head_id(line + "\n") == OOM

    def test_sibling_a_pytorch_job_keeps_pytorchs_levers(self):
        # Vulkan's status raised in a Python job: the same verdict, and the fix stays the training job's
        f = head(TB + "RuntimeError: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
        assert f.id == OOM and "gradient" in f.fix and "VK_ERROR_OUT_OF_DEVICE_MEMORY" in f.fix

    def test_sibling_the_host_memory_is_not_the_gpus(self):
        for text in ("fork: Cannot allocate memory\n", "ggml_vulkan: vk::Device::allocateMemory: VK_ERROR_OUT_OF_HOST_MEMORY\n",
                     "T-Rex: GPU #0: not enough memory to hold the DAG in the page file, increase virtual memory\n"):
            assert OOM not in ids(text), text

    @pytest.mark.parametrize("text", [
        " cu-0  Epoch 397 requires 4.17 GB of required memory from total of 8192.00 MB available on device.\n cu-0  Generating DAG\n",  # it fits
        "| CUDA OOMs: 0                     |        cudaMalloc retries: 0         |\nCUDA errors: 0, out of memory: 0\n",  # counts
        "[    0.000000] OOM killer disabled.\nEpoch 1 done\n",
        "| N/A   45C    P0    60W / 300W |   1024MiB / 16384MiB |      0%      Default |\n",  # nvidia-smi's memory column
        "W: ocl_pfn_notify error: CL_MEM_OBJECT_ALLOCATION_FAILURE error executing CL_COMMAND_WRITE_BUFFER on GeForce GTX 1080 Ti (Device 0).\n" + HASHING,
        "[2023-02-09 15:58:45] GPU#0 warning: insufficient memory for the large kernel, retrying with kernel 2\n" + HASHING,
        "I ran the miner on my GTX 1050 and I think my GPU doesn't have enough memory for this.\nAny idea?\n",  # a judgement
        "# GPU#0 error: insufficient memory\n\nuser · description · 2023-02-09\nit does not start\n",  # only the title
    ])
    def test_control_healthy_lines_and_words_about_it_are_not_out_of_memory(self, text):
        assert OOM not in ids(text)


class TestArchitectureInAProgramsWords:
    @pytest.mark.parametrize("part,name,program", [
        ("heldout30b", "pow-miner-gpu-124-gt640-invalid-device-symbol", "pow-miner-gpu"),  # "... invalid device symbol ]"
        ("heldout30", "autodock-gpu-172-rtx3080-device-symbol", "AutoDock-GPU"),  # "copy to cData failed invalid device symbol"
        ("heldout30b", "xmr-stak-2195-gt430-arch21-cuda8", "xmr-stak"),  # "binary does not contain required device architecture"
    ])
    def test_sibling_a_native_programs_build_without_the_gpus_architecture(self, part, name, program):
        f = head(case(part, name))
        assert f is not None and f.id == ARCH and f.title.startswith(program)
        assert "pip install torch" not in f.fix and "compute_cap" in f.fix

    def test_sibling_a_program_that_bundles_libtorch_gets_its_own_build_not_torchs(self):
        # heldout30 dorado-498: torch's words inside dorado's own libtorch on a K20Xm; no Python in the log
        f = head(case("heldout30", "dorado-498-k20xm-kernel-image"))
        assert f.id == ARCH and "pip install torch" not in f.fix and "dorado" in f.fix and "older release" in f.fix

    @pytest.mark.parametrize("line", [
        "[2017-08-11 23:06:20] GPU #0: invalid device function",  # djm34/ccminer-msvc2015#15 (a Tesla K80)
        " X 16:15:20 cuda-3   Error CUDA mining: CUDA error in func set_constants at line 142 invalid device symbol",  # ethminer#1659
        "[2017-10-18 23:51:58] GPU #1: cudaError 13 (invalid device symbol) calling 'cudaMemcpyToSymbol(sha256_h, host_sha256_h, "
        "sizeof(host_sha256_h), 0, cudaMemcpyHostToDevice)' (sha256.cu line 415)",  # cbuchner1/CudaMiner#160: by CUDA's table
    ])
    def test_sibling_cudas_words_without_cudas_wrapper(self, line):
        assert head_id(line + "\n") == ARCH

    def test_sibling_torchs_own_message_in_a_python_job_keeps_torchs_fix(self):
        f = head(TB + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
        assert f.id == ARCH and "pip install torch" in f.fix

    @pytest.mark.parametrize("text,other", [
        ("nvcc fatal   : Unsupported gpu architecture 'compute_89'\n", None),  # the build's toolkit: no binary ran
        ("CUDA error: the provided PTX was compiled with an unsupported toolchain.\n", "cuda-driver-too-old"),  # the driver
        ("GPU #0: an illegal memory access was encountered\n", None),  # a kernel's fault, not a missing kernel
    ])
    def test_sibling_a_build_a_driver_or_a_fault_is_not_a_missing_architecture(self, text, other):
        assert ARCH not in ids(text) and (other is None or head_id(text) == other)

    @pytest.mark.parametrize("text", [
        # nvcc's deprecation warning, then the target built
        "nvcc warning : The 'compute_35', 'compute_37', 'sm_35', and 'sm_37' architectures are deprecated, and may be removed in a "
        "future release\n[100%] Built target autodock_gpu_128wi\n",
        "When I start it I get invalid device function on my old card, can you help?\n",  # a person's words
        "# invalid device symbol\n\nuser · description · 2022-01-11\nit stops\n",  # only the title
        # spconv's warning that it may happen (heldout17 msmdfusion-32): a warning, not the run's failure
        "[WARNING]your gpu arch (8, 9) isn't compiled in prebuilt, may cause invalid device function. available: {(7, 0), (6, 1), "
        "(8, 0), (6, 0), (7, 5), (8, 6), (5, 2)}\n",
    ])
    def test_control_no_missing_architecture(self, text):
        assert ARCH not in [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def test_sibling_an_inference_framework_out_of_memory_has_no_torch_words():
    # heldout29 localcolabfold-105: JAX's RESOURCE_EXHAUSTED on a 2 GiB card while predicting: the input, the model, the card
    f = head(case("heldout29", "localcolabfold-105-2gb-gpu"))
    assert f.id == "framework-oom" and "torch.inference_mode" not in f.fix and "more memory" in f.fix


def test_control_a_python_projects_thread_is_no_native_program():
    # the thread's header names the repository's language: Python's keeps PyTorch's levers, C++'s gets the program's own
    body = "\nuser · description · 2024-01-01\n```\nCUDA error: out of memory\n```\n"
    python = head("# source: https://github.com/o/p/issues/1\no/p · issue #1 · open · Python\n# OOM" + body)
    native = head("# source: https://github.com/o/p/issues/1\no/p · issue #1 · open · C++\n# OOM" + body)
    assert python.id == native.id == OOM
    assert "gradient" in python.fix and "gradient" not in native.fix and "p puts on the GPU" in native.fix
