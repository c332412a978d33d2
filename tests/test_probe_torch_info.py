"""torch's view, taken in a real child interpreter on this machine."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpudoctor.probe import torch_info
from gpudoctor.probe.torch_info import MARKER, parse_child_output, probe_torch, start_early, torch_child
from gpudoctor.core.unavailable import Unavailable

BROKEN = 'raise ImportError("libcudart.so.12: cannot open shared object file: No such file or directory")\n'


@pytest.fixture
def broken_torch(tmp_path, monkeypatch):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(BROKEN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return pkg


@pytest.mark.slow
def test_real_torch_on_this_machine():
    import torch  # the same torch the child imports

    t = probe_torch()
    assert t.status == "ok" and t.error == ""
    assert t.version == torch.__version__
    assert t.cuda == torch.version.cuda
    assert t.device_count == torch.cuda.device_count()
    assert t.backends["gloo"] is True
    assert t.executable == sys.executable


@pytest.mark.slow
def test_visible_override_reaches_the_child(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert probe_torch(visible="1,0").cuda_visible_devices == "1,0"
    assert probe_torch(visible="").cuda_visible_devices == ""
    assert probe_torch().cuda_visible_devices is None


def test_broken_torch_is_a_fact_not_an_exception(broken_torch):
    t = probe_torch()
    assert t.status == "import-failed"
    assert t.error.startswith("ImportError: libcudart.so.12")
    assert str(broken_torch / "__init__.py") in t.detail
    assert isinstance(t.version, Unavailable) and "import torch failed" in t.version.reason
    assert t.devices == ()


def test_torch_raising_something_else_is_caught(tmp_path, monkeypatch):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("import sys; sys.exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    t = probe_torch()
    assert t.status == "import-failed" and t.error.startswith("SystemExit")


def test_a_hanging_child_is_killed_at_the_deadline():
    t = probe_torch(timeout=0.05)
    assert t.status == "timeout" and "did not finish" in t.error
    assert isinstance(t.device_count, Unavailable)


def test_a_probe_started_early_is_handed_over_once(broken_torch):
    # The broken torch answers at once: the test does not wait on a real import.
    start_early()
    early = torch_info._early
    try:
        assert torch_child() is early
        assert early.result().status == "import-failed"
        second = torch_child()
        assert second is not early  # a second collect() probes afresh
        second.kill()
    finally:
        early.kill()


def test_a_probe_started_early_for_another_environment_is_replaced(broken_torch):
    start_early()
    early = torch_info._early
    child = torch_child(visible="1")
    try:
        assert child is not early and early.proc.poll() is not None  # killed, not left running
        assert child.result().cuda_visible_devices == "1"
    finally:
        child.kill()
        early.kill()


def test_child_output_without_an_answer():
    t = parse_child_output("some noise\n", "Segmentation fault\n", -11, None)
    assert t.status == "probe-failed" and "signal 11" in t.error and "Segmentation fault" in t.detail


def test_child_output_with_noise_before_the_answer():
    t = parse_child_output("torch says hi\n" + MARKER + "{not json\n", "", 0, "0")
    assert t.status == "probe-failed" and "unreadable" in t.error and t.cuda_visible_devices == "0"


def test_in_process_view_reads_torch_only_if_imported():
    code = (
        "from gpudoctor.probe.torch_info import in_process_view as v\n"
        "a = v()\n"
        "import torch\n"
        "b = v()\n"
        "print(type(a.cuda_initialized).__name__, b.cuda_initialized)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # Before the import: unknown, with a reason; after it (CPU machine): not initialised.
    assert out.stdout.split() == ["Unavailable", "False"]


def _fake_torch(tmp_path, version_text):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    if version_text is not None:
        (pkg / "version.py").write_text(version_text)
    return tmp_path


CPU_VERSION = "__version__ = '2.5.1+cpu'\ndebug = False\ncuda: Optional[str] = None\nhip: Optional[str] = None\n"


@pytest.mark.parametrize(
    "text, expected",
    [
        (CPU_VERSION, "2.5.1+cpu"),
        ("__version__ = '2.5.1'\ncuda = None\nhip = None\n", "2.5.1"),  # older files: no annotations
        (CPU_VERSION.replace("cuda: Optional[str] = None", "cuda: Optional[str] = '12.4'"), None),  # a CUDA build
        (CPU_VERSION.replace("hip: Optional[str] = None", "hip: Optional[str] = '6.2.41133'"), None),  # a ROCm build
        ("__version__ = '2.5.1'\n", None),  # says nothing about CUDA
        (None, None),  # no version file
    ],
)
def test_a_cpu_build_is_told_from_its_version_file_without_importing_it(tmp_path, monkeypatch, text, expected):
    from gpudoctor.probe.cuda import cpu_build_facts

    monkeypatch.syspath_prepend(str(_fake_torch(tmp_path, text)))
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # find_spec answers from it when present
    facts = cpu_build_facts()
    if expected is None:
        assert facts is None
    else:
        assert facts is not None and facts.torch_version == expected and not facts.imported
        assert (facts.available, facts.device_count, facts.nccl, facts.torch_cuda) == (False, 0, False, None)
