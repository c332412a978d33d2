"""Backend checks: what exists, and which to use, on the real snapshots."""

from __future__ import annotations

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, vary, visible
from gpudoctor.checks.backends import check_backends
from gpudoctor.core.findings import Severity
from gpudoctor.probe.torch_info import failed


def test_cpu_machine_runs_on_gloo():
    findings = check_backends(cpu_facts())
    assert ids(findings) == ["backend-gloo", "backend-choice"]
    choice = by_id(findings, "backend-choice")
    assert "will run on CPU with gloo" in choice.title and "allreduce" in choice.title


def test_gpu_machine_uses_nccl():
    findings = check_backends(gpu2_facts())
    assert ids(findings) == ["backend-gloo", "backend-nccl", "backend-choice"]
    assert "NCCL 2.27.5" in by_id(findings, "backend-nccl").title
    assert "2 GPUs: `allreduce` and `train-smoke` will use NCCL for up to 2 ranks" in by_id(findings, "backend-choice").title


def test_nccl_missing_with_gpus():
    facts = vary(gpu2_facts(), "torch.backends", {"gloo": True, "nccl": False, "mpi": False, "ucc": False})
    findings = check_backends(facts)
    assert by_id(findings, "nccl-missing").severity is Severity.ERROR
    assert "CPU with gloo" in by_id(findings, "backend-choice").title


def test_gloo_missing():
    facts = vary(cpu_facts(), "torch.backends", {"gloo": False, "nccl": False, "mpi": True, "ucc": False})
    findings = check_backends(facts)
    assert by_id(findings, "gloo-missing").severity is Severity.ERROR
    assert by_id(findings, "backend-choice").evidence["also built in"] == ["mpi"]
    on_gpus = vary(gpu2_facts(), "torch.backends", {"gloo": False, "nccl": True})
    assert by_id(check_backends(on_gpus), "gloo-missing").severity is Severity.WARN


def test_distributed_unavailable():
    facts = vary(cpu_facts(), "torch.distributed", False)
    assert ids(check_backends(facts)) == ["distributed-unavailable"]


def test_nothing_when_torch_does_not_import():
    facts = vary(cpu_facts(), "torch", failed("import-failed", "ImportError: x", None))
    assert check_backends(facts) == []


def test_one_gpu_runs_one_nccl_rank():
    title = by_id(check_backends(visible(gpu2_facts(), "1", [1])), "backend-choice").title
    assert title.startswith("1 GPU: `allreduce` and `train-smoke` will use NCCL for 1 rank")
