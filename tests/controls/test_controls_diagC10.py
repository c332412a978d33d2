"""Controls and siblings for the tenth round's GPU-tool output and launcher-only reports
(src/gpudoctor/knowledge/patterns/classes10c.py, knowledge/launcher_only.py's launchers, nvidia-xid's
agent event): a Windows crash status, Paddle's rank-failed report, nvtop's "No GPU to monitor",
nvidia-smi not found, a node agent's quoted Xid, and the step a cut log's answer gives under the launcher
it shows. The sample's cases are the readable parts' logs as pasted; the other lines are real ones from the
threads named beside them. Each log runs through the whole of `diagnose`."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit as exit_code
from test_controls_classes6 import case
from test_controls_patterns import head_id, ids

NVIDIA_SMI_TABLE = (
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n"
    "|-----------------------------------------+------------------------+----------------------+\n"
    "|   0  Tesla V100-PCIE-32GB           Off |   00000000:3B:00.0 Off |                    0 |\n"
    "| N/A   27C    P0             26W /  250W |     166MiB /  32768MiB |      0%      Default |\n"
)


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


class TestWindowsCrashStatus:
    verdict = "windows-crash-status"

    def test_control_exit_status_1_is_a_python_exception_not_a_crash(self):
        # the same CalledProcessError with Python's own status: an exception, the launcher's summary of it
        log = "subprocess.CalledProcessError: Command '['C:\\\\venv\\\\Scripts\\\\python.exe', 'train_network.py']' returned non-zero exit status 1.\n"
        assert "windows-crash-status" not in ids(log) and head_id(log) == "launcher-child-exit"

    def test_control_a_process_that_ended_with_0_is_no_crash(self):
        assert "windows-crash-status" not in ids("Process finished with exit code 0\n")

    def test_sibling_a_linux_segfault_keeps_its_own_verdict(self):
        assert head_id("  exitcode  : -11 (pid: 5555)\n") == "launcher-sigsegv"

    def test_sibling_the_signed_and_unsigned_forms_name_the_access_violation(self):
        # kohya-ss/sd-scripts#567 (unsigned, as Python prints it) and an IDE's signed form with its hex
        for line in ("subprocess.CalledProcessError: Command '['C:\\\\Python3109\\\\python.exe', 'train_network.py']' returned non-zero exit status 3221225477.",
                     "Process finished with exit code -1073741819 (0xC0000005)"):
            f = finding(line + "\n", "windows-crash-status")
            assert f is not None and f.evidence["ntstatus"] == "0xC0000005" and "access violation" in f.evidence["meaning"]
            assert head_id(line + "\n") == "windows-crash-status" and "faulthandler" in f.fix


class TestNvidiaSmiNotFound:
    verdict = "nvidia-smi-not-found"

    def test_control_a_launcher_not_found_is_the_launchers(self):
        assert head_id("bash: torchrun: command not found\n") == "launcher-not-found"

    def test_sibling_nvidia_smi_that_cannot_reach_the_driver_is_not_this(self):
        log = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
        assert head_id(log) not in ("nvidia-smi-not-found", "-")

    def test_sibling_the_diagnostics_line_with_the_driver_loaded(self):
        # NVIDIA/data-science-stack#90 (heldout7): "nvidia-smi not found" while lsmod shows nvidia loaded
        report = api.diagnose(case("heldout7", "ds-stack-90-nvidia-smi-not-found-driver-loaded"))
        f = next(f for f in report.findings if f.severity.value == "error")
        assert f.id == "nvidia-smi-not-found" and "/proc/driver/nvidia/version" in f.fix
        for shell in ("bash: nvidia-smi: command not found", "zsh: command not found: nvidia-smi"):
            assert head_id(shell + "\n") == "nvidia-smi-not-found"


class TestNvidiaXid:
    verdict = "nvidia-xid"

    def test_control_an_agents_healthy_event_is_no_xid(self):
        log = '{"component": "accelerator-nvidia-error-xid", "events": [], "message": "no xid detected in dmesg"}\n'
        assert "nvidia-xid" not in ids(log)

    def test_sibling_an_agents_xid_event_reads_its_number(self):
        # leptonai/gpud#192 (heldout7): gpud's error_xid event quoting the kernel's Xid 119
        f = finding(case("heldout7", "gpud-192-xid-119-gsp-event-json"), "nvidia-xid")
        assert f is not None and f.evidence.get("xid") == 119 and "Xid 119, GSP RPC timeout" in f.title

    def test_sibling_an_application_xid_says_the_gpu_is_fine_and_how_to_find_the_kernel(self):
        # leptonai/gpud#46 (heldout7): Xid 13 first (an application's kernel fault), then Xid 109
        f = finding(case("heldout7", "gpud-46-dmesg-xid-13-109"), "nvidia-xid")
        assert f is not None and "Xid 13, Graphics Engine Exception" in f.title and "CUDA_LAUNCH_BLOCKING=1" in f.fix


class TestLogInconclusive:
    verdict = "log-inconclusive"

    def test_control_a_log_without_a_launcher_gives_no_launcher_step(self):
        f = finding("epoch 1 step 10 loss 0.93\nepoch 1 step 20 loss 0.88\n", "log-inconclusive")
        assert f is not None and "launcher" not in f.evidence and "the log shows" not in f.fix

    def test_control_a_finished_deepspeed_run_is_healthy(self):
        log = ("[2024-11-01 00:11:56,054] [INFO] [runner.py:585:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch --world_info=e30= train.py\n"
               "{'train_runtime': 512.3, 'train_loss': 1.2, 'epoch': 1.0}\n")
        assert exit_code(api.diagnose(log)) == 0

    def test_control_pythons_own_spawn_frames_are_no_launcher(self):
        # Megvii-BaseDetection/YOLOX#610 (heldout6): a spawned worker's frames in Python's multiprocessing/spawn.py
        f = finding(case("heldout6", "yolox-610-error-at-end-of-training"), "unrecognised-failure")
        assert f is not None and "; the log shows " not in f.fix

    def test_sibling_a_cut_deepspeed_log_gives_deepspeeds_way(self):
        # OptimalScale/LMFlow#855 (heldout6): a ZeRO-3 launch cut before any error
        f = finding(case("heldout6", "lmflow-855-zero3-70b-launch"), "log-inconclusive")
        assert f is not None and f.evidence["launcher"] == "deepspeed" and "--enable_each_rank_log" in f.fix
        assert "NCCL_DEBUG=INFO (with TORCH_DISTRIBUTED_DEBUG=DETAIL)" in f.fix  # no NCCL line in it: a hang would not show where

    def test_control_a_log_with_nccls_info_lines_is_not_told_to_set_nccl_debug(self):
        # NVIDIA/nccl#224 (dev): a Horovod job under mpirun whose NCCL INFO lines show NCCL_DEBUG=INFO was already set
        f = finding(case("dev", "nccl-224-horovod-hang-34-roce-devices-empty-oob"), "log-inconclusive")
        assert f is not None and f.evidence["launcher"] == "mpirun" and "NCCL_DEBUG=INFO (with" not in f.fix

    def test_sibling_a_cut_torchrun_log_gives_torchruns_way(self):
        # FlagOpen/FlagEmbedding#493 (heldout6): torchrun's arguments printed, cut before the error
        f = finding(case("heldout6", "flagembedding-493-finetune-torchrun-args"), "log-inconclusive")
        assert f is not None and f.evidence["launcher"] == "torchrun" and "TORCHELASTIC_ERROR_FILE" in f.fix and "@record" in f.fix


class TestGpuDriverUnusable:
    verdict = "gpu-driver-unusable"

    def test_control_a_gpu_nvidia_smi_reaches_is_no_driver_failure(self):
        assert "gpu-driver-unusable" not in ids(NVIDIA_SMI_TABLE)

    def test_sibling_a_handle_refused_with_unknown_error_is_a_lost_gpu(self):
        # jbhoosreddy/instanceloc#20 (heldout7): the GPU stopped answering after a jammed job
        assert head_id(case("heldout7", "instanceloc-20-nvidia-smi-unknown-error-handle")) == "gpu-lost"

    def test_sibling_a_handle_not_found_is_a_gpu_the_driver_never_brought_up(self):
        # NVIDIA/open-gpu-kernel-modules#259 (dev3): the open module loads, nvidia-smi finds no handle ("Not Found")
        report = api.diagnose(case("dev3", "open-gpu-kernel-modules-259-device-handle-not-found-centos7"))
        assert [f.id for f in report.findings if f.severity.value == "error"] == ["gpu-driver-unusable"]


class TestUnrecognisedFailure:
    verdict = "unrecognised-failure"

    def test_control_a_cut_traceback_without_a_launcher_gets_no_launcher_step(self):
        # Firefly#51 (dev6): QLoRA's backward, cut before its exception, run as a plain script
        f = finding(case("dev6", "firefly-51-bloom-qlora-backward-cut"), "unrecognised-failure")
        # (its frames run through accelerate's Accelerator, a library, not accelerate's launcher)
        assert f is not None and "the exception line itself was cut" in f.fix and "; the log shows " not in f.fix

    def test_sibling_accelerates_cut_report_gives_accelerates_way(self):
        # bmaltais/kohya_ss#1220 (dev6): accelerate launch's own traceback, cut in simple_launcher
        f = finding(case("dev6", "kohya-1220-rich-calledprocesserror-only"), "unrecognised-failure")
        assert f is not None and "the log shows accelerate launch" in f.fix and "accelerate launch --debug" in f.fix


# p2pBandwidthLatencyTest's enabled latency matrix of two GeForce GPUs without peer access (they fall back to copies
# through the host, as the test says): NVIDIA/nccl-tests#287 (https://github.com/NVIDIA/nccl-tests/issues/287)
P2P_FALLBACK = """Device=0 CANNOT Access Peer Device=1
P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1 
     0   2.09  12.76 
     1  12.87   2.08 

   CPU     0      1 
     0   2.13   5.67 
     1   5.64   2.20 
"""


class TestGpuP2pBroken:
    verdict = "gpu-p2p-broken"

    def test_control_gpus_without_peer_access_copy_through_the_host_in_microseconds(self):
        report = api.diagnose(P2P_FALLBACK)
        assert "gpu-p2p-broken" not in [f.id for f in report.findings] and report.findings[0].id == "log-inconclusive"

    def test_control_the_disabled_matrix_is_not_judged(self):
        # the same slow numbers under P2P=Disabled: copies through the host, which the test shows for comparison
        log = "P2P=Disabled Latency Matrix (us)\n   GPU     0      1 \n     0   2.10  49206.83 \n     1  49206.75   2.08 \n"
        assert "gpu-p2p-broken" not in ids(log)

    def test_sibling_stalled_enabled_writes_are_broken_p2p(self):
        # huggingface/transformers#20438 (dev): 8 GPUs whose enabled P2P writes take 49 ms; multi-GPU training hung
        report = api.diagnose(case("dev", "transformers-20438-second-paste-p2p-latency-matrix"))
        f = report.findings[0]
        assert f.id == "gpu-p2p-broken" and "49,207 us" in f.title and "NCCL_P2P_DISABLE=1" in f.fix and exit_code(report) == 1


class TestPythonException:
    verdict = "python-exception"

    def test_control_an_empty_exception_without_the_relay_marker_stays_the_failure(self):
        log = ('Traceback (most recent call last):\n  File "/home/u/train.py", line 12, in <module>\n    main()\n'
               '  File "/home/u/train.py", line 9, in main\n    raise Exception()\nException:\n\n'
               'Traceback (most recent call last):\n  File "/home/u/eval.py", line 3, in <module>\n    run()\n')
        f = api.diagnose(log).findings[0]
        assert f.id == "python-exception" and "train.py:9" in f.title

    def test_sibling_the_error_handlers_relay_is_told_through_the_childs_traceback(self):
        # OpenNMT/OpenNMT-py#887 (heldout8): the parent's signal_handler re-raises the child's traceback under the marker;
        # the child's is cut: the answer is that cut traceback, never "fix it there" at the parent's handler
        log = case("heldout8", "opennmt-py-887-train-multi-child-exception")
        f = api.diagnose(log).findings[0]
        assert f.id == "unrecognised-failure" and "onmt/trainer.py:171" in f.title and "signal_handler" not in f.fix
        whole = api.diagnose(log + "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n").findings[0]
        assert "RuntimeError" in whole.title and "signal_handler" not in whole.fix
