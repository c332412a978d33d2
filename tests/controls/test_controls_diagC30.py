"""Controls and siblings for diagC30 (issue 35, points 3 and 4: the fix fits what the log shows, and what the message already
says). An out of memory in a run that only infers takes inference's levers (knowledge/setting.py INFERENCE,
knowledge/setting_fix.py), and the program's own hint for it is quoted first (knowledge/patterns/cuda.py oom_fields); a
program of the system not installed (`program-not-found`) and TensorRT's Python API of another release
(`tensorrt-api-version`) are named with their step (knowledge/patterns/classes30c.py); the NVIDIA Container Runtime's own
requirement check is gpu-not-handed-over's (knowledge/patterns/classes24a.py). `test_sibling_*` is the input that takes the
new words, `test_control_*` the nearest one that keeps its own. Lines and cases are real ones (threads named beside them;
the heldout29/heldout29b cases are retired development material)."""

from __future__ import annotations

from test_controls_classes6 import case
from test_controls_detect8 import head, head_id

from gpudoctor.catalog.findings.diagnose import OOM_FIX
from gpudoctor import api

# torch 2.x's out-of-memory message, with its own advice (not a program's)
TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.91 GiB. GPU 0 has a total capacity of 4.00 GiB of which "
             "127.30 MiB is free. Of the allocated memory 2.54 GiB is allocated by PyTorch, and 552.82 MiB is reserved by PyTorch but "
             "unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
             "avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")
INFER_TRACE = ('Traceback (most recent call last):\n  File "inference_realesrgan.py", line 166, in <module>\n    main()\n'
               '  File "inference_realesrgan.py", line 141, in main\n    output, _ = upsampler.enhance(img, outscale=args.outscale)\n'
               '  File "/usr/lib/python3/dist-packages/torch/utils/_contextlib.py", line 115, in decorate_context\n    return func(*args, **kwargs)\n')
TRAIN_TRACE = ('Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss.backward()\n')


class TestCudaOom:
    verdict = "cuda-oom"

    def test_sibling_the_programs_own_tile_hint_leads(self):
        # xinntao/Real-ESRGAN#909: a 4 GB GPU upscaling; the program's own hint on the next line
        found = head(case("heldout29b", "real-esrgan-909-infrared-upscale-4gb"))
        assert found.id == self.verdict
        assert found.fix.startswith('the message itself says: "try to set --tile with a smaller number" (line 10)')
        assert "ZeRO" not in found.fix and "--tile 256" in found.fix and found.evidence["setting"].startswith("a run that only infers")

    def test_sibling_audio_separation_on_a_small_gpu_takes_inference_levers(self):
        # facebookresearch/demucs#46: a 4 GB GTX 1050 Ti; the maintainer's -d cpu
        found = head(case("heldout29", "demucs-46-gtx1050ti-separate"))
        assert found.id == self.verdict and "--device cpu" in found.fix and "-d cpu" in found.fix
        assert "ZeRO" not in found.fix and "gradient accumulation" not in found.fix

    def test_sibling_an_inference_script_and_a_no_grad_frame(self):
        found = head(INFER_TRACE + TORCH_OOM)
        assert found.id == self.verdict and "half precision" in found.fix and "ZeRO" not in found.fix
        assert "inference_realesrgan.py" in found.evidence["setting"]

    def test_sibling_a_person_says_during_inference(self):
        found = head("I get this during inference on a 6 GB card:\n" + TORCH_OOM)
        assert found.id == self.verdict and "tile, chunk or segment" in found.fix

    def test_sibling_an_engine_keeps_its_own_flags(self):
        # an engine's row comes before inference's: vLLM's own flags
        found = head("INFO 05-01 10:00:00 api_server.py:151] vLLM API server version 0.4.1\nStarting vLLM API server on http://0.0.0.0:8000\n" + TORCH_OOM)
        assert found.id == self.verdict and "--gpu-memory-utilization" in found.fix

    def test_control_a_training_run_keeps_the_training_fix(self):
        found = head(TRAIN_TRACE + TORCH_OOM)
        assert found.id == self.verdict and found.fix == OOM_FIX and "setting" not in found.evidence

    def test_control_a_training_script_that_also_generates_keeps_it(self):
        # a train.py whose evaluation generates: the job trains
        text = ('Traceback (most recent call last):\n  File "train.py", line 120, in <module>\n    evaluate(model)\n'
                '  File "train.py", line 60, in evaluate\n    out = model.generate(**batch)\n  File "/x/transformers/generation/utils.py", '
                'line 1500, in generate\n    return self.sample(\n') + TORCH_OOM
        found = head(text)
        assert found.id == self.verdict and found.fix == OOM_FIX

    def test_control_a_training_thread_with_a_word_on_inference(self):
        # openai/guided-diffusion#72: a training thread (its title) in which a comment says "for inference": one process used GPU 0
        found = head(case("heldout9", "guided-diffusion-72-only-gpu0-used"))
        assert found.id == self.verdict and found.fix == OOM_FIX and "mpiexec -n N" in found.fix

    def test_control_a_title_that_says_training(self):
        found = head("# CUDA out of memory during training, inference works\n" + TORCH_OOM)
        assert found.id == self.verdict and found.fix == OOM_FIX

    def test_sibling_the_inference_fix_names_no_grad(self):
        found = head(INFER_TRACE + TORCH_OOM)
        assert "torch.inference_mode()" in found.fix

    def test_control_torchs_own_advice_is_not_the_programs(self):
        found = head(TORCH_OOM)
        assert found.id == self.verdict and found.fix == OOM_FIX and "hint" not in found.evidence

    def test_control_cudas_debugging_note_is_no_hint(self):
        text = ("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so "
                "the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")
        found = head(text)
        assert found.id == self.verdict and not found.fix.startswith("the message itself says")


class TestFrameworkOom:
    verdict = "framework-oom"

    def test_sibling_a_structure_prediction_on_a_2gb_gpu(self):
        # YoshitakaMo/localcolabfold#105: JAX's RESOURCE_EXHAUSTED on a 2 GiB card; JAX's own step still follows
        found = head(case("heldout29", "localcolabfold-105-2gb-gpu"))
        assert found.id == self.verdict and "--device cpu" in found.fix and "XLA_PYTHON_CLIENT_PREALLOCATE" in found.fix
        assert found.fix.index("tile, chunk or segment") < found.fix.index("XLA_PYTHON_CLIENT_PREALLOCATE")

    def test_control_jax_training_keeps_its_own_step(self):
        text = ('Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    state = train_step(state, batch)\n'
                "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.\n")
        found = head(text)
        assert found.id == self.verdict and "XLA_PYTHON_CLIENT_PREALLOCATE" in found.fix and "tile, chunk" not in found.fix


class TestProgramNotFound:
    verdict = "program-not-found"

    def test_control_a_program_that_caught_it_and_went_on(self):
        # heldout21w rajvardhan19-HPML_NanoChat: the evaluation's own record of the missing java, then its results (the run
        # completed): no error of the run
        text = ("tokenization...\n  CIDEr computation failed: [Errno 2] No such file or directory: 'java'\n\n"
                "Results saved -> results/eval_results.json\n\nEVALUATION SUMMARY\n  BLEU-1:  50.39\n  CIDEr:   0.000\n")
        assert all(f.id != self.verdict for f in api.diagnose(text=text).findings)

    def test_sibling_the_exception_itself_after_its_traceback(self):
        text = ('Traceback (most recent call last):\n  File "/home/u/run.py", line 3, in <module>\n'
                "    subprocess.run(['ffmpeg', '-i', 'a.mp4'])\nFileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'\n")
        assert head(text).id == self.verdict

    def test_sibling_the_programs_own_check(self):
        # GrandaddyShmax/audiocraft_plus#49 (Windows, "ffmpeg is installed tho")
        found = head(case("heldout29", "audiocraft-plus-49-generating-music-3090ti"))
        assert found.id == self.verdict and found.title.endswith(": ffmpeg") and "where ffmpeg" in found.fix
        assert "winget install ffmpeg" in found.fix

    def test_sibling_every_shape(self):
        for line in ("sh: 1: ffmpeg: not found", "bash: sox: command not found", "zsh: command not found: ffmpeg",
                     "'ffmpeg' is not recognized as an internal or external command,",
                     "FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'",
                     "FileNotFoundError: [WinError 2] The system cannot find the file specified: 'git-lfs'",
                     'Error: exec: "ffmpeg": executable file not found in $PATH',
                     "RuntimeError: No ffmpeg exe could be found. Install ffmpeg on your system, or set the IMAGEIO_FFMPEG_EXE environment variable."):
            assert head_id(line + "\n") == self.verdict, line

    def test_sibling_a_data_folder_is_a_path(self):
        assert head_id("FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints'\n") == "path-not-found"

    def test_sibling_a_launcher_keeps_its_own(self):
        assert head_id("bash: torchrun: command not found\n") == "launcher-not-found"

    def test_control_a_run_that_found_it(self):
        assert head_id("ffmpeg version 4.4.2 Copyright (c) 2000-2021 the FFmpeg developers\nFound ffmpeg at /usr/bin/ffmpeg\n") == "-"

    def test_control_a_fallback_is_no_failure(self):
        assert head_id("[WARNING] ffmpeg not found, falling back to the soundfile backend\nEpoch 1: loss 0.3\n") != self.verdict


class TestTensorrtApiVersion:
    verdict = "tensorrt-api-version"

    def test_sibling_a_call_newer_than_the_installed_tensorrt(self):
        # deepcam-cn/yolov5-face#109: a Jetson Nano, the reporter's paraphrase with spaces
        found = head(case("heldout29b", "yolov5-face-109-jetson-nano-tensorrt-builder"))
        assert found.id == self.verdict and "build_serialized_network came in TensorRT 8.0" in found.fix
        assert "build_cuda_engine" in found.fix

    def test_sibling_a_call_tensorrt_10_removed(self):
        found = head("AttributeError: 'tensorrt_bindings.tensorrt.IExecutionContext' object has no attribute 'execute_async_v2'\n")
        assert found.id == self.verdict and "TensorRT 10.0 removed execute_async_v2" in found.fix and "execute_async_v3" in found.fix

    def test_sibling_a_builder_setting_tensorrt_8_moved(self):
        found = head("AttributeError: 'tensorrt.tensorrt.Builder' object has no attribute 'max_workspace_size'\n")
        assert found.id == self.verdict and "create_builder_config" in found.fix

    def test_control_an_engine_that_did_not_build(self):
        assert head_id("AttributeError: 'NoneType' object has no attribute 'create_execution_context'\n") != self.verdict

    def test_control_another_librarys_builder(self):
        assert head_id("AttributeError: 'Builder' object has no attribute 'build_engine'\n") != self.verdict


class TestGpuNotHandedOver:
    verdict = "gpu-not-handed-over"

    def test_sibling_the_runtimes_requirement_on_a_jetson(self):
        # ApolloAuto/apollo#15128: the NVIDIA Container Runtime's csv mode on a Jetson Orin
        found = head(case("heldout29", "apollo-15128-jetson-orin-docker-cuda"))
        assert found.id == self.verdict and "cuda>=11.4" in found.title and "cuda=10.2" in found.title
        assert "JetPack" in found.fix and "update the host's NVIDIA driver" in found.fix

    def test_control_the_images_requirement_listed(self):
        assert head_id("NVIDIA_REQUIRE_CUDA=cuda>=11.4 brand=tesla,driver>=470,driver<471\nNVIDIA_VISIBLE_DEVICES=all\n") == "-"
