"""Controls and siblings for the rules for classes of messages found from the development sample
(src/gpudoctor/knowledge/patterns/classes.py, issue 35 item 4), one class per verdict id: the
look-alike that must not get the verdict (a logged fallback, a retry, a bare assert, a load that
matched) and the nearest failure that needs another verdict and gets its own.

Three classes do not decide whose mistake a line is (an assert's condition, a value that is None,
probabilities that are not finite): they never claim a line; the unrecognised answer names them
(its evidence's `class`), with their usual causes and what decides between them. Their verdict
here is that naming. The lines are real ones from the threads named beside them; each runs
through the whole of `diagnose`."""

from __future__ import annotations

from pathlib import Path

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_patterns import TB, head_id, ids

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "log_sample"
SITE = "/opt/conda/lib/python3.10/site-packages"


def case(part: str, name: str) -> str:
    """A case of the sample as it was pasted (its `# source:` line included)."""
    return (SAMPLE / part / f"{name}.log").read_text(encoding="utf-8")


def named_class(text: str) -> str:
    """The class of message the unrecognised answer names ('' when it names none, or the log is recognised)."""
    report = api.diagnose(text)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    if not errors or errors[0].id != "unrecognised-failure":
        return ""
    return str(errors[0].evidence.get("class", ""))


def library_traceback(package_frame: str, line: str) -> str:
    """A traceback from the user's script into a library's frame, ending in `line`."""
    return (TB + "    trainer.train()\n" + f'  File "{SITE}/{package_frame}", line 1404, in _configure\n' + "    assert ok, msg\n" + line + "\n")


class TestAssertionStatesCondition:
    def test_control_a_bare_assert_states_nothing(self):
        assert named_class(library_traceback("deepspeed/runtime/engine.py", "AssertionError")) != "assertion-states-condition"

    def test_control_a_dataloader_iterator_at_exit_is_harmless(self):
        # pytorch/pytorch#149837: printed while Python shuts down, after the run's own end
        log = "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x152b2ae06520>\nAssertionError: can only test a child process\n"
        assert named_class(log) != "assertion-states-condition"
        assert "exception-ignored-at-exit" in ids(log)

    def test_sibling_a_library_assert_is_named(self):
        # huggingface/trl#825: DeepSpeed's ZeRO optimizer asserts under DPOTrainer's reference model
        found = named_class(library_traceback("deepspeed/runtime/engine.py", "AssertionError: zero stage 2 requires an optimizer"))
        assert found == "assertion-states-condition"

    def test_sibling_the_samples_fp8_assert_is_named(self):
        assert named_class(case("dev3", "transformerengine-1571-fp8-2d-divisible-by-8-16")) == "assertion-states-condition"

    def test_sibling_an_assert_a_pattern_knows_gets_that_pattern(self):
        # deepspeedai/DeepSpeed#461: the world sizes disagree, a specific pattern
        assert head_id("AssertionError: MPI world size 16 does not match torch world size 8\n") == "rank-outside-world"

    def test_sibling_the_users_own_assert_is_their_code(self):
        # raised in the user's script: the catch-all points at their line
        assert head_id(TB + "    assert len(batch) > 0, 'the batch is empty'\nAssertionError: the batch is empty\n") == "python-exception"


class TestNoneValueUsed:
    def test_control_another_type_is_an_apis_shape(self):
        # hiyouga/LlamaFactory#5647: a method the installed transformers' object lacks
        log = library_traceback("transformers/trainer.py", "AttributeError: 'AdamW' object has no attribute 'train'")
        assert named_class(log) != "none-value-used"
        assert head_id(log) == "library-api-mismatch"

    def test_control_an_int_not_subscriptable_is_no_none(self):
        assert named_class(library_traceback("datasets/arrow_dataset.py", "TypeError: 'int' object is not subscriptable")) != "none-value-used"

    def test_sibling_the_samples_rotary_cache_is_named(self):
        # zai-org/ChatGLM-6B#137: the model's code from the Hub cache read a None cache
        assert named_class(case("dev4", "chatglm-137-multigpu-api-concurrent-cos-cached-none")) == "none-value-used"


class TestSamplingProbabilitiesInvalid:
    def test_control_a_nan_check_that_only_warns(self):
        # StarsfieldAI/R1-V#69: the check's print, training goes on
        assert named_class("NaN or Inf found in input tensor.\n") != "sampling-probabilities-invalid"

    def test_control_a_backward_nan_is_anomaly_detection(self):
        line = "RuntimeError: Function 'Log1PBackward0' returned nan values in its 0th output."
        assert named_class(library_traceback("torch/autograd/graph.py", line)) != "sampling-probabilities-invalid"

    def test_sibling_generate_in_a_library_is_named(self):
        # qwopqwop200/GPTQ-for-LLaMa#36: torch.multinomial inside transformers' sample()
        line = "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"
        assert named_class(library_traceback("transformers/generation/utils.py", line)) == "sampling-probabilities-invalid"


class TestImportNameMissing:
    def test_control_a_logged_fallback_is_no_failure(self):
        assert "import-name-missing" not in ids("WARNING: cannot import name 'FusedLayerNorm' from 'apex.normalization', using the PyTorch implementation\n")

    def test_control_a_circular_import_is_another_story(self):
        line = "ImportError: cannot import name 'utils' from partially initialized module 'train' (most likely due to a circular import) (/home/u/train.py)"
        assert "import-name-missing" not in ids(TB + line + "\n")

    def test_control_a_constant_named_warning_is_no_warning_line(self):
        # yang-zhang/lightning-language-modeling#2: the name ends in _WARNING, the line is the failure
        line = "ImportError: cannot import name 'SAVE_STATE_WARNING' from 'torch.optim.lr_scheduler' (/net/u/lib/python3.7/site-packages/torch/optim/lr_scheduler.py)"
        assert head_id(TB + line + "\n") == "import-name-missing"

    def test_sibling_no_module_at_all(self):
        assert head_id(TB + "ModuleNotFoundError: No module named 'transformers'\n") == "module-not-found"

    def test_sibling_the_name_missing_is_named_with_its_module(self):
        # huggingface/transformers#38973: transformers newer than the installed torch
        report = api.diagnose(TB + "ImportError: cannot import name 'DTensor' from 'torch.distributed.tensor'\n")
        head = report.findings[0]
        assert head.id == "import-name-missing"
        assert head.evidence["name"] == "DTensor" and head.evidence["module"] == "torch.distributed.tensor"


class TestHubUnreachable:
    def test_control_a_retry_of_huggingface_hub_goes_on(self):
        # huggingface/trl#3618: huggingface_hub logs the 429 and retries
        assert "hub-unreachable" not in ids("HTTP Error 429 thrown while requesting HEAD https://huggingface.co/facebook/opt-350m/resolve/main/generation_config.json\n")

    def test_control_the_offline_mode_advice_alone(self):
        line = "Checkout your internet connection or see how to run the library in offline mode at 'https://huggingface.co/docs/transformers/installation#offline-mode'."
        assert "hub-unreachable" not in ids(line + "\n")

    def test_sibling_the_connection_that_failed(self):
        # facebookresearch/bitsandbytes#34
        line = ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks "
                "like decapoda-research/llama-7b-hf is not the path to a directory containing a file named config.json.")
        assert head_id(TB + line + "\n") == "hub-unreachable"

    def test_sibling_a_gated_repository_is_refused_not_unreachable(self):
        assert head_id(TB + "huggingface_hub.utils._errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-661471eb-38c6ceb0)\n") == "hub-access-refused"


class TestHubAccessRefused:
    def test_control_a_token_check_that_only_warns(self):
        # axolotl-ai-cloud/axolotl#969: axolotl's check at start, the run goes on
        line = ("[2023-12-16 22:47:07,603] [WARNING] [axolotl.scripts.check_user_token:358] [PID:441] [RANK:0] Error verifying HuggingFace "
                "token. Remember to log in using `huggingface-cli login`")
        assert "hub-access-refused" not in ids(line + "\n")

    def test_control_another_sites_401(self):
        assert "hub-access-refused" not in ids(TB + "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://wandb.ai/api\n")

    def test_sibling_the_gated_model(self):
        # hyperonym/basaran#289
        line = "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/resolve/main/tokenizer_config.json"
        assert head_id(TB + line + "\n") == "hub-access-refused"

    def test_sibling_no_connection_is_unreachable(self):
        line = "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files."
        assert head_id(TB + line + "\n") == "hub-unreachable"


class TestGpusFewerThanAsked:
    def test_control_a_count_of_gpus_is_no_failure(self):
        assert "gpus-fewer-than-asked" not in ids("Number of GPUs: 4\n")

    def test_control_an_invalid_ordinal_is_cudas_own_pattern(self):
        assert "gpus-fewer-than-asked" not in ids(TB + "RuntimeError: CUDA error: invalid device ordinal\n")

    def test_sibling_the_samples_vllm_device(self):
        # huggingface/trl#2826: GRPO puts vLLM on cuda:1 of a single-GPU machine
        found = ids(case("dev", "trl-2826-grpo-vllm-device-not-available"))
        assert found[0] == "gpus-fewer-than-asked"

    def test_sibling_transformer_lens_devices(self):
        # JoshEngels/MultiDimensionalFeatures#4
        assert head_id(TB + "AssertionError: Not enough CUDA devices to support n_devices 2\n") == "gpus-fewer-than-asked"


class TestStateDictMismatch:
    verdict = "state-dict-mismatch"

    def test_control_a_load_that_matched(self):
        assert "state-dict-mismatch" not in ids("_IncompatibleKeys(missing_keys=[], unexpected_keys=[])\n")

    def test_sibling_a_truncated_file_is_corrupt(self):
        assert head_id(TB + "RuntimeError: storage has wrong size: expected 512 got 65536\n") == "checkpoint-corrupt"

    def test_sibling_a_head_of_another_size(self):
        log = (TB + "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
               "\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from checkpoint, the shape in current model is torch.Size([10, 2048]).\n")
        assert head_id(log) == "state-dict-mismatch"


class TestCudaToolkitMissing:
    def test_control_setting_cuda_home_is_no_failure(self):
        assert "cuda-toolkit-missing" not in ids("export CUDA_HOME=/usr/local/cuda-12.1\nnvcc: NVIDIA (R) Cuda compiler driver\n")

    def test_control_torchs_note_at_build_time(self):
        # torch's note when it builds with no GPU visible: the build goes on
        assert "cuda-toolkit-missing" not in ids("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n")

    def test_sibling_the_launcher_not_found_is_the_environment(self):
        # hiyouga/LlamaFactory#5217: the job's launcher, not a compiler
        assert head_id("/bin/sh: 1: torchrun: not found\n") == "launcher-not-found"

    def test_sibling_setup_pys_cuda_home(self):
        # NVIDIA/flownet2-pytorch#218
        log = (TB + f'  File "{SITE}/torch/utils/cpp_extension.py", line 1252, in _join_cuda_home\n'
               "    raise EnvironmentError('CUDA_HOME environment variable is not set. '\n"
               "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n")
        assert head_id(log) == "cuda-toolkit-missing"

    def test_sibling_apexs_nvcc_check(self):
        # microsoft/Swin-Transformer#101: apex's setup.py runs CUDA_HOME/bin/nvcc -V
        assert head_id(TB + "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'\n") == "cuda-toolkit-missing"


class TestPathNotFound:
    def test_control_nccls_optional_plugin(self):
        # NVIDIA/nccl#1121 (a healthy start): NCCL looks for a network plugin and goes on without it
        line = "ps-SYS-420GP-TNR:1697708:1697708 [1] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory\n"
        assert "path-not-found" not in ids(line)

    def test_control_the_user_listing_a_folder(self):
        # aws-samples/amazon-eks-machine-learning-with-terraform-and-kubeflow#93: the user's own ls
        line = "ls: cannot access '/efs/home/nxd-llama2-7b-ptl/checkpoints/epoch=0-step=100-v2.ckpt': No such file or directory\n"
        assert "path-not-found" not in ids(line)

    def test_sibling_a_checkpoint_not_saved(self):
        # alirezasalemi7/DEDR-MM-FiD#4
        line = "FileNotFoundError: [Errno 2] No such file or directory: '/home/DEDR-MM-FiD/checkpoint/Training_ET/checkpoint/latest/optimizer.pth.tar'\n"
        report = api.diagnose(TB + line)
        assert report.findings[0].id == "path-not-found"
        assert report.findings[0].evidence["path"].endswith("optimizer.pth.tar")

    def test_sibling_the_compiler_missing_is_the_toolkit(self):
        assert head_id(TB + "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'\n") == "cuda-toolkit-missing"
