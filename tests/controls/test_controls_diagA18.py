"""Controls and siblings for the verdicts diagA18 adds or changes on whole logs (issue 35, heldout17w retired to
development and dev7w: logs people committed to their repositories, read whole).

A failure the job went on past is not the run's end (knowledge/progress.py, knowledge/story.py `went_on` and
`earlier_run`); a run's last lines that say it is done are its end (knowledge/ending.py `LAST_ENDED`). Each class is one
verdict: `test_control_*` is the input that looks most like it and must not get it; `test_sibling_*` is the nearest input
that needs another verdict (the dangerous one: a failure at the end, another rank's progress) and gets its own. The
inputs are short excerpts of the real logs (their source in each block's comment), never the files themselves."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.findings import Severity


def report(text: str):
    return api.diagnose(text)


def errors(text: str) -> list[str]:
    return [f.id for f in report(text).findings if f.severity is Severity.ERROR]


def answer(text: str):
    """The log-level answer (log-no-failure / log-inconclusive), or None when an error is the answer."""
    return next((f for f in report(text).findings if f.id in ("log-no-failure", "log-inconclusive")), None)


def went_on(text: str) -> list[dict]:
    return [f.evidence["went_on"] for f in report(text).findings if "went_on" in f.evidence]


# https://github.com/AkramjitS/gpt-lab-diffusion/blob/0dff6e1bc406ca0f8d347dfcfe7e89e3928a724a/train.log (heldout17w):
# torch._dynamo prints WON'T CONVERT with the compiler's traceback (SystemError), falls back to eager, and training runs on
W = "W0530 14:48:26.433000 2622492 site-packages/torch/_dynamo/convert_frame.py:1233] "
COMPILE_FALLBACK = (
    "nohup: ignoring input\n"
    f"{W}WON'T CONVERT forward /home/ass337/gpt-lab-diffusion/gpt/model.py line 228 \n{W}due to: \n"
    f"{W}Traceback (most recent call last):\n"
    f'{W}  File "/home/ass337/miniconda3/envs/feedback/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py", line 1164, in __call__\n'
    f"{W}    result = self._inner_convert(\n"
    f"{W}torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    f"{W}SystemError: PY_SSIZE_T_CLEAN macro must be defined for '#' formats\n"
    f"{W}\n"
)
STEPS = "step:0/20000 val_loss:1.0826e+01 train_time:0ms step_avg:0.01ms\n" + "".join(
    f"step:{i}/20000 train_loss:{8 + 1 / i:.6e} train_time:{6029 * i}ms step_avg:{5400 + i}.64ms\n" for i in range(1, 5)
)
RANK1_DIES = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/home/ass337/gpt-lab-diffusion/train.py", line 412, in <module>\n'
    "[rank1]:     loss.backward()\n"
    "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


class TestLogInconclusiveWentOn:
    """Progress after the log's last failure (steps, epochs, losses counting on), where one process writes the log: the
    failure is one the job went on past (info), the log is undecided (case went-on), never that failure's error."""

    def test_a_compile_fallback_the_steps_go_on_after_is_no_error(self):
        text = COMPILE_FALLBACK + STEPS
        assert errors(text) == []
        said = answer(text)
        assert said is not None and said.id == "log-inconclusive" and "went on past it" in said.title
        assert went_on(text)[0]["how"] == "progress"

    def test_control_the_steps_alone_are_no_failure_gone_past(self):
        said = answer("nohup: ignoring input\n" + STEPS)
        assert said is not None and "went on" not in said.title and went_on("nohup: ignoring input\n" + STEPS) == []

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param(STEPS + COMPILE_FALLBACK, id="traceback-at-the-end"),
            pytest.param("".join(f"[rank0]: {s}\n" for s in (COMPILE_FALLBACK.splitlines()[:1])) + STEPS.replace("step:", "[rank0]: step:", 2)
                         + RANK1_DIES + "".join(f"[rank0]: {s}\n" for s in STEPS.splitlines()[2:]), id="another-rank-goes-on"),
            pytest.param("WARNING:torch.distributed.run:Setting OMP_NUM_THREADS environment variable for each process to be 1\n"
                         + STEPS[:120] + RANK1_DIES.replace("[rank1]: ", "") + STEPS, id="torchrun-unprefixed-ranks"),
        ],
    )
    def test_sibling_a_failure_at_the_end_or_on_another_rank_stays_an_error(self, text):
        assert errors(text), "a final failure, or one rank's failure while another prints steps (a hang to come), is an error"


# https://github.com/ChenJiakaiCam/Kondo_Lattice/blob/6d9b67d2306e0162e952c18004e28ad3a56a17a5/train.log (heldout17w): JAX's
# CUDA plugin fails to load, JAX says it falls back to the CPU, and the run goes on
JAX_START = "I | 06-21 06:59:38 | runtime  | Initialize a local runtime.\n"
JAX_PLUGIN = (
    "E | 06-21 06:59:42 |   jax    | Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda12.initialize()\n"
    "Traceback (most recent call last):\n"
    '  File "/rds/user/jc2405/hpc-work/JaQMC/jaqmc/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda12/__init__.py", line 201, in _version_check\n'
    "    version = get_version()\n"
    "RuntimeError: jaxlib/cuda/versions_helpers.cc:85: operation cusparseGetProperty(MAJOR_VERSION, &major) failed: The cuSPARSE library was not found.\n"
    "\nThe above exception was the direct cause of the following exception:\n\n"
    "Traceback (most recent call last):\n"
    '  File "/rds/user/jc2405/hpc-work/JaQMC/jaqmc/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda12/__init__.py", line 205, in _version_check\n'
    "    raise RuntimeError(err_msg) from e\n"
    "RuntimeError: Unable to load cuSPARSE. Is it installed?\n"
    "I | 06-21 06:59:42 |   jax    | Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory\n"
)
JAX_FALLBACK = "W | 06-21 06:59:42 |   jax    | An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n"
JAX_GOES_ON = (
    "I | 06-21 06:59:44 |  config  | Current config is the same as that of previous run.\n"
    "I | 06-21 06:59:44 | workflow | Starting QMC with 1 local XLA devices across 1 processes.\n"
    "I | 06-21 06:59:44 |  jaqmc   | Start KRHF\n"
)
JAX_OOM_LATER = (
    "Traceback (most recent call last):\n"
    '  File "/rds/user/jc2405/hpc-work/JaQMC/jaqmc/src/jaqmc/app/solid/main.py", line 88, in main\n'
    "    state = train(state)\n"
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.\n"
)


class TestLogInconclusiveWentOnFallback:
    """A library's own fallback right after its traceback ("Falling back to cpu."), and no failure after it: the
    traceback is one the run went on past (case went-on), not the run's failure."""

    def test_a_plugin_that_fails_then_the_cpu_is_no_error(self):
        text = JAX_START + JAX_PLUGIN + JAX_FALLBACK + JAX_GOES_ON
        assert errors(text) == []
        assert went_on(text)[0]["how"] == "fallback"
        assert "went on past it (a fallback" in answer(text).title

    def test_control_a_start_with_no_plugin_error_is_no_failure_gone_past(self):
        text = JAX_START + JAX_GOES_ON
        assert went_on(text) == [] and "went on" not in answer(text).title

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param(JAX_START + JAX_PLUGIN + JAX_FALLBACK + JAX_GOES_ON + JAX_OOM_LATER, id="a-failure-after-the-fallback"),
            pytest.param(JAX_START + JAX_FALLBACK + JAX_GOES_ON + JAX_PLUGIN, id="the-fallback-before-the-traceback"),
        ],
    )
    def test_sibling_a_failure_the_fallback_does_not_follow_stays_an_error(self, text):
        assert errors(text)


# https://github.com/AronnePiperno/fewshot/blob/a1d4a3688e7b9fe21cdd432695b169b04b963890/train.log (heldout17w): a
# Lightning-Hydra template run started again and again in one train.log; the last run trains and starts testing
def hydra(t: str) -> str:
    return (f"[2025-01-11 {t},476][src.utils.utils][INFO] - Enforcing tags! <cfg.extras.enforce_tags=True>\n"
            f"[2025-01-11 {t},478][src.utils.utils][INFO] - Printing config tree with Rich! <cfg.extras.print_config=True>\n"
            f"[2025-01-11 {t},503][__main__][INFO] - Instantiating datamodule <src.data.custom_datamodule.T3ALDataModule>\n")


HYDRA_FAILS = (
    "[2025-01-11 16:57:13,506][src.utils.utils][ERROR] - \n"
    "Traceback (most recent call last):\n"
    '  File "/home/def/miniforge3/envs/fewshot/lib/python3.11/site-packages/hydra/_internal/utils.py", line 650, in _locate\n'
    "    obj = import_module(mod)\n"
    "ModuleNotFoundError: No module named 'pandas'\n"
)
HYDRA_FAILS_AGAIN = (
    "[2025-01-11 16:58:38,421][src.utils.utils][ERROR] - \n"
    "Traceback (most recent call last):\n"
    '  File "/home/def/miniforge3/envs/fewshot/lib/python3.11/site-packages/hydra/_internal/instantiate/_instantiate2.py", line 92, in _call_target\n'
    "    return _target_(*args, **kwargs)\n"
    "TypeError: T3ALNet.__init__() missing 1 required positional argument: 'avg_features_path'\n"
)
HYDRA_TRAINS = (
    "[2025-01-11 21:26:22,930][__main__][INFO] - Starting training!\n"
    "[2025-01-11 21:26:25,100][__main__][INFO] - Starting testing!\n"
    "[2025-01-11 21:26:25,101][__main__][WARNING] - Best ckpt not found! Using current weights for testing...\n"
)


class TestLogInconclusiveRestartedRepeated:
    """An opening printed at every start of a log many runs were appended to (more than once before the failure) starts
    a later run when one process writes the log and the later run gets somewhere (a progress line, a stage it starts)
    after the log's last exception: the failures are earlier runs' (case restarted)."""

    def test_runs_started_again_and_again_then_one_that_trains(self):
        text = hydra("16:57:13") + HYDRA_FAILS + hydra("16:58:37") + HYDRA_FAILS_AGAIN + hydra("21:26:14") + HYDRA_TRAINS
        assert errors(text) == []
        assert [f.evidence["earlier_run"]["started_again_at"] for f in report(text).findings if "earlier_run" in f.evidence]
        assert "earlier run's" in answer(text).title

    def test_control_one_run_that_trains_is_no_restart(self):
        text = hydra("21:26:14") + HYDRA_TRAINS
        assert not [f for f in report(text).findings if "earlier_run" in f.evidence] and "earlier run" not in answer(text).title

    @pytest.mark.parametrize(
        "text",
        [
            # the later run prints its set-up only and the log stops: it may have failed the same way (dev7w's chengziHome)
            pytest.param(hydra("16:57:13") + HYDRA_FAILS + hydra("16:58:37") + HYDRA_FAILS_AGAIN + hydra("21:26:14"), id="restart-cut-in-set-up"),
            # the last run fails too: its failure is the log's
            pytest.param(hydra("16:57:13") + HYDRA_FAILS + hydra("16:58:37") + HYDRA_TRAINS + HYDRA_FAILS_AGAIN, id="the-last-run-fails"),
        ],
    )
    def test_sibling_a_last_run_that_fails_or_is_cut_in_set_up_keeps_the_error(self, text):
        assert errors(text)


# https://github.com/360ZMEM/USV-AUV-colab/blob/0320209cc6ad99bd3d0d94983b6822b569a5d6cc/output.log (heldout17w): a first
# launch fails at `import torch`, the relaunch (nohup's line again) trains TD3 episode after episode
NOHUP = "nohup: ignoring input\n"
NO_TORCH = (
    "Traceback (most recent call last):\n"
    '  File "/home7/huangjunhao/xujingzehua/USV-AUV-col/td3.py", line 3, in <module>\n'
    "    import torch\n"
    "ModuleNotFoundError: No module named 'torch'\n"
)
EPISODES = "".join(f"EP:{e} | TD Error [{46.0 + e:.3f}, {8.58 - e / 10:.3f}] | ALoss [{117.4 + e:.3f}, {123.8 + e:.3f}] | ep_r -{126 - e} | L_data 0.64\n"
                   for e in range(10, 14))


class TestLogInconclusiveRestartedMoved:
    """A relaunch after a failure (the log's opening line again) followed by the later run's progress decides the log:
    the failure is an earlier run's; a relaunch followed by nothing leaves it the answer."""

    def test_a_relaunch_that_trains_makes_the_first_failure_an_earlier_runs(self):
        text = NOHUP + NO_TORCH + NOHUP + EPISODES
        assert errors(text) == []
        assert "earlier run's" in answer(text).title

    def test_control_a_single_launch_that_trains_is_no_restart(self):
        assert "earlier run" not in answer(NOHUP + EPISODES).title

    def test_sibling_a_relaunch_that_fails_again_is_the_failure(self):
        assert errors(NOHUP + NO_TORCH + NOHUP + EPISODES + NO_TORCH) == ["module-not-found"]


# A run's last lines that say it is done (knowledge/ending.py LAST_ENDED), each from a heldout17w or dev7w log whose run
# completed; the same lines earlier in a log, or among a record's fields, are no end.
LAST_LINES = [
    # https://github.com/40uf411/SliceGAN/blob/9ecae700562aad2b7279de300ae1581d8a4939e1/output.log
    "--- Total Execution Time: 3.5772s ---\nSampling and analysis complete. Final array shape: (2, 64, 64, 64)\n",
    # https://github.com/ddrous/cavia/blob/e89978bd61cf218adc65862d3a1d9eee4bbb97e0/nohup.log
    "Total script time in hours minutes seconds:  00:00:08\n",
    # https://github.com/BasilKucherov/msu_diploma_bachelor/blob/c7d8543a6594f93c10e5f5d736fe30ee3e3ed38b/train.log
    "2024-04-04 00:16:38,124;INFO;Finish train TripletLoss_MSWC_EN_500CS_100SPC in 11176.58 seconds\n",
    # https://github.com/0xMarsRover/IDT_Fisher_Vector/blob/6c686e767dcdde83fbf7d3f4a2c4b6114746b95b/output.log
    "INFO:root:Complete Evaluation\nINFO:root:End Time: 2018-10-31 15:19\n",
    # https://github.com/Ange339/graph_neural_network/blob/5c8718ea6edc9ae4b1f1da830b157881bd81495f/train.log
    "09-06 15:04:16 - INFO - __main__ - Done\n",
    # https://github.com/Adam-Sm1th/GG/blob/6079e860029aa267d2a0c67ff3186f76a28fbd85/train.log
    "训练完成。最佳 bit accuracy : 100.00%\n权重保存在 './weights/'\n",
    # https://github.com/2021010740135/EDT_CODE/blob/c39babd453f0f27e67cac18c2dad04526d2663e7/train.log
    "2026-05-12 13:33:13,907 - INFO - ✅ 预训练任务圆满结束 (总耗时: 1.46 小时)\n",
    # https://github.com/AmogelangMphela/FishVista_MaxVIT_Feature_Embedding_Extraction/blob/c718f9608f76310174e6e5bae10f9123171c1639/train.log
    "\x1b[1;34mwandb\x1b[0m: 🚀 View run \x1b[33mvibrant-fire-2\x1b[0m at: \x1b[34mhttps://wandb.ai/a/FishVista_Project/runs/7rtgyv4r\x1b[0m\n"
    "\x1b[1;34mwandb\x1b[0m: Find logs at: \x1b[1;35mwandb/run-20260416_140418-7rtgyv4r/logs\x1b[0m\n",
    # https://github.com/AD-39/icon_classify/blob/a78f188e017739c999ab0f82269af32187546374/log/log.txt
    "INFO - classify over!\nINFO - Cost time: 249.4536235332489\n",
    # dev8w: https://github.com/HoiM/SqueezeNet-CenterLoss-for-Caffe/blob/508cf559857ed23118e1fdf5fad5351d949457d5/output/log.txt
    "I0615 15:56:37.051666  1860 sgd_solver.cpp:273] Snapshotting solver state to binary proto file ./output/poly_iter_200000.solverstate\n"
    "Solving done ...\n",
    # dev8w: https://github.com/GIS-Remote-Sensing-Goettingen/Dinov3-LWF-Segmentation/blob/0a28ef2727c5ed999db29300dafc2192bac187b6/logs/run.log
    "2025-11-24 18:30:50 [INFO] Inference phase finished in 36.61s\n2025-11-24 18:30:50 [INFO] All enabled phases completed.\n",
    # dev8w: https://github.com/IdaCy/ThinkLogits/blob/c73454a660b7525a8db95c1e0802121341aafe5e/logs/run.log
    "2025-04-14 09:26:41,859 INFO: Finished all questions. Saving JSON to output/multi_hint_results.json...\n2025-04-14 09:26:41,996 INFO: Done!\n",
    # dev8w: https://github.com/Adithi6/fedavg-dp-baseline/blob/cad3b645a33b92f36fd0a40c9a6776aa02deeadf/experiment.log
    "2026-04-27 10:42:12,382 | INFO | Gossip round state reset\n2026-04-27 10:42:12,382 | INFO | Total time = 94.22s\n",
    # dev8w: https://github.com/CedricKai/robot_grasp/blob/7a5592f0d873f3ca2fc9f8babaf1bf589d99754f/output/log.txt
    "Speed: 2.0ms preprocess, 76.3ms inference, 1.0ms postprocess per image at shape (1, 3, 480, 640)\nEnd.\n",
]
EPOCHS = "".join(f"Epoch: {e} / 150  Training loss:  0.00{e % 9 + 1}  Validation loss:  0.96{e % 9}\n" for e in range(146, 150))


class TestLogNoFailureLastLines:
    """A run's very last lines that say it is done (a time summary, a stage's "complete", a logger's "Done", the same in
    Chinese, wandb's finished run) are its end: healthy when nothing failed."""

    @pytest.mark.parametrize("end", LAST_LINES)
    def test_the_last_lines_end_the_run(self, end):
        said = answer(EPOCHS + end)
        assert said is not None and said.id == "log-no-failure"

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("Evaluation complete\n" + EPOCHS, id="an-evaluation-then-more-epochs"),
            # Megatron's progress line holds a time among its fields and a counter short of its total (dev, megatron#516)
            pytest.param(" iteration        3/  286102 | consumed samples:         1536 | elapsed time per iteration (ms): 37143.0 |"
                         " learning rate: 0.000E+00 | global batch size:   512 |\n", id="megatron-elapsed-time-per-iteration"),
            # a benchmark's record with a time field (dev3, NVIDIA/TransformerEngine#445)
            pytest.param("use_te: False, use_fp8: False, bs: 10240, hid_size:  1024, out_size:  1024, cost_time: 0.716221ms\n", id="a-timed-record"),
            # one step of a server's start (dev, OpenRLHF#951) and torch's store-based barrier (heldout16), as last lines
            pytest.param("(LLMRayActor pid=123434) INFO 04-09 01:52:46 [gpu_model_runner.py:1534] Graph capturing finished in 33 secs, took 1.27 GiB\n",
                         id="a-start-step-finished"),
            pytest.param("2025-01-21 05:25:51,567 - distributed_c10d.py - INFO: Rank 0: Completed\n", id="a-barrier-completed"),
        ],
    )
    def test_control_end_words_earlier_or_among_fields_are_no_end(self, text):
        said = answer(text)
        assert said is not None and said.id != "log-no-failure"

    @pytest.mark.parametrize("end", LAST_LINES)
    def test_sibling_an_end_then_a_traceback_is_the_failure(self, end):
        assert errors(EPOCHS + end + NO_TORCH) == ["module-not-found"]
