"""Controls and siblings for the errors a paste's own words report (issue 35, heldout22's no-error-line cases 18, 33 and 44
and its wrong case 28): a thread's title or a person's sentence that quotes the program's message is read by the same rules
as a log line where the log shows no failure of its own, and its finding says where it stands (knowledge/reported.py); a
message no rule reads is named as reported (`log-inconclusive`, case `reported`); a supposition in prose is no evidence;
the log's own failure stays the answer beside a title's. The sample's cases are the threads as pasted."""

from __future__ import annotations

from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a thread's frame around a paste (MIC-DKFZ/nnUNet#856's header and byline; the launcher banner of its log)
FRAME = "MIC-DKFZ/nnUNet · issue #856 · closed · Python\n{title}\n\nChibisukeDragon · description · 2021-11-16\n{said}\n\n"
BANNER = ("The module torch.distributed.launch is deprecated and going to be removed in future.Migrate to torch.distributed.run\n"
          "*****************************************\n")


def thread(title: str, said: str) -> str:
    """A thread's paste: its frame, the reporter's sentence, a log of launcher banners only."""
    return FRAME.format(title=title, said=said) + BANNER


class TestScriptArgumentsRefused:
    verdict = "script-arguments-refused"

    def test_sibling_the_title_quotes_argparse_above_its_usage(self):
        # Oneflow-Inc/one-glm#25: "# 报错：finetune_glm.py: error: unrecognized arguments: --deepspeed_config", the usage text below
        f = head(case("heldout20", "oneglm-25-finetune-usage"))
        assert f.id == "script-arguments-refused" and f.severity is Severity.ERROR
        assert f.evidence["reported"].startswith("line 3, the thread's title")

    def test_control_a_title_that_asks_is_no_report(self):
        title = "# Is `finetune_glm.py: error: unrecognized arguments: --deepspeed_config` expected with the GLM script?"
        assert "script-arguments-refused" not in found(thread(title, "I use the official script."))


class TestLibraryApiMismatch:
    verdict = "library-api-mismatch"

    def test_sibling_a_sentence_quotes_the_refused_argument(self):
        # microsoft/LLaVA-Med#82: "But after running it we got an error: `TypeError: LlavaMistralForCausalLM.__init__() got ..."
        f = head(case("heldout19", "llava-med-82-model-worker-num-gpus"))
        assert f.id == "library-api-mismatch" and "a sentence of the reporter's" in f.evidence["reported"]

    def test_control_a_supposition_is_no_evidence(self):
        said = "You might get `TypeError: LlavaMistralForCausalLM.__init__() got an unexpected keyword argument 'num_gpus'` here."
        assert head(thread("# num gpus", said)).id == "log-inconclusive"


class TestCudaOom:
    verdict = "cuda-oom"

    def test_control_a_commenters_hypothetical_line_is_no_headline(self):
        # microsoft/Swin-Transformer#20: 'you might meet an error "CUDA out of memory".', then an import-time traceback, cut
        fs = found(case("heldout22", "swin-transformer-20-windows-launch-import"))
        assert "cuda-oom" not in fs and head(case("heldout22", "swin-transformer-20-windows-launch-import")).severity is Severity.ERROR

    def test_sibling_the_reporter_says_they_get_it(self):
        said = 'When I use 4 GPUs I get "CUDA out of memory. Tried to allocate 2.00 GiB".'
        f = head(thread("# training on 4 gpus", said))
        assert f.id == "cuda-oom"


class TestParallelLayoutRefused:
    verdict = "parallel-layout-refused"

    def test_sibling_the_logs_later_error_leads_the_titles(self):
        # NVIDIA/TensorRT-LLM#1950: the title's ImportError (solved by a version change), then the run's mpiSize RuntimeError
        assert head(case("heldout19", "tensorrt-llm-1950-llama2-13b-2gpu-run")).id == "parallel-layout-refused"

    def test_control_the_title_alone(self):
        title = "# LLAMA checkpoint ImportError: undefined symbol"
        assert "parallel-layout-refused" not in found(thread(title, "It fails at import."))


class TestLogInconclusive:
    verdict = "log-inconclusive"

    def test_sibling_prose_quotes_a_message_no_rule_reads(self):
        # MIC-DKFZ/nnUNet#856: 'I will get "negative dimensions are not allowed".', the log cut after the launcher's banners
        f = head(case("heldout22", "nnunet-856-unetpp-ddp-4proc-launch"))
        assert f.id == "log-inconclusive" and "negative dimensions are not allowed" in f.title
        assert f.evidence["reported"][0].startswith("line 8, a sentence of the reporter's")
        assert "grep -n -F" in f.fix

    def test_sibling_the_title_and_a_sentence_quote_it(self):
        # ggml-org/llama.cpp#6184: the title and "still reports `ggml_cuda_init: no CUDA devices found, ...`:" above the metadata
        f = head(case("heldout22", "llama-cpp-6184-cublas-init-log"))
        assert "no CUDA devices found" in f.title and len(f.evidence["reported"]) == 2

    def test_control_the_logs_own_error_leads_a_quoted_message(self):
        # the title's message (ggml-org/llama.cpp#6184) is not read where the log shows a failure of its own
        text = thread("# ggml_init_cublas: no CUDA devices found, CUDA will be disabled", "I get this after a reinstall:")
        text += "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        assert head(text).id == "cuda-oom" and "log-inconclusive" not in found(text)

    def test_control_the_logs_own_line_of_the_message_is_no_report(self):
        # lightvector/KataGo#968: the title's "Server returned error 400: ..." stands again in the log's ERROR line
        f = head(case("heldout14", "katago-968-opencl-distributed-version-not-enabled"))
        assert f.id == "log-inconclusive" and "reported" not in f.evidence and "error lines" in f.evidence

    def test_control_the_logs_error_level_lines_lead_a_quoted_message(self):
        # facebookresearch/habitat-sim#504: the title quotes a build error; the log's own E lines (a scene file not loaded) lead
        f = head(case("heldout11", "habitat-sim-504-ddppo-gibson-scene-load-fail"))
        assert "error lines" in f.evidence and f.evidence["reported"][0].startswith("line 3, the thread's title")

    def test_control_a_quoted_command_is_no_report(self):
        said = "I run `python -m torch.distributed.launch --nproc_per_node=4 train.py` and nothing else is printed."
        f = head(thread("# training on 4 gpus", said))
        assert f.id == "log-inconclusive" and "reported" not in f.evidence
