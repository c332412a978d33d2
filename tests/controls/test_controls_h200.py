"""Controls and siblings for the verdicts a real GPU's logs changed, and the run-end markers beside them
real torchrun jobs on one H200, torch 2.11, 2026-11-28; README in tests/fixtures/gpu_truth/)."""

from __future__ import annotations

from pathlib import Path

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from test_controls_patterns import ids

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "gpu_truth" / "h200-logs"
CURRENT = ("/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py:83: UserWarning: barrier(): using the "
           "device under current context. You can specify `device_id` in `init_process_group` to mute this warning.\n")
GUESS = ("[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this process are "
         "currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.\n")


class TestBarrierCurrentDevice:
    """torch >= 2.4's barrier notice: the current device, not a guess from the rank."""

    def test_control_the_healthy_h200_job_with_it_is_healthy(self):
        report = api.diagnose(path=LOGS / "ok-debug.log")
        assert report_exit(report) == 0 and "barrier-current-device" in [f.id for f in report.findings]

    def test_sibling_the_best_guess_wording_is_still_the_warning(self):
        found = ids(GUESS + "step 1 loss 0.5\n")
        assert "barrier-unknown-device" in found and "barrier-current-device" not in found


class TestDdpDeviceMismatchTorch211:
    def test_control_devices_named_in_a_healthy_line(self):
        assert "ddp-device-mismatch" not in ids("mat1 is on cuda:0, the weights on cuda:0\nstep 1 loss 0.7\n")

    def test_sibling_the_h200_jobs_operand_wording(self):
        report = api.diagnose(path=LOGS / "mismatch.log")
        assert report.findings[0].id == "ddp-device-mismatch" and report_exit(report) == 1


class TestLogEndsWithNcclDestroy:
    """NCCL's "comm ... Destroy COMPLETE" is a clean teardown: the run ended."""

    TEARDOWN = "vm:729:729 [0] NCCL INFO comm 0x38e443b0 rank 0 nranks 1 cudaDev 0 busId 60 - Destroy COMPLETE\n"
    INIT = "vm:729:729 [0] NCCL INFO ncclCommInitRankConfig comm 0x38e443b0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 60 commId 0x1 - Init COMPLETE\n"

    def test_control_init_complete_alone_does_not_decide(self):
        report = api.diagnose(self.INIT + "step 1 loss 0.5\n")
        assert report.findings[0].id == "log-inconclusive" and report_exit(report) == 1

    def test_sibling_a_destroyed_communicator_ends_the_run(self):
        report = api.diagnose(self.INIT + "step 1 loss 0.5\n" + self.TEARDOWN)
        assert [f.id for f in report.findings] == ["log-no-failure"] and report_exit(report) == 0

    def test_sibling_an_aborted_communicator_is_no_end(self):
        aborted = self.TEARDOWN.replace("Destroy COMPLETE", "Abort COMPLETE")
        assert report_exit(api.diagnose(self.INIT + "step 1 loss 0.5\n" + aborted)) == 1


def test_every_failed_h200_jobs_log_names_its_cause():
    expected = {"oom": "cuda-oom", "assert": "cuda-index-out-of-range", "blocking": "cuda-index-out-of-range",
                "ordinal": "cuda-invalid-device-ordinal", "novisible": "cuda-no-gpus-visible",
                "ifname": "nccl-socket-ifname", "mismatch": "ddp-device-mismatch"}
    got = {name: api.diagnose(path=LOGS / f"{name}.log").findings[0].id for name in expected}
    assert got == expected


class TestLogEndsWithExitcodeZero:
    """torch elastic's `exitcode: 0` ends a run; a Go struct's `ExitCode:0` does not."""

    VOLCANO = ("E0224 06:16:07.968578       1 job_controller.go:325] Failed to get job by <Queue: , Job: default/podgroup-e6, "
               "Task:, Event:, ExitCode:0, Action:, JobVersion: 0> from cache: failed to find job <default/podgroup-e6>\n")

    def test_control_a_controllers_struct_field_is_no_end(self):
        # tests/fixtures/log_sample/dev3/volcano-2701: a failed run, called healthy from this field
        assert report_exit(api.diagnose(path=LOGS.parent.parent / "log_sample" / "dev3" / "volcano-2701-gpu-share-failed-find-gpu-id.log")) == 1
        assert report_exit(api.diagnose("step 1 loss 0.5\n" + self.VOLCANO)) == 1

    def test_sibling_torch_elastics_record_ends_the_run(self):
        assert report_exit(api.diagnose("step 1 loss 0.5\nworker 0 finished, exitcode: 0\n")) == 0
