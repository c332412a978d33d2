"""Controls and siblings for the line that states the failure (issue 35, the no-error-line rows of the parts retired in the
twenty-sixth session): a command-line tool's own lower-case error line and systemd's lines for a service that is missing or
did not start (knowledge/evidence.py "toolerror", "systemd"), the one line a reporter's sentence introduces as the error
(knowledge/reported.py "introduced"), and the reporter's own words that the run ran out of GPU memory
(knowledge/said_oom.py, `log-said-oom`). The sample's cases are the logs as pasted; the other lines are real ones from the
threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import head

THREAD = "# source: https://github.com/o/p/issues/1\no/p \u00b7 issue #1 \u00b7 open \u00b7 Python\n# {title}\n\nme \u00b7 description \u00b7 2024-01-01\n"
# the start of a run as nanoGPT-like scripts print it (no failure, no end)
STEPS = "step 10/5000 train_loss 4.12 time 512ms\nstep 20/5000 train_loss 3.97 time 508ms\n"


def kind_of(text: str) -> str:
    """The evidence kind of the unrecognised failure the answer leads with ('' when it leads with another)."""
    f = head(text)
    return str(f.evidence.get("kind", "")) if f.id == "unrecognised-failure" else ""


class TestToolErrorLine:
    """A Go or Rust command-line tool's own error line, lower-case (evidence 'toolerror')."""

    verdict = "unrecognised-failure"

    def test_sibling_a_tools_error_line_as_its_last_words(self):
        # whisper.cpp's own line (ChetanXpro/nodejs-whisper#203's words) where the tool stops on it: nothing of it follows
        assert kind_of(THREAD.format(title="transcribe on the GPU") + "```\n$ whisper-cli -m models/ggml-base.en.bin -f true\n"
                       "error: input file not found 'true'\n```\n") == "toolerror"

    def test_control_a_tool_that_went_on_past_its_error_line(self):
        # ChetanXpro/nodejs-whisper#203 (heldout25, the auditor's one worse answer at the merge): whisper.cpp's "error: input
        # file not found 'true'" for one argument, then the model loads on the GPU line after line; the thread is about speed
        answer = api.diagnose(text=case("heldout25", "nodejs-whisper-203-gtx1660-cuda-run"))
        assert "unrecognised-failure" not in [f.id for f in answer.findings]
        assert not [f for f in answer.findings if f.severity is Severity.ERROR]

    def test_sibling_clap_refusing_a_value(self):
        # huggingface/text-generation-inference#1451: the launcher's clap parser, the run not started again
        assert kind_of("$ text-generation-launcher --env\nerror: invalid value 'True' for '--disable-custom-kernels'\n"
                       "  [possible values: true, false]\n") in ("toolerror", "")

    def test_sibling_a_title_that_quotes_it_beside_no_error_of_the_log(self):
        # peci1/nvidia-htop#9 (heldout13): ps's "error: list of process IDs must follow -p" in the title, nvidia-smi below
        assert kind_of(case("heldout13", "nvidia-htop-9-container-nvidia-smi")) == "toolerror"

    def test_control_srun_cancelling_after_the_run(self):
        # dev7w FalsoMoralista/FGDCC: srun's own line as the job was cancelled after its run (a not-failed log)
        assert "unrecognised-failure" not in [f.id for f in api.diagnose("srun: error: hgx: task 0: Terminated\n").findings]

    def test_control_a_field_and_a_metric(self):
        for line in ("error: None\n", "Error: 0.0123\n", "error: none of the above\n", "  -e, --error-file FILE    where to write the error\n"):
            assert head(STEPS + line).id != "unrecognised-failure", line

    def test_control_a_tool_that_goes_on(self):
        assert head(STEPS + "error: retrying in 5 s\n").id != "unrecognised-failure"


class TestStatusFieldError:
    """A tool's status field whose value is an error (evidence 'status')."""

    verdict = "unrecognised-failure"

    def test_sibling_nvml_not_supported(self):
        # Akisoft41/py-nvtool#2 (heldout23): the tool's status line above nvidia-smi's table
        f = head(case("heldout23", "py-nvtool-2-laptop-gpu-rig-smi"))
        assert f.id == "unrecognised-failure" and f.evidence["kind"] == "status"

    def test_control_a_metric_or_a_count_named_error(self):
        for line in ("status: error_rate=0.01\n", "Status: Error 0\n", "STATUS: error: none\n"):
            assert head(STEPS + line).id != "unrecognised-failure", line


class TestSystemdUnitFailed:
    """systemd's lines for a service that is missing or did not start (evidence 'systemd')."""

    verdict = "unrecognised-failure"

    def test_sibling_a_unit_not_found_above_nvidia_smi(self):
        # community-scripts/ProxmoxVED#2047 (heldout25): the install never wrote vllm.service
        f = head(case("heldout25", "proxmoxved-2047-lxc-blackwell-smi"))
        assert f.id == "unrecognised-failure" and f.evidence["kind"] == "systemd"

    def test_sibling_slurmd_fatal_keeps_its_own_line(self):
        # BiBiServ/bibigrid#705: slurmd's fatal line is the cause; systemd's "Failed to start" after it is its consequence
        log = ("Feb 02 09:52:07 bibigrid-worker slurmd[12912]: slurmd: fatal: can't stat gres.conf file /dev/nvidia0: No such file or directory\n"
               "Feb 02 09:52:07 bibigrid-worker systemd[1]: Failed to start Slurm node daemon.\n")
        assert head(log).severity is Severity.ERROR

    def test_control_a_service_that_started(self):
        log = ("Feb 02 09:52:07 node systemd[1]: Started NVIDIA Persistence Daemon.\n"
               "Feb 02 09:52:09 node systemd[1]: nvidia-persistenced.service: Deactivated successfully.\n"
               "nvidia-fabricmanager.service: Main process exited, code=exited, status=0/SUCCESS\n-- No entries --\n")
        assert "unrecognised-failure" not in [f.id for f in api.diagnose(log).findings]

    def test_control_a_persons_words(self):
        assert head(STEPS + "Failed to start training, see below\n").id != "unrecognised-failure"


class TestIntroducedLine:
    """The one line a reporter's sentence introduces as the error (knowledge/reported.py 'introduced')."""

    verdict = "unrecognised-failure"

    def test_sibling_a_backticked_line_under_the_sentence(self):
        # deepspeedai/DeepSpeed#3624 (heldout25): no word of the line says "error"; the sentence above it does
        f = head(case("heldout25", "deepspeed-3624-hostfile-include-slots"))
        assert f.id == "unrecognised-failure" and f.evidence["kind"] == "introduced"
        assert "No slot 2 specificied on host work1" in f.title

    def test_sibling_a_chinese_sentence(self):
        # zai-org/ChatGLM3#919 (heldout25): "... reported a line that configs/ds_zero_.json was not saved"
        f = head(case("heldout25", "chatglm3-919-two-gpu-lora-finetune"))
        assert f.evidence.get("kind") == "introduced" and "has not been saved" in f.title

    def test_control_a_block_under_the_sentence_is_the_log(self):
        # a run's log pasted under "I get the following error:": its lines are read one by one, none of them is introduced
        log = THREAD.format(title="training problem") + "When I run it, I get the following error:\n" + STEPS + "\nany idea?\n"
        assert head(log).id != "unrecognised-failure"

    def test_control_a_hedged_sentence(self):
        log = (THREAD.format(title="question") + "A wrong hostfile might give the error\n`No slot 2 specificied on host work1`\n"
               "what should I change?\n")
        assert head(log).id != "unrecognised-failure"

    def test_control_a_chinese_sentence_under_it_is_the_reporters(self):
        log = THREAD.format(title="多卡训练问题") + "多卡训练时报错\n后来发现是数据路径的问题，已经改好了，谢谢\n\n"
        assert head(log).id != "unrecognised-failure"

    def test_control_the_next_sentence_is_no_message(self):
        # Kaisa-Lab/adaptive-style-transfer#3 (heldout14): the line after "I got this error:" is the reporter's own
        log = (THREAD.format(title="train on two gpus") + "but when I tried to train on my model, I got this error:\n"
               "I don't have any experience in coding, I'm just interested in style transfer.\n\n")
        assert head(log).id != "unrecognised-failure"


class TestLogSaidOom:
    """The reporter's words that the run ran out of GPU memory, beside a log that does not show it (`log-said-oom`)."""

    verdict = "log-said-oom"

    def test_sibling_a_chinese_title_above_nvidia_smi(self):
        # manycore-research/SpatialLM#103 (heldout25): "the GPU memory burst"
        f = head(case("heldout25", "spatiallm-103-three-a100-smi"))
        assert f.id == "log-said-oom" and f.severity is Severity.WARN
        assert not api.diagnose(case("heldout25", "spatiallm-103-three-a100-smi")).ok

    def test_sibling_a_sentence_above_a_cut_traceback(self):
        # KellerJordan/modded-nanogpt#112 (heldout25): "I got OOM error", the traceback cut at backward()
        found = api.diagnose(case("heldout25", "modded-nanogpt-112-8xh200-run")).findings
        assert [f.id for f in found[:2]] == ["log-said-oom", "unrecognised-failure"]

    def test_sibling_the_runs_own_line_is_cuda_oom(self):
        log = THREAD.format(title="I got OOM error on 8 GPUs") + "```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```\n"
        assert head(log).id == "cuda-oom"

    def test_control_words_that_do_not_say_it_happened(self):
        for title in ("CUDA OOM?", "CUDA out of memory (resolved) and method to make RotatE run faster", "how to avoid OOM with 4 GPUs",
                      "如何避免爆显存", "the job was killed by the OOM killer", "I ran out of RAM while loading"):
            assert head(THREAD.format(title=title) + STEPS).id != "log-said-oom", title

    def test_control_a_programs_line(self):
        # huggingface/lerobot#1234 (heldout4): accelerate's INFO line about a buffer "to avoid OOM"
        log = (THREAD.format(title="smolvla stops") + "INFO 2025-06-09 11:25:53 modeling.py:991 We will use 90% of the memory on "
               "device 0 for storing the model, and 10% for the buffer to avoid OOM\n" + STEPS)
        assert head(log).id != "log-said-oom"


DMON = "# dcgmi dmon -e 1002,1003\n#Entity    SMACT         SMOCC\nID\n{rows}"


class TestDcgmDmonFieldNotRead:
    """A `dcgmi dmon` field that reads N/A on every GPU in every row (gpu-dcgm-failed case dmon)."""

    verdict = "gpu-dcgm-failed"

    def test_sibling_smact_na_on_eight_gpus(self):
        # NVIDIA/DCGM#244 (heldout25): SMACT sampled alone, N/A on all 8 GPUs
        f = head(case("heldout25", "dcgm-244-8gpu-dmon-smact"))
        assert f.id == "gpu-dcgm-failed" and f.severity is Severity.WARN and "SMACT" in f.title

    def test_control_values_read(self):
        rows = "".join(f"GPU {g}      0.{g}12         0.034\n" for g in range(2)) * 2
        assert "gpu-dcgm-failed" not in [f.id for f in api.diagnose(DMON.format(rows=rows)).findings]

    def test_control_one_late_sample(self):
        rows = "GPU 0      N/A           N/A\n" + "".join(f"GPU {g}      0.{g}12         0.034\n" for g in range(2))
        assert "gpu-dcgm-failed" not in [f.id for f in api.diagnose(DMON.format(rows=rows)).findings]
