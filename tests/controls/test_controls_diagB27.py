"""Controls and siblings for the failures said without the word error (issue 35, the no-error-line rows of the parts
retired in the twenty-sixth session): a Windows code page that cannot write the program's text (`console-encoding`,
knowledge/patterns/classes27b.py), the GPU wanted and the work gone to the CPU (onnxruntime's CUDA provider not loaded,
`onnxruntime-cuda-provider-failed`; a program's own line that it found no GPU and goes on on the CPU, `gpus-left-unused`
case `cpu-fallback`), torch's no-kernel warning as a paste wraps or translates it (`cuda-no-kernel-image`), and the remedy
a warning or an error-level line states where no rule names the failure (`log-inconclusive`'s fix, knowledge/remedy.py).
The sample's cases are the logs as pasted; the other lines are real ones from the threads named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a Keras-like run's progress (no failure, no end)
EPOCHS = "".join(f"Epoch {i}/20 - loss: {0.9 - i * 0.01:.4f} - accuracy: 0.{70 + i}\n" for i in range(1, 6))
LATER = "".join(f"Epoch {i}/20 - loss: {0.9 - i * 0.01:.4f} - accuracy: 0.{70 + i}\n" for i in range(6, 21))
# Python's encode frame on Windows (heldout26w aryansh33-models-deepfake-hybrids, PowerShell's redirection: cp1252)
CP1252 = ('  File "C:\\Program Files\\Python310\\lib\\encodings\\cp1252.py", line 19, in encode\n'
          "    return codecs.charmap_encode(input,self.errors,encoding_table)[0]\n")
ARROW = "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2192' in position 30: character maps to <undefined>\n"


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestConsoleEncoding:
    verdict = "console-encoding"

    def test_sibling_a_print_of_an_emoji_in_a_redirected_run(self):
        # heldout26w apologizesss/ai-gold-bot: the training script's first print, cp874 (a Thai Windows)
        f = head(case("heldout26w", "apologizesss-ai-gold-bot-training-log-txt"))
        assert f.id == "console-encoding" and f.severity is Severity.ERROR
        assert "PYTHONUTF8=1" in f.fix and "-X utf8" in f.fix and f.evidence["codec"] == "charmap"

    def test_sibling_the_error_caught_and_logged_as_the_last_line(self):
        # heldout26w amk1912/weather-prediction: the script's own handler logs it, and the run ends there
        text = EPOCHS + ("Error in training script: 'charmap' codec can't encode character '\\u2713' in position 0: "
                         "character maps to <undefined>\n")
        assert head(text).id == "console-encoding"

    def test_sibling_a_print_in_the_users_code(self):
        text = EPOCHS + ('Traceback (most recent call last):\n  File "C:\\DF Hybrid models\\ViTxResNet504ds.py", line 410, in main\n'
                         '    print(f"  [CKPT] New best AUC: {best_auc:.4f} \\u2192 best_by_auc.pt")\n' + CP1252 + ARROW)
        assert errors(text) == ["console-encoding"]

    def test_control_a_logging_error_the_run_went_on_from(self):
        # logging's own report of a handler that could not write a record: the program goes on (a check mark in a log
        # message, cp1252); nothing after it fails, and the run ends
        logged = ('--- Logging error ---\nTraceback (most recent call last):\n  File "C:\\Python311\\Lib\\logging\\__init__.py", '
                  'line 1113, in emit\n    stream.write(msg + self.terminator)\n' + CP1252 +
                  "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2705' in position 33: character maps to <undefined>\n"
                  'Call stack:\n  File "C:\\work\\train.py", line 210, in <module>\n    logger.info(f"\\u2705 checkpoint saved")\n'
                  "Message: '\\u2705 checkpoint saved'\nArguments: ()\n")
        assert errors(EPOCHS + logged + LATER + "Training complete. Best accuracy: 0.93\n") == []

    def test_control_other_codecs_are_other_failures(self):
        # 'ascii' (a C locale, or the program's own encode), 'latin-1' (an HTTP header): not the Windows code page
        for line in ("UnicodeEncodeError: 'ascii' codec can't encode character '\\u2019' in position 5: ordinal not in range(128)\n",
                     "UnicodeEncodeError: 'latin-1' codec can't encode character '\\u2026' in position 30: ordinal not in range(256)\n"):
            assert "console-encoding" not in found(EPOCHS + line), line


class TestOnnxruntimeCudaProviderFailed:
    verdict = "onnxruntime-cuda-provider-failed"

    def test_sibling_cuda_path_set_but_cuda_not_loaded(self):
        # facefusion/facefusion#294 (heldout26): the provider's DLL could not load, onnxruntime fell back to the CPU
        f = found(case("heldout26", "facefusion-294-windows-cuda-run"))["onnxruntime-cuda-provider-failed"]
        assert f.severity is Severity.WARN and "PATH" in f.fix

    def test_sibling_quoted_in_the_title_and_the_reporters_sentence(self):
        # facefusion/facefusion#469 (heldout26): the message without its "EP Error", in the title and in a sentence
        assert "onnxruntime-cuda-provider-failed" in found(case("heldout26", "facefusion-469-cuda-path-provider"))

    def test_sibling_the_provider_library_not_loaded_on_linux(self):
        line = ("[E:onnxruntime:Default, provider_bridge_ort.cc:1744 TryGetProviderInfo_CUDA] Failed to load library "
                "libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open shared object file: No such file or directory\n")
        assert "onnxruntime-cuda-provider-failed" in found(line)

    def test_control_the_cuda_provider_applied(self):
        # hacksider/Deep-Live-Cam#1394 (heldout26): insightface's line with the CUDA provider in charge
        assert "onnxruntime-cuda-provider-failed" not in found(case("heldout26", "Deep-Live-Cam-1394-cuda-provider-run"))

    def test_control_the_cpu_provider_asked_for(self):
        text = ("python run.py --execution-provider cpu\nApplied providers: ['CPUExecutionProvider'], with options: "
                "{'CPUExecutionProvider': {}}\nAvailable providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n")
        assert "onnxruntime-cuda-provider-failed" not in found(text)


class TestCudaNoKernelImageWrapped:
    verdict = "cuda-no-kernel-image"

    def test_sibling_the_warning_hard_wrapped(self):
        # guoqincode/Open-AnimateAnyone#114 (heldout26b): torch's warning broken over four lines by the paste
        assert head(case("heldout26b", "open-animateanyone-114-h100-training")).id == "cuda-no-kernel-image"

    def test_sibling_a_translated_paste(self):
        # kijai/ComfyUI-Hunyuan3DWrapper#20 (heldout26): ComfyUI's exception as the reporter's translated page shows it
        assert head(case("heldout26", "ComfyUI-Hunyuan3DWrapper-20-render-node")).id == "cuda-no-kernel-image"

    def test_control_a_capability_in_other_words(self):
        assert "cuda-no-kernel-image" not in found(EPOCHS + "Your GPU sm_90 is not compatible with this version of the kernels: rebuild them\n")

    def test_sibling_a_cpu_only_build_keeps_its_own(self):
        # ultralytics/ultralytics#227's CPU build beside a GPU: the build, not the architecture
        text = "Ultralytics YOLOv8.0.3 Python-3.10.9 torch-1.13.1+cpu CPU\nNVIDIA GeForce RTX 3060\nUsing cpu device\n"
        assert "cuda-no-kernel-image" not in found(text)


class TestGpusLeftUnusedProgramFallback:
    verdict = "gpus-left-unused"

    def test_sibling_a_program_that_found_no_gpu_and_went_on_on_the_cpu(self):
        # IAHispano/Applio#249 (heldout26): the GTX 10 card in the title, the program's own fallback line
        f = head(case("heldout26", "Applio-249-gtx10-gpu-not-detected"))
        assert f.id == "gpus-left-unused" and f.severity is Severity.WARN and "fell back to the CPU" in f.title
        assert "torch.cuda.is_available()" in f.fix and "get_arch_list" in f.fix  # what decides: a CPU build, the driver, a library, the arch

    def test_sibling_jax_keeps_its_own_fix(self):
        smi = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        jax = "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
        assert "jax[cuda12]" in found(smi + jax)["gpus-left-unused"].fix

    def test_sibling_a_cpu_only_torch_shown_keeps_its_case(self):
        # the same fallback line beside a torch that is a CPU build (ultralytics/ultralytics#227's version): the build decides
        text = ("NVIDIA GeForce RTX 3060\ntorch 1.13.1+cpu\n2024-05-01 10:00:00 - WARNING - CUDA is not available, using CPU\n" + EPOCHS)
        f = found(text)["gpus-left-unused"]
        assert "CPU-only build" in f.title and "download.pytorch.org/whl/cu" in f.fix and f.severity is Severity.WARN

    def test_sibling_no_kernel_image_keeps_the_headline(self):
        # torch's warning for a GPU its build has no kernels for (heldout26b stable-diffusion-k8s-10's line), then the program's fallback
        text = ("NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible with the current PyTorch installation.\n"
                "GPU not detected, reverting to CPU (not recommended)\n")
        assert head(text).id == "cuda-no-kernel-image"

    def test_control_a_fallback_that_does_not_say_the_gpu_is_missing(self):
        # heldout26w akash-338 (not failed): its own pre-flight found no PyTorch, "Falling back to CPU mode." on a line of its own
        assert "gpus-left-unused" not in found(case("heldout26w", "akash-338-strawhats-defect-detection-training-log-txt"))

    def test_control_one_component_on_the_cpu_the_run_on_the_gpu(self):
        smi = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        text = (smi + "2024-05-01 10:00:00 - INFO - CUDA not available for the face parser, using CPU\n"
                "2024-05-01 10:00:01 - INFO - Using device: cuda\n" + EPOCHS)
        assert "gpus-left-unused" not in found(text)

    def test_control_a_cpu_machine_that_counts_no_gpu(self):
        # the fallback on a machine whose count of GPUs is zero: no GPU shown, the CPU is all there is
        assert "gpus-left-unused" not in found("Found 0 GPUs\nNo GPU found, using CPU\n" + EPOCHS)

    def test_control_a_person_who_ran_it_on_the_cpu(self):
        # nielsborie/loghi#18 (heldout14): the reporter's sentence, not the program's line
        text = "RTX 3090\nI had to remove the **--gpus all** parameter to make it running on CPU.\n"
        assert "gpus-left-unused" not in found(text)


class TestLogInconclusiveStatedRemedy:
    verdict = "log-inconclusive"
    # Akegarasu/lora-scripts#501 (heldout26): the trainer's start-up warning, wrapped by its logger
    TORCH = ("11:21:04-887737 WARNING  Torch version is lower than 2.3.0, which may not be able to train FLUX model properly. Consider\n"
             "                         upgrading to a newer version.\n11:21:04-893821 INFO     Torch backend: nVidia CUDA 11.8 cuDNN 8700\n")

    def test_sibling_a_warning_that_names_a_limit_and_its_remedy(self):
        f = head(case("heldout26", "lora-scripts-501-torch-version-startup"))
        assert f.id == "log-inconclusive" and f.fix.startswith('the message itself says: "Consider upgrading to a newer version" (line 7')
        assert "advice" in f.evidence

    def test_control_a_deprecation_notice(self):
        # transformers/torch's notice (heldout18w Pein2017-Qwen2.5Vl, a not-failed run): what a later release changes
        line = ("FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.\n")
        assert "the message itself says" not in head(EPOCHS + line).fix

    def test_control_a_warning_that_names_no_limit(self):
        # torch's DataLoader warning (a run survives it): advice, and no limit the run met
        line = ("UserWarning: This DataLoader will create 8 worker processes in total. Our suggested max number of worker in current "
                "system is 4, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker "
                "creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.\n")
        assert "the message itself says" not in head(EPOCHS + line).fix

    def test_control_a_person_asking_for_help(self):
        assert "the message itself says" not in head(EPOCHS + "WARNING: I cannot install it on my laptop, please help\n").fix

    def test_sibling_an_error_the_rules_name_keeps_its_finding(self):
        assert head(self.TORCH + EPOCHS + "RuntimeError: CUDA error: out of memory\n").id != "log-inconclusive"
