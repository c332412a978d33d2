"""Controls and siblings for the twelfth round's healthy verdict (issue 35, diagC12): exit 0 needs a line that shows
the run ending well (knowledge/ending.py), and a line that only looks like one does not give it: a save the run makes
while it trains (a checkpoint of a step), a person's sentence that holds an end's words (a question, an end told with
what went wrong after it), an end reached after a warning that the run went on degraded (a loss not finite, the CPU
for the GPU: commands/diagnose/analyse.py, catalog case `degraded`). Each dangerous sibling is beside the healthy log
that looks most like it. The sample's cases are the parts' logs as pasted; the other lines are real ones from the
threads named beside them. Each log runs through the whole of `diagnose`."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from gpudoctor.knowledge.ending import Tail
from test_controls_classes6 import case
from test_controls_detect8 import head, head_id

# huggingface/transformers' Trainer, as LlamaFactory and transformers threads paste it
HF_PERIODIC_SAVE = (
    " 10%|█         | 500/5000 [10:00<1:30:00,  1.20s/it]\n"
    "[INFO|trainer.py:3410] 2024-08-23 12:22:35,576 >> Saving model checkpoint to saves/llama3/lora/sft/{folder}\n"
    "[INFO|configuration_utils.py:472] 2024-08-23 12:22:35,580 >> Configuration saved in saves/llama3/lora/sft/{folder}/config.json\n"
)
HF_FINAL_SAVE = (
    "100%|██████████| 5000/5000 [1:40:00<00:00,  1.20s/it]\n"
    "Training completed. Do not forget to share your model on huggingface.co/models =)\n\n"
    "[INFO|trainer.py:3410] 2024-08-23 14:22:35,576 >> Saving model checkpoint to saves/llama3/lora/sft\n"
    "[INFO|configuration_utils.py:472] 2024-08-23 14:22:35,580 >> Configuration saved in saves/llama3/lora/sft/config.json\n"
)
TRAIN_RUNTIME = "{'train_runtime': 1250.5, 'train_samples_per_second': 3.2, 'train_steps_per_second': 0.4, 'train_loss': %s, 'epoch': 1.0}\n"


def ended(text: str) -> str:
    tail = Tail()
    tail.feed(text.encode())
    return tail.ended()


def answer(text: str) -> tuple[int, list[str]]:
    report = api.diagnose(text)
    return int(exit_code(report)), [f.id for f in report.findings]


class TestPeriodicSaveIsNoEnd:
    verdict = "log-inconclusive"

    def test_control_the_save_to_the_output_folder_after_training_ends_it(self):
        assert answer(HF_FINAL_SAVE) == (0, ["log-no-failure"])
        # the final save alone (its folder names no step) is the Trainer's own end too
        assert ended(HF_FINAL_SAVE.split("\n", 3)[3])

    @pytest.mark.parametrize("folder", ["checkpoint-500", "tmp-checkpoint-pe8ry7n_", "epoch_3", "global_step500"])
    def test_sibling_a_hang_after_a_save_of_a_step_is_not_healthy(self, folder):
        # a hang after a periodic save leaves that save last: the run was at a step, not at its end
        code, found = answer(HF_PERIODIC_SAVE.format(folder=folder))
        assert code == 1 and found[0] == "log-inconclusive"

    def test_sibling_the_sample_case_cut_at_step_40_of_4500(self):
        # huggingface/transformers#36076 (dev): a save at 1% of the run, the paste cut inside the save's own lines
        code, found = answer(case("dev", "transformers-36076-after-fix-eval-save-tmp-checkpoint"))
        assert code == 1 and found[0] == "log-inconclusive"


class TestSpokenEndIsNoEnd:
    verdict = "log-inconclusive"

    def test_control_an_end_said_by_the_program_or_described_as_done_stays_an_end(self):
        assert ended("Training completed. Do not forget to share your model on huggingface.co/models =)\n")
        # soroushmehr/sampleRNN_ICLR2017#13 (heldout10, a healthy run): the description after the results
        assert exit_code(api.diagnose(case("heldout10", "samplernn-13-classical-guitar-results"))) == 0

    @pytest.mark.parametrize("line", [
        # HongguLiu/Deepfake-Detection#2 (heldout8): a question put to the maintainer
        "@HongguLiu Thanks for letting me know the testing case. I was talking about the training. I got the NCCL error. "
        "Have you successfully finished the training with multiple gpu? if so, could you update your python requirements file",
        # the same class told as a report with what went wrong after it
        "Training was done on 4 A100 GPUs but the loss never goes down.",
    ])
    def test_sibling_a_persons_sentence_is_not_the_runs_end(self, line):
        assert ended(line + "\n") == ""
        assert answer(line + "\n")[0] == 1


class TestDegradedEndIsNotHealthy:
    verdict = "log-inconclusive"

    def test_control_a_finite_loss_to_the_end_is_healthy(self):
        log = "{'loss': 2.31, 'learning_rate': 2e-05, 'epoch': 0.5}\n" + TRAIN_RUNTIME % "2.1"
        assert answer(log) == (0, ["log-no-failure"])

    def test_control_a_warning_that_is_no_degradation_keeps_the_end(self):
        # ProcessGroupNCCL's barrier guess: a possible hang's sign, and the run ended: not a degraded run
        log = ("[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this process are currently unknown. "
               "This can potentially cause a hang if this rank to GPU mapping is incorrect.\n" + TRAIN_RUNTIME % "2.1")
        assert exit_code(api.diagnose(log)) == 0

    @pytest.mark.parametrize("warning, line", [
        ("loss-not-finite", "{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.9e-05, 'epoch': 0.01}"),  # Trainer's record of a nan step
        ("grad-norm-not-finite", "[f3d8bac11bcb] 2022-08-08 08:47:11,459 (trainer:647) WARNING: The grad norm is nan. Skipping updating the model."),  # espnet/espnet#4559
        ("onnxruntime-cuda-provider-failed", "2022-01-31 20:57:03.234399301 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:535 CreateExecutionProviderInstance] "
         "Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/reference/execution-providers/CUDA-ExecutionProvider.html#requirements "
         "to ensure all dependencies are met."),  # Lednik7/CLIP-ONNX#2
    ])
    def test_sibling_an_end_after_a_degrading_warning_is_not_healthy(self, warning, line):
        report = api.diagnose(line + "\n" + TRAIN_RUNTIME % "nan")
        answer = next(f for f in report.findings if f.id == "log-inconclusive")
        assert exit_code(report) == 1 and report.findings[0].id == warning
        assert answer.evidence["degraded"].endswith(warning) and "train_runtime" in answer.evidence["ended"]
        assert f"--explain {warning}" in answer.fix


class TestEndThenStillGoing:
    verdict = "log-no-failure"

    END = "Training completed. Do not forget to share your model on huggingface.co/models =)\n\n***** Running Evaluation *****\n  Num examples = 1000\n"
    PASSED = "test_schedule_multiproc.py::ScheduleTest::test_forward_only PASSED                                  [  2%]\n"
    # torch elastic's agent, as torch/distributed/elastic/agent/server/api.py logs it: its workers done, at its exit barrier
    AGENT = ("INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 seconds for other agents to finish.\n"
             "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other agents to finish\n")

    @pytest.mark.parametrize("first, then", [
        # tqdm's carriage-return updates as a file keeps them: the last one is the bar at its total
        (END, "  3%|▎         | 4/125 [00:01<00:40,  2.98it/s]\r100%|██████████| 125/125 [00:41<00:00,  3.01it/s]"),
        # a pytest session whose every test reported
        (PASSED, "test_schedule_multiproc.py::ScheduleTest::test_grad PASSED                                  [  5%]"),
        # the exit barrier passed: every node's agent is done
        (AGENT, "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0006549358367919922 seconds"),
    ])
    def test_control_what_comes_after_the_end_and_finishes_keeps_it(self, first, then):
        log = first + then + "\n"
        assert ended(log) and answer(log) == (0, ["log-no-failure"])

    @pytest.mark.parametrize("first, then", [
        # huggingface/transformers#36076's bar shape, stopped short of its total
        (END, "  1%|▉                                          | 40/4500 [07:21<4:45:21,  3.84s/it]"),
        # mmengine's counter (JiaquanYe/TableMASTER-mmocr#32's line)
        (END, "Epoch [1][100/62598]\tlr: 1.000e-03, eta: 6 days, 15:22:46, time: 0.539, data_time: 0.051, memory: 7239, loss: 1.9091"),
        # intel/torch-xpu-ops#2649: the next test printed its runtime's warnings and never reported (a hang)
        (PASSED, "test_schedule_multiproc.py::ScheduleTest::test_custom_function_callback 2025:12:25-00:54:39:1336928 |CCL_WARN| "
                 "did not find MPI-launcher specific variables, switch to ATL/OFI, to force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi"),
        # an agent whose workers finished, still waiting at its exit barrier for the other nodes (the log stops there)
        (AGENT, ""),
    ])
    def test_sibling_an_end_the_run_went_on_from_is_not_its_end(self, first, then):
        log = first + then + "\n"
        assert ended(log) == "" and answer(log)[0] == 1


class TestCudaInitWarningBesideASpokenError:
    verdict = "cuda-init-warning-driver-too-old"

    WARNING = ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 10010). Please update "
               "your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n")

    def test_control_the_warning_with_nothing_else_stays_the_answer(self):
        # ultralytics/yolov5#2389: the run went on on the CPU ("torch 1.7.1 CPU"): the warning is what the log decides
        report = api.diagnose(self.WARNING + "YOLOv5 v4.0-14-gb75c432 torch 1.7.1 CPU\n")
        assert report.findings[0].id == self.verdict and report.findings[0].severity.value == "error"

    def test_sibling_the_sample_case_with_its_error_only_spoken_of_is_undecided(self):
        # chemprop/chemprop#929 (heldout10): "I receive errors ...", the trace cut after the warning; the failure was
        # predict.py's own bug: the warning is told as a warning and the log does not decide
        report = api.diagnose(case("heldout10", "chemprop-929-no-features-generators-predict"))
        assert [f.id for f in report.findings] == [self.verdict, "log-inconclusive"] and exit_code(report) == 1
        assert not any(f.severity.value == "error" for f in report.findings)

    def test_sibling_a_run_that_ran_to_its_end_on_the_cpu_is_not_healthy(self):
        log = "I get an error when predicting on the GPU.\n" + self.WARNING + TRAIN_RUNTIME % "2.1"
        report = api.diagnose(log)
        assert exit_code(report) == 1 and report.findings[0].id == self.verdict
        assert next(f for f in report.findings if f.id == "log-inconclusive").evidence["degraded"].endswith(self.verdict)


class TestEndOfAnEarlierCommand:
    verdict = "log-no-failure"

    # nccl-tests' own end (all_reduce_perf), as the "nccl-tests pass, training hangs" threads paste it first
    NCCL_TESTS = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 20.5376 \n#\n\n"

    @pytest.mark.parametrize("looked", ["$ echo $?\n0\n", "user@node1:~/nccl-tests$ nvidia-smi topo -m\n"])
    def test_control_a_command_that_only_looks_keeps_the_end(self, looked):
        assert ended(self.NCCL_TESTS + looked)

    @pytest.mark.parametrize("prompt", ["$ ", "(venv) user@node1:~/proj$ ", "[user@node1 proj]$ "])
    def test_sibling_a_job_started_after_the_end_is_what_the_log_shows_last(self, prompt):
        # the end is the earlier command's (knowledge/reruns.py reads the same prompts): the job after it shows none
        log = self.NCCL_TESTS + prompt + "torchrun --nproc_per_node=8 train.py --config cfg.yaml\n[rank0]: building model\n[rank0]: starting training\n"
        assert ended(log) == "" and answer(log)[0] == 1


def module_call_traceback(caller: str, call: str, message: str) -> str:
    """A traceback whose innermost frames are torch's Module call (torch 2.x's two, as tracebacks print them)."""
    torch = "/home/u/miniconda3/envs/x/lib/python3.12/site-packages/torch/nn/modules/module.py"
    return (f'Traceback (most recent call last):\n  File "/home/u/proj/train.py", line 71, in <module>\n    main()\n'
            f'  File "{caller}", line 3801, in compute_loss\n    {call}\n'
            f'  File "{torch}", line 1751, in _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n'
            f'  File "{torch}", line 1762, in _call_impl\n    return forward_call(*args, **kwargs)\n{message}\n')


class TestArgumentsPassedThroughTheModuleCall:
    verdict = "library-api-mismatch"

    def test_control_an_argument_error_in_the_users_own_call_is_the_users(self):
        log = 'Traceback (most recent call last):\n  File "/home/u/proj/train.py", line 9, in <module>\n    step(batch, training=True)\nTypeError: step() got an unexpected keyword argument \'training\'\n'
        assert head_id(log) != self.verdict

    def test_sibling_the_users_module_called_with_an_argument_its_forward_lacks_is_the_users(self):
        # MhLiao/DB#288: structure/model.py passes training=True on through torch's Module call to a decoder whose
        # forward takes none: not two libraries' versions (the answer named torch's version and said to upgrade it)
        log = module_call_traceback("/home/jovyan/AISDK-dev/ocr/DB/structure/model.py", "return self.decoder(self.backbone(data), *args, **kwargs)",
                                    "TypeError: forward() got an unexpected keyword argument 'training'")
        found = head(log)
        assert found is not None and found.id != self.verdict and "structure/model.py" in found.title

    def test_sibling_a_library_that_calls_the_module_with_it_stays_the_library_class(self):
        # huggingface/transformers#36074: the Trainer's compute_loss passes num_items_in_batch to a model whose forward
        # (of another transformers release) lacks it: the rule must still fire past the Module call
        log = module_call_traceback("/home/u/miniconda3/envs/x/lib/python3.12/site-packages/transformers/trainer.py", "outputs = model(**inputs)",
                                    "TypeError: ModernBertModel.forward() got an unexpected keyword argument 'num_items_in_batch'")
        assert head_id(log) == self.verdict


class TestJudgedPartlyNowNamed:
    """Two answers heldout11's judges read as partly: the class right, its fix not the thread's (or the class missed)."""

    verdict = "dataparallel-module-not-on-first-device"

    @pytest.mark.parametrize("line, fid", [
        ("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'", "dataparallel-module-not-on-first-device"),  # a CPU kernel without a dtype
        ("Number of visible GPUs: 2 (device ordinals 0 and 1)", "cuda-invalid-device-ordinal"),
    ])
    def test_control_the_look_alike_line_is_not_read_as_it(self, line, fid):
        assert head_id(line + "\n") != fid

    @pytest.mark.parametrize("part, name, fid, fix", [
        # junyanz/pytorch-CycleGAN-and-pix2pix#252: the .cuda(gpu_ids[0]) line removed, DataParallel got a CPU model
        # ("Broadcast function not implemented for CPU tensors", older torch's form); was feature-not-supported
        ("heldout11", "cyclegan-252-broadcast-cpu-tensors", "dataparallel-module-not-on-first-device", "model.to('cuda:0')"),
        # open-mmlab/mmskeleton#55: the GPUs --device named do not exist; the fix now says to name existing ones
        ("heldout11", "mmskeleton-55-st-gcn-invalid-device-ordinal", "cuda-invalid-device-ordinal", "--device 0 1"),
    ])
    def test_sibling_the_sample_case_gets_its_class_and_fix(self, part, name, fid, fix):
        found = head(case(part, name))
        assert found is not None and found.id == fid and fix in found.fix
