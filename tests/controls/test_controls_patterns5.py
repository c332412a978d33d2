"""Controls and siblings for the family rules found from the fifth development sample
(tests/fixtures/log_sample/dev5, src/gpudoctor/knowledge/patterns/families5.py), one class per
verdict id: the look-alike that must not get the verdict (a server starting up normally, a GPU
kernel's own illegal instruction, a warm-up that fitted, a logged fallback) and the nearest failure
that needs another verdict and gets its own. The lines are real ones from the sample's threads
(the file names below); each runs through the whole of `diagnose`."""

from __future__ import annotations

from functools import partial

from gpudoctor import api
from test_controls_classes6 import case as sample_case
from test_controls_patterns import TB, head_id, ids

case = partial(sample_case, "dev5")  # a case of the sample as it was pasted


# huggingface/text-generation-inference#2763: two shards start and become ready, warm-up begins
SHARDS_READY = (
    "2024-11-20T14:49:01.669799Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0\n"
    "2024-11-20T14:49:09.885562Z  INFO text_generation_launcher: Server started at unix:///tmp/text-generation-server-0\n"
    "2024-11-20T14:49:09.978651Z  INFO shard-manager: text_generation_launcher: Shard ready in 528.928728549s rank=0\n"
    "2024-11-20T14:49:10.188842Z  INFO text_generation_launcher: Starting Webserver\n"
    "2024-11-20T14:49:10.253383Z  INFO text_generation_router_v3: backends/v3/src/lib.rs:125: Warming up model\n"
)
# huggingface/text-generation-inference#2593: the shard aborted after its NCCL watchdog raised
SHARD_ABORTED = (
    "2024-10-01T07:43:22.342900Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 6 rank=0\n"
    "2024-10-01T07:43:22.392453Z ERROR text_generation_launcher: Shard 0 crashed\n"
    "2024-10-01T07:43:22.392498Z  INFO text_generation_launcher: Terminating webserver\n"
)


class TestProcessIllegalInstruction:
    def test_control_a_gpu_kernels_illegal_instruction_is_a_cuda_error(self):
        log = TB + "RuntimeError: CUDA error: an illegal instruction was encountered\n"
        assert "process-illegal-instruction" not in ids(log)

    def test_control_another_signal_is_not_sigill(self):
        assert "process-illegal-instruction" not in ids(SHARD_ABORTED)

    def test_sibling_the_abort_is_the_shard_that_died(self):
        assert head_id(SHARD_ABORTED) == "tgi-shard-died"

    def test_sibling_the_shard_killed_by_signal_4(self):
        found = ids(case("tgi-1627-shard-signal-4-cannot-start"))
        assert found[0] == "process-illegal-instruction"
        assert "tgi-shard-died" in found  # the launcher's ShardCannotStart: its consequence


class TestTgiShardDied:
    def test_control_shards_that_started_and_became_ready(self):
        assert "tgi-shard-died" not in ids(SHARDS_READY)

    def test_control_the_launcher_stopping_its_shards_is_no_death(self):
        log = ("2023-07-07T17:55:43.805514Z  INFO text_generation_launcher: Shutting down shards\n"
               "2023-07-07T17:55:44.134207Z  INFO text_generation_launcher: Shard 0 terminated\n")
        assert "tgi-shard-died" not in ids(log)

    def test_sibling_the_shards_own_error_leads(self):
        # huggingface/text-generation-inference#1354: the shard's ValueError, then ShardCannotStart
        assert head_id(case("tgi-1354-falcon-71-heads-not-divisible-2-shards")) == "tensor-parallel-split-uneven"

    def test_sibling_a_warmup_that_ran_out_of_memory_leads(self):
        assert head_id(case("tgi-563-unable-to-warmup-exceed-allowed-memory")) == "inference-warmup-out-of-memory"

    def test_sibling_the_router_that_lost_its_shard(self):
        assert head_id(case("tgi-3317-endpoint-shardfailed-socket-gone")) == "tgi-shard-died"

    def test_sibling_the_aborted_shard(self):
        assert head_id(case("tgi-2593-nccl-watchdog-signal-6-shard-crashed")) == "tgi-shard-died"


class TestTensorParallelSplitUneven:
    def test_control_a_model_sharded_over_4_processes(self):
        log = ("2023-08-24T03:32:01.146724Z  INFO text_generation_launcher: Sharding model on 4 processes\n"
               "2023-08-24T03:32:03.949203Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0\n")
        assert "tensor-parallel-split-uneven" not in ids(log)

    def test_sibling_the_batch_size_product_check(self):
        log = ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
               "gradient_acc_step * world_size 256 != 4 * 8 * 1\n")
        assert head_id(log) == "deepspeed-batch-size-mismatch"

    def test_sibling_the_quantized_tensor_on_4_shards(self):
        assert head_id(case("tgi-1441-awq-size-150-not-compatible-4-shards")) == "tensor-parallel-split-uneven"

    def test_sibling_the_assert_in_a_rich_traceback(self):
        assert head_id(case("tgi-3005-bnb-4bit-2gpu-size-not-compatible-sharding-rich")) == "tensor-parallel-split-uneven"


class TestInferenceWarmupOutOfMemory:
    def test_control_a_warmup_that_fitted(self):
        assert "inference-warmup-out-of-memory" not in ids(case("tgi-2744-70b-warmup-ok-later-oom"))

    def test_sibling_a_request_out_of_memory_after_warmup(self):
        assert head_id(case("tgi-1374-eetq-34b-request-cuda-oom")) == "cuda-oom"

    def test_sibling_the_prefill_tokens_that_do_not_fit(self):
        assert head_id(case("tgi-1067-awq-warmup-not-enough-memory-prefill")) == "inference-warmup-out-of-memory"


class TestDockerGpuRuntimeMissing:
    def test_control_another_daemon_error(self):
        log = "docker: Error response from daemon: pull access denied for textgen, repository does not exist or may require 'docker login'.\n"
        assert "docker-gpu-runtime-missing" not in ids(log)

    def test_sibling_the_runtime_present_without_the_drivers_libraries(self):
        log = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create "
               "failed: runc create failed: unable to start container process: error during container init: error running hook #0: error "
               "running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
               "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: "
               "no such file or directory: unknown.\n")
        found = ids(log)
        assert "docker-gpu-runtime-missing" not in found
        assert "driver-library-not-found" in found

    def test_sibling_no_gpu_device_driver_in_docker(self):
        assert head_id(case("tgi-1312-docker-could-not-select-device-driver")) == "docker-gpu-runtime-missing"


class TestScriptRequiresLocalRankArgument:
    def test_control_the_usage_line_alone(self):
        log = "usage: Swin Transformer training and evaluation script --cfg FILE [--opts OPTS [OPTS ...]] --local_rank LOCAL_RANK\n"
        assert "script-requires-local-rank-argument" not in ids(log)

    def test_sibling_the_launchers_flag_refused(self):
        assert head_id("train.py: error: unrecognized arguments: --local-rank=0\n") == "launcher-local-rank-arg"

    def test_sibling_another_required_argument(self):
        log = "train.py: error: the following arguments are required: --output_dir/--output-dir\n"
        assert head_id(log) == "script-arguments-refused"

    def test_sibling_the_swin_script_without_local_rank(self):
        assert head_id(case("swin-342-local-rank-argument-required")) == "script-requires-local-rank-argument"


class TestFsdpWrapClassNotFound:
    def test_control_the_deprecation_of_the_flag(self):
        log = ("/data/x/lib/python3.10/site-packages/transformers/training_args.py:1356: FutureWarning: using "
               "`--fsdp_transformer_layer_cls_to_wrap` is deprecated. Use fsdp_config instead\n  warnings.warn(\n")
        assert "fsdp-wrap-class-not-found" not in ids(log)

    def test_sibling_fsdp_mixed_requires_grad(self):
        assert head_id(TB + "ValueError: `FlatParameter` requires uniform `requires_grad`\n") == "fsdp-uniform-requires-grad"

    def test_sibling_the_alpaca_llama_class(self):
        assert head_id(case("alpaca-151-fsdp-layer-class-to-wrap-not-found")) == "fsdp-wrap-class-not-found"


class TestCudnnError:
    def test_control_a_cudnn_version_report(self):
        assert "cudnn-error" not in ids("torch 2.1.2+cu121 cuda 12.1 cudnn version: 8902\n")

    def test_sibling_out_of_gpu_memory(self):
        log = TB + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 280.00 MiB\n"
        assert head_id(log) == "cuda-oom"

    def test_sibling_no_engine_for_the_backward(self):
        assert head_id(case("opensora-254-cudnn-unable-to-find-engine")) == "cudnn-error"


class TestTgiFlashAttentionUnavailable:
    def test_control_the_other_optional_imports(self):
        log = ("2024-04-20T07:20:49.339802Z  WARN text_generation_launcher: Could not import Mamba: No module named 'mamba_ssm'\n"
               "2024-04-20T07:20:49.352816Z  WARN text_generation_launcher: We're not using custom kernels.\n")
        assert "tgi-flash-attention-unavailable" not in ids(log)

    def test_sibling_a_gpu_too_old_for_flash_attention(self):
        assert head_id(TB + "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n") == "gpu-capability-too-old"

    def test_sibling_the_warning_alone_decides_no_failure(self):
        log = case("tgi-1778-medusa-flash-attention-not-installed-warnings")
        assert "tgi-flash-attention-unavailable" in ids(log)
        assert head_id(log) == "-"  # a warning: the lines after it decide


class TestSlurmControllerUnreachable:
    def test_control_the_dns_search_before_the_verdict(self):
        log = "srun: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
        assert "slurm-controller-unreachable" not in ids(log)

    def test_sibling_srun_not_installed(self):
        assert head_id("/bin/bash: line 1: srun: command not found\n") == "launcher-not-found"

    def test_sibling_srun_without_a_configuration(self):
        assert head_id(case("internvideo-196-srun-no-slurm-config")) == "slurm-controller-unreachable"


class TestTgiShardRaised:
    def test_control_the_warmup_starting(self):
        log = "2024-04-19T11:06:25.868590Z  INFO text_generation_launcher: Warming up model\n"
        assert "tgi-shard-raised" not in ids(log)

    def test_sibling_the_error_under_it_leads(self):
        # huggingface/text-generation-inference#1067: 'Method Warmup encountered an error.' after the memory error
        assert head_id(case("tgi-1067-awq-warmup-not-enough-memory-prefill")) == "inference-warmup-out-of-memory"

    def test_sibling_the_warmup_error_cut_before_its_traceback(self):
        assert head_id(case("tgi-1769-command-r-plus-warmup-error-cut")) == "tgi-shard-raised"

    def test_sibling_the_json_log_of_a_failed_initialisation(self):
        assert head_id(case("tgi-206-a10-quantize-json-init-error-cut")) == "tgi-shard-raised"


class TestCliArgumentsRefused:
    def test_control_the_launchers_args_dump_names_the_option(self):
        log = ('2024-01-17T19:54:02.802403Z  INFO text_generation_launcher: Args { model_id: "bigscience/bloom-560m", '
               "disable_custom_kernels: false, json_output: false, env: false }\n")
        assert "cli-arguments-refused" not in ids(log)

    def test_sibling_argparse_refusing_a_value(self):
        assert head_id("main.py: error: argument --batch-size: invalid int value: '32,'\n") == "script-arguments-refused"

    def test_sibling_the_boolean_from_the_environment(self):
        # the paste then runs the same command again after `export DISABLE_CUSTOM_KERNELS=true`: the refusal is that
        # earlier attempt's (knowledge/reruns.py), still read, with the parser's own remedy kept as evidence
        found = {f.id: f for f in api.diagnose(case("tgi-1451-disable-custom-kernels-invalid-value")).findings}
        assert found["cli-arguments-refused"].evidence["possible"] == "true, false"
        assert found["cli-arguments-refused"].evidence["earlier_attempt"]["run_again_at"] == 11


class TestTransformersModelTypeUnknown:
    def test_control_a_datasets_key_error_is_not_the_model_type(self):
        log = (TB + '  File "/x/lib/python3.10/site-packages/datasets/arrow_dataset.py", line 2807, in __getitem__\n'
               "    return self._getitem(key)\nKeyError: 'input_ids'\n")
        assert "transformers-model-type-unknown" not in ids(log)

    def test_control_another_frame_of_the_same_module(self):
        log = (TB + '  File "/usr/lib/python3.10/site-packages/transformers/models/auto/configuration_auto.py", line 1021, in from_pretrained\n'
               "    config_class = CONFIG_MAPPING[config_dict[\"model_type\"]]\n")
        assert "transformers-model-type-unknown" not in ids(log)

    def test_sibling_a_model_id_that_is_not_on_the_hub(self):
        log = (TB + '  File "/x/lib/python3.10/site-packages/transformers/models/auto/auto_factory.py", line 441, in from_pretrained\n'
               "OSError: meta-llama/Llama-2-7b-hf is not a local folder and is not a valid model identifier listed on https://huggingface.co/models\n")
        assert "transformers-model-type-unknown" not in ids(log)
        assert head_id(log) == "unrecognised-failure"

    def test_sibling_keyerror_llama_from_the_config_mapping(self):
        found = [f for f in api.diagnose(case("alpaca-159-keyerror-llama-transformers")).findings]
        assert found[0].id == "transformers-model-type-unknown"
        assert found[0].evidence["model_type"] == "llama"

    def test_sibling_the_same_in_a_notebook(self):
        assert head_id(case("alpaca-23-keyerror-llama-notebook")) == "transformers-model-type-unknown"
