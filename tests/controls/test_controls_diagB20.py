"""Controls and siblings for diagB20 (issue 35: which error is the run's failure, in pastes that hold several, and message
classes keyed on exactly what they cover). Python's own type errors (`'>=' not supported between instances of ...`) are
operand-type-mismatch, not a program's refusal; the run's printed traceback leads an error a title quotes alone; a child's
KeyboardInterrupt raised while it reported its own error is the consequence of that error, not a Ctrl-C; TensorFlow's empty
input queue is the consequence of its reader's error when the log holds it; an environment report's own traceback is not
the run's failure. `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one
that gets its own. Lines are real ones (sources named beside them)."""

from __future__ import annotations

from test_controls_detect8 import ENDED, head, head_id

from gpudoctor import api


def ids(text: str) -> list[str]:
    """The ids of every finding diagnose gives, in the order it tells them."""
    return [f.id for f in api.diagnose(text).findings]

# huggingface/text-generation-inference#2828: the title, the traceback cut from the paste
TGI = "# TypeError: '>=' not supported between instances of 'NoneType' and 'int'\n\nthe launcher's Args dump\n"
# anshuldutt21/Skeleton-Based-Generation-Model log_train.txt (heldout19w), its last frames
FLAG = (
    "Traceback (most recent call last):\n"
    '  File "run_summarization.py", line 488, in main\n'
    "    sc_batcher = Sc_GenBatcher(vocab, hps_sc_generator)\n"
    '  File "/home/anshul/Skeleton-Based-Generation-Model/sc_batch.py", line 44, in __init__\n'
    "    if len(text_sen_words) > hps.sc_max_enc_seq_len:\n"
    "TypeError: '>' not supported between instances of 'int' and 'Flag'\n"
)
# huggingface/lerobot#2338: a program's own refusal, which names what it supports
GROOT = ("ERROR 2025-10-29 05:30:24 /_server.py:636 Exception calling application: Policy type groot not supported. "
         "Supported policies: ['act', 'smolvla', 'diffusion', 'tdmpc', 'vqbet', 'pi0', 'pi05']\n")


class TestOperandTypeMismatch:
    verdict = "operand-type-mismatch"

    def test_sibling_a_comparison_with_none_quoted_alone_is_this_class_not_a_refusal(self):
        found = head(TGI)
        assert found is not None and found.id != "feature-not-supported"
        assert found.evidence.get("class") == "operand-type-mismatch" and "NoneType and int" in found.fix

    def test_sibling_a_flag_object_compared_in_your_code_names_the_types_and_the_frame(self):
        found = head(FLAG)
        assert found is not None and found.id == "python-exception" and found.evidence.get("class") == "operand-type-mismatch"
        assert "int and Flag" in found.fix and "sc_batch.py:44" in found.fix

    def test_control_a_program_that_refuses_a_setup_is_still_feature_not_supported(self):
        assert head_id(GROOT) == "feature-not-supported"

    def test_control_a_none_whose_attribute_is_read_stays_none_value_used(self):
        found = head("AttributeError: 'NoneType' object has no attribute 'get'\n")  # axolotl-ai-cloud/axolotl#871
        assert found is not None and found.evidence.get("class") == "none-value-used"

    def test_control_a_builtin_generic_subscripted_on_an_old_python_is_not_a_value_of_the_wrong_type(self):
        # list[int] in an annotation on Python 3.8: the interpreter's version, not a value
        found = head('Traceback (most recent call last):\n  File "/home/u/train.py", line 12, in <module>\n'
                     "    def collate(batch: list[dict]) -> dict:\nTypeError: 'type' object is not subscriptable\n")
        assert found is not None and found.evidence.get("class") != "operand-type-mismatch"


# NVIDIA/TensorRT-LLM#1950: the title's earlier error (solved, per the thread), then the run's own traceback
TRTLLM = (
    "# LLAMA checkpoint ImportError: undefined symbol\n\n"
    "hey Thank you, changing to 0.10.0 solved the issue,\n\nI have run into another issue which I do not understand in\n"
    "> [TensorRT-LLM][INFO] MPI size: 1, rank: 0\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/tritonserver/TensorRT-LLM/examples/llama/../run.py", line 420, in main\n'
    "    runner = runner_cls.from_dir(**runner_kwargs)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/tensorrt_llm/runtime/model_runner_cpp.py", line 98, in from_dir\n'
    "    world_config = WorldConfig.mpi(tensor_parallelism=tp_size,\n"
    "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp "
    "(/tmp/tritonbuild/tensorrtllm/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:99)\n"
)


class TestPrintedTracebackLeads:
    verdict = "unrecognised-failure"

    def test_sibling_the_runs_traceback_leads_the_error_a_title_quotes_alone(self):
        # the run's RuntimeError in words no class reads: told as unrecognised, from its traceback, not from the title
        found = head(TRTLLM.replace("Assertion failed: mpiSize == tp * pp", "Failed to deserialize the engine blob"))
        assert found is not None and found.id == "unrecognised-failure"
        assert "RuntimeError" in found.title and "ImportError" not in found.title

    def test_sibling_the_runs_traceback_leads_with_its_own_class(self):
        # the same paste as the thread has it: the run's assert is a parallel layout refused (patterns/classes20a.py)
        found = head(TRTLLM)
        assert found is not None and found.id == "parallel-layout-refused" and "ImportError" not in found.title

    def test_control_an_error_quoted_alone_with_no_traceback_after_it_stays_the_answer(self):
        found = head("# LLAMA checkpoint ImportError: undefined symbol\n\nI tried again and it still fails\n")
        assert found is not None and "ImportError" in found.title


# OpenNMT/OpenNMT-py#1781: a spawned child interrupted by its parent while it put its own error on the error queue
OPENNMT = (
    "Process SpawnProcess-2:\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.5/multiprocessing/process.py", line 93, in run\n'
    "    self._target(*self._args, **self._kwargs)\n"
    '  File "/home/ubuntu/work/OpenNMT-py/train.py", line 148, in run\n'
    "    error_queue.put((opt.gpu_ranks[device_id], traceback.format_exc()))\n"
    "KeyboardInterrupt\n"
)
# pytorch/pytorch#1355: Ctrl-C on a DataLoader that deadlocked
CTRL_C = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/anaconda3/lib/python3.6/multiprocessing/connection.py", line 368, in _send\n'
    "    n = write(self._handle, buf)\n"
    "KeyboardInterrupt\n"
)


class TestInterruptedWhileReportingError:
    verdict = "interrupted-while-reporting-error"

    def test_sibling_a_childs_interrupt_in_its_error_handler_follows_the_error_it_handled(self):
        told = ids("RuntimeError: Address already in use\n" + OPENNMT)
        assert told[0] == "store-address-in-use" and "interrupted-while-reporting-error" in told

    def test_sibling_alone_it_still_fails_the_log_and_says_the_error_it_reported_is_not_shown(self):
        found = head(OPENNMT)
        assert found is not None and found.id == "interrupted-while-reporting-error"

    def test_control_ctrl_c_elsewhere_is_still_run_interrupted(self):
        assert head_id(CTRL_C) == "run-interrupted"


# dxv2k/pixel_link_py3 log_train.txt (heldout19w): the reader's error, then the empty queue it left, then the error re-raised
PIXEL_LINK = (
    "INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.InvalidArgumentError'>, "
    "Key: image/filename.  Can't parse serialized Example.\n"
    "OutOfRangeError (see above for traceback): FIFOQueue '_3_icdar2015_prefetch_queue/prefetch_queue/fifo_queue' is closed "
    "and has insufficient elements (requested 1, current size 0)\n"
    "Traceback (most recent call last):\n"
    '  File "train_pixel_link.py", line 280, in train\n'
    "    sess.run(train_op)\n"
    '  File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/client/session.py", line 1407, in _call_tf_sessionrun\n'
    "    run_metadata)\n"
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Key: image/filename.  Can't parse serialized Example.\n"
)
# ferdyandannes/Struct2depth-Training#1: the empty queue alone (no train.txt generated)
STRUCT2DEPTH = ("tensorflow.python.framework.errors_impl.OutOfRangeError: RandomShuffleQueue "
                "'_2_data_loading/batching/shuffle_batch/random_shuffle_queue' is closed and has insufficient elements (requested 1, current size 0)\n")


class TestInputQueueEmptyAfterReaderError:
    verdict = "tf-input-queue-empty"

    def test_sibling_the_readers_parse_error_leads_the_empty_queue_it_caused(self):
        told = ids(PIXEL_LINK)
        assert told[0] != "tf-input-queue-empty" and "tf-input-queue-empty" in told[1:]

    def test_control_the_empty_queue_alone_is_still_its_own_cause(self):
        assert head_id(STRUCT2DEPTH) == "tf-input-queue-empty"


# dphnAI/sonar#426: the issue template's environment report (its copy of collect_env saved as env.py) failed on its own
ENV_REPORT = (
    "Collecting environment information...\n"
    "Traceback (most recent call last):\n"
    '  File "/home/dario/work/dm/Dolf/server/env.py", line 600, in main\n'
    "    output = get_pretty_env_info()\n"
    '  File "/home/dario/work/dm/Dolf/server/env.py", line 404, in get_env_info\n'
    "    pip_version, pip_list_output = get_pip_packages(run_lambda)\n"
    '  File "/home/dario/work/dm/Dolf/server/env.py", line 370, in run_with_pip\n'
    '    return "\\n".join(line for line in out.splitlines()\n'
    "AttributeError: 'NoneType' object has no attribute 'splitlines'\n"
)


class TestEnvironmentReportFailed:
    verdict = "environment-report-failed"

    def test_sibling_the_reports_own_traceback_is_not_the_runs_failure(self):
        told = ids(ENV_REPORT)
        assert "environment-report-failed" in told and "python-exception" not in told and head(ENV_REPORT) is None

    def test_sibling_the_runs_own_failure_after_the_report_leads(self):
        run = ('Traceback (most recent call last):\n  File "/home/u/serve.py", line 30, in <module>\n    main()\n'
               "RuntimeError: the number of heads must be divisible by the tensor parallel size\n")
        found = head(ENV_REPORT + run)
        assert found is not None and "RuntimeError" in found.title

    def test_control_an_environments_own_get_env_info_is_the_run(self):
        # PyMARL's run.py asks the StarCraft environment for its sizes: get_env_info is the run's code there
        text = ('Traceback (most recent call last):\n  File "/home/u/pymarl/src/run.py", line 89, in run_sequential\n'
                "    env_info = runner.get_env_info()\n"
                '  File "/home/u/pymarl/src/runners/episode_runner.py", line 31, in get_env_info\n'
                "    return self.env.get_env_info()\n"
                "AttributeError: 'NoneType' object has no attribute 'get_env_info'\n")
        assert head_id(text) in ("python-exception", "unrecognised-failure")

    def test_control_the_same_error_in_the_runs_own_code_is_the_runs(self):
        text = ('Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in load_lines\n'
                "    return out.splitlines()\nAttributeError: 'NoneType' object has no attribute 'splitlines'\n")
        found = head(text)
        assert found is not None and found.id == "python-exception"


# Lightning-AI/pytorch-lightning#17445: the Trainer's ValueError printed, then a sentence that quotes another error
LIGHTNING = (
    "Error :\n"
    "ValueError: You selected an invalid strategy name: `strategy=<lightning.pytorch.strategies.ddp.DDPStrategy object at "
    "0x0000019B575B6070>`. It must be either a string or an instance of `pytorch_lightning.strategies.Strategy`.\n\n"
    'on Windows "RuntimeError: Distributed package doesn\'t have NCCL built in"\n'
    "how to fix this issue? thank you !\n"
)


class TestBackendNotBuiltQuotedInASentence:
    verdict = "backend-not-built"

    def test_sibling_an_error_printed_on_its_own_line_leads_one_a_sentence_quotes(self):
        assert ids(LIGHTNING)[0] == "unrecognised-failure" and "backend-not-built" in ids(LIGHTNING)

    def test_control_the_quoted_error_alone_is_still_the_answer(self):
        assert head_id('on Windows "RuntimeError: Distributed package doesn\'t have NCCL built in"\nhow to fix this issue?\n') == "backend-not-built"
