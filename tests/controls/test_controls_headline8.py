"""Controls and siblings for four classes a held-out judge found (issue 35, headline8): the answer led
with a catch-all while a named cause was in it; "no line shows a failure" on a log whose error line is
there; an exception line glued to another record read as a traceback cut short; and a snapshot's
ordinary memory called leaked. The lines are real ones from the samples' threads (named beside each);
each runs through `diagnose`."""

from __future__ import annotations

from pathlib import Path

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_patterns import ids

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "log_sample"


def case(part: str, name: str) -> str:
    return (SAMPLES / part / f"{name}.log").read_text(encoding="utf-8")


def found(text: str) -> dict:
    return {f.id: f for f in api.diagnose(text).findings}


def head(text: str) -> str:
    return str((api.diagnose(text).data.get("root_cause") or {}).get("id", "-"))


# -- 1. the headline: a named cause leads the catch-all beside it ---------------------------------------

# hpcaitech/ColossalAI#5890: colossalai run's error, then the torchrun command it built
STOP_WAITING = "RuntimeError: Stop_waiting response is expected\n"
BUILT = ("Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --master_addr={addr} --master_port={port} "
         "vit_train_demo.py --model_name_or_path google/vit-base-patch16-224\n")


class TestLauncherMasterAddrEmptyLeads:
    verdict = "launcher-master-addr-empty"

    def test_sibling_the_empty_address_leads_the_store_error_it_caused(self):
        text = case("dev", "colossalai-5890-stop-waiting-empty-master-addr")
        assert head(text) == "launcher-master-addr-empty"
        assert ids(text).index("launcher-master-addr-empty") < ids(text).index("unrecognised-failure")

    def test_control_a_command_with_its_address_leaves_the_error_unrecognised(self):
        text = STOP_WAITING + BUILT.format(addr="10.0.0.1", port="29500")
        assert head(text) == "unrecognised-failure" and "launcher-master-addr-empty" not in ids(text)


class TestNcclWatchdogTimeoutTorch24:
    """torch >= 2.4 says "Timeout at NCCL work: N" before (or instead of) "Watchdog caught ...": the
    collective timed out, and the traceback or C++ stack printed after it is that timeout surfacing."""

    verdict = "nccl-watchdog-timeout"

    def test_sibling_timeout_at_nccl_work_then_a_cut_traceback_is_the_timeout(self):
        # hao-ai-lab/FastVideo#162
        text = case("dev6", "fastvideo-162-hunyuan-lora-nccl-timeout-train-step")
        assert head(text) == "nccl-watchdog-timeout" and "unrecognised-failure" not in ids(text)

    def test_sibling_the_watchdogs_cpp_stack_is_the_timeout_not_an_unrecognised_failure(self):
        # hao-ai-lab/FastVideo#242: "Exception raised from checkTimeout" under the watchdog's own line
        text = case("dev6", "fastvideo-242-hunyuan-lora-alltoall-timeout")
        f = found(text)
        assert head(text) == "nccl-watchdog-timeout" and "unrecognised-failure" not in f
        assert f["nccl-watchdog-timeout"].evidence["SeqNum"] == "3369"  # the line naming the collective is told

    def test_control_a_teardown_after_an_error_is_no_timeout(self):
        # OpenRLHF/OpenRLHF#1126 and hiyouga/LlamaFactory#7396: the watchdog's teardown lines, no "Timeout at NCCL work"
        text = ("[rank7]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631 PG status: last enqueued work: 460631, last completed work: 460630\n"
                "[rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.\n")
        assert "nccl-watchdog-timeout" not in ids(text) and "nccl-process-teardown" in ids(text)


class TestPythonExceptionSideWarning:
    """A side warning never leads: the exception the user's code raised does."""

    verdict = "python-exception"

    def test_control_a_deprecation_warning_does_not_lead_the_users_exception(self):
        # karpathy/nanoGPT#545's traceback under torch.distributed.launch's FutureWarning
        text = ("/usr/lib/python3/dist-packages/torch/distributed/launch.py:178: FutureWarning: The module torch.distributed.launch is deprecated\n"
                "Traceback (most recent call last):\n  File \"/home/zoe/nanoGPT/train.py\", line 253, in <module>\n"
                "    wandb.init(project=wandb_project)\nKeyError: 'wandb_project'\n")
        assert head(text) == "python-exception" and ids(text)[0] == "python-exception"

    def test_sibling_a_named_cause_beside_the_exception_leads(self):
        text = STOP_WAITING + BUILT.format(addr="", port="")
        assert head(text) == "launcher-master-addr-empty"


# bmaltais/kohya_ss#2163: torch's 10049 warning, then the traceback, cut inside init_process_group
KOHYA = case("dev6", "kohya-2163-windows-master-addr-10049")


class TestWindowsAddressInvalidLeads:
    """A connection attempt torch survives when the next address works: it leads only when the job fails at
    once, in a traceback that does not say what failed."""

    verdict = "windows-address-invalid"

    def test_sibling_the_failed_attempt_then_a_cut_traceback_leads(self):
        assert head(KOHYA) == "windows-address-invalid"
        assert found(KOHYA)["windows-address-invalid"].severity is Severity.ERROR

    def test_control_the_attempt_then_training_then_a_later_failure_does_not_lead(self):
        warning, traceback = KOHYA.split("\n", 2)[1], KOHYA.split("\n", 2)[2]
        steps = "".join(f"steps: {i}%| {i}/100 [00:{i:02d}<01:00, 1.20it/s, loss=0.{i}]\n" for i in range(10, 20))
        text = warning + "\n" + steps + traceback
        assert head(text) == "unrecognised-failure" and found(text)["windows-address-invalid"].severity is Severity.WARN


# -- 3. an exception line glued to another record --------------------------------------------------

# karpathy/nanoGPT#545, rank 0's traceback as torchrun printed it
NANOGPT_TB = ('[rank0]: Traceback (most recent call last):\n'
              '[rank0]:   File "/home/zoe/nanoGPT/train.py", line 253, in <module>\n'
              '[rank0]:     wandb.init(project=wandb_project, name=wandb_run_name, config=config, mode="offline")')
NANOGPT_EXC = "AttributeError: module 'wandb' has no attribute 'init'"
BAR = "Epoch 1:   0%|          | 0/126 [00:00<?, ?it/s]"  # Lightning-AI/pytorch-lightning#749


def title_of(text: str, finding_id: str) -> str:
    return found(text)[finding_id].title


class TestUnrecognisedFailureGlued:
    """The exception's line glued to the end of another record (the paste lost the line break) is read
    where it is glued: the same answer as with the break, never "the traceback is cut"."""

    verdict = "unrecognised-failure"

    def test_sibling_glued_to_the_quoted_source_line(self):
        whole = f"{NANOGPT_TB}\n[rank0]: {NANOGPT_EXC}\n"
        glued = f"{NANOGPT_TB}{NANOGPT_EXC}\n"
        assert "cut" not in title_of(glued, "unrecognised-failure")
        assert title_of(glued, "unrecognised-failure") == title_of(whole, "unrecognised-failure")

    def test_sibling_glued_to_a_progress_bar(self):
        whole = f"{NANOGPT_TB}\n[rank0]: {NANOGPT_EXC}\n"
        glued = f"{NANOGPT_TB}\n[rank0]: {BAR}{NANOGPT_EXC}\n"
        assert title_of(glued, "unrecognised-failure") == title_of(whole, "unrecognised-failure")

    def test_sibling_glued_after_another_ranks_line_keeps_its_own_rank(self):
        glued = f"{NANOGPT_TB}\n[rank1]: compiling the model... (takes a ~minute)[rank0]: {NANOGPT_EXC}\n"
        f = found(glued)["unrecognised-failure"]
        assert "cut" not in f.title and api.diagnose(glued).data["root_cause"]["rank"] == 0

    def test_control_a_traceback_really_cut_is_still_cut(self):
        assert "the traceback is cut before its last line" in title_of(NANOGPT_TB + "\n", "unrecognised-failure")

    def test_control_a_progress_bar_then_text_is_no_failure(self):
        text = f"{BAR}Saving model checkpoint to output/checkpoint-500\n"
        assert not any(f.severity is Severity.ERROR for f in api.diagnose(text).findings)

    def test_control_an_exception_class_is_not_split_inside_its_name(self):
        # a library's own class whose name holds another's ("...CustomRuntimeError"): one name, not two records
        text = f"{NANOGPT_TB}\n[rank0]: mylib.errors.CustomRuntimeError: config has no key 'init'\n"
        assert "CustomRuntimeError in your code" in title_of(text, "python-exception")


# -- 2. an error line the detector did not see -------------------------------------------------------

# huggingface/text-generation-inference#377: the router's tracing line at ERROR (cut by the paste)
TGI_ERROR = ("2023-05-30T10:39:23.156417Z ERROR HTTP request{otel.name=POST /generate http.client_ip= http.flavor=1.1 "
             "http.host=localhost:2345 http.method=POST http.route=/generate}:generate{parameters=GenerateParameters\n")
TGI_INFO = "2023-05-30T10:39:21.004211Z  INFO text_generation_router: router/src/main.rs:178: Connected\n"


class TestLogInconclusiveErrorLevel:
    verdict = "log-inconclusive"

    def test_sibling_an_rfc3339_time_then_error_is_an_error_line(self):
        f = found(TGI_INFO + TGI_ERROR)["log-inconclusive"]
        assert f.title.startswith("1 line(s) logged at error level") and "line 2" in str(f.evidence["error lines"])

    def test_control_the_same_shape_at_info_is_no_error_line(self):
        f = found(TGI_INFO)["log-inconclusive"]
        assert f.title.startswith("no failure in these")


class TestUnrecognisedFailureDetector:
    """Lines that show a run failed, in shapes the detector missed: each an honest unrecognised failure
    with its line, never "no line shows a failure"."""

    verdict = "unrecognised-failure"

    def test_sibling_windows_launcher_could_not_create_the_process(self):
        # meta-llama/llama#611: torchrun.exe on Windows, now read by its class (patterns/classes22d.py)
        assert head(case("dev6", "llama-611-windows-failed-to-create-process")) == "windows-launcher-failed"

    def test_control_a_pool_that_falls_back_is_no_launcher_failure(self):
        # the same words inside a message that goes on: a pool that falls back, not a program that never started
        text = "warning: failed to create process pool for tokenization, falling back to one process\n"
        assert not any(f.severity is Severity.ERROR for f in api.diagnose(text).findings)

    def test_sibling_argparse_error_glued_to_its_usage(self):
        # huggingface/autotrain-advanced#157: a sub-command's parser, its usage and error on one line
        assert head(case("dev6", "autotrain-157-cli-unrecognized-arguments")) == "script-arguments-refused"

    def test_control_a_usage_line_alone_is_no_failure(self):
        assert "unrecognised-failure" not in ids("usage: autotrain <command> [<args>]\n")

    def test_sibling_ipython_header_with_its_padding_collapsed(self):
        # microsoft/unilm#341: "RuntimeErrorTraceback (most recent call last)" in a notebook paste
        f = found(case("dev6", "unilm-341-layoutlmv2-backbone-notebook-cut"))["unrecognised-failure"]
        assert f.title.startswith("unrecognised failure: RuntimeError")

    def test_control_pythons_own_header_glued_to_a_word_is_not_ipythons(self):
        text = 'loading weightsTraceback (most recent call last):\n  File "/home/u/train.py", line 3, in <module>\n    main()\n'
        assert "RuntimeError" not in " ".join(f.title for f in api.diagnose(text).findings)


# -- 4. a GPU tool's snapshot: memory in use is not a leak the snapshot cannot decide -----------------

# NVIDIA/DALI#3396's table: GPU 0 holds DALI's pool, the paste cut inside the process list's header
DALI = case("dev4", "dali-3396-nvidia-smi-gpu0-memory-held-healthy")
# unslothai/unsloth#3471: a DGX Spark (GB10, unified memory): Memory-Usage reads "Not Supported"
GB10_ROW = "| N/A   41C    P8              4W /  N/A  | Not Supported          |      1%      Default |"
GB10 = case("dev3", "unsloth-3471-nvidia-smi-gb10-dgx-spark")


class TestGpuMemoryWithoutProcessUndecided:
    verdict = "gpu-memory-without-process"

    def test_control_a_process_list_cut_in_the_paste_is_not_judged(self):
        assert "gpu-memory-without-process" not in ids(DALI)

    def test_sibling_no_process_listed_says_what_decides_and_claims_no_leak(self):
        # DALI#3396's table with its process list read to the end: "No running processes found"
        text = DALI.split("| Processes:")[0] + (
            "| Processes:                                                                  |\n"
            "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n"
            "|        ID   ID                                                   Usage      |\n"
            "|=============================================================================|\n"
            "|  No running processes found                                                 |\n"
            "+-----------------------------------------------------------------------------+\n")
        f = found(text)["gpu-memory-without-process"]
        assert f.severity is Severity.INFO and "does not decide" in f.why and "is leaked." not in f.why
        assert f.fix.startswith("nvidia-smi --query-compute-apps") and "kill" not in f.fix

    def test_control_not_supported_memory_is_unknown_not_held(self):
        assert {i for i in ids(GB10) if found(GB10)[i].severity is not Severity.INFO} == {"log-inconclusive"}

    def test_sibling_err_beside_not_supported_memory_is_still_read(self):
        text = GB10.replace(GB10_ROW, GB10_ROW.replace("      1%      Default", "    ERR!      Default"))
        f = found(text)["gpu-reading-failed"]
        assert "utilisation" in f.title
