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
        report = api.diagnose(case("dev8w", "ByeByeChen-st-gcn-master-improved-stgcn-restarts-nan-loss"))
        f = next(f for f in report.findings if f.id == "loss-not-finite")
        assert f.severity is Severity.INFO and "logged finite after it" in f.title
        assert report.findings[0].id == "log-inconclusive" and not any(x.severity is Severity.ERROR for x in report.findings)

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
