"""Controls and siblings for a failure with no error line (issue 35, the no-error-line rows of heldout19-23): the run's
own state lines say it uses the CPU, or one process, while the log shows GPUs there or a launch that asked for more
(knowledge/gpus_unused.py, cases `cpu-build`, `cpu-device`, `cpu` and `one-process` of gpus-left-unused). The sample's
cases are the threads as pasted; the other lines are real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# DLR-RM/stable-baselines3#972: SB3's device line as a model is built ("Using cuda device" on the GPU)
SB3_CPU = "Using cpu device\nWrapping the env with a `Monitor` wrapper\nWrapping the env in a DummyVecEnv.\n"
# XPixelGroup/HAT#114 (BasicSR's training statistics, run with plain python)
BASICSR = ("Training statistics:\n\tNumber of train images: 144147\n\tDataset enlarge ratio: 1\n\tBatch size per gpu: 4\n"
           "\tWorld size (gpu number): 1\n\tRequire iter number per epoch: 36037\n\tTotal epochs: 14; iters: 500000.\n")
# huggingface/accelerate#197: the Accelerator's state, a script run with plain python
ACCELERATE = "Distributed environment: NO\nNum processes: 1\nProcess index: 0\nLocal process index: 0\nDevice: cuda\n"


class TestGpusLeftUnusedCpu:
    verdict = "gpus-left-unused"

    def test_sibling_sb3_says_cpu_on_a_gpu_server(self):
        # DLR-RM/stable-baselines3#972: "Using cpu device" on an 8-GPU server after device="cuda:0"
        f = head(case("heldout20", "sb3-972-pick-third-gpu"))
        assert f.id == "gpus-left-unused" and f.severity is Severity.WARN and "Using cpu device" in f.title
        assert "torch.cuda.is_available()" in f.fix

    def test_sibling_a_cpu_build_beside_the_gpu(self):
        # ultralytics/ultralytics#227: "pytorch 1.13.1+cpu" and "CUDA Version: 11.6", device=0 refused
        f = head(case("heldout20", "ultralytics-227-device-arg-cpu-torch"))
        assert f.id == "gpus-left-unused" and f.severity is Severity.WARN and "1.13.1+cpu" in f.title
        assert "download.pytorch.org/whl/cu" in f.fix

    def test_sibling_torch_sees_the_gpu_and_the_reporter_says_cpu(self):
        # AI4Finance-Foundation/FinRL#926: "CUDA available: True", and "it still tells me it is using cpu device" (prose)
        f = head(case("heldout20", "finrl-926-td3-cuda-check"))
        assert f.id == "gpus-left-unused" and f.severity is Severity.WARN and "CUDA available: True" in f.title
        assert "what decides it" in f.evidence and 'device="cuda"' in f.fix

    def test_sibling_torch_answers_false_in_a_repl_beside_a_gpu(self):
        # the shape of a thread's REPL check under its nvidia-smi header
        text = ("| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
                ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n")
        f = found(text)["gpus-left-unused"]
        assert f.severity is Severity.INFO and "torch.version.cuda" in f.fix and "device option" in f.evidence["what decides it"]

    def test_sibling_a_failure_the_log_names_stays_first(self):
        text = "python train.py --device cuda\n" + SB3_CPU + (
            "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: "
            "you tried to allocate 1073741824 bytes.\n")
        fs = found(text)
        assert head(text).id == "host-memory-exhausted" and fs["gpus-left-unused"].severity is Severity.WARN

    def test_control_a_cpu_job_with_no_gpu_shown(self):
        assert "gpus-left-unused" not in found("python train.py\n" + SB3_CPU + "| time/ | total_timesteps | 2048 |\n")

    def test_control_a_later_run_on_the_gpu(self):
        # heldout20w's scGPT pretrain log: a CPU run, then the run appended after it on the V100
        text = ("2026-02-14 09:55:19,852 - INFO - Using device: cpu\n2026-02-14 09:55:51,410 - INFO - Using device: cuda\n"
                "2026-02-14 09:55:51,428 - INFO - GPU: Tesla V100-PCIE-16GB\n")
        assert "gpus-left-unused" not in found(text)

    def test_control_an_offload_device_in_a_gpu_job(self):
        # DeepSpeed's config print of a ZeRO-3 offload: the optimizer's device, not the job's
        text = ('CUDA_VISIBLE_DEVICES=0 deepspeed train.py --deepspeed ds.json\n  "offload_optimizer": {\n'
                '    "device": "cpu",\n    "pin_memory": true\n  },\n')
        assert "gpus-left-unused" not in found(text)


class TestGpusLeftUnusedOneProcess:
    verdict = "gpus-left-unused"

    def test_sibling_one_process_where_four_gpus_were_given(self):
        text = "CUDA_VISIBLE_DEVICES=0,1,2,3 python hat/train.py -opt options/train/train_HAT_SRx4.yml\n" + BASICSR
        f = head(text)
        assert f.id == "gpus-left-unused" and f.severity is Severity.WARN and "one process" in f.title
        assert "--nproc_per_node 4" in f.fix

    def test_sibling_a_launcher_started_several_and_each_says_one(self):
        # the DeiT/MAE family's init_distributed_mode under a launcher whose environment the script does not read
        f = head("torchrun --nproc_per_node 4 main.py --model deit_small_patch16_224\nNot using distributed mode\n")
        assert f.id == "gpus-left-unused" and "runs alone" in f.title and "WORLD_SIZE" in f.fix

    def test_sibling_accelerate_run_with_python(self):
        # huggingface/accelerate#197: "# only one gpu used when run python script.py", the state of one process
        f = head(case("heldout20", "accelerate-197-python-launch-state"))
        assert f.id == "gpus-left-unused" and "accelerate launch" in f.fix

    def test_sibling_horovod_size_one(self):
        # horovod/horovod#1378: "'hvd.size()' shows only one" with two GPUs, under "# Horovod only uses Single GPU"
        f = head(case("heldout21", "horovod-1378-tf115-two-gpus"))
        assert f.id == "gpus-left-unused" and "one process" in f.title and "horovodrun -np" in f.fix

    def test_sibling_an_nccl_failure_stays_first(self):
        text = ("torchrun --nproc_per_node 2 train.py\n" + BASICSR
                + "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.14.3\n")
        assert head(text).severity is Severity.ERROR and head(text).id != "gpus-left-unused"

    def test_control_one_gpu_meant(self):
        assert "gpus-left-unused" not in found("CUDA_VISIBLE_DEVICES=0 python hat/train.py -opt train.yml\n" + BASICSR)
        assert "gpus-left-unused" not in found("torchrun --nproc_per_node 1 train.py\n" + BASICSR)

    def test_control_world_size_one_on_a_box_of_eight(self):
        # one process on a machine with eight GPUs, nothing asked for more: a single-GPU run
        smi = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        assert "gpus-left-unused" not in found(smi + "python train.py (8 GPUs on this node)\n" + BASICSR)


class TestGpusLeftUnusedCpuFallback:
    verdict = "gpus-left-unused"
    # google/jax's warning when jaxlib has no CUDA backend
    JAX = "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"

    def test_sibling_jax_falls_back_beside_a_gpu(self):
        smi = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        f = found(smi + "CUDA_VISIBLE_DEVICES=0 python main.py --config configs/ve/cifar10.py\n" + self.JAX)["gpus-left-unused"]
        assert f.severity is Severity.WARN and "fell back to the CPU" in f.title and "jax[cuda12]" in f.fix

    def test_control_jax_on_a_machine_without_gpu(self):
        # dev7w's appended JAX runs on a CPU machine: the fallback alone is no finding
        assert "gpus-left-unused" not in found(case("dev7w", "Alooi-FSSBGM-stdout"))


class TestGpusLeftUnusedCpuLayers:
    verdict = "gpus-left-unused"
    # llama.cpp's start-up (ggml-org/llama.cpp's server and CLI, 2024 builds)
    CUDA = "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes\n"
    LOADED = "llm_load_tensors: ggml ctx size =    0.14 MiB\nllm_load_tensors: offloaded {n}/33 layers to GPU\n"

    def test_sibling_no_layer_on_the_gpu_that_was_asked_for(self):
        f = found("./llama-server -m mistral-7b.Q4_K_M.gguf -ngl 33\n" + self.CUDA + self.LOADED.format(n=0))["gpus-left-unused"]
        assert f.severity is Severity.WARN and "none of the model's layers" in f.title and "-ngl 99" in f.fix

    def test_control_every_layer_on_the_gpu(self):
        assert "gpus-left-unused" not in found("./llama-server -m m.gguf -ngl 33\n" + self.CUDA + self.LOADED.format(n=33))

    def test_control_a_cpu_build_on_a_cpu_machine(self):
        assert "gpus-left-unused" not in found("./llama-cli -m m.gguf\n" + self.LOADED.format(n=0))
