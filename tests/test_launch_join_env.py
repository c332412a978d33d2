"""launch/join_env.py: what the launcher variables make a rank command do."""

import pytest

from gpudoctor.core.findings import Severity
from gpudoctor.launch.capacity import crowded, nproc_problem
from gpudoctor.launch.join_env import join_decision, read_join_env
from gpudoctor.probe.environment import AddressResolution, EnvironmentFacts
from gpudoctor.core.unavailable import Unavailable

GOOD = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def facts(variables, resolved=("127.0.0.1",)):
    master = AddressResolution(variables["MASTER_ADDR"], resolved) if "MASTER_ADDR" in variables else None
    return EnvironmentFacts(variables=dict(variables), master_addr=master)


@pytest.mark.parametrize(
    "variables, nproc_given, join, finding_id, severity",
    [
        ({}, False, False, None, None),
        ({"RANK": "0", "WORLD_SIZE": "abc"}, False, False, "distributed-env-malformed", Severity.ERROR),
        ({"RANK": "x", "WORLD_SIZE": "2", **GOOD}, False, False, "distributed-env-malformed", Severity.ERROR),
        ({"RANK": "2", "WORLD_SIZE": "2", **GOOD}, False, False, "distributed-env-malformed", Severity.ERROR),
        ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "-1", **GOOD}, False, False, "distributed-env-malformed", Severity.ERROR),
        ({"RANK": "1", "WORLD_SIZE": "2"}, False, False, "distributed-env-incomplete", Severity.ERROR),
        ({"RANK": "1"}, False, False, "distributed-env-ignored", Severity.WARN),
        ({"RANK": "1", "WORLD_SIZE": "2"}, True, False, "distributed-env-ignored", Severity.WARN),
        ({"RANK": "0", "WORLD_SIZE": "abc"}, True, False, "distributed-env-ignored", Severity.WARN),
        # Under torchrun --nproc does not win: the job is real.
        ({"RANK": "0", "WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "x", **GOOD}, True, True, None, None),
        ({"RANK": "0", "WORLD_SIZE": "2", **GOOD, "MASTER_PORT": "70000"}, False, True, "master-port-invalid", Severity.ERROR),
        ({"RANK": "0", "WORLD_SIZE": "1"}, False, True, None, None),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "four"}, False, False, "distributed-env-malformed", Severity.ERROR),
    ],
)
def test_decision_and_its_finding(variables, nproc_given, join, finding_id, severity):
    decision = join_decision(facts(variables), "allreduce", nproc_given)
    assert decision.join is join
    assert [f.id for f in decision.findings] == ([finding_id] if finding_id else [])
    if finding_id:
        finding = decision.findings[0]
        assert finding.severity is severity and decision.blocked is (severity is Severity.ERROR)
        shown = " ".join([finding.title, str(finding.evidence)])
        for name, value in variables.items():
            if finding_id.startswith("distributed-env") and (name in ("RANK", "WORLD_SIZE") or name.startswith("SLURM")):
                assert value in shown  # the variable's value is named


def test_an_unresolvable_master_addr_names_the_host():
    unresolved = facts({"RANK": "0", "WORLD_SIZE": "2", **GOOD, "MASTER_ADDR": "nohost.invalid"}, Unavailable("does not resolve"))
    decision = join_decision(unresolved, "train-smoke", False)
    assert decision.blocked and decision.findings[0].id == "master-addr-unresolvable"
    assert "nohost.invalid" in decision.findings[0].title


def test_no_launcher_variable_reads_nothing():
    assert read_join_env("allreduce", False, {"PATH": "/bin"}).findings == ()


def test_nproc_limit_and_crowding():
    assert nproc_problem(1) is None and nproc_problem(256) is None
    assert "(got 0)" in nproc_problem(0) and "between 1 and 256 (got 10000)" in nproc_problem(10000)
    assert crowded("run", 7, 2) is None
    assert crowded("run", 8, 2).id == "ranks-outnumber-cores"
