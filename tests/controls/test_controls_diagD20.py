"""Controls and siblings for diagD20 (issue 35: a run that did not fail must not be told a problem was found): a loss
warning keyed on what makes it true at the end of the log. A nan loss logged finite again after its last nan reading (an
earlier run's, in a log several runs were appended to) is no longer the run's state; TRL's GRPO loss of 0.0 beside its
KL column is that trainer's normal reading, not Trainer's nan filter. `test_control_*` is the not-failed input that must
not get the warning as its answer, `test_sibling_*` the nearest failing one that keeps it. Lines are real ones (sources
named)."""

from __future__ import annotations

from pathlib import Path

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.core.findings import Severity

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "log_sample"


def case(part: str, name: str) -> str:
    return (SAMPLE / part / f"{name}.log").read_text(encoding="utf-8")


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


def told_as_information(part: str, name: str, fid: str, said: str) -> None:
    """The case's `fid` is information that says `said`; the answer is not decided, with no error."""
    report = api.diagnose(case(part, name))
    f = next(f for f in report.findings if f.id == fid)
    assert f.severity is Severity.INFO and said in f.title
    assert report.findings[0].id == "log-inconclusive" and not any(x.severity is Severity.ERROR for x in report.findings)


# st-gcn's epoch lines (dev8w, https://github.com/ByeByeChen/st-gcn-master-improved/blob/957e193529982b19f08f0f760f57a388a9c7366b/output/log.txt)
STGCN_NAN = "".join(f"[03.24.23|09:5{i}:31] Training epoch: {i}\n[03.24.23|09:5{i}:51] \tmean_loss: nan\n" for i in range(4))
STGCN_FINITE = "".join(f"[03.24.23|16:3{i}:26] Training epoch: {20 + i}\n[03.24.23|16:3{i}:47] \tmean_loss: {1.7360964218775432 + i / 7}\n"
                       for i in range(4))
# TRL GRPO's metrics record (dev7w, https://github.com/LIU-Hao-2002/GRPO_project/blob/0983847ee400603cbf7402314a94e1caa816bb02/logs/nohup.out)
GRPO = ("{'loss': 0.0, 'grad_norm': 0.20586903393268585, 'learning_rate': 4.5225424859373684e-07, 'completion_length': 382.2, "
        "'rewards/format_reward_func': 0.5, 'rewards/equation_reward_func': 0.0, 'reward': 0.5, 'reward_std': 0.42426406145095824, "
        "'kl': 0.0005637383350403979, 'epoch': 5.0}\n")


class TestLossNotFiniteLoggedFiniteAgain:
    verdict = "loss-not-finite"

    def test_control_a_restarted_run_whose_loss_is_finite_again(self):
        # dev8w: the first of 25 appended runs logs mean_loss nan; the last trains with finite losses and is cut mid-run
        told_as_information("dev8w", "ByeByeChen-st-gcn-master-improved-stgcn-restarts-nan-loss", "loss-not-finite", "logged finite after it")

    def test_control_nan_epochs_then_finite_ones(self):
        f = finding(STGCN_NAN + STGCN_FINITE, "loss-not-finite")
        assert f is not None and f.severity is Severity.INFO

    def test_sibling_finite_epochs_then_nan_ones(self):
        report = api.diagnose(STGCN_FINITE + STGCN_NAN)
        assert report.findings[0].id == "loss-not-finite" and report.findings[0].severity is Severity.WARN
        assert report_exit(report) == 1

    def test_sibling_an_average_column_that_stays_inf(self):
        # facebookresearch/dinov2#492 (heldout4, failed): the step's value is finite, its running average "(inf)" stays
        f = finding(case("heldout4", "dinov2-492-koleo-loss-inf"), "loss-not-finite")
        assert f is not None and f.severity is Severity.WARN

    def test_sibling_nanogpts_nan_steps_to_the_end(self):
        # karpathy/nanoGPT#215 (heldout4, failed): loss nan at every step after it first appears
        report = api.diagnose(case("heldout4", "nanogpt-215-fp16-loss-nan-v100"))
        assert report.findings[0].id == "loss-not-finite" and report.findings[0].severity is Severity.WARN


class TestLossNotFiniteKlRecord:
    verdict = "loss-not-finite"

    def test_control_grpo_records_with_a_loss_of_zero(self):
        assert finding(GRPO * 4, "loss-not-finite") is None

    def test_control_the_grpo_run_reads_not_decided_without_the_warning(self):
        # dev7w (not failed): two failed starts, then the GRPO run that learns and ends
        report = api.diagnose(case("dev7w", "LIU-Hao-2002-GRPO_project-logs-nohup-out"))
        assert "loss-not-finite" not in [f.id for f in report.findings] and report.findings[0].id == "log-inconclusive"

    def test_sibling_a_grpo_record_that_holds_nan(self):
        assert finding(GRPO.replace("'kl': 0.0005637383350403979", "'kl': nan"), "loss-not-finite") is not None

    def test_sibling_trainers_zero_loss_without_a_kl_column(self):
        # huggingface/accelerate#1763 (dev, failed): FSDP, a loss of 0.0 from the first step
        assert finding(case("dev", "accelerate-1763-fsdp-zero-loss-step0"), "loss-not-finite") is not None


# dev7w, https://github.com/FalsoMoralista/FGDCC/blob/968907008f0b8460b85a7a965d70c09af0596861/logs/nohup.out: a start that
# stopped at its imports, then a later test run's lines in the same file
IMPORT_TB = ("Traceback (most recent call last):\n"
             '  File "/home/rtcalumby/adam/luciano/LifeCLEFPlant2022/DeepCluster/main_test.py", line 16, in <module>\n'
             "    from test_deeper_cluster import main as app_main\n"
             "ModuleNotFoundError: No module named 'test_deeper_cluster'\n")
LATER_RUN = ("INFO:root:called-params configs/in1k_vith14_ep300_FGDCC.yaml\n"
             "INFO:root:Initialized (rank/world-size) 0/1\n"
             "INFO:root:loaded pretrained encoder from epoch 75 with msg: <All keys matched successfully>\n"
             "INFO:root:avg. test_loss 0.897 avg. Accuracy@1 79.144 - avg. Accuracy@5 95.231\n")
IN_MAIN_TB = ("Traceback (most recent call last):\n"
              '  File "/home/rtcalumby/adam/luciano/LifeCLEFPlant2022/DeepCluster/main_test.py", line 40, in <module>\n'
              "    app_main(args=params)\n"
              '  File "/home/rtcalumby/adam/luciano/LifeCLEFPlant2022/DeepCluster/main_test.py", line 22, in app_main\n'
              "    from test_deeper_cluster import main\n"
              "ModuleNotFoundError: No module named 'test_deeper_cluster'\n")


class TestStartUpFailureThenALaterRun:
    verdict = "module-not-found"

    def test_control_the_appended_log_whose_last_run_tests(self):
        told_as_information("dev7w", "FalsoMoralista-FGDCC-logs-nohup-out", "module-not-found", "an earlier start's")

    def test_control_an_import_failure_then_the_programs_run_again(self):
        # the test line the earlier run printed (line 20 of the log) stands again after the failure
        earlier = "INFO:root:avg. test_loss 1.076 avg. Accuracy@1 74.713 - avg. Accuracy@5 92.981\n"
        f = finding(earlier + IMPORT_TB + LATER_RUN, "module-not-found")
        assert f is not None and f.severity is Severity.INFO

    def test_sibling_one_line_of_a_kind_never_seen_before_decides_nothing(self):
        f = finding(IMPORT_TB + LATER_RUN, "module-not-found")
        assert f is not None and f.severity is Severity.ERROR

    def test_sibling_a_package_list_pasted_after_the_failure(self):
        # "accelerate 0.25.0" holds a progress word and a number: no run of the program's
        pip = "Package                  Version\n------------------------ ----------\naccelerate               0.25.0\nnumpy                    1.26.4\n"
        f = finding(IMPORT_TB + pip, "module-not-found")
        assert f is not None and f.severity is Severity.ERROR

    def test_sibling_the_import_failure_that_ends_the_log(self):
        report = api.diagnose(LATER_RUN + IMPORT_TB)
        assert report.findings[0].id == "module-not-found" and report.findings[0].severity is Severity.ERROR

    def test_sibling_a_failure_inside_the_programs_own_function(self):
        # a function of the program ran: what follows may be this process going on, not decided by one line of it
        f = finding(IN_MAIN_TB + LATER_RUN, "module-not-found")
        assert f is not None and f.severity is Severity.ERROR

    def test_sibling_a_rank_that_stopped_at_its_imports_beside_others(self):
        # torchrun's ranks write the log: the other ranks' progress says nothing of the one that stopped
        ranked = "".join(f"[rank1]: {line}\n" for line in IMPORT_TB.splitlines()) + "".join(f"[rank0]: {line}\n" for line in LATER_RUN.splitlines())
        f = finding(ranked, "module-not-found")
        assert f is not None and f.severity is Severity.ERROR

    def test_sibling_every_start_fails_the_same_way_at_its_top_level(self):
        # dev7w (failed): 12 starts of train_edge.py, a training loop written at the top level, each ends in the same
        # TypeError at scheduler.step(); the log ends in it
        report = api.diagnose(case("dev7w", "yejing97-clf_stroke-logs-nohup-out"))
        assert report.findings[0].severity is Severity.ERROR and report_exit(report) == 1


class TestSnapshotSettingsDoNotLead:
    """MIG on, a GPU in Exclusive_Process mode: settings a pasted table shows, no fault of the run (core/findings.py
    SNAPSHOT_SETTINGS). Where nothing decides the run, the undecided answer leads them."""

    verdict = "gpu-compute-mode-restricted"
    TABLE = case("heldout10", "bottlerocket-core-kit-834-nvidia-package-updates")
    # facebookresearch/maskrcnn-benchmark#699 (heldout8): a run on GPUs another process holds
    BUSY = ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable (malloc at "
            "/opt/conda/conda-bld/pytorch_1549635019666/work/aten/src/THC/THCCachingAllocator.cpp:233)\n")

    def test_control_healthy_a100s_in_exclusive_process_mode(self):
        # heldout10 (not failed): a package update's test output, nvidia-smi with both A100s in E. Process mode
        report = api.diagnose(self.TABLE)
        ids = [f.id for f in report.findings]
        assert ids[0] == "log-inconclusive" and "gpu-compute-mode-restricted" in ids

    def test_control_a_mig_test_table(self):
        # heldout10 (not failed): nvitop's MIG test prints nvidia-smi with GPU 1 in MIG mode
        report = api.diagnose(case("heldout10", "nvitop-8-mig-device-support"))
        assert [f.id for f in report.findings][:2] == ["log-inconclusive", "mig-enabled"]

    def test_sibling_the_runs_own_failure_beside_the_table_leads(self):
        report = api.diagnose(self.TABLE + self.BUSY)
        assert report.findings[0].severity is Severity.ERROR and "log-inconclusive" not in [f.id for f in report.findings]


# espnet's trainer: the warning it logs at each step it skips (https://github.com/espnet/espnet/issues/3170) and its
# progress lines (https://github.com/espnet/espnet/issues/2674)
ESPNET_SKIP = "[user] 2021-04-23 19:22:5{i},420 (trainer:581) WARNING: The grad norm is nan. Skipping updating the model.\n"
ESPNET_STEPS = [
    "[PC] 2020-11-11 16:49:47,107 (trainer:486) INFO: 12epoch:train:6001-6375batch: iter_time=0.001, forward_time=0.005, loss=1.379, backward_time=0.005, optim_step_time=1.964e-04, lr_0=0.100, train_time=0.014\n",
    "[PC] 2020-11-11 16:49:52,399 (trainer:486) INFO: 12epoch:train:6376-6750batch: iter_time=0.001, forward_time=0.005, loss=1.440, backward_time=0.005, optim_step_time=1.956e-04, lr_0=0.100, train_time=0.014\n",
    "[PC] 2020-11-11 16:49:57,736 (trainer:486) INFO: 12epoch:train:6751-7125batch: iter_time=0.001, forward_time=0.005, loss=1.408, backward_time=0.005, optim_step_time=2.018e-04, lr_0=0.100, train_time=0.014\n",
    "[PC] 2020-11-11 16:50:03,074 (trainer:486) INFO: 12epoch:train:7126-7500batch: iter_time=0.001, forward_time=0.005, loss=1.417, backward_time=0.005, optim_step_time=1.972e-04, lr_0=0.100, train_time=0.014\n",
]


class TestGradNormSkipsThatStopped:
    verdict = "grad-norm-not-finite"

    def test_control_skipped_steps_at_the_start_then_training(self):
        # a dynamic loss scaler's first skips, then the epochs go on with no skip: not the state the log ends in
        f = finding("".join(ESPNET_SKIP.format(i=i) for i in range(3)) + "".join(ESPNET_STEPS), "grad-norm-not-finite")
        assert f is not None and f.severity is Severity.INFO and "none after line 3" in f.title

    def test_sibling_skips_between_the_steps_to_the_end(self):
        # espnet#3170's shape: the warning comes back between the progress lines up to the end
        text = "".join(step + ESPNET_SKIP.format(i=i) for i, step in enumerate(ESPNET_STEPS))
        f = finding(text, "grad-norm-not-finite")
        assert f is not None and f.severity is Severity.WARN

    def test_sibling_the_stuck_espnet_run(self):
        # espnet/espnet#4559 (heldout5, failed): "training seemed stuck", the log ends in the skip
        report = api.diagnose(case("heldout5", "espnet-4559-stuck-grad-norm-nan"))
        assert report.findings[0].id == "grad-norm-not-finite" and report.findings[0].severity is Severity.WARN

    def test_sibling_torchs_clip_warning_is_printed_once_whatever_follows(self):
        clip = ("/espnet/espnet2/train/trainer.py:639: FutureWarning: Non-finite norm encountered in torch.nn.utils.clip_grad_norm_; "
                "continuing anyway. Note that the default behavior will change in a future release to error out if a non-finite "
                "total norm is encountered.\n")
        f = finding(clip + "".join(ESPNET_STEPS), "grad-norm-not-finite")
        assert f is not None and f.severity is Severity.WARN
