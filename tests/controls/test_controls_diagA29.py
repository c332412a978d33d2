"""Controls and siblings for the failures whose own line the log holds that diagnose left undecided (issue 35, diagA29):
Lightning's own words for DDP's unused parameters (`ddp-unused-parameters`), cuDNN that could not create its handle in
TensorFlow's and Theano's words (`cudnn-error`), Slurm's refusal of a job's resource request (`slurm-request-refused`),
the text-generation-inference / LoRAX launcher's NotEnoughCUDADevices (`gpus-fewer-than-asked`), llama-cpp-python's
LLAMA_MAX_DEVICES check (`parallel-layout-refused`), torch 0.4's THD backend built without NCCL 2 (`backend-not-built`),
XLA's feature not implemented for the driver's CUDA version (`cuda-driver-too-old`), MLC LLM's insufficient GPU memory
(`framework-oom`) and logrus's fatal level (the NVIDIA Go tools: `unrecognised-failure` that quotes it, never a cause). The sample's cases are the logs
as pasted; the other lines are real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found

# a short GPU training run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestDdpUnusedParametersInLightningsWords:
    verdict = "ddp-unused-parameters"
    LIGHTNING = ("RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by "
                 "training_step. If this is intentional, you must enable the detection of unused parameters in DDP, either by setting "
                 "the string value `strategy='ddp_find_unused_parameters_true'` or by setting the flag in the strategy with "
                 "`strategy=DDPStrategy(find_unused_parameters=True)`.\n")  # chemprop/chemprop#853

    def test_sibling_lightnings_message_with_its_own_switch(self):
        f = found("[rank3]: Traceback (most recent call last):\n" + self.LIGHTNING)[self.verdict]
        assert f.severity is Severity.ERROR and "ddp_find_unused_parameters_true" in f.fix

    def test_sibling_the_message_cut_after_the_loss(self):
        # heldout28 anomalib-2622: the paste ends at "returned by"
        assert errors(case("heldout28", "anomalib-2622-ddp-reverse-distillation"))[0] == self.verdict

    def test_control_the_option_on_and_nothing_unused(self):
        # torch's note that find_unused_parameters=True found nothing unused: only slower, and a run that ends well
        text = ("[W reducer.cpp:1303] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any "
                "unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every "
                "iteration, which can adversely affect performance.\n" + TRAINED)
        assert self.verdict not in errors(text)


class TestCudnnHandleNotCreated:
    verdict = "cudnn-error"

    def test_sibling_tensorflows_stream_executor(self):
        # heldout18 genomad-16 (XLA's stream executor, CUDNN_STATUS_NOT_INITIALIZED) and pc-scene-completion-1 (TF 1.x)
        f = found(case("heldout18", "genomad-16-cudnn-not-initialized-t400"))[self.verdict]
        assert f.severity is Severity.ERROR and f.evidence["handle_status"] == "CUDNN_STATUS_NOT_INITIALIZED"
        assert "set_memory_growth" in f.fix
        assert errors(case("heldout18", "pc-scene-completion-1-ros-cudnn-handle"))[0] == self.verdict

    def test_sibling_theanos_own_hint(self):
        assert errors(case("heldout17", "theano-6556-cudnn-handle-old-driver"))[0] == self.verdict

    def test_control_cudnn_loaded_and_a_run_that_ends(self):
        text = ("2023-03-15 16:01:00.000000: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened "
                "dynamic library libcudnn.so.8\n2023-03-15 16:01:02.000000: I tensorflow/stream_executor/cuda/cuda_dnn.cc:384] "
                "Loaded cuDNN version 8100\n" + TRAINED)
        assert errors(text) == []

    def test_sibling_cudnn_not_installed_is_not_this(self):
        # the library not found at all: TensorFlow's dso_loader warning, another verdict than a handle cuDNN could not create
        text = ("2023-01-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
                "library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n")
        assert self.verdict not in [f.id for f in api.diagnose(text).findings]


class TestSlurmRequestRefused:
    verdict = "slurm-request-refused"

    def test_sibling_sbatch_node_configuration(self):
        # heldout27 aws-parallelcluster-cookbook-1104: sbatch -G 1 where the nodes registered no GPU
        f = found(case("heldout27", "aws-parallelcluster-cookbook-1104-g3-no-driver"))[self.verdict]
        assert f.severity is Severity.ERROR and f.evidence["reason"] == "Requested node configuration is not available"
        assert "sinfo" in f.fix

    def test_sibling_salloc_qos_policy(self):
        # szcf-weiya/techNotes#7
        text = ("salloc: error: QOSMaxSubmitJobPerUserLimit\nsalloc: error: Job submit/allocate failed: Job violates "
                "accounting/QOS policy (job submit limit, user's size and/or time limits)\n")
        assert errors(text)[0] == self.verdict

    def test_sibling_gres_and_munge_keep_their_verdicts(self):
        assert errors("sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n")[0] == "gpu-not-handed-over"
        assert errors("sbatch: error: Batch job submission failed: Protocol authentication error\n")[0] == "slurm-auth-failed"

    def test_control_a_heading_that_quotes_the_refusal(self):
        # a thread's title or heading is the reporter's words: no cause from it alone
        text = ("# sbatch: error: Batch job submission failed: Requested node configuration is not available\n\n"
                "I submit my training script and get the error above. My script asks for --gres=gpu:4.\n")
        assert self.verdict not in errors(text)

    def test_control_a_job_that_waited_then_ran(self):
        text = ("srun: job 123456 queued and waiting for resources\nsrun: job 123456 has been allocated resources\n" + TRAINED)
        assert errors(text) == []


class TestShardedLauncherCountsFewGpus:
    verdict = "gpus-fewer-than-asked"

    def test_sibling_loraxs_not_enough_cuda_devices(self):
        # heldout28 lorax-150: docker --gpus all (NVIDIA_VISIBLE_DEVICES=all counts as one) with --sharded true
        f = found(case("heldout28", "lorax-150-3090-3060-sharded"))[self.verdict]
        assert f.severity is Severity.ERROR and "--sharded true" in f.title
        assert "'all'" in f.fix and "--num-shard" in f.fix

    def test_sibling_a_shard_that_could_not_start_is_the_shards(self):
        assert errors("Error: ShardCannotStart\n")[0] == "tgi-shard-died"

    def test_control_a_sharded_launch_that_starts(self):
        text = ("2024-01-17T19:54:02.802403Z  INFO text_generation_launcher: Sharding model on 2 processes\n"
                "2024-01-17T19:55:10.000000Z  INFO shard-manager: text_generation_launcher: Shard ready in 60.1s rank=0\n"
                "2024-01-17T19:55:10.000000Z  INFO shard-manager: text_generation_launcher: Shard ready in 60.2s rank=1\n"
                "2024-01-17T19:55:12.000000Z  INFO text_generation_router: router/src/main.rs:289: Connected\n")
        assert errors(text) == []


class TestLlamaCppSplitOverMaxDevices:
    verdict = "parallel-layout-refused"

    def test_sibling_llama_cpp_pythons_words(self):
        text = ("Traceback (most recent call last):\n  File \"serve.py\", line 3, in <module>\n    llm = Llama(model_path=p, "
                "tensor_split=[0.5, 0.5])\nValueError: Attempt to split tensors that exceed maximum supported devices. Current "
                "LLAMA_MAX_DEVICES=1\n")  # abetlen/llama-cpp-python#1166
        f = found(text)[self.verdict]
        assert f.severity is Severity.ERROR and "LLAMA_MAX_DEVICES (1)" in f.title and "CUDA build" in f.fix

    def test_control_the_message_only_in_the_title(self):
        # heldout26 llama-cpp-python-1198: the title quotes the ValueError, the pasted traceback is cut before it: undecided
        assert self.verdict not in errors(case("heldout26", "llama-cpp-python-1198-docker-two-gpu-start"))

    def test_control_a_split_that_loads(self):
        text = ("llm_load_tensors: offloading 32 repeating layers to GPU\nllm_load_tensors: offloaded 33/33 layers to GPU\n"
                "llama_new_context_with_model: n_ctx = 4096\n" + TRAINED)
        assert errors(text) == []


class TestThdBackendWithoutNccl:
    verdict = "backend-not-built"

    def test_sibling_torch_04s_thd_words(self):
        # heldout26b opennmt-py-662; facebookresearch/maskrcnn-benchmark#122
        f = found(case("heldout26b", "opennmt-py-662-multi-gpu-question"))[self.verdict]
        assert f.severity is Severity.ERROR and f.evidence["thd"] == "NCCL" and "NCCL_ROOT_DIR" in f.fix

    def test_sibling_no_gpu_for_nccl_is_another(self):
        assert errors("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n")[0] == "nccl-no-gpu"

    def test_control_nccl_present(self):
        text = "node1:1234:1234 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n" + TRAINED
        assert errors(text) == []


class TestXlaFeatureNeedsNewerCuda:
    verdict = "cuda-driver-too-old"

    def test_sibling_xla_command_buffers_below_cuda_12_3(self):
        # dev7w HEISENYAN-openpi: driver 535 (CUDA 12.2)
        f = found(case("dev7w", "HEISENYAN-openpi-train-out"))[self.verdict]
        assert f.severity is Severity.ERROR and f.evidence["needs"] == "12.3"
        assert "--xla_gpu_enable_command_buffer=" in f.fix

    def test_control_another_unimplemented_of_xla(self):
        # XLA's UNIMPLEMENTED for an op the backend lacks says nothing of the driver's CUDA version
        text = ("jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: Unsupported algorithm on the current device(s): "
                "ALG_DOT_BF16_BF16_F32_X3\n")
        assert self.verdict not in errors(text)


class TestMlcLlmInsufficientGpuMemory:
    verdict = "framework-oom"
    LINE = ("TVMError: Check failed: (output_res.IsOk()) is false: Insufficient GPU memory error: The available single GPU memory is "
            "{free} MB, which is less than the sum of model weight size ({weights} MB) and temporary buffer size ({buffer} MB).\n")

    def test_sibling_buffers_that_do_not_fit_beside_the_weights(self):
        # mlc-ai/mlc-llm#3024 (a larger gpu_memory_utilization fixed it)
        f = found(self.LINE.format(free="20584.716", weights="5977.188", buffer="15013.765"))[self.verdict]
        assert f.severity is Severity.ERROR and "gpu_memory_utilization" in f.fix and f.fix.index("gpu_memory_utilization") < f.fix.index("tensor-parallel")

    def test_sibling_weights_larger_than_the_gpu(self):
        # mlc-ai/mlc-llm#2751 (q4f16_1 on a phone's 4.7 GB share)
        f = found(self.LINE.format(free="4762.535", weights="4958.468", buffer="609.312"))[self.verdict]
        assert f.fix.index("--tensor-parallel-shards") < f.fix.index("gpu_memory_utilization")

    def test_control_the_engine_that_loads(self):
        text = ("[2024-11-14 10:00:00] INFO engine_base.py:143: Using library model: /models/qwen-MLC/libs/cuda.so\n"
                "[2024-11-14 10:00:05] INFO engine_base.py:180: The selected engine mode is local.\n" + TRAINED)
        assert errors(text) == []


class TestLogrusFatalLevel:
    def test_sibling_a_go_tools_fatal_line_is_quoted_never_a_cause(self):
        # heldout27 mig-parted-44: its config's devices given as a string (log-inconclusive before)
        f = api.diagnose(case("heldout27", "mig-parted-44-single-gpu-config")).findings[0]
        assert f.id == "unrecognised-failure" and f.evidence["kind"] == "fatallevel"
        assert "invalid string input for 'devices'" in f.evidence["log"]

    def test_control_its_info_and_warn_levels(self):
        # nvidia-ctk cdi generate's own lines before it succeeds (NVIDIA/nvidia-container-toolkit#396)
        text = ('INFO[0000] Auto-detected mode as "nvml"\nWARN[0000] Could not locate /dev/dri/controlD64: pattern /dev/dri/controlD64 not found\n'
                "INFO[0000] Using driver version 545.29.06\nINFO[0000] Generated CDI spec with version 0.8.0\n")
        assert errors(text) == []
