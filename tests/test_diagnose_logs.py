"""The corpus of real log excerpts (tests/fixtures/logs, each naming its source in
its first line): the right root cause first, the consequences marked, the first
failing rank and node named, and a healthy log without an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.commands.diagnose.inputs import resolve
from gpudoctor.commands.diagnose.analyse import diagnose
from gpudoctor.core.findings import Severity

LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"

# file -> (the first finding, the root cause's rank and node when the log shows them, consequences expected)
EXPECTED = {
    "nccl_shm_container.log": ("nccl-shm-segment", None, "mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow", ["nccl-unhandled-system-error"]),
    "nccl_duplicate_gpu.log": ("nccl-duplicate-gpu", 3, None, ["nccl-invalid-usage"]),
    "nccl_ib_remote.log": ("nccl-ib-completion-error", None, "kolyoz2", ["nccl-remote-error", "nccl-process-teardown"]),
    "watchdog_timeout_torchrun.log": ("nccl-watchdog-timeout", 2, "gpu-worker-7", []),
    "store_socket_timeout.log": ("store-socket-timeout", 3, None, []),
    "store_address_in_use.log": ("store-address-in-use", None, None, []),
    "cuda_oom_gpu0_shared.log": ("cuda-oom-gpu0-other-ranks", 0, None, []),
    "cuda_fork.log": ("cuda-fork-reinit", None, None, []),
    "ddp_unused_parameters.log": ("ddp-unused-parameters", 1, None, ["torchrun-child-failed"]),
    "launcher_sigkill.log": ("launcher-sigkill", 0, "mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker", ["torchrun-child-failed"]),
    "launcher_local_rank.log": ("launcher-local-rank-arg", None, None, ["torchrun-child-failed"]),
    "dataloader_bus_error.log": ("dataloader-shm-bus-error", None, None, ["dataloader-worker-exited"]),
    "gloo_loopback_mesh.log": ("gloo-loopback-fallback", 8, None, ["gloo-connect-full-mesh"]),
    "gloo_peer_closed.log": ("gloo-peer-closed", None, None, []),
    "platform_windows.log": ("libuv-missing", None, None, []),
    "slurm_labelled_crlf.log": ("cuda-oom", 3, "gpu-node-03", ["nccl-watchdog-timeout", "slurm-task-failed"]),
    # no cause in the log: the headline is the timeout, and torch's dump signal names the first rank to time out
    "nccl_timeout_dump_signal.log": ("nccl-watchdog-timeout", 6, None, []),
    "nccl_heartbeat_stuck.log": ("nccl-heartbeat-stuck", 1, None, []),
    "ddp_collective_fingerprint.log": ("collective-fingerprint-mismatch", 1, None, []),
    "dataloader_ancdata.log": ("dataloader-ancdata", None, None, []),
    "rendezvous_c10d_store.log": ("rendezvous-connection-failed", None, None, []),
    "platform_nccl_not_built.log": ("backend-not-built", None, None, []),
    "lightning_cuda_initialized.log": ("lightning-cuda-initialized", None, None, []),
    "store_based_barrier.log": ("store-waiting-for-clients", 1, None, []),
    # real pastes that an earlier version misread (see each file's first line for the thread)
    "nccl_system_error_vllm.log": ("nccl-unhandled-system-error", None, None, []),
    "dataloader_worker_exit_code.log": ("dataloader-worker-exited", None, None, []),
    "platform_libuv_built.log": ("libuv-missing", None, None, []),
    "ddp_marked_ready_twice.log": ("ddp-marked-ready-twice", None, None, []),
    "nccl_bootstrap_connect_timeout.log": ("nccl-socket-connect", None, "gpu-bql-144-103", ["nccl-peer-closed"]),
    "cuda_driver_too_old_multiline.log": ("cuda-driver-too-old", None, None, []),
    "store_address_in_use_listen.log": ("store-address-in-use", None, None, []),
    "nccl_internal_error_last_error.log": ("nccl-internal-error", None, None, []),
    "store_connect_timeout_torchx.log": ("store-connect-timeout", None, None, []),
    "launcher_sigterm_determined.log": ("launcher-terminated", None, None, ["torchrun-stopping-workers"]),
    "gloo_peer_closed_after_epoch.log": ("gloo-peer-closed", None, None, []),
    "nccl_heartbeat_deim.log": ("nccl-heartbeat-stuck", 1, None, []),
    "launcher_deepspeed_sigbus.log": ("launcher-sigbus", None, None, []),
    "launcher_deepspeed_sigkill.log": ("launcher-sigkill", None, None, []),
    "dataloader_shm_write_old.log": ("shm-no-space", None, None, []),
    "gloo_hostname_unresolvable.log": ("gloo-hostname-unresolvable", None, None, []),
    # the node whose Root Cause block has the earliest time failed first, whatever the paste order
    "torchrun_two_nodes_root_cause.log": ("torchrun-root-cause", 4, "gpu187.cluster.local", ["torchrun-child-failed"]),
    "slurm_oom_killed_script.log": ("host-oom-killer", None, None, ["launcher-sigkill"]),
    "slurm_task_bus_error.log": ("launcher-sigbus", None, None, []),
}
HEALTHY = {"healthy_training.log", "ddp_find_unused_healthy.log", "healthy_noise_and_exit_warnings.log", "healthy_store_closed_at_exit.log"}


def test_every_fixture_has_an_expectation_and_names_its_source():
    files = {p.name for p in LOGS.glob("*.log")}
    assert files == set(EXPECTED) | HEALTHY
    for p in LOGS.glob("*.log"):
        assert p.read_text(encoding="utf-8").startswith("#"), f"{p.name}: first line names the source thread"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_root_cause_first(name):
    first, rank, node, consequences = EXPECTED[name]
    report = diagnose(resolve(str(LOGS / name)))
    assert report.failed()
    head = report.findings[0]
    assert head.id == first and head.severity is Severity.ERROR
    root = report.data["root_cause"]
    assert root["id"] == first
    assert root.get("rank") == rank
    assert root.get("node") == node
    by_id = {f.id: f for f in report.findings}
    for c in consequences:
        assert by_id[c].evidence["role"] == "consequence"
        assert by_id[c].evidence["consequence_of"] == first
        assert report.findings.index(by_id[c]) > 0


def test_evidence_has_the_matched_lines_with_line_numbers():
    report = diagnose(resolve(str(LOGS / "nccl_shm_container.log")))
    head = report.findings[0]
    assert head.evidence["first_line"] == 2
    assert head.evidence["log"].startswith("line 2 [local rank 0, mt-l-x86iavx512")
    assert "failed to extend /dev/shm/nccl-WU88OE" in head.evidence["log"]


def test_watchdog_names_the_ranks_that_did_not_report():
    report = diagnose(resolve(str(LOGS / "slurm_labelled_crlf.log")))
    wd = next(f for f in report.findings if f.id == "nccl-watchdog-timeout")
    assert wd.evidence["ranks"] == [0, 4]
    assert 3 in wd.evidence["ranks_not_reporting"]
    assert wd.evidence["OpType"] == "ALLREDUCE" and wd.evidence["SeqNum"] == "1580"


def test_a_consequence_without_its_cause_says_so():
    report = diagnose(resolve(str(LOGS / "gloo_peer_closed.log")))
    assert "its cause is not in this log" in report.findings[0].title


def test_healthy_log_has_no_error_and_the_noise_is_safe_to_ignore():
    report = diagnose(resolve(str(LOGS / "healthy_training.log")))
    assert not report.failed()
    assert report.data["root_cause"] is None
    noise = {f.id: f for f in report.findings if f.severity is Severity.INFO}
    assert set(noise) == {"launcher-omp-threads", "ipv6-address-family"}
    assert all(f.evidence["safe_to_ignore"] for f in noise.values())
    assert report.findings[0].id == "log-no-failure"  # the answer leads, the notices follow


def by_id(name):
    report = diagnose(resolve(str(LOGS / name)))
    return report, {f.id: f for f in report.findings}


def test_a_traceback_source_line_is_not_read_as_the_error():
    # `raise RuntimeError(f"NCCL error: {error_str}")` is code quoted by the traceback
    report, found = by_id("nccl_system_error_vllm.log")
    assert "nccl-error" not in found
    assert found["nccl-unhandled-system-error"].evidence["first_line"] == 6


def test_the_nccl_last_error_line_is_in_the_evidence():
    _, found = by_id("nccl_internal_error_last_error.log")
    assert found["nccl-internal-error"].evidence["last_error"] == "Attribute busid of node nic not found"


def test_the_first_refused_bind_names_the_port():
    report, found = by_id("store_address_in_use_listen.log")
    assert found["store-address-in-use"].evidence["first_line"] == 6
    assert found["store-address-in-use"].evidence["port"] == "47531"


def test_torchx_prefix_gives_the_local_rank():
    report, _ = by_id("store_connect_timeout_torchx.log")
    assert report.data["root_cause"]["local_rank"] == 1


def test_a_log_with_only_warnings_says_safe_to_ignore_and_does_not_call_an_unfinished_run_healthy():
    # The run is at iteration 19 when the paste ends: its warning is safe to ignore, but the
    # log does not show the run ending, so it is not called healthy (exit 1, not decided).
    report, found = by_id("ddp_find_unused_healthy.log")
    assert report.data["root_cause"] is None
    warning = found["ddp-find-unused-not-needed"]
    assert warning.severity is Severity.WARN and warning.evidence["safe_to_ignore"]
    assert "log-inconclusive" in found and report.failed()


def test_deepspeed_names_the_failed_local_rank_in_its_command_line():
    report, _ = by_id("launcher_deepspeed_sigkill.log")
    assert report.data["root_cause"]["local_rank"] == 3


def test_healthy_noise_and_an_exception_ignored_at_exit_are_not_failures():
    report, found = by_id("healthy_noise_and_exit_warnings.log")
    assert not report.failed() and report.data["root_cause"] is None
    assert "python-exception" not in found
    assert found["exception-ignored-at-exit"].evidence["safe_to_ignore"]


def test_the_header_does_not_call_a_victim_the_first_failure():
    from gpudoctor.commands.diagnose.analyse import header

    victim, _ = by_id("gloo_peer_closed_after_epoch.log")
    assert header(victim).startswith("first sign of the failure (its cause is in another rank's output)")
    culprit, _ = by_id("nccl_shm_container.log")
    assert header(culprit).startswith("first failure: ")
    named, _ = by_id("torchrun_two_nodes_root_cause.log")  # torchrun's Root Cause block names the failing rank
    assert header(named).startswith("first failure: rank 4")


def test_the_store_closing_at_exit_is_noise_unless_something_failed():
    report, found = by_id("healthy_store_closed_at_exit.log")
    assert not report.failed()
    assert found["store-connection-lost"].evidence["consequence_of"] == "store-closed-at-exit"
    assert found["store-closed-at-exit"].severity is Severity.INFO


def _error_file(path: Path, message: str, stamp: str = "1700000000") -> None:
    import json

    path.parent.mkdir(parents=True)
    body = {"message": {"message": message, "extraInfo": {"py_callstack": "Traceback ...\n" + message, "timestamp": stamp}}}
    path.write_text(json.dumps(body))


def test_in_the_same_second_the_rank_that_failed_beats_the_peer_that_lost_it(tmp_path):
    # error.json dates to the second: rank 0, which only lost its peer, used to win the tie.
    _error_file(tmp_path / "0" / "error.json", "RuntimeError: [gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:4242")
    _error_file(tmp_path / "1" / "error.json", "AssertionError: Torch not compiled with CUDA enabled")
    root = diagnose(resolve(str(tmp_path))).data["root_cause"]
    assert root["rank"] == 1 and root["error_file"] == "1/error.json", root


def test_an_undecided_answer_that_keeps_a_failure_does_not_say_none_was_shown():
    """The verdict line of a log-inconclusive answer is true of every case of it: a failure the job went on
    past (a single-process log whose steps count on after a traceback) is still shown, kept as info."""
    from gpudoctor import api
    from gpudoctor.render.console import verdict

    log = ('epoch 1 step 1 loss 0.9\nTraceback (most recent call last):\n  File "/x/prep.py", line 3, in <module>\n'
           "    main()\nValueError: bad row 17\n" + "".join(f"epoch 1 step {i} loss 0.{9 - i}\n" for i in range(2, 6)))
    report = api.diagnose(log)
    line = verdict(report).plain
    assert report.failed() and "not decided" in line and "no failure shown" not in line
