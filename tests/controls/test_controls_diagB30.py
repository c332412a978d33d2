"""Controls and siblings for diagB30 (issue 35: never confidently wrong). Answers of the retired heldout29/29b judgement
and the development parts that asserted more than the log decides: a builtin's missing attribute or a title's error read
as two packages' versions. `test_control_*` is the input that must not get the verdict, `test_sibling_*` the nearest one
that keeps it. Lines are real ones (threads named beside them)."""

from __future__ import annotations

from test_controls_diagB25 import BUSY_MEMORY

from gpudoctor import api


def found(text: str, fid: str):
    return [f for f in api.diagnose(text).findings if f.id == fid]


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity.value == "error"]


def thread(title: str, body: str) -> str:
    return f"owner/repo · issue #1 · closed · Python\n# {title}\n\nsomeone · description · 2024-02-23\n{body}"


class TestApiShapeWithoutTraceback:
    # WongKinYiu/yolov9#22: a YOLOv9 model trained with train.py (train_dual.py takes its two heads' list)
    LIST = "AttributeError: 'list' object has no attribute 'view'"
    # sokrypton/ColabFold#332: a newer jax (pin 0.3.24); the object is a package's own class
    CONFIG = "AttributeError: 'Config' object has no attribute 'jax_experimental_name_stack'"

    def test_control_a_builtin_types_missing_attribute_is_not_asserted_as_versions(self):
        text = thread("training fails", f"In loss_tal.py the error is as follows:\n{self.LIST}\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "warn" and "list" in f.evidence["what decides it"]
        assert "pip install" not in f.fix and "library-api-mismatch" not in errors(text)

    def test_sibling_a_packages_class_missing_attribute_keeps_the_versions(self):
        text = thread("colabfold fails", f"running colabfold_batch I get\n{self.CONFIG}\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "error" and "what decides it" not in f.evidence

    def test_sibling_a_builtins_own_missing_attribute_keeps_the_versions(self):
        # ray-project/ray#23302: a config passed as a dict where the API of another version takes its own object (an upgrade fixed it)
        text = thread("ray fails", "AttributeError: 'dict' object has no attribute 'num_gpus_per_worker'\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "error" and "what decides it" not in f.evidence

    def test_control_a_tuple_taken_for_a_graph_batch_is_not_asserted_as_versions(self):
        # lightaime/deep_gcns_torch#9: DataParallel scattered PyG batches into tuples
        text = thread("multi-GPU fails", "AttributeError: 'tuple' object has no attribute 'num_nodes'\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "warn"

    def test_control_a_tuple_taken_for_a_tensor_is_not_asserted_as_versions(self):
        text = thread("multi-GPU fails", "AttributeError: 'tuple' object has no attribute 'device'\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "warn"

    def test_sibling_a_builtin_with_its_traceback_in_a_library_is_read_by_the_frames(self):
        # ray-project/ray#23302's dict, raised in Ray's own frame: the frame decides, not this rule
        text = ("Traceback (most recent call last):\n"
                '  File "/opt/conda/lib/python3.8/site-packages/ray/rllib/agents/trainer.py", line 871, in setup\n'
                "    self.config.num_gpus_per_worker\n"
                "AttributeError: 'dict' object has no attribute 'num_gpus_per_worker'\n")
        assert "library-api-mismatch" in errors(text)

    def test_control_an_error_only_the_title_names_is_not_asserted(self):
        # facebookresearch/synsin#2: the title's error, the post about the setup
        text = thread("AttributeError: 'VectorEnv' object has no attribute 'sample_navigable_point'",
                      "I am trying to run train.sh with a single GPU and batch size 2.\n```\npython train.py --batch-size 2\n```\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "warn" and "title" in f.evidence["what decides it"]

    def test_sibling_the_titles_error_printed_in_the_log_keeps_its_severity(self):
        title = "AttributeError: 'Config' object has no attribute 'jax_experimental_name_stack'"
        text = thread(title, f"running colabfold_batch:\n{self.CONFIG}\n")
        [f] = found(text, "library-api-mismatch")
        assert f.severity.value == "error"


class TestStuckOnWhatFollows:
    # NickDarvey/whisper#19: the reporter is stuck on a build error that follows, quoted
    BUILD = ("NickDarvey · comment · 2023-06-05\nYes, something like #20.\n\nRight now I'm stuck on \n\n"
             ">   nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified\n> \n")
    # a run's own line after the same words: the run stopped there (zju3dv/LoFTR#278's "stuck on" initializing ddp)
    RUN = ("someone · description · 2021-09-01\nThe training is stuck on:\n\n"
           "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n")

    def test_control_stuck_on_an_error_that_follows_is_no_hang(self):
        findings = api.diagnose(self.BUILD).findings
        assert "log-said-hang" not in [f.id for f in findings]
        assert any("nvcc fatal" in str(f.evidence) for f in findings)

    def test_sibling_stuck_on_a_runs_line_stays_the_hang(self):
        [f] = found(self.RUN, "log-said-hang")
        assert "stuck on" in f.evidence["said"]

    def test_sibling_stuck_on_a_step_named_in_the_sentence_stays_the_hang(self):
        text = "someone · description · 2021-09-01\nTraining gets stuck on the first epoch.\nEpoch 0:   0%|          | 0/100\n"
        assert found(text, "log-said-hang")


class TestCommandUnderTheErrorSentence:
    # PaddlePaddle/PaddleOCR#14195: "the command that errs:" above the quoted launch; the log is cut before the error
    INTRO = "owner/repo · issue #1 · closed · Python\n# launch fails\n\nsomeone · description · 2024-11-11\nI ran it on two GPUs and got this error:\n\n"
    COMMAND = '> python3 -m paddle.distributed.launch PaddleOCR/tools/train.py --gpus "0,1" -c en_PP-OCRv3_rec.yml\n\nThe config is unchanged.\n'

    def test_control_a_quoted_command_under_the_sentence_is_not_the_failure(self):
        text = self.INTRO + self.COMMAND
        assert errors(text) == []
        assert not any("paddle.distributed.launch PaddleOCR" in str(f.evidence.get("log", "")) for f in api.diagnose(text).findings)

    def test_control_a_prompted_command_is_not_the_failure(self):
        text = self.INTRO + "(paddle) user@host:~/ocr$ python tools/train.py -c rec.yml\n\nThe config is unchanged.\n"
        assert errors(text) == []

    def test_sibling_a_quoted_message_under_the_sentence_stays_the_failure(self):
        # deepspeedai/DeepSpeed#3624: the message alone under the sentence
        text = self.INTRO + "> No slot 2 specificied on host work1\n\nThe config is unchanged.\n"
        [f] = [f for f in api.diagnose(text).findings if f.severity.value == "error"]
        assert "No slot 2" in str(f.evidence)

    def test_sibling_a_backticked_message_under_the_sentence_stays_the_failure(self):
        text = self.INTRO + "`No slot 2 specificied on host work1`.\n\nThe config is unchanged.\n"
        assert len(errors(text)) == 1


class TestClientRetryWarning:
    # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2532: torch's per-address warnings, then the run's config
    RETRY = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [DESKTOP-L2OV9PU]:52550 (system error: 10013 - "
             "An attempt was made to access a socket in a way forbidden by its access permissions.).\n"
             "[W socket.cpp:663] [c10d] The client socket has failed to connect to [kubernetes.docker.internal]:52550 (system error: "
             "10049 - The requested address is not valid in its context.).\n"
             "INFO:mi-test:{'data': {'filter_length': 2048, 'hop_length': 400}}\n")

    def test_control_a_retry_warning_with_10013_is_not_the_failure(self):
        [f] = found(self.RETRY, "windows-port-forbidden")
        assert f.severity.value == "warn" and "what decides it" in f.evidence
        assert errors(self.RETRY) == []

    def test_sibling_the_server_bind_with_10013_stays_the_error(self):
        # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#246
        text = ("[W socket.cpp:426] [c10d] The server socket has failed to bind to [kodachi]:51545 (system error: 10013 - An attempt "
                "was made to access a socket in a way forbidden by its access permissions.).\n"
                "RuntimeError: The server socket has failed to listen on any local network address.\n")
        assert "windows-port-forbidden" in errors(text)

    def test_sibling_torchs_error_after_the_retries_is_not_softened(self):
        text = self.RETRY + ("torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
                             "(DESKTOP-L2OV9PU, 52550). The client socket has failed to connect to DESKTOP-L2OV9PU:52550 (system error: "
                             "10013 - An attempt was made to access a socket in a way forbidden by its access permissions.).\n")
        assert "windows-port-forbidden" in errors(text)


class TestValueRefusedThroughAnotherLibrary:
    # explosion/spaCy#3112: the user's add_label goes into spaCy, whose parser fills a cupy array (a spaCy bug on the GPU)
    SPACY = ("Traceback (most recent call last):\n"
             '  File "./train_ner2.py", line 51, in main\n'
             "    ner.add_label(label)\n"
             '  File "nn_parser.pyx", line 167, in spacy.syntax.nn_parser.Parser.add_label\n'
             '  File "_parser_model.pyx", line 219, in spacy.syntax._parser_model.ParserModel.resize_output\n'
             '  File "cupy/core/core.pyx", line 1689, in cupy.core.core.ndarray.__setitem__\n'
             '  File "cupy/core/core.pyx", line 527, in cupy.core.core.ndarray.fill\n'
             "ValueError: non-scalar numpy.ndarray cannot be used for fill\n")
    # a user's call straight into the library that refuses (scikit-learn's own frames only)
    SKLEARN = ("Traceback (most recent call last):\n"
               '  File "/home/me/tof/eval.py", line 40, in <module>\n'
               "    X_train, X_test, y_train, y_test = train_test_split(X, y)\n"
               '  File "/usr/lib/python3.10/site-packages/sklearn/model_selection/_split.py", line 2559, in train_test_split\n'
               "    arrays = indexable(*arrays)\n"
               '  File "/usr/lib/python3.10/site-packages/sklearn/utils/validation.py", line 397, in check_consistent_length\n'
               "    raise ValueError(\n"
               "ValueError: Found input variables with inconsistent numbers of samples: [151, 152]\n")

    def test_control_a_value_refused_behind_another_librarys_frames_is_not_decided(self):
        # whose value it was is not decided (the fix says what decides it); that the run failed there is (its traceback)
        [f] = found(self.SPACY, "library-refused-value")
        assert f.severity.value == "error" and f.evidence["passed_through"] == "spacy"
        assert "what decides it" in f.evidence
        assert "spacy made it" in f.fix and "make the value meet" not in f.fix

    def test_sibling_a_value_refused_by_the_library_the_user_called_stays_the_error(self):
        [f] = found(self.SKLEARN, "library-refused-value")
        assert f.severity.value == "error" and "passed_through" not in f.evidence

    def test_control_works_on_cpu_but_not_on_gpu_is_no_unused_gpu(self):
        text = thread("Adding new entities works on CPU but not on GPU", "I start it with python train.py --gpus 1\n")
        assert not found(text, "log-said-gpu-unused")

    def test_sibling_running_but_not_on_my_gpu_stays_said(self):
        # PromtEngineer/localGPT#14's title
        text = thread("Running successfully but not on my 1080TI GPU", "I start it with python run_localGPT.py --device_type cuda\n")
        assert found(text, "log-said-gpu-unused")

    def test_sibling_not_running_on_the_gpu_stays_said(self):
        text = thread("Training is not running on the GPU", "I start it with python train.py --gpus 1\n")
        assert found(text, "log-said-gpu-unused")


# one GPU holding memory at 0 % (pytorch/examples#470's table), no process list
SMI_HELD = BUSY_MEMORY.format(util=0)


class TestJobIdleNeedsTheJobOnTheGpu:
    def test_control_the_container_cannot_use_the_gpu(self):
        # google-deepmind/alphafold3#82: the container saw no GPU; the memory on the table is not shown to be the job's
        text = "# Alphafold3 docker container can't use GPU A100\n\nMy GPU information as follow.\n" + SMI_HELD
        assert not found(text, "gpu-job-idle")
        assert found(text, "log-said-gpu-unused")

    def test_sibling_the_utilisation_said_to_stay_at_zero_stays_job_idle(self):
        # pytorch/examples#470
        text = "the Volatile GPU-Util is always 0 with command 'nvidia-smi'\n" + SMI_HELD
        [f] = found(text, "gpu-job-idle")
        assert f.severity.value == "warn"

    def test_sibling_not_using_the_gpu_with_its_memory_held_stays_job_idle(self):
        text = "# Training is not using the GPU\n\n" + SMI_HELD
        assert found(text, "gpu-job-idle")


class TestErrorQuotedInABlockOfItsOwn:
    verdict = "script-arguments-refused"  # an error set apart in its own block keeps its verdict (no rule reads the block)

    def test_sibling_an_error_set_apart_above_its_launch_lines_stays_the_failure(self):
        # hiyouga/LlamaFactory#6075: the parser's error in a block of its own, then the launcher's spawn line: the run's own
        # failure (the shape OpenGVLab/LLaMA-Adapter#144's earlier attempt's OOM shares: the paste does not tell them apart)
        text = ("```\ntrain.py: error: the following arguments are required: --output_dir/--output-dir\n```\n```\n"
                "10.252.32.12: [2024-11-19 16:11:41,822] [INFO] [launch.py:256:main] process 3357036 spawned with command: "
                "['/usr/bin/python3.10', '-u', 'src/train.py', '--local_rank=0', 'examples/train_lora/llama3_lora_sft_ds3.yaml']\n```\n")
        assert "script-arguments-refused" in errors(text)


class TestTemplateExampleTraceback:
    # ultralytics/yolov5#3998 (and #4345, #4926, yolov3#1566): the bug-report template's own example, left in the post
    TEMPLATE = ("## To Reproduce (REQUIRED)\n\nInput:\n```\nimport torch\n\na = torch.tensor([5])\nc = a / 0\n```\n\nOutput:\n```\n"
                "Traceback (most recent call last):\n"
                '  File "/Users/glennjocher/opt/anaconda3/envs/env1/lib/python3.7/site-packages/IPython/core/interactiveshell.py", line 3331, in run_code\n'
                "    exec(code_obj, self.user_global_ns, self.user_ns)\n"
                '  File "<ipython-input-5-be04c762b799>", line 5, in <module>\n'
                "    c = a / 0\n"
                "RuntimeError: ZeroDivisionError\n```\n")

    def test_control_the_templates_example_is_no_failure(self):
        text = thread("SyncBatchNorm training hangs", self.TEMPLATE)
        assert errors(text) == []
        [f] = found(text, "python-exception")
        assert f.severity.value == "info" and "template_example" in f.evidence

    def test_sibling_a_real_traceback_under_the_templates_headings_stays_the_failure(self):
        real = (self.TEMPLATE.replace("<ipython-input-5-be04c762b799>", "train.py").replace("c = a / 0", "loss = criterion(pred, y)")
                .replace("RuntimeError: ZeroDivisionError", "RuntimeError: shape '[16, 3, 85, 20, 20]' is invalid for input of size 652800"))
        assert errors(thread("training fails", real))


def test_sibling_stuck_on_as_the_inputs_last_words_stays_the_hang():
    assert found("someone · description · 2021-09-01\n[rank0] initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\nNow the training is stuck on:\n",
                 "log-said-hang")
