"""Controls and siblings for `program-runs-on-cpu` (issue 35, diagA30): the program's own line that it runs without the GPU,
as the answer of a thread whose failure is a GPU left unused and whose log shows no failure and no end
(knowledge/runs_on_cpu.py). The sample's cases are the logs as pasted; the other lines are real ones from the threads
named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import ExitCode, report_exit
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case

VERDICT = "program-runs-on-cpu"
# a short run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"
ONNX_CPU = "Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}\n"  # s0md3v/roop#128


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def after_answer(text: str, id: str = "gpus-left-unused"):
    """The finding `id` under the answer that leads: `program-runs-on-cpu`, which quotes the line `id` read."""
    findings = api.diagnose(text).findings
    assert findings[0].id == VERDICT, [f.id for f in findings]
    return next(f for f in findings if f.id == id)


def head(text: str):
    report = api.diagnose(text)
    return report.findings[0], report_exit(report)


class TestTheProgramsLineLeads:
    """Siblings: a thread whose failure is the GPU left unused, and whose log holds only the program's line about it."""

    def test_ollamas_cpu_runner_beside_a_title_that_says_so(self):
        # heldout29b ollama-8532: "# ollama only using cpu even with gpu found", runners=[cpu]
        f, code = head(case("heldout29b", "ollama-8532-builtin-cpu-runner-only"))
        assert f.id == VERDICT and f.severity is Severity.WARN and code == ExitCode.PROBLEM
        assert "runners=[cpu]" in f.title and f.evidence["finding"] == "gpu-backend-not-built"
        assert f.evidence["the reporter says"].startswith("line 4:") and "Ollama" in f.fix

    def test_onnxruntimes_cpu_providers_keep_the_line_that_mentions_an_error(self):
        # heldout29b roop-128: "# roop use CPU, not GPU render???"; a later comment's "EP Error" line is kept as evidence
        f, _ = head(case("heldout29b", "roop-128-insightface-providers-windows"))
        assert f.id == VERDICT and "line 8: Applied providers" in f.title and "onnxruntime-gpu" in f.fix
        assert f.evidence["lines that speak of an error"][0].startswith("line 22: EP Error")
        assert "log-inconclusive" not in ids(case("heldout29b", "roop-128-insightface-providers-windows"))

    def test_sherpa_onnx_says_the_gpu_was_asked_for(self):
        # heldout29b sherpa-onnx-1534: no reporter's sentence in English; the line itself says provider=cuda was refused
        f, _ = head(case("heldout29b", "sherpa-onnx-1534-vits-cuda-fallback-cpu"))
        assert f.id == VERDICT and "SHERPA_ONNX_ENABLE_GPU=ON" in f.title and "its own line says the GPU was asked for" in f.title
        f, _ = head(case("heldout29b", "sherpa-onnx-440-whisper-server-provider-cpu"))
        assert f.id == VERDICT and "-DSHERPA_ONNX_ENABLE_GPU=ON" in f.fix

    def test_llama_cpp_offloads_no_layer_under_a_title_that_says_so(self):
        # heldout29b privategpt-colab-3: "# Llamacpp not offloading on GPU", offloaded 0/35 layers
        f, _ = head(case("heldout29b", "privategpt-colab-3-llamacpp-layer-offload"))
        assert f.id == VERDICT and "offloaded 0/35 layers to GPU" in f.title and "-ngl" in f.fix

    def test_fewer_processes_than_gpus(self):
        # heldout20 accelerate-197: accelerate's "Num processes: 1" where the reporter says one GPU only works
        f, _ = head(case("heldout20", "accelerate-197-python-launch-state"))
        assert f.id == VERDICT and f.title.startswith("the program says it uses fewer GPUs") and "accelerate launch" in f.fix

    def test_the_programs_device_lines_in_their_words(self):
        lines = [
            ">> Using device_type CPU     <-----------------------------",  # invoke-ai/InvokeAI#1763, the reporter's arrow after it
            "2022-10-21 12:25:35: Server: detect_adapter.py: use_CUDA:    False in Server",  # codeproject/CodeProject.AI-Server#26
            "ℹ Using CPU",  # explosion/spaCy#7120 (spacy train)
            "[ctranslate2] [thread 2] [info] Loaded model whisper-small-ct2/ on device cpu:0",  # SYSTRAN/faster-whisper#9
            "whisper_backend_init_gpu: no GPU found",  # ggml-org/whisper.cpp#3607
        ]
        for line in lines:
            text = f"# the job is not using my GPU\nGPU: NVIDIA GeForce RTX 3060\n{line}\nloading model\n"
            f, code = head(text)
            assert f.id == VERDICT and line.split()[-1] in f.title and code == ExitCode.PROBLEM, line


class TestControls:
    """The line where it is no answer: no thread, the CPU chosen, the run ended, the device a config, a GPU run."""

    def test_control_the_same_line_in_a_users_own_log(self):
        # no thread's title: a log of the user's own has no thread's failure (a CPU node's job prints the same)
        text = "python infer.py --device cuda\n" + ONNX_CPU + "find model: det_10g.onnx detection [1, 3, '?', '?']\n"
        assert VERDICT not in ids(text) and "log-inconclusive" in ids(text)

    def test_control_a_thread_whose_job_chose_the_cpu(self):
        text = "# tests are slow\npytest tests/ --device cpu\nUsing cpu device\ntest_model.py::test_forward PASSED\n"
        assert VERDICT not in ids(text)

    def test_control_a_cpu_run_that_ends(self):
        # the run ended: the statement stays the warning beside its end, never the failure of the run
        text = "# GPU not used\nNVIDIA-SMI 535.54\nUsing cpu device\n" + TRAINED
        assert VERDICT not in ids(text)

    def test_control_a_config_dump_then_the_gpu(self):
        # 'device: cpu' in a config dump, then the run's own line on the GPU (the latest device line decides)
        text = ("# training is slow with 2 GPUs\ndevice: cpu\nbatch_size: 32\n"
                "Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: True\nEpoch 1/3 - step 100 - loss: 0.812\n")
        assert VERDICT not in ids(text)

    def test_control_a_cpu_run_then_a_gpu_run_in_one_file(self):
        # heldout24w riddima15benjamin: "- INFO - Using CPU", then a later run's "- INFO - Using GPU: NVIDIA GeForce RTX 3050 ..."
        text = ("# training is slow\n2025-10-07 22:51:14,431 - INFO - Using CPU\n2025-10-07 22:51:15,001 - INFO - step 1\n"
                "NVIDIA-SMI 535.54\n2025-10-07 22:59:56,622 - INFO - Using GPU: NVIDIA GeForce RTX 3050 6GB Laptop GPU\n")
        assert VERDICT not in ids(text) and "gpus-left-unused" not in ids(text)

    def test_control_a_gloo_cpu_group_beside_a_gpu_run(self):
        text = ("# slow training\n[I ProcessGroupGloo.cpp:750] Gloo connectFullMesh: rank 0 world size 2\n"
                "Using cuda device\nEpoch 1/3 - step 100 - loss: 0.812\n")
        assert VERDICT not in ids(text)

    def test_control_no_words_of_the_gpu_left_unused(self):
        # a thread, the program's providers, and nothing that says the GPU was meant (insightface prints them on any machine)
        text = "# face swap is slow on long videos\n" + ONNX_CPU + "find model: det_10g.onnx detection [1, 3, '?', '?']\n"
        assert VERDICT not in ids(text)


class TestSiblingsWithAnotherAnswer:
    def test_sibling_an_error_beside_the_cpu_line_keeps_the_error(self):
        text = ("# roop use CPU, not GPU\n" + ONNX_CPU + "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n"
                "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
        report = api.diagnose(text)
        assert report.findings[0].severity is Severity.ERROR and VERDICT not in [f.id for f in report.findings]

    def test_sibling_the_reporters_hang_leads(self):
        text = "# ollama not using GPU\n" + ONNX_CPU + "But when I run it, it hangs and nothing happens.\n"
        assert VERDICT not in ids(text) and "log-said-hang" in ids(text)

    def test_sibling_error_level_lines_stay_undecided(self):
        # lines the log wrote at error level may be the failure: the undecided answer keeps them
        text = "# roop use CPU, not GPU\n" + ONNX_CPU + "ERROR:root:request failed with status 500\n"
        assert VERDICT not in ids(text)
