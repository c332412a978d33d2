"""probe/software.py: packages from real installed metadata, the CUDA compiler found
in torch.utils.cpp_extension's order, and a probe that never raises."""

from __future__ import annotations

import os
import stat

from gpudoctor.core.unavailable import Unavailable
from gpudoctor.probe import software
from gpudoctor.probe.software import find_nvcc, nvcc_release, probe_nvcc, probe_packages, probe_software


def _dist(site, name: str, version: str, *requires: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


def test_packages_that_matter_without_importing_them(tmp_path, monkeypatch):
    _dist(tmp_path, "my-torch-ext", "0.3", "torch>=2.1", "numpy")
    _dist(tmp_path, "optional-user", "1.0", "torch; extra == 'gpu'")  # torch only behind an extra
    _dist(tmp_path, "nvidia-nccl-cu12", "2.27.5")
    _dist(tmp_path, "flash_attn", "2.7.4")
    _dist(tmp_path, "requests-like", "2.0", "urllib3")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = probe_packages()
    assert not isinstance(found, Unavailable)
    by_name = {p.name: p for p in found}
    assert by_name["my-torch-ext"].reason == "requires torch"
    assert by_name["nvidia-nccl-cu12"].reason == "nvidia wheel" and by_name["nvidia-nccl-cu12"].version == "2.27.5"
    assert by_name["flash_attn"].reason == "listed"
    assert "optional-user" not in by_name and "requests-like" not in by_name
    assert "my_torch_ext" not in __import__("sys").modules


def test_nvcc_release_from_its_own_words():
    text = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n"
    assert nvcc_release(text) == "12.4"
    assert isinstance(nvcc_release("command not found"), Unavailable)


def test_nvcc_in_cpp_extension_order(tmp_path):
    home = tmp_path / "cuda-12.6"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "nvcc").write_text("")
    on_path = lambda name: "/usr/bin/nvcc"  # noqa: E731
    assert find_nvcc({"CUDA_HOME": str(home)}, on_path, os.path.exists) == (str(home / "bin" / "nvcc"), "CUDA_HOME")
    assert find_nvcc({}, on_path, os.path.exists) == ("/usr/bin/nvcc", "PATH")
    # A CUDA_HOME without nvcc: the build uses that home (and fails), not PATH's.
    assert find_nvcc({"CUDA_HOME": str(tmp_path / "none")}, on_path, os.path.exists) is None
    assert find_nvcc({}, lambda name: None, lambda p: False) is None


def _script(path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_a_real_nvcc_script_and_a_broken_one(tmp_path):
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    _script(home / "bin" / "nvcc", 'echo "Cuda compilation tools, release 11.8, V11.8.89"\n')
    nvcc = probe_nvcc({"CUDA_HOME": str(home)})
    assert nvcc is not None and not isinstance(nvcc, Unavailable)
    assert (nvcc.release, nvcc.found_by) == ("11.8", "CUDA_HOME")
    _script(home / "bin" / "nvcc", "echo garbage; exit 3\n")
    broken = probe_nvcc({"CUDA_HOME": str(home)})
    assert broken is not None and not isinstance(broken, Unavailable) and isinstance(broken.release, Unavailable)


def test_never_raises_on_a_broken_cpuinfo_or_os_release(tmp_path):
    assert isinstance(software.probe_cpu_model(tmp_path / "missing-dir" / "cpuinfo"), str)  # falls back to platform
    (tmp_path / "cpuinfo").mkdir()  # a directory where the file should be
    assert isinstance(software.probe_cpu_model(tmp_path / "cpuinfo"), Unavailable)
    assert isinstance(software.probe_os_name(tmp_path), (str, Unavailable))


def test_this_machine():
    facts = probe_software()
    assert isinstance(facts.kernel, str) and isinstance(facts.os_name, str)
    assert not isinstance(facts.packages, Unavailable) and any(p.name == "torch" for p in facts.packages)
