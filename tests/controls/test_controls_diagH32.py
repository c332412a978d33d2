"""Controls and siblings for the "unrecognised failure" headlines of the development corpus, by class (issue 35, items 3
and 4, diagH32): torch's NCCL watchdog told by its own words where a paste cut its line ("Watchdog caught collectiv" is
the start of its collective-timeout message and of no other) and by its C++ backtrace where the message above `frame #0`
is missing (the error check `checkAndSetException` / `checkForNCCLErrorsInternal`, which raises an NCCL error, not the
timeout check); the reports that only wrap a failure (DeepSpeed's launcher's sigkill_handler, Hydra's "Error executing
job with overrides", Kubernetes' CrashLoopBackOff, an exit status), whose headline now says what decides the cause; a
list of names quoted in a message, left out of its signature and its search; DataParallel's own device check cut after
"(device_ids[0])". The sample's cases are the logs as pasted; the other lines are real ones from the threads named beside
them; the controls are the nearest healthy lines."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# a short GPU training run that ends well
TRAINED = "".join(f"Epoch {i}/3 - step {i * 100} - loss: {0.9 - i * 0.1:.3f}\n" for i in range(1, 4)) + "Training complete.\n"
LIB = "/opt/conda/lib/python3.10/site-packages/torch/lib"


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def frames(*names: str) -> str:
    """torch's C++ backtrace, one `frame #N` line per function."""
    return "".join(f"frame #{i}: {name} + 0x7c (0x1478add788ec in {LIB}/libtorch_cuda.so)\n" for i, name in enumerate(names))


class TestWatchdogLineCut:
    def test_sibling_the_timeout_message_cut_inside_its_words(self):
        # meta-llama/llama3#241 (dev6): the paste ends inside "Watchdog caught collective operation timeout"
        f = head(case("dev6", "llama3-241-fsdp-70b-watchdog-cut"))
        assert f.id == "nccl-watchdog-timeout" and f.severity is Severity.ERROR
        for cut in ("collective", "collective operation", "collective operation timeo"):
            line = f"[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught {cut}\n"
            assert head(line).id == "nccl-watchdog-timeout", cut

    def test_control_too_little_of_it_left(self):
        # ultralytics/yolov5#7481 (dev4): "Watchdog c" does not say which of the watchdog's messages it was
        f = head(case("dev4", "yolov5-7481-cache-images-30min-watchdog-timeout"))
        assert f.id == "unrecognised-failure"
        assert "nccl-watchdog-timeout" not in found("[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c\n")

    def test_control_the_watchdogs_other_words(self):
        # a warning and an info line of the same file, and the watchdog's error check quoted by name in prose: no timeout
        lines = ("[rank0]:[W1010 12:00:00.123456789 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
                 "destroyed before we destruct ProcessGroupNCCL.\n"
                 "[I ProcessGroupNCCL.cpp:1126] [Rank 0] ProcessGroupNCCL initialization options: NCCL_ASYNC_ERROR_HANDLING: 1\n")
        assert "nccl-watchdog-timeout" not in found(lines + TRAINED)
        assert errors(lines + TRAINED) == []

    def test_sibling_the_watchdog_rethrowing_a_cuda_error(self):
        # the watchdog's own rethrow of an illegal memory access (InternLM/lmdeploy#3258's shape): the CUDA error decides
        text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
                "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with exception: "
                "CUDA error: an illegal memory access was encountered\n")
        assert head(text).id == "cuda-illegal-memory-access"


class TestWatchdogBacktrace:
    def test_sibling_the_error_check_names_an_nccl_error(self):
        # pytorch/pytorch#150916 (dev): the watchdog's frames under its error check, the message above them not pasted
        f = head(case("dev", "pytorch-150916-2-watchdog-frames-killed-agent"))
        assert f.id == "unrecognised-failure" and f.severity is Severity.ERROR
        assert "NCCL error" in f.title and "not the timeout" in f.title
        assert "Watchdog caught collective operation timeout" in f.fix and "NCCL error" in f.fix
        # the same frames as torch 2.3-2.6 print them (checkForNCCLErrorsInternal above checkAndSetException)
        text = frames("c10::Error::Error(c10::SourceLocation, std::string)",
                      "c10d::ProcessGroupNCCL::checkForNCCLErrorsInternal(std::shared_ptr<c10d::NCCLComm>&)",
                      "c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException()", "c10d::ProcessGroupNCCL::watchdogHandler()",
                      "c10d::ProcessGroupNCCL::ncclCommWatchdog()")
        assert "NCCL error" in head(text).title

    def test_sibling_the_watchdog_thread_alone(self):
        # axolotl-ai-cloud/axolotl#2267 (dev): only the watchdog's own frames; pytorch/pytorch#123678 (dev): unknown frames,
        # then "Exception raised from ncclCommWatchdog"
        for part, name in (("dev", "axolotl-2267-watchdog-frames-terminal-garble"), ("dev", "pytorch-123678-elastic-shutdown-watchdog-frames")):
            f = head(case(part, name))
            assert f.id == "unrecognised-failure" and "NCCL watchdog" in f.title, name
            assert "a collective timed out" in f.fix, name

    def test_sibling_the_timeout_check_decides(self):
        # the timeout check's own frame (jpata/particleflow#390): the timeout, as before
        text = frames("c10::Error::Error(c10::SourceLocation, std::string)",
                      "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >)",
                      "c10d::ProcessGroupNCCL::watchdogHandler()", "c10d::ProcessGroupNCCL::ncclCommWatchdog()")
        assert head(text).id == "nccl-watchdog-timeout"

    def test_control_other_cpp_backtraces(self):
        # a C++ exception's frames in another library's code: no watchdog named
        text = frames("c10::Error::Error(c10::SourceLocation, std::string)", "<unknown function>",
                      "at::native::copy_(at::Tensor&, at::Tensor const&, bool)")
        f = head(text)
        assert f.id == "unrecognised-failure" and "watchdog" not in f.title.lower()


class TestWrapperHeadlines:
    def test_sibling_deepspeeds_launcher(self):
        # microsoft/DeepSpeed#4000 (dev): only the launcher's sigkill_handler
        f = head(case("dev", "deepspeed-4000-chatglm2-killing-subprocess"))
        assert f.id == "unrecognised-failure"
        assert "not the failure itself" in f.title and "own error decides" in f.title

    def test_control_no_absence_claimed(self):
        # kubeflow/kubeflow#4939 (heldout23): sudo's own words above kubectl's exit line, in no words read as an error: the
        # headline says what decides, never that the log lacks it
        f = head(case("heldout23", "kubeflow-4939-jovyan-sudo-nvidia-smi"))
        assert "not the failure itself" in f.title and "not in this log" not in f.title

    def test_sibling_hydra(self):
        # verl-project/verl#108 (dev): Hydra's report, cut after its overrides
        f = head(case("dev", "verl-108-two-node-hydra-overrides-line"))
        assert "exception Hydra prints under this line" in f.title and "HYDRA_FULL_ERROR=1" in f.fix

    def test_sibling_an_exit_status_with_the_error_above_it(self):
        # bmaltais/kohya_ss#2559 (dev6): a CalledProcessError's exit status, the command's own error above it
        f = head(case("dev6", "kohya-2559-accelerate-not-found-startup"))
        assert f.id == "unrecognised-failure" and "not the failure itself" in f.title and "line 4 speaks of an error" in f.title

    def test_sibling_the_failure_under_the_wrapper(self):
        # Hydra's line with the exception it caught under it: that exception's verdict, not the wrapper's
        text = ("Error executing job with overrides: ['trainer.devices=2', 'model=llama']\n"
                "Traceback (most recent call last):\n"
                '  File "/work/train.py", line 40, in main\n'
                "    trainer.fit(model)\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
                "of which 1.02 GiB is free.\n")
        assert head(text).id == "cuda-oom"

    def test_control_hydra_overrides_printed_at_start(self):
        # Hydra's and a script's own print of the overrides at start, then a run that ends well: no failure
        text = ("[2024-05-01 10:00:00,000][__main__][INFO] - overrides: ['trainer.devices=2', 'model=llama']\n"
                "[2024-05-01 10:00:00,010][__main__][INFO] - Job with overrides: ['trainer.devices=2']\n") + TRAINED
        assert errors(text) == []

    def test_control_a_pod_running(self):
        # kubectl's STATUS column of pods that run: no failure
        text = ("NAME                                READY   STATUS    RESTARTS   AGE\n"
                "pytorchjob-example-master-0         1/1     Running   0          11m\n"
                "pytorchjob-example-worker-0         1/1     Running   0          11m\n")
        assert errors(text) == []


class TestSignatureNames:
    def test_sibling_a_set_of_module_names(self):
        # OpenGVLab/InternVL#388 (dev9) quotes peft's message with the set of modules it looked for
        line = ("ValueError: Target modules {'mlp.down_proj', 'self_attn.o_proj', 'self_attn.q_proj'} not found in the base "
                "model. Please check the target modules and try again.\n")
        f = head(line)
        assert "mlp.down_proj" not in f.evidence["search"] and "not+found+in+the+base+model" in f.evidence["search"]
        assert "<names>" in f.evidence["signature"]

    def test_control_one_quoted_key(self):
        # one key, quoted: what the message is about, kept
        f = head("KeyError: 'loss'\n")
        assert "loss" in f.evidence.get("search", "") or "loss" in f.title


class TestDataParallelCheckCut:
    def test_sibling_the_message_cut_after_device_ids(self):
        # a DataParallel inside DistributedDataParallel (the corpus's ddp-wrapping-dataparallel case): the message cut
        text = ('  File "/env/lib/python3.7/site-packages/torch/nn/parallel/data_parallel.py", line 146, in forward\n'
                '    "them on device: {}".format(self.src_device_obj, t.device))\n'
                "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of\n")
        assert head(text).id == "dataparallel-module-not-on-first-device"

    def test_control_another_device_mismatch(self):
        text = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
        assert "dataparallel-module-not-on-first-device" not in found(text)



class TestLauncherFrames:
    def test_sibling_the_launchers_raise(self):
        # huggingface/accelerate (kohya-1220, dev6): simple_launcher's CalledProcessError, cut; torchrun's agent raising
        # ChildFailedError (firefly-221, dev6)
        f = head(case("dev6", "kohya-1220-rich-calledprocesserror-only"))
        assert f.id == "unrecognised-failure" and "not the failure itself: accelerate launch's own frames" in f.title
        f = head(case("dev6", "firefly-221-qwen15-14b-qlora-rank1-exitcode1"))
        assert "raising ChildFailedError" in f.title and "not the failure itself" in f.title

    def test_control_the_launchers_own_failure(self):
        # huggingface/accelerate#1923 (dev): accelerate launch failing to read its config file is its own failure, no wrapper
        f = head(case("dev", "accelerate-1923-launch-load-config"))
        assert f.id == "unrecognised-failure" and "not the failure itself" not in f.title
