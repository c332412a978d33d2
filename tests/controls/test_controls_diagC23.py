"""Controls and siblings for diagC23 (issue 35: an exception a library raised, who called it, what it says, what to do):
a library's own check refusing a value its caller gave it (`library-refused-value`, knowledge/patterns/classes23c.py,
decided by the traceback's innermost frame), another framework's out-of-memory error (`framework-oom`), and a DeepSpeed
op whose build left no handle (`extension-build-failed`). `test_control_*` is the look-alike input that must not get the
verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones (their logs named beside them)."""

from __future__ import annotations

import pytest

from gpudoctor import api
from test_controls_detect8 import TB, errors, head
from test_controls_diagD21 import ids, no_error

# Luca-Marinescu-Stefan/Estimarea-distan-ei-frontale-prin-senzor-TOF eval.log (heldout21w): sklearn's check, called from the script
SKLEARN = (
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\marin\\TOF\\src\\neural_network\\evaluate.py", line 28, in <module>\n'
    "    'test_accuracy': float(accuracy_score(y_test, y_pred)),\n"
    '  File "C:\\Users\\marin\\TOF\\.venv\\lib\\site-packages\\sklearn\\utils\\_param_validation.py", line 218, in wrapper\n'
    "    return func(*args, **kwargs)\n"
    '  File "C:\\Users\\marin\\TOF\\.venv\\lib\\site-packages\\sklearn\\metrics\\_classification.py", line 97, in _check_targets\n'
    "    check_consistent_length(y_true, y_pred)\n"
    '  File "C:\\Users\\marin\\TOF\\.venv\\lib\\site-packages\\sklearn\\utils\\validation.py", line 473, in check_consistent_length\n'
    "    raise ValueError(\n"
    "ValueError: Found input variables with inconsistent numbers of samples: [151, 152]\n"
)
# 0x1B40/flappy-bird-with-deep-q output.log (heldout17w): pygame refuses a non-contiguous array
PYGAME = (
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\A\\Desktop\\flappy\\render.py", line 42, in init_sounds\n'
    "    self.flap_sound = sndarray.make_sound(flap_array)\n"
    '  File "C:\\Users\\A\\AppData\\Local\\Programs\\Python\\Python39\\lib\\site-packages\\pygame\\sndarray.py", line 92, in make_sound\n'
    "    return mixer.Sound(array=array)\n"
    "ValueError: ndarray is not C-contiguous\n"
)
# huggingface/nanotron#121 (dev3): the package's config check, an assert with its message
NANOTRON = (
    "Traceback (most recent call last):\n"
    '  File "/root/nanotron/run_train.py", line 156, in <module>\n'
    "    trainer = DistributedTrainer(config_file)\n"
    '  File "/root/nanotron/src/nanotron/config/config.py", line 336, in __post_init__\n'
    "    assert all(\n"
    "AssertionError: You must have a training stage starting at 1 in the config's data_stages\n"
)


class TestLibraryRefusedValue:
    verdict = "library-refused-value"

    def test_sibling_a_librarys_check_called_from_your_line(self):
        found = head(SKLEARN)
        assert found is not None and found.id == self.verdict
        assert "sklearn" in found.title and "inconsistent numbers of samples: [151, 152]" in found.title
        assert "evaluate.py:28" in found.fix and "accuracy_score(y_test, y_pred)" in found.fix
        assert "version" not in found.fix

    def test_sibling_a_windows_path_and_the_call_it_quotes(self):
        found = head(PYGAME)
        assert found is not None and found.id == self.verdict and "sndarray.make_sound(flap_array)" in found.fix

    def test_sibling_a_console_script_is_not_your_code(self):
        # oumi's console script in an environment folder of any name (oumi-ai/oumi, dev): the value came from its command line
        found = head("Traceback (most recent call last):\n"
                     '  File "/leonardo_work/EUHPC_A04_051/oumi-dev-env/bin/oumi", line 8, in <module>\n    sys.exit(run())\n'
                     + "".join(SKLEARN.splitlines(keepends=True)[3:]))
        assert found is not None and found.id == self.verdict
        assert "your code" not in found.title and "run as oumi" in found.title and "what you gave oumi" in found.fix

    def test_sibling_an_assert_that_states_its_condition_keeps_its_class(self):
        # an assert's message is assertion-states-condition's, which the unrecognised answer names
        found = head(NANOTRON)
        assert found is not None and found.id != self.verdict

    def test_sibling_a_frame_that_only_raises_again(self):
        # OpenNMT/OpenNMT-py#34 (heldout8): DataParallel's parallel_apply raises a replica's exception again; the check was elsewhere
        found = head(TB + '  File "train.py", line 198, in trainEpoch\n    outputs = model(batch)\n'
                     '  File "/usr/local/lib/python2.7/dist-packages/torch/nn/parallel/parallel_apply.py", line 45, in parallel_apply\n'
                     "    raise output\nValueError: lengths array has incorrect size\n")
        assert found is not None and found.id != self.verdict

    def test_sibling_your_own_code_raising_the_same_class_is_yours(self):
        # the same ValueError raised in the user's own frame: the catch-all names the user's line
        found = head(TB + '  File "/home/u/data.py", line 12, in load\n    raise ValueError(f"bad split {split}")\n'
                     "ValueError: Found input variables with inconsistent numbers of samples: [151, 152]\n")
        assert found is not None and found.id == "python-exception"

    def test_sibling_an_api_shape_error_keeps_its_class(self):
        # hiyouga/LlamaFactory#6139 (dev): a keyword the installed package's method lacks is library-api-mismatch's, not a refused value
        found = head("Traceback (most recent call last):\n"
                     '  File "/userhome/home/tsx/anaconda3/envs/llama_factory/lib/python3.11/site-packages/accelerate/utils/operations.py", '
                     'line 156, in send_to_device\n    return tensor.to(device, non_blocking=non_blocking)\n'
                     "TypeError: BatchEncoding.to() got an unexpected keyword argument 'non_blocking'\n")
        assert found is not None and found.id != self.verdict

    def test_sibling_a_message_about_the_devices_is_not_a_value(self):
        # huggingface/trl#2826 (dev): the device the message names decides, not a value to correct at the call
        found = head(TB + '  File "/opt/conda/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 300, in __init__\n'
                     "    raise ValueError(\n"
                     "ValueError: The requested device for vllm (cuda:1) is not available. You are likely using vLLM without restricting "
                     "the number of GPUs for training. Set the `--num_processes` argument to a value lower than the number of GPUs "
                     "available on your machine\u2014typically, reducing it by one is sufficient. In your case: `--num_processes 0`.\n")
        assert found is None or found.id != self.verdict

    def test_control_a_cut_traceback_says_no_version(self):
        # a traceback whose exception line the paste cut: still unrecognised, and nothing said of a version the log never shows
        found = head("Traceback (most recent call last):\n" + SKLEARN.splitlines(keepends=True)[1] + SKLEARN.splitlines(keepends=True)[2]
                     + "".join(SKLEARN.splitlines(keepends=True)[7:9]))
        assert found is not None and found.id == "unrecognised-failure" and "version" not in found.fix

    @pytest.mark.parametrize("line", [
        # ajh011/chgcnn nohup.out (dev7w): a library's warning, the run goes on
        "/home/ajh/anaconda3/envs/chgcnn/lib/python3.10/site-packages/pymatgen/analysis/local_env.py:2982: RuntimeWarning: invalid value encountered in divide",
        # opencompass#275 (dev6)
        "/opt/miniconda3/lib/python3.10/site-packages/mmengine/utils/manager.py:113: UserWarning: <class 'mmengine.logging.logger.MMLogger'> "
        "instance named of OpenCompass has been created, the method `get_instance` should not accept any other arguments",
    ])
    def test_control_a_librarys_warning_is_not_fatal(self, line):
        assert self.verdict not in ids(line + "\n") and no_error(line + "\n")


class TestFrameworkOom:
    verdict = "framework-oom"

    @pytest.mark.parametrize("line,said", [
        # lc222/seq2seq_chatbot_new#19
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor of shape [4096] and type float",
         "set_memory_growth"),
        # zzw922cn/Automatic_Speech_Recognition#78: the op's own line before the exception
        ("2018-06-08 17:26:00.908130: W tensorflow/core/framework/op_kernel.cc:1202] OP_REQUIRES failed at tile_ops.cc:123 : Resource "
         "exhausted: OOM when allocating tensor with shape[16,1,892800,8,4,2,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 "
         "by allocator GPU_0_bfc", "GPU:0"),
        # google-deepmind/alphafold#1023
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
         "XLA_PYTHON_CLIENT_PREALLOCATE=false"),
        # PaddlePaddle/Paddle#42228
        ("Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and available "
         "memory is only 0.000000B.", "decrease the batch size"),
    ])
    def test_sibling_each_frameworks_own_words(self, line, said):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and said in found.title + found.fix
        assert "PYTORCH_CUDA_ALLOC_CONF" not in found.fix

    def test_sibling_the_root_error_under_tensorflows_wrapper(self):
        # Azure/MachineLearningNotebooks#880: the exception line only counts the root errors; the OOM is the line under it
        found = head("ResourceExhaustedError: 2 root error(s) found.\n"
                     "  (0) Resource exhausted: OOM when allocating tensor with shape[16,112,112,147] and type float on "
                     "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
                     "\t [[{{node resnet_v1_50/conv1/ExtractImagePatches}}]]\n")
        assert found is not None and found.id == self.verdict and "GPU:0" in found.title

    def test_sibling_paddles_class_line_is_not_your_codes_exception(self):
        # PaddlePaddle/Paddle#42228: the exception's line is only the class; the allocation is named under it
        found = errors("Traceback (most recent call last):\n  File \"train.py\", line 20, in <module>\n    loss.backward()\n"
                       "RuntimeError: ResourceExhaustedError:\n\nOut of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, "
                       "6.000000GB memory has been allocated and available memory is only 0.000000B.\n")
        assert [f.id for f in found] == [self.verdict] and "98.000244MB" in found[0].title

    def test_sibling_host_memory_named_when_the_device_is_the_cpu(self):
        # tensorflow/tensorflow#45238: TF's CPU allocator, host memory
        found = head("W tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed at cast_op.cc:109 : Resource exhausted: OOM when "
                     "allocating tensor with shape[1,559,512,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n")
        assert found is not None and found.id == self.verdict and "host" in found.title

    def test_sibling_torch_keeps_cuda_oom(self):
        found = head("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of 47.50 GiB\n")
        assert found is not None and found.id == "cuda-oom"

    @pytest.mark.parametrize("line", [
        # MarvinTeichmann/MultiNet#55 (heldout7): TF's allocator says this is not a failure
        "2018-12-13 17:56:15.831145: W tensorflow/core/common_runtime/bfc_allocator.cc:219] Allocator (GPU_0_bfc) ran out of memory trying to "
        "allocate 3.64GiB. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
    ])
    def test_control_the_allocators_notes_are_not_a_failure(self, line):
        assert self.verdict not in ids(line + "\n") and no_error(line + "\n")


class TestOpBuildLeftNoHandle:
    verdict = "extension-build-failed"

    def test_sibling_deepspeeds_cpu_adam_without_its_op(self):
        # aqlaboratory/openfold#98 (heldout22): the op never built (no CUDA toolkit); its optimizer has no handle
        found = head("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n")
        assert found is not None and found.id == self.verdict and "CUDA_HOME" in found.fix

    def test_control_another_deepspeed_attribute_is_an_api_shape(self):
        # a DeepSpeed object without an attribute its caller expects: another version's API, not a build
        found = head("AttributeError: 'DeepSpeedDataLoader' object has no attribute 'sampler'\n")
        assert found is not None and found.id != self.verdict
