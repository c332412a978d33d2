"""An unrecognised failure is still a next step: the message's own remedy (quoted, with its line),
whose code raised it, its signature and a search of that project's issues (issue 35 item 3).
Logs run through the real reader and knowledge base, as `gpudoctor diagnose` reads them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity


def unrecognised(text: str):
    report = api.diagnose(text)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert errors and errors[0].id == "unrecognised-failure", [f.id for f in report.findings]
    return errors[0]


SITE = "/opt/conda/lib/python3.10/site-packages"
# an error torch raises whose message names its own remedy, called from the user's script
REMEDY_LOG = (
    "Traceback (most recent call last):\n"
    '  File "/home/fedora/workspace/nanoGPT/train.py", line 110, in <module>\n'
    "    ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)\n"
    f'  File "{SITE}/torch/amp/autocast_mode.py", line 234, in __init__\n'
    "    raise RuntimeError(\n"
    "RuntimeError: The fused kernel has no variant for head size 320. Please switch attn_implementation to sdpa.\n"
)


def test_the_messages_own_remedy_leads_the_fix_with_its_line():
    f = unrecognised(REMEDY_LOG)
    assert f.evidence["remedy"] == "Please switch attn_implementation to sdpa"
    assert f.evidence["remedy_line"] == 6
    assert f.fix.startswith('the message itself says: "Please switch attn_implementation to sdpa" (line 6)')


def test_the_library_that_raised_and_a_search_of_its_issues():
    f = unrecognised(REMEDY_LOG)
    assert f.evidence["raised_by"] == "torch"
    assert f.evidence["signature"] == "RuntimeError: The fused kernel has no variant for head size <n>. Please switch attn_implementation to sdpa."
    assert f.evidence["search"].startswith("https://github.com/pytorch/pytorch/issues?q=is%3Aissue+%22The+fused+kernel+has+no+variant+for+head+size%22")
    assert f.evidence["search"] in f.fix


def test_an_editable_checkout_of_a_library_is_the_library():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        '  File "/home/u/DeepSpeed/deepspeed/runtime/engine.py", line 1021, in _configure_optimizer\n'
        "RuntimeError: the optimizer state of group 3 has 17 entries at /tmp/x, expected 16\n"
    )
    f = unrecognised(log)
    assert f.evidence["raised_by"] == "deepspeed"
    assert f.evidence["project"] == "deepspeedai/DeepSpeed"
    assert f.evidence["signature"] == "RuntimeError: the optimizer state of group <n> has <n> entries at <path>, expected <n>"


def test_a_frame_in_the_users_code_gets_no_library_search():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        "    raise ValueError(f'bad CUDA arch {arch}')\n"
        "ValueError: bad CUDA arch 7.0\n"  # a word pointing at the environment keeps it from the catch-all
    )
    f = unrecognised(log)
    assert f.evidence["raised_by"] == "your code"
    assert "search" not in f.evidence and "project" not in f.evidence


def test_an_exception_line_alone_never_sends_the_user_for_a_traceback_the_log_holds():
    # a traceback cut before its exception line, and the exception only in torchrun's error-file summary
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 5, in <module>\n'
        "    main()\n"
        "\n"
        '    "message": "ValueError: the schedule wants 3 stages, got 2",\n'
    )
    f = unrecognised(log)
    assert "find the traceback" not in f.fix
    assert "the traceback that starts at line 1" in f.fix


def test_without_a_traceback_the_fix_says_the_log_holds_none():
    f = unrecognised('    "message": "ValueError: the schedule wants 3 stages, got 2",\n')
    assert "holds no traceback" in f.fix and f.evidence["signature"] == "ValueError: the schedule wants <n> stages, got <n>"


def test_a_cuda_error_quotes_the_advice_on_its_next_line():
    log = (
        "[rank0]: RuntimeError: CUDA error: an illegal instruction was encountered\n"
        "[rank0]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "[rank0]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
    )
    report = api.diagnose(log)
    text = " ".join(f.fix + " " + str(f.evidence.get("remedy", "")) for f in report.findings)
    assert "CUDA_LAUNCH_BLOCKING=1" in text


def test_an_exception_with_no_frame_and_no_known_project_searches_every_project():
    # huggingface/trl#1543: the paste is the exception line alone (the recursion limit of DeepSpeed#4440, once this
    # example, is a class of its own now: knowledge/patterns/classes10d.py)
    f = unrecognised("IndexError: pop from an empty deque\n")
    assert f.evidence["search"] == "https://github.com/search?type=issues&q=%22pop+from+an+empty+deque%22"
    assert "every project on GitHub" in f.fix


def test_a_traceback_cut_in_a_library_searches_the_frame_it_ends_in():
    # deepspeedai/DeepSpeed#3775: rich's frames, the message cut
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        f'  File "{SITE}/deepspeed/runtime/zero/stage3.py", line 2086, in backward\n'
    )
    f = unrecognised(log)
    assert f.evidence["search"] == "https://github.com/deepspeedai/DeepSpeed/issues?q=is%3Aissue+%22stage3.py%22+%22in+backward%22"
    assert "tracebacks that end in the same frame" in f.fix and "signature" not in f.evidence


def test_a_traceback_cut_in_the_users_code_searches_nothing():
    f = unrecognised('Traceback (most recent call last):\n  File "/home/u/train.py", line 40, in <module>\n')
    assert "search" not in f.evidence


def test_a_models_code_from_the_hub_is_not_the_users():
    # THUDM/ChatGLM-6B#137: the error is raised in the model's remote code
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/api.py", line 20, in <module>\n'
        '  File "/home/user/.cache/huggingface/modules/transformers_modules/chatglm-6b/modeling_chatglm.py", line 218, in forward\n'
        "TypeError: 'NoneType' object is not subscriptable\n"
    )
    f = unrecognised(log)
    assert f.evidence["raised_by"] == "chatglm-6b (the model's code from the Hub)"


def test_a_header_cut_off_says_what_the_log_holds_not_that_the_ranks_output_is_missing():
    # hiyouga/LLaMA-Factory#4200: the paste ends on the header
    f = unrecognised("06/11/2024 08:00:16 - INFO - llamafactory.cli - Initializing distributed tasks\nTraceback (most recent call last):\n")
    assert f.fix.startswith("line 2 is a traceback's header") and "own output is not here" not in f.fix


def test_an_exception_without_frames_points_at_the_traceback_the_log_holds():
    # unslothai/unsloth#4360's shape: IPython's frames, then the bare exception class far below (there a
    # NotImplementedError, which says what it is: feature-not-supported; a bare RuntimeError says nothing)
    log = (
        "Traceback (most recent call last):\n"
        "  Cell In[3], line 1\n"
        "----> 1 from unsloth import FastLanguageModel\n"
        + "".join(f"  noise {i}\n" for i in range(5))
        + "RuntimeError\n"
    )
    f = unrecognised(log)
    assert "read the traceback that starts at line 1" in f.fix and "keep each rank's whole output" not in f.fix


def test_a_tools_own_error_is_searched_by_its_words():
    f = unrecognised("E: Unable to locate package libnccl2\n")
    assert f.evidence["signature"] == "Unable to locate package libnccl2"
    assert f.evidence["search"] == "https://github.com/search?type=issues&q=%22Unable+to+locate+package+libnccl2%22"
    assert f.fix.startswith("line 1 is the tool's own error")


def test_a_plain_python_exception_is_of_the_python_family():
    # (a ValueError a library raised is its check refusing a value: library-refused-value, knowledge/patterns/classes23c.py)
    f = unrecognised(REMEDY_LOG.replace("RuntimeError: The fused kernel", "IndexError: The fused kernel"))
    assert f.evidence["family"] == "python"


def test_a_cuda_error_is_of_the_cuda_family():
    f = unrecognised(REMEDY_LOG.replace("The fused kernel has no variant", "CUDA error: the fused kernel has no variant"))
    assert f.evidence["family"] == "cuda"


# a JVM's uncaught exception, as a Spark driver prints it: its stack is the `at` lines below it
JAVA_LOG = (
    'Exception in thread "main" java.lang.IllegalStateException: Cannot call methods on a stopped SparkContext.\n'
    "\tat org.apache.spark.SparkContext.assertNotStopped(SparkContext.scala:118)\n"
    "\tat org.apache.spark.SparkContext.defaultParallelism(SparkContext.scala:2358)\n"
)


def test_a_java_stack_trace_is_not_called_a_python_exception():
    f = unrecognised(JAVA_LOG)
    assert "Python" not in f.why
    assert f.evidence["family"] == "java"
    assert f.title.startswith("unrecognised failure: java.lang.IllegalStateException")


def test_a_java_stack_trace_is_read_where_it_is():
    # never send the user to look for a stack the log holds
    f = unrecognised(JAVA_LOG)
    assert "Caused by:" in f.fix and "holds no traceback" not in f.fix


def test_the_class_of_a_library_assert_leads_the_next_step():
    log = REMEDY_LOG.replace("RuntimeError: The fused kernel has no variant for head size 320. Please switch attn_implementation to sdpa.",
                             "AssertionError: zero stage 2 requires an optimizer")
    f = unrecognised(log)
    assert f.evidence["class"] == "assertion-states-condition"
    assert f.fix.startswith("a message of the class assertion-states-condition")
    assert "what decides it" in f.why.lower()


def test_a_cluster_managers_own_line_gives_its_remedy():
    # skypilot-org/skypilot#5031: the job's state, and the command that shows its record
    log = ("$ sky jobs logs 1\n"
           "Job 1 is already in terminal state FAILED_CONTROLLER. For more details, run: sky jobs logs --controller 1\n")
    f = unrecognised(log)
    assert f.evidence["remedy"] == "run: sky jobs logs --controller 1" and f.evidence["remedy_line"] == 2
    assert f.fix.startswith('the message itself says: "run: sky jobs logs --controller 1" (line 2)')


def test_hydras_report_sends_for_the_exception_it_prints_after_it():
    # dev verl-108 / heldout14 cola-rl#2: the paste ends at Hydra's line; the job's exception is printed after it
    f = unrecognised("Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'data.train_files=train.parquet']\n")
    assert f.evidence["kind"] == "hydra" and "HYDRA_FULL_ERROR=1" in f.fix and "torchrun --tee" not in f.fix


def test_deepspeeds_launcher_killing_the_ranks_names_what_decides_a_silent_kill():
    # 01-ai/Yi#152 (dev5): the launcher's kills and nothing before them (host memory ran out loading the model)
    f = unrecognised("[2023-11-21 20:42:22,682] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 156890\n")
    assert f.evidence["kind"] == "dslaunch" and "dmesg -T" in f.fix and "torchrun --tee" not in f.fix


def test_the_shells_own_error_names_a_variable_under_set_u():
    # heldout17w's run_deepspeed.sh sourcing conda.sh under set -u
    f = unrecognised("/home/u/anaconda3/etc/profile.d/conda.sh: line 55: PS1: unbound variable\n")
    assert f.evidence["kind"] == "notfound" and "set +u" in f.fix


def test_colossalais_launcher_quotes_what_it_met_on_the_host():
    # hpcaitech/ColossalAI#4797 (heldout19): the command with its environment was too long to start
    f = unrecognised("Error: failed to run torchrun --nproc_per_node=8 --nnodes=1 --node_rank=0 --master_addr=127.0.0.1 "
                     "--master_port=29500 pretrain.py -g on 127.0.0.1, is localhost: True, exception: [Errno 7] Argument list too "
                     "long: '/bin/bash'\n")
    assert "Argument list too long" in f.fix and "env | wc -c" in f.fix and "torchrun --tee" not in f.fix


def test_a_called_process_error_sends_for_the_commands_own_output():
    # bmaltais/kohya_ss#1887 (heldout20): the GUI's accelerate launch exited 1, the exception's line wrapped in the paste
    f = unrecognised("'--noise_offset=0.0', '--no_half_vae', '--full_bf16']' returned non-zero exit status 1.\n")
    assert "by hand" in f.fix and "torchrun --tee" not in f.fix
