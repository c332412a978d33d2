"""Controls and siblings for diagA28 (issue 35: never confidently wrong). Each answer that hurt users on last session's
fresh logs asserted what the log does not show: a healthy end that was the thread's title, a fork where no process forks,
a rerun where another command ran, a fallback where the program stopped, an IDE's own traceback as the run's failure, a
hang where a count is stuck at zero, a file of CR-ended lines read as one line. `test_control_*` is the input that must not
get the verdict, `test_sibling_*` the nearest one that keeps it. Lines are real ones (threads named beside them)."""

from __future__ import annotations

from test_controls_detect8 import head
from test_controls_diagB20 import ids

from gpudoctor import api


def answer(text: str):
    """The answer of a log with no error diagnose names (log-inconclusive and its kin)."""
    [found] = [f for f in api.diagnose(text).findings if f.id in ("log-inconclusive", "log-no-failure", "log-said-hang", "log-said-oom")]
    return found


FRAME = "# source: https://github.com/{repo}/issues/{n}\n{repo} · issue #{n} · open · Python\n# {title}\n\n"

# cocktailpeanut/fluxgym#247 (heldout27): the title says training completed; the paste is the trainer's set-up only
FLUX_TITLE = ("info Training Complete. Check the outputs folder for the LoRA files. The fluxgym program didn't run for 1 minute, "
              "and the process ended. I don't know where the problem is. Please help me take a look.")
FLUX_SET_UP = ("[turn 0 by wxiaosi, continued]\n"
               "[2024-11-19 20:28:19] [INFO] keep_tokens: 1\n"
               "[2024-11-19 20:28:19] [INFO] caption_separator: ,\n"
               "[2024-11-19 20:28:19] [INFO] enable_wildcard: False\n"
               "[2024-11-19 20:28:19] [INFO] caption_dropout_rate: 0.0\n")
# hiyouga/LLaMA-Factory (dev): the Trainer's own save to its output folder, the run's end
SAVED = "[INFO|trainer.py:3410] 2024-08-23 12:22:35,576 >> Saving model checkpoint to saves/glm4_9b/lora/sft\n"


class TestLogNoFailure:
    verdict = "log-no-failure"

    def test_control_an_end_in_the_threads_title_is_not_the_runs(self):
        text = FRAME.format(repo="cocktailpeanut/fluxgym", n=247, title=FLUX_TITLE) + FLUX_SET_UP
        assert head(text) is None and answer(text).id == "log-inconclusive"

    def test_sibling_the_runs_own_end_in_its_output_stays_healthy(self):
        text = FRAME.format(repo="cocktailpeanut/fluxgym", n=247, title="Flux LoRA on a 4090") + FLUX_SET_UP + SAVED
        assert head(text) is None and answer(text).id == self.verdict


# pywhispercpp (heldout27b, #95): ggml's CUDA set-up in one process; no fork anywhere in the log
GGML = ("ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n"
        "ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no\n"
        "ggml_cuda_init: found 1 CUDA devices:\n"
        "CUDA error: initialization error\n"
        "  current device: 0, in function ggml_cuda_init at /tmp/pip-req-build-wqj_dne6/whisper.cpp/ggml/src/ggml-cuda.cu:187\n"
        "  cuDeviceGet(&device, id)\n")
# pyg-team/pytorch_geometric#5340 (heldout6): the same error in a DataLoader worker, a forked child
WORKER = ("RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n"
          "Original Traceback (most recent call last):\n"
          '  File "/usr/local/lib/python3.7/dist-packages/torch/utils/data/_utils/worker.py", line 302, in _worker_loop\n'
          "    data = fetcher.fetch(index)\n"
          '  File "/usr/local/lib/python3.7/dist-packages/torch/utils/data/_utils/fetch.py", line 49, in fetch\n'
          "    data = [self.dataset[idx] for idx in possibly_batched_index]\n"
          "RuntimeError: CUDA error: initialization error\n")


class TestCudaForkReinit:
    verdict = "cuda-fork-reinit"

    def test_control_an_initialization_error_in_a_log_that_shows_no_fork(self):
        found = head(GGML)
        assert found is not None and found.id == "cuda-runtime-error" and "fork" in found.fix and "nvidia-smi" in found.fix

    def test_sibling_the_same_error_in_a_dataloader_worker_keeps_the_fork(self):
        found = head(WORKER)
        assert found is not None and found.id == self.verdict


# NVIDIA/gpu-operator#193 (heldout27): the pods, then another listing (the daemonsets), not the same command again
PODS = ("$ k get pods --namespace gpu-operator-resources\n"
        "NAME                                                  READY   STATUS             RESTARTS   AGE\n"
        "gpu-operator-69488c4b65-lmn6r                         1/1     Running            0          2d22h\n"
        "nvidia-driver-daemonset-6xzh7                         0/1     CrashLoopBackOff   822        2d22h\n"
        "nvidia-driver-daemonset-xmp2h                         1/1     Running            0          2d22h\n"
        "```\n\n```\n"
        "$ k get daemonsets --namespace gpu-operator-resources\n"
        "NAME                                  DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\n")
# dusty-nv/jetson-containers#125 (heldout27): a typo in the program's name, corrected at the next prompt
TYPO = ("ROS_DISTRO foxy\n"
        "root@8bc8ca60c015:/opt/halodi# nvidia-smiu\n"
        "bash: nvidia-smiu: command not found\n"
        "root@8bc8ca60c015:/opt/halodi# nvidia-smi\n")


class TestEarlierAttempt:
    """log-inconclusive case `rerun`: a failure is an earlier attempt's only where the same command was run again."""

    def test_control_another_listing_is_no_rerun_of_the_pods(self):
        found = head(PODS)
        assert found is not None and "earlier_attempt" not in found.evidence and "CrashLoopBackOff" in found.title

    def test_sibling_the_same_listing_typed_again_keeps_the_earlier_attempt(self):
        text = PODS.replace("k get daemonsets", "k get pods")
        assert head(text) is None and answer(text).title.startswith("the failure at line 4 is an earlier attempt's")

    def test_control_a_typo_in_the_programs_name_corrected_is_the_same_command_run_again(self):
        assert head(TYPO) is None and answer(TYPO).title.startswith("the failure at line 3 is an earlier attempt's")

    def test_sibling_another_program_after_the_typo_leaves_the_typos_error(self):
        text = TYPO.replace("# nvidia-smi\n", "# python3 -c 'import torch'\n")
        found = head(text)
        assert found is not None and "nvidia-smiu" in found.title


# k2-fsa/sherpa-onnx#1465 (heldout27b): onnxruntime's provider failure raised, and the process aborted on it
ABORTED = ("Creating recognizer ...\n"
           "terminate called after throwing an instance of 'Ort::Exception'\n"
           "  what():  /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& "
           "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so "
           "with error: libcublasLt.so.11: cannot open shared object file: No such file or directory\n")
# facefusion/facefusion#294 (heldout26): the same failure as onnxruntime's warning, and the job went on on the CPU
FELL_BACK = ("EP Error D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:743 onnxruntime::python::CreateExecutionProviderInstance "
             "CUDA_PATH is set but CUDA wasn't able to be loaded. Please install the correct version of CUDA and cuDNN as mentioned in the GPU "
             "requirements page (https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements), make sure they're in "
             "the PATH, and that your GPU is supported.\n")
# Anjok07/ultimatevocalremovergui#738 (heldout27b): the same words raised as the exception UVR reports
RAISED = ('RuntimeError: "D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:548 onnxruntime::python::CreateExecutionProviderInstance '
          "CUDA_PATH is set but CUDA wasn't able to be loaded. Please install the correct version of CUDA and cuDNN as mentioned in the GPU "
          'requirements page\n"\n'
          'Traceback Error: "\n'
          '  File "UVR.py", line 4716, in process_start\n'
          '  File "separate.py", line 280, in seperate\n'
          '  File "onnxruntime\\capi\\onnxruntime_inference_collection.py", line 335, in __init__\n'
          '  File "onnxruntime\\capi\\onnxruntime_inference_collection.py", line 381, in _create_inference_session\n"\n')


class TestOnnxruntimeCudaProviderFailed:
    verdict = "onnxruntime-cuda-provider-failed"

    def test_control_a_provider_failure_the_process_aborted_on_is_its_failure_not_a_fallback(self):
        found = head(ABORTED)
        assert found is not None and found.id == self.verdict and "raised" in found.title

    def test_control_a_provider_failure_raised_as_an_exception_leads(self):
        found = head(RAISED)
        assert found is not None and found.id == self.verdict and found.evidence["first_line"] == 1

    def test_sibling_the_providers_warning_stays_a_fallback(self):
        assert head(FELL_BACK) is None and self.verdict in ids(FELL_BACK)


# orhangazidemirci/Tree-NET train_log.log (heldout27w): Spyder's kernel logged its own comm error after the last epoch
SPYDER = ("[2024-12-13 03:11:10 PM-train - unet.py-INFO:epoch: 98, dataset: test, dice: 0.8458909000000007]\n"
          "[2024-12-13 03:24:15 PM-train - unet.py-INFO:epoch: 99, dataset: test, dice: 0.8491121999999988]\n"
          "[2024-12-22 02:24:48 AM-base_comm.py-ERROR:Exception in comm_msg for 6544cf42b80e11ef9f6ec2c64746a78c]\n"
          "Traceback (most recent call last):\n"
          '  File "C:\\Users\\Orhan\\anaconda3\\Lib\\site-packages\\comm\\base_comm.py", line 296, in comm_msg\n'
          "    comm.handle_msg(msg)\n"
          '  File "C:\\Users\\Orhan\\anaconda3\\Lib\\site-packages\\spyder_kernels\\comms\\frontendcomm.py", line 260, in handle_msg\n'
          "    comm._msg_callback(msg)\n"
          '  File "C:\\Users\\Orhan\\anaconda3\\Lib\\site-packages\\spyder_kernels\\comms\\commbase.py", line 238, in _send_message\n'
          '    raise CommError("The comm is not connected.")\n'
          "spyder_kernels.comms.commbase.CommError: The comm is not connected.\n")


class TestUnrecognisedFailureHost:
    verdict = "unrecognised-failure"

    def test_control_the_ides_own_traceback_after_training_is_not_the_runs_failure(self):
        assert head(SPYDER) is None

    def test_sibling_a_traceback_through_the_users_code_stays_the_failure(self):
        text = SPYDER.replace('  File "C:\\Users\\Orhan\\anaconda3\\Lib\\site-packages\\comm\\base_comm.py", line 296, in comm_msg\n',
                              '  File "D:\\Tree-NET\\train_isic.py", line 296, in main\n')
        found = head(text)
        assert found is not None and found.id == self.verdict


# NVIDIA/k8s-device-plugin#58 (heldout27): a count stuck at zero is no hang
ALLOCATABLE = ("    allocatable:\n"
               '      cpu: "48"\n'
               "      memory: 263412492Ki\n"
               '      nvidia.com/gpu: "0"\n'
               '      pods: "110"\n')


class TestLogSaidHang:
    verdict = "log-said-hang"

    def test_control_a_count_stuck_at_zero_is_no_hang(self):
        text = FRAME.format(repo="NVIDIA/k8s-device-plugin", n=58, title="allocatable stuck at zero") + "yee379 · description · 2018-06-26\n" + ALLOCATABLE
        assert self.verdict not in ids(text)

    def test_sibling_a_run_stuck_at_a_step_is_one(self):
        # zju3dv/LoFTR#278's title (said_hang.py)
        text = FRAME.format(repo="zju3dv/LoFTR", n=278, title='Training stuck on: "initializing ddp: GLOBAL_RANK"') + "yee379 · description · 2018-06-26\n" + ALLOCATABLE
        assert self.verdict in ids(text)


# Lionelyl/templateRFC logs/training_log.txt (heldout27w): every line ended by CR alone, below the collector's header line
CR_ONLY = ("# source: https://github.com/Lionelyl/templateRFC/blob/fd325f5/logs/training_log.txt\n"
           "nohup: ignoring input\r"
           "python3 models/bert_bert_mlp_cuda.py --do_train --do_eval --cuda_device 3\r"
           "Traceback (most recent call last):\r"
           '  File "/home/xiangyoulin/anaconda3/envs/rfc7/lib/python3.7/site-packages/nltk/data.py", line 583, in find\r'
           "    raise LookupError(resource_not_found)\r"
           "LookupError: \r"
           "**********************************************************************\r"
           "  Resource averaged_perceptron_tagger not found.\r"
           "  Please use the NLTK Downloader to obtain the resource:\r")


class TestCarriageReturnLines:
    """A file whose lines end in CR alone (no LF but a header's) is read line by line; a progress bar's CR frames on a line
    that LF ends stay that one line."""

    def test_control_cr_ended_lines_are_lines(self):
        report = api.diagnose(CR_ONLY)
        assert report.data["lines"] == 10 and head(CR_ONLY) is not None

    def test_sibling_a_progress_bars_frames_stay_one_line(self):
        text = "epoch 1\n" + "\r".join(f"{i}%|##| {i}/100 [00:0{i % 10}<00:00, 1.0it/s]" for i in range(0, 100, 10)) + "\nepoch 2\n"
        assert api.diagnose(text).data["lines"] == 3


# hpcaitech/Open-Sora#562 (dev5): every epoch ends at once with 0 iterations, though the bucket reports 3 batches
ZERO_ITERATIONS = ("[2024-06-29 05:36:31] #training batch: 3, #training sample: 160, #non empty bucket: 1\n"
                   "[2024-06-29 05:36:31] Beginning epoch 1...\n"
                   "Epoch 1: 0it [00:00, ?it/s]\n")


class TestLogNoFailureNoWork:
    verdict = "log-no-failure"

    def test_control_an_end_after_an_epoch_of_zero_iterations_is_not_healthy(self):
        found = answer(ZERO_ITERATIONS + SAVED)
        assert found.id == "log-inconclusive" and found.evidence["no work"] == "line 3: Epoch 1: 0it [00:00, ?it/s]"

    def test_control_a_bar_that_counts_on_after_its_zero_frame_or_waited_is_no_work_undone(self):
        # kohya-ss/musubi-tuner via loramaster#5 (heldout15): the bar's frames on lines of their own; bert-sklearn#17 (heldout10): a stall
        for bar in ("2025-09-27 22:42:58 0it [00:00, ?it/s]\n2025-09-27 22:42:58 1it [00:00,  1.02it/s]\n", "0it [00:27, ?it/s]\n"):
            assert "no work" not in answer(bar).evidence

    def test_control_an_empty_device_list_is_the_gpu_unused_not_no_work(self):
        # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2067 (heldout27b): the GPU list empty, then it trains on the CPU
        text = ("2024-05-19 14:19:56 | INFO | __main__ | Use gpus:\n"
                "2024-05-19 14:19:56 | INFO | __main__ | No pretrained Generator\n"
                "NO GPU DETECTED: falling back to CPU - this may take a while\n")
        assert "no work" not in answer(text).evidence

    def test_sibling_an_end_after_an_epoch_that_counted_its_batches_stays_healthy(self):
        text = ZERO_ITERATIONS.replace("0it [00:00, ?it/s]", "100%|##########| 3/3 [00:04<00:00,  1.41s/it]") + SAVED
        assert answer(text).id == self.verdict
