"""Controls and siblings for diagA24 (issue 35: the GPU the container runtime, its NVIDIA toolkit, CDI or the cluster's GPU
plug-in did not hand over; knowledge/patterns/classes24a.py). `test_control_*` is the healthy container or cluster log that
looks most like the failure and must not get the verdict, `test_sibling_*` the nearest line that gets its own: the host's
driver failures, docker's own refusals, the shell's missing nvidia-smi. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_classes6 import case
from test_controls_detect8 import head
from test_controls_diagB15 import HEALTHY, ids

from gpudoctor.core.findings import Severity


class TestGpuNotHandedOver:
    verdict = "gpu-not-handed-over"

    @pytest.mark.parametrize("line,said", [
        # dizcza/docker-hashcat#21: the image's CUDA 12.8 on an older driver
        ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, "
         "or use an earlier cuda container: unknown", "cuda>=12.8"),
        # NVIDIA/dcgm-exporter#46: a GPU showing ERR! on the host
        ("docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux.go:380: starting container "
         "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , "
         "stderr: nvidia-container-cli: detection error: nvml error: unknown error: unknown.", "ERR!"),
        ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "nvidia-ctk cdi generate"),  # NixOS/nixpkgs#420638
        ("Error: stat nvidia.com/gpu=0: no such file or directory", "from 4.1 on"),  # NVIDIA/nvidia-container-toolkit#63
        # NVIDIA/nvidia-container-runtime#190: podman's --gpus hands nothing over
        ("Error: crun: executable file `nvidia-smi` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a "
         "command that was not found", "--device nvidia.com/gpu=all"),
        ('FATAL:   container creation failed: path to "nvidia-container-cli" not set in singularity.conf', "--nv alone"),  # cactus#1618
        ("2020/10/14 18:04:53 Failed to initialize NVML: could not load NVML library.", "runtimeClassName: nvidia"),  # k8s-device-plugin#182
        ("Feb 02 09:52:07 bibigrid-worker slurmd[12912]: slurmd: fatal: can't stat gres.conf file /dev/nvidia0: No such file or directory",
         "gres.conf"),  # BiBiServ/bibigrid#705
        # NVIDIA/gpu-operator#438: no node carries node-feature-discovery's NVIDIA label
        ('1.6679920299926214e+09  INFO    controllers.ClusterPolicy       No GPU node in the cluster, do not create DaemonSets    '
         '{"DaemonSet": "nvidia-node-status-exporter", "Namespace": "nvidia-gpu-operator"}', "pci-10de"),
    ])
    def test_sibling_each_link_says_its_step(self, line, said):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and said in found.fix

    @pytest.mark.parametrize("after,said", [
        # the toolkit's own message on the line after the runtime's report decides the step (AbdBarho/stable-diffusion-webui-docker#117)
        ("nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown\n", "wsl --update"),
        ("", "nvidia-container-cli -k -d /dev/tty info"),  # cut after the report: the hook failed, its step unknown
    ])
    def test_sibling_the_runtimes_report_of_the_hook_reads_the_line_after(self, after, said):
        report = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create "
                  "failed: runc create failed: unable to start container process: error during container init: error running hook #0: "
                  "error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n")
        found = head(report + after)
        assert found is not None and found.id == self.verdict and said in found.fix

    @pytest.mark.parametrize("name,said", [
        ("gen-virtual-screening-8-test-pod-smi", "runtimeClassName: nvidia"),  # a pod's runc: nvidia-smi not in the container
        ("nvidia-docker-1551-wsl2-2080ti-smi-q", "rebuild it without them"),  # the title's mount error, the body nvidia-smi -q
        ("deepops-1214-slurmd-mig-gres-nvml", "--with-nvml"),  # the title's slurmd fatal, the body later GRES lines
    ])
    def test_sibling_the_threads_as_pasted(self, name, said):
        found = head(case("heldout23", name))
        assert found is not None and found.id == self.verdict and said in found.fix and found.severity is Severity.ERROR

    @pytest.mark.parametrize("line,verdict", [
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is "
         "installed and running.", "gpu-driver-unusable"),
        ("Failed to initialize NVML: Driver/library version mismatch", "nvml-driver-mismatch"),
        # the same mismatch as the toolkit's hook quotes it (NVIDIA/nvidia-container-toolkit#394): the host's driver, not the hand-over
        ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown.", "nvml-driver-mismatch"),
        ("RuntimeError: CUDA error: no CUDA-capable device is detected", "cuda-no-gpus-visible"),
        ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].', "docker-gpu-runtime-missing"),
        ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such "
         "file or directory: unknown.", "driver-library-not-found"),
        ("bash: nvidia-smi: command not found", "nvidia-smi-not-found"),
    ])
    def test_sibling_host_driver_and_docker_failures_keep_their_own(self, line, verdict):
        assert ids(line + "\n")[0] == verdict

    @pytest.mark.parametrize("name,verdict", [
        # k0s-1769: the title "nvidia-smi: not found" inside a pod shows the tool missing, not who failed to hand the GPU over
        ("k0s-1769-node-smi-pod-not-found", "nvidia-smi-not-found"),
        # kubeflow-notebooks-68: torch finds no driver in a notebook pod
        ("kubeflow-notebooks-68-pytorch-cuda-notebook", "cuda-no-driver"),
    ])
    def test_sibling_the_gpu_missing_inside_a_pod_says_what_would_decide(self, name, verdict):
        found = head(case("heldout23", name))
        assert found is not None and found.id == verdict and "ls /dev/nvidia*" in found.fix and "runtimeClassName: nvidia" in found.fix

    @pytest.mark.parametrize("name", [
        "nvidia-ctk-474-cdi-generate-log",  # nvidia-ctk cdi generate's INFO lines, podman run --device nvidia.com/gpu=all
        "singularity-2020-nv-flag-quadro-m620",  # the toolkit's programs listed, then nvidia-smi working in the container
    ])
    def test_control_healthy_container_logs(self, name):
        assert self.verdict not in ids(case("heldout23", name))

    @pytest.mark.parametrize("log", [
        # the toolkit's install (heldout12 docker-for-linux-1531), a run that asks for the GPU, a CPU node's Apptainer warning
        "Get:1 https://nvidia.github.io/libnvidia-container/stable/ubuntu18.04/amd64  nvidia-container-runtime 3.13.0-1 [4,988 B]\n"
        "Setting up nvidia-container-toolkit (1.13.5-1) ...\n",
        "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi -L\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a0c)\n",
        "WARNING: Could not find any nv files on this host!\nGPU available: False, used: False\n" + HEALTHY,
        # the GPU operator at work (NVIDIA/gpu-operator#438's lines that are not its "No GPU node" one)
        '1.6679920299890828e+09  INFO    controllers.ClusterPolicy       Found Resource, updating...     {"ServiceMonitor": '
        '"nvidia-node-status-exporter", "Namespace": "nvidia-gpu-operator"}\n'
        '1.6679920299998875e+09  INFO    controllers.ClusterPolicy       INFO: ClusterPolicy step completed      {"state:": '
        '"state-node-status-exporter", "status": "ready"}\n',
    ])
    def test_control_install_output_and_working_runs(self, log):
        assert self.verdict not in ids(log)
