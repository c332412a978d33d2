"""Controls and siblings for the install-mismatch and launcher-config families of the retired parts (issue 35, diagC31): a
package's installed build without its GPU part, in its own words (`gpu-backend-not-built`: spconv's CPU-only build, auto-gptq
without its CUDA kernels), a device option whose choices hold no GPU backend (`script-arguments-refused` with onnxruntime's
step), and a compiled package that says it was built for another torch (`extension-built-for-other-torch`: xFormers' check).
The sample's cases are the logs as pasted; the other lines are real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a short GPU training run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


# spconv's check raised in a sparse convolution (open-mmlab/mmdetection3d#2061, hailanyi/VirConv#48)
SPCONV = ("Traceback (most recent call last):\n"
          '  File "tools/train.py", line 204, in <module>\n'
          "    main()\n"
          '  File "/usr/local/lib/python3.8/site-packages/spconv/pytorch/ops.py", line 150, in get_indice_pairs\n'
          "    return SpconvOps.get_indice_pairs(alloc, indices, batch_size, spatial_shape, algo, ksize, stride, padding, dilation, out_padding, subm)\n"
          "RuntimeError: /io/build/temp.linux-x86_64-cpython-37/spconv/build/core_cc/src/csrc/sparse/all/SpconvOps/"
          "SpconvOps_get_indice_pairs.cc(65) not implemented for CPU ONLY build.\n")


class TestGpuBackendNotBuilt:
    verdict = "gpu-backend-not-built"

    def test_sibling_spconv_cpu_only_build_raised(self):
        # raised, it stopped the run: an error, with spconv's own step (the package named for torch's CUDA)
        f = head(SPCONV)
        assert f.id == "gpu-backend-not-built" and f.severity is Severity.ERROR
        assert "spconv is its CPU-only build" in f.title and f.fix.startswith("pip uninstall -y spconv && pip install spconv-cu118")

    def test_sibling_autogptq_kernels_before_a_cut_traceback(self):
        # heldout27b textgen-3251: auto-gptq's notice, then the model fails to load with its traceback cut: the cut traceback
        # stays the failure, and the notice is told as a warning with auto-gptq's step
        fs = found(case("heldout27b", "textgen-3251-wsl-autogptq-load"))
        f = fs["gpu-backend-not-built"]
        assert f.severity is Severity.WARN and "the GPTQ CUDA kernels did not import" in f.title and "autogptq-index" in f.fix
        assert head(case("heldout27b", "textgen-3251-wsl-autogptq-load")).id == "unrecognised-failure"

    def test_sibling_gptq_for_llamas_same_words(self):
        # heldout28b textgen-795: GPTQ-for-LLaMa's quant.py prints the same words when quant_cuda does not import: the step
        # names both kernels' checks, not AutoGPTQ's alone
        f = found(case("heldout28b", "textgen-795-vicuna-13b-4bit-start"))["gpu-backend-not-built"]
        assert f.severity is Severity.WARN and "python setup_cuda.py install" in f.fix and "quant_cuda" in f.title

    def test_sibling_autogptq_in_its_loggers_words(self):
        for line in ("2023-08-23 13:49:27,776 - WARNING - qlinear_old.py:16 - CUDA extension not installed.\n",  # PromtEngineer/localGPT#402
                     "WARNING:auto_gptq.nn_modules.qlinear.qlinear_cuda:CUDA extension not installed.\n"):  # AutoGPTQ/AutoGPTQ#751
            f = found(line + TRAINED)["gpu-backend-not-built"]
            assert f.severity is Severity.WARN and "pip uninstall -y auto-gptq" in f.fix, line
            assert errors(line + TRAINED) == [], line

    def test_sibling_spconvs_architecture_warning_is_not_a_cpu_build(self):
        # heldout17 msmdfusion-32: the prebuilt spconv for CUDA lacks this GPU's architecture: not its CPU-only build
        assert "gpu-backend-not-built" not in found(case("heldout17", "msmdfusion-32-spconv-arch89-not-prebuilt"))

    def test_control_only_the_title_quotes_it(self):
        # heldout17 logonet-41: the message is in the thread's title, the pasted traceback cut before its last line: a title
        # is the reporter's words (pattern.NOT_HEADING), not this verdict
        assert "gpu-backend-not-built" not in found(case("heldout17", "logonet-41-spconv-cpu-only-build"))

    def test_control_sentences_and_builds(self):
        for text in ("I get the warning CUDA extension not installed. but inference works\n",
                     "Building the CUDA extension not installed before: running build_ext\n",
                     "spconv-cu118             2.3.6\n",
                     "RuntimeError: not implemented for CUDA\n"):
            assert "gpu-backend-not-built" not in found(text + TRAINED), text


class TestScriptArgumentsRefused:
    verdict = "script-arguments-refused"

    def test_sibling_onnxruntime_providers_without_cuda(self):
        # heldout26 facefusion-48: --execution-providers cuda refused, 'cpu' the only choice: the CPU package onnxruntime
        f = head(case("heldout26", "facefusion-48-execution-providers-cuda"))
        assert f.id == "script-arguments-refused" and f.severity is Severity.ERROR
        assert f.fix.startswith("--execution-providers offers 'cpu' alone") and "pip install onnxruntime-gpu" in f.fix

    def test_sibling_directml_and_azure_choices(self):
        # hacksider/Deep-Live-Cam#202 ('dml', onnxruntime-directml) and #1136 ('azure', the CPU package)
        for line in ("run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'dml', 'cpu')\n",
                     "run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'azure', 'cpu')\n"):
            f = head(line)
            assert f.id == "script-arguments-refused" and "onnxruntime-directml" in f.fix and "onnxruntime-gpu" in f.fix, line

    def test_sibling_a_device_option_of_another_program(self):
        # a program's own device choices without a GPU: its GPU build, not onnxruntime's step
        f = head("main.py: error: argument --device: invalid choice: 'cuda' (choose from 'cpu')\n")
        assert f.id == "script-arguments-refused" and "install its GPU build" in f.fix and "onnxruntime" not in f.fix

    def test_control_other_refused_choices_keep_the_plain_fix(self):
        for line in ("main.py: error: argument --precision: invalid choice: 'fp8' (choose from 'fp16', 'bf16', 'fp32')\n",
                     "run.py: error: argument --execution-provider: invalid choice: 'cude' (choose from 'cuda', 'cpu')\n"):
            f = head(line)
            assert f.id == "script-arguments-refused" and f.fix.startswith("give "), line

    def test_control_the_usage_line_and_a_run(self):
        usage = ("usage: run.py [-h] [-s SOURCE_PATH] [--execution-provider {cuda,cpu} [{cuda,cpu} ...]]\n"
                 "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n")
        assert "script-arguments-refused" not in found(usage + TRAINED)
        assert errors(usage + TRAINED) == []


# xFormers' check as it prints it (open-mmlab/PIA#30, TheLastBen/fast-stable-diffusion#2672)
XFORMERS = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch {built} with CUDA 1201 (you have {have})\n"
            "    Python  3.10.11 (you have 3.10.11)\n"
            "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n"
            "  Memory-efficient attention, SwiGLU, sparse and more won't be available.\n"
            "  Set XFORMERS_MORE_DETAILS=1 for more details\n")


class TestExtensionBuiltForOtherTorch:
    verdict = "extension-built-for-other-torch"

    def test_sibling_a_cpu_only_torch(self):
        # heldout29 invokeai-4788: torch 2.0.1+cpu: its CUDA build is the step
        f = found(case("heldout29", "invokeai-4788-startup-3-2-0"))["extension-built-for-other-torch"]
        assert f.severity is Severity.WARN and "2.0.1+cpu is its CPU-only build" in f.title
        assert f.fix.startswith("pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/cu118")

    def test_sibling_another_cuda_glued_on_one_line(self):
        # heldout28 hallo-64: the paste glued the warning, its pairs and xFormers' caught triton import on one line: the
        # warning, not triton's ModuleNotFoundError (xFormers' optional probe)
        report = api.diagnose(case("heldout28", "hallo-64-3080ti-xformers-mismatch"))
        f = next(f for f in report.findings if f.id == "extension-built-for-other-torch")
        assert "built for torch 2.2.2+cu121, and 2.2.2+cu118 is installed (another CUDA)" in f.title
        assert "--index-url https://download.pytorch.org/whl/cu118" in f.fix
        assert [f.id for f in report.findings if f.severity is Severity.ERROR] == []

    def test_sibling_another_torch_version(self):
        text = XFORMERS.format(built="2.0.1+cu118", have="2.1.0+cu121")
        f = found(text + TRAINED)["extension-built-for-other-torch"]
        assert "(another torch version)" in f.title and "torch==2.0.1 --index-url https://download.pytorch.org/whl/cu118" in f.fix
        assert errors(text + TRAINED) == []

    def test_sibling_a_failure_after_it_keeps_its_own_verdict(self):
        # the nearest failure of another verdict: torchvision built for another CUDA than torch
        text = XFORMERS.format(built="2.1.2+cu121", have="2.1.2+cu118") + (
            "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
            "PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1.\n")
        assert head(text).id == "torchvision-cuda-mismatch"
        assert "extension-built-for-other-torch" in found(text)

    def test_control_a_heading_and_healthy_xformers_lines(self):
        text = ("# [bug]: WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for\n"
                "xFormers 0.0.23.post1\n"
                "memory_efficient_attention.cutlassF:               available\n"
                "Applying attention optimization: xformers... done.\n")
        assert "extension-built-for-other-torch" not in found(text + TRAINED)
        assert errors(text + TRAINED) == []


class TestNcclDuplicateGpu:
    verdict = "nccl-duplicate-gpu"

    def test_sibling_xgboost_workers_on_one_gpu(self):
        # heldout29b xgboost-6344: ten dask workers on one GPU, XGBoost's own check before its NCCL all-reduce: its step
        # (one worker per GPU), not torch's set_device
        f = head(case("heldout29b", "xgboost-6344-dask-workers-gpu-hist"))
        assert f.id == "nccl-duplicate-gpu" and f.severity is Severity.ERROR
        assert f.fix.startswith("one worker per GPU: dask: dask_cuda.LocalCUDACluster()")

    def test_sibling_nccls_own_words_keep_torchs_step(self):
        f = head("smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000\n")
        assert f.id == "nccl-duplicate-gpu" and f.fix.startswith('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))')

    def test_sibling_another_native_check_stays_its_own(self):
        # the nearest XGBoost failure of another verdict: a native CHECK about something else
        f = head("xgboost.core.XGBoostError: [10:01:02] /workspace/src/tree/updater_gpu_hist.cu:781: Check failed: n_bins > 0 (0 vs. 0)\n")
        assert f.id != "nccl-duplicate-gpu"

    def test_control_ncclss_init_lines_of_distinct_gpus(self):
        text = ("node1:1:1 [0] NCCL INFO comm 0x556fe4c70860 rank 0 nranks 2 cudaDev 0 nvmlDev 0 - Init COMPLETE\n"
                "node1:2:2 [1] NCCL INFO comm 0x5644e6e34af0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 - Init COMPLETE\n")
        assert "nccl-duplicate-gpu" not in found(text + TRAINED)
        assert errors(text + TRAINED) == []


class TestParallelLayoutRefused:
    verdict = "parallel-layout-refused"

    def test_sibling_deepep_internode_on_one_gpu_nodes(self):
        # heldout28 DeepEP-104: two nodes of one A100 each; DeepEP's Buffer refuses its normal kernels over RDMA
        f = head(case("heldout28", "DeepEP-104-two-node-a100-internode"))
        assert f.id == "parallel-layout-refused" and "NVLink peers" in f.title
        assert f.fix.startswith("DeepEP's normal (internode) kernels assume 8 GPUs per node") and "low_latency_mode=True" in f.fix

    def test_sibling_deepep_whole_nodes(self):
        f = head("RuntimeError: Failed: Assertion error /sgl-workspace/DeepEP/csrc/deep_ep.cpp:40 'num_ranks < NUM_MAX_NVL_PEERS or num_ranks % NUM_MAX_NVL_PEERS == 0'\n")
        assert f.id == "parallel-layout-refused" and "whole nodes" in f.title

    def test_sibling_deepeps_other_asserts_are_not_a_layout(self):
        # DeepEP's low-latency mode given more tokens than its buffer (deepseek-ai/DeepEP#165): not the ranks' layout
        f = head("RuntimeError: Failed: Assertion error /sgl-workspace/DeepEP/csrc/deep_ep.cpp:1025 "
                 "'x.size(0) == topk_idx.size(0) and x.size(0) <= num_max_dispatch_tokens_per_rank'\n")
        assert f.id != "parallel-layout-refused"

    def test_control_the_macro_and_the_source_line(self):
        text = "#define NUM_MAX_NVL_PEERS 8\n    EP_HOST_ASSERT(num_ranks > NUM_MAX_NVL_PEERS or low_latency_mode);\n"
        assert "parallel-layout-refused" not in found(text + TRAINED)
