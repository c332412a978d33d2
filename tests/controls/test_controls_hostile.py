"""Controls and siblings for the verdicts the hostile-input branch adds or changes
(issue 39): the healthy input that looks most like the failure does not get the
verdict; the nearest input that needs another verdict gets its own."""

import socket
import threading

import pytest

from gpudoctor.launch.rendezvous import StoreNotAnswering, _check_in_as_client

torch = pytest.importorskip("torch")


def _free_port() -> int:
    # below the kernel's ephemeral range, free on every interface: an outgoing connection of a
    # parallel test is never handed it in between (a port the kernel picked from that range can be)
    from gpudoctor.launch.store import free_port as unused_port

    return unused_port()


class TestRendezvousStoreSilent:
    def test_control_a_real_store_on_the_port_is_joined(self):
        from datetime import timedelta

        from torch.distributed import TCPStore

        port = _free_port()
        host = TCPStore("127.0.0.1", port, 2, is_master=True, timeout=timedelta(seconds=10), wait_for_workers=False)
        store, arrived = _check_in_as_client("127.0.0.1", port, 2, 5.0, "p", 1)
        assert arrived == 1 and store.get("p/rank1") == b"1" and host.get("p/rank1") == b"1"

    def test_sibling_a_silent_listener_is_named_as_something_else_on_the_port(self):
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(8)
            port = silent.getsockname()[1]
            with pytest.raises(StoreNotAnswering) as info:
                _check_in_as_client("127.0.0.1", port, 2, 1.0, "p", 1)
        assert info.value.answered and f"something else answers on port {port}" in str(info.value)
        assert info.value.finding().id == "rendezvous-store-silent"
        assert not [t for t in threading.enumerate() if t.name == "gpudoctor-rendezvous"]  # its wait was ended


def _outcome(tmp_path, *ranks, **kw):
    from gpudoctor.launch.supervisor import LaunchResult, write_outcome

    write_outcome(LaunchResult(tuple(ranks), False, False, 4.2, str(tmp_path), 30.0, {}, 0, kw.get("diagnosed", ""), False, 0.0, 0.0))
    import gpudoctor

    return gpudoctor.diagnose(path=str(tmp_path))


def _rank(rank, state, code, error=None):
    from gpudoctor.launch.contract import RankError
    from gpudoctor.launch.supervisor import RankOutcome

    err = RankError("ValueError", "bad batch", "Traceback ...") if error else None
    return RankOutcome(rank, state, code, "SIGTERM" if code == -15 else None, "joined", 2, err, (), "", None, None)


class TestRunFolderInconsistent:
    def test_control_a_rank_stopped_after_it_raised_and_a_peer_failed_holds_together(self, tmp_path):
        # Real: rank 1 raised and exited; rank 0 raised too but was slow to leave, and was stopped.
        report = _outcome(tmp_path, _rank(0, "stopped", -15, error=True), _rank(1, "raised", 1, error=True))
        assert "run-folder-inconsistent" not in [f.id for f in report.findings] and report.failed(False)

    def test_control_every_rank_finished_is_healthy(self, tmp_path):
        report = _outcome(tmp_path, _rank(0, "ok", 0), _rank(1, "ok", 0))
        assert "run-folder-inconsistent" not in [f.id for f in report.findings] and not report.failed(False)

    def test_sibling_ranks_stopped_after_a_failure_no_rank_had_are_never_healthy(self, tmp_path):
        report = _outcome(tmp_path, _rank(0, "stopped", -15), _rank(1, "stopped", -15, error=True))
        assert report.findings[0].id == "run-folder-inconsistent" and report.failed(False)
        assert "no rank failed" in str(report.findings[0].evidence)

    def test_sibling_a_rank_finished_with_an_exception_is_never_healthy(self, tmp_path):
        report = _outcome(tmp_path, _rank(0, "ok", 0), _rank(1, "ok", 0, error=True))
        assert report.findings[0].id == "run-folder-inconsistent" and report.failed(False)


class TestFaultInjected:
    """GPUDOCTOR_FAULT acts only when gpudoctor set it for its own ranks (launch/rank.adopt_fault)."""

    def test_control_no_flag_and_no_variable_says_nothing(self):
        from gpudoctor.hang.failures import fault_findings
        from gpudoctor.launch.rank import adopt_fault

        env: dict[str, str] = {}
        assert fault_findings(None, adopt_fault(None, env)) == [] and env == {}

    def test_sibling_a_variable_from_the_environment_is_dropped_and_said(self):
        from gpudoctor.hang.failures import fault_findings
        from gpudoctor.launch.rank import FAULT_ENV, adopt_fault

        env = {FAULT_ENV: "1:wrong"}
        [said] = fault_findings(None, adopt_fault(None, env))
        assert env == {} and said.id == "fault-injected" and "ignored" in said.title

    def test_sibling_the_flag_is_passed_to_the_ranks_and_said_first(self):
        from gpudoctor.hang.failures import fault_findings
        from gpudoctor.launch.rank import FAULT_ENV, adopt_fault

        env = {FAULT_ENV: "1:wrong"}
        said = fault_findings("0:hang", adopt_fault("0:hang", env))
        assert env == {FAULT_ENV: "0:hang"} and [f.title.split(" (")[0] for f in said][0] == "a fault was injected on purpose"
        assert len(said) == 2  # the flag's, and the variable it replaced
