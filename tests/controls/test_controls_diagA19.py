"""Controls and siblings for diagA19 (issue 35: the failures GPU programs that are not Python print, as classes): CUDA's and
HIP's error read by its code or enum name through one table of codes (knowledge/patterns/classes19a.py `cuda-error-code`,
a fault gpudoctor has a finding for told as that finding), a program that found no device it can use and stopped
(`program-found-no-device`), nvidia-smi's other wording of a GPU it cannot reach (`gpu-lost`), and a fatal line in a
native program's own words (NAMD's "FATAL ERROR:", a daemon's "fatal:") as the evidence of an honest unrecognised
failure. `test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that
gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import ENDED, head, head_id

from gpudoctor import api
from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.cuda_errors import ENUMS, FAULTS
from gpudoctor.knowledge.patterns import BY_ID


def finding(text: str, finding_id: str):
    return next((f for f in api.diagnose(text).findings if f.id == finding_id), None)


def no_error(text: str) -> bool:
    return not any(f.severity is Severity.ERROR for f in api.diagnose(text).findings)


class TestCudaErrorCode:
    @pytest.mark.parametrize("line,error", [
        # CudaMiner (cbuchner1/CudaMiner#82, heldout18): the runtime's number and its message
        ("[2014-01-28 12:42:22] GPU #0: cudaError 30 (unknown error) calling 'cudaStreamQuery(context_streams[stream][thr_id])' (salsa_kernel.cu line 919)",
         "cudaErrorUnknown"),
        # LAMMPS geryon's driver status (lammps/lammps#2619, heldout18): the driver API's table
        ("> Cuda driver error 1 in call at file 'geryon/nvd_kernel.h' in line 364.", "CUDA_ERROR_INVALID_VALUE"),
        # a driver call's number (marcoslucianops/DeepStream-Yolo#593, heldout18)
        ("cuGraphicsGLRegisterBuffer failed with error(219) gst_eglglessink_cuda_init texture = 1", "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"),
    ])
    def test_sibling_a_code_is_read_by_the_table_of_its_enum(self, line, error):
        found = finding(line + "\n", "cuda-error-code")
        assert found is not None and found.severity is Severity.ERROR and found.evidence["error"] == error
        assert error in found.title and found.fix.startswith(error)

    @pytest.mark.parametrize("line,verdict", [
        # AMReX's "CUDA error 2" (Pele-Suite/PeleC#809) and CryptoDredge's lower-case words (technobyl/CryptoDredge#89, heldout18)
        ("amrex::Abort::10::CUDA error 2 in file /amrex/Src/Base/AMReX_Arena.cpp line 193: out of memory !!!", "cuda-oom"),
        ("cuda error: out of memory in cduMem::cduMem (8)", "cuda-oom"),
        # cuda-samples' checkCudaErrors (deeplearning4j/deeplearning4j-examples#403, heldout17): an invalid device symbol is a
        # build without this GPU's architecture (diagA31)
        ('CUDA error at C:/projects/skymind/deploy/windows-x86_64/libnd4j/blas/cuda/NativeOps.cu:5232 code=13(cudaErrorInvalidSymbol) "result"',
         "cuda-no-kernel-image"),
        # the driver's name for no kernel for this GPU (biocorecrg/master_of_pores#106, heldout18)
        ("[guppy/error] *common::LoadModuleFromFatbin: Loading fatbin file shared.fatbin failed with: CUDA error at "
         "/builds/ont_core/common/cuda_common.cpp:54: CUDA_ERROR_NO_BINARY_FOR_GPU", "cuda-no-kernel-image"),
        # HIP's status in a sentence (ROCm/hip#3191, heldout18): 100 is hipErrorNoDevice
        ("as soon as I hit the breakpoint, rocm-smi give this output and hipGetDeviceCount() returns 100.", "cuda-no-gpus-visible"),
        ("However, I got error: 'hipErrorInvalidDevice'(101) at square.cpp:61, when I tested square.cpp.", "cuda-invalid-device-ordinal"),
    ])
    def test_sibling_a_fault_with_a_finding_is_told_as_that_finding(self, line, verdict):
        assert head_id(line + "\n") == verdict
        found = finding(line + "\n", verdict)
        assert found.evidence.get("read_as") == verdict and "cuda-error-code" not in [f.id for f in api.diagnose(line + "\n").findings]

    def test_sibling_the_call_that_starts_cuda_says_cuda_did_not_start(self):
        # an old CudaMiner build's first call on an RTX 2070 SUPER (dogecoin/dogecoin#1843, heldout18) against the same
        # error after minutes of mining (cbuchner1/CudaMiner#82): only the first says CUDA did not start
        first = finding("[2021-04-21 14:52:10] GPU #0: cudaError 30 (unknown error) calling 'cudaFree(0)' (salsa_kernel.cu line 240)\n", "cuda-error-code")
        later = finding("[2014-01-28 12:42:22] GPU #0: cudaError 30 (unknown error) calling 'cudaStreamQuery(context_streams[stream][thr_id])'\n", "cuda-error-code")
        assert "starts CUDA" in first.fix and "starts CUDA" not in later.fix

    def test_sibling_a_number_whose_enum_the_line_does_not_say_is_read_in_each(self):
        # "CUDA error 1": the runtime's invalid value since CUDA 10.1, its missing configuration before, the driver's invalid value
        found = finding("GPU 3, CUDA error 1 - cannot launch kernel\n", "cuda-error-code")
        assert found is not None and found.evidence["enum"] == "not said by the line"
        assert "cudaErrorMissingConfiguration" in found.fix and "cudaErrorInvalidValue" in found.fix

    @pytest.mark.parametrize("line", [
        "CUDA error 0: no error",  # success
        "[W] cudaError 2 (out of memory) on the first try, retrying with a smaller buffer",  # survived
        "cudnnConvolutionForward failed with error 8",  # cuDNN's own status table
        "CUDNN_STATUS_EXECUTION_FAILED",
        "GPU #0: cudaSuccess calling 'cudaFree(0)'",
    ])
    def test_control_no_cuda_error_no_verdict(self, line):
        assert "cuda-error-code" not in [f.id for f in api.diagnose(line + "\n").findings]

    def test_control_a_code_printed_and_survived_is_no_error(self):
        # old torch's print it went on from (pytorch/ignite#464, heldout8), with a CUDA number in it
        log = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument\n"
               "Start training\nEpoch[1] Starts with lr=0.003\n" + ENDED)
        assert no_error(log)

    def test_sibling_every_row_says_what_it_means_or_names_its_finding(self):
        for fault in FAULTS:
            assert fault.finding in BY_ID if fault.finding else fault.meaning and fault.step, fault.name
            # the message class (classes17b's cuda-runtime-error) says every row it reads in the row's own words
            assert not fault.message_class or fault.meaning and fault.step, fault.name
        # the driver's numbers differ from the runtime's below 100; HIP's follow the runtime's since CUDA 10.1
        assert ENUMS["runtime before CUDA 10.1"][30].name == ENUMS["runtime"][999].name == "cudaErrorUnknown"
        assert ENUMS["hip"][101].hip == "hipErrorInvalidDevice"


class TestNvencErrorCode:
    @pytest.mark.parametrize("line", [
        # ffmpeg's words (illnyang/nvlax#4) and VideoProcessingFramework's (NVIDIA/VideoProcessingFramework#161), heldout18
        "[h264_nvenc @ 0x55ba06f470c0] OpenEncodeSessionEx failed: out of memory (10): (no details)",
        "RuntimeError: NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, &hEncoder) returned error 10",
    ])
    def test_sibling_the_session_limits_status_is_read_by_nvencs_table(self, line):
        found = head(line + "\n")
        assert found is not None and found.id == "nvenc-error-code" and found.evidence["status"] == "NV_ENC_ERR_OUT_OF_MEMORY"
        assert "sessionCount" in found.fix

    def test_control_ffmpegs_encoder_banner_and_its_generic_refusal_are_no_nvenc_status(self):
        log = ("[h264_nvenc @ 0x5581] Loaded Nvenc version 11.1\n"
               "Error initializing output stream 3:0 -- Error while opening encoder for output stream #3:0 - maybe incorrect "
               "parameters such as bit_rate, rate, width or height\n")
        assert "nvenc-error-code" not in [f.id for f in api.diagnose(log).findings]


class TestProgramFoundNoDevice:
    @pytest.mark.parametrize("line", [
        "No devices found/left.",  # hashcat (philsmd/7z2hashcat#47, heldout18)
        "Error: Found no Cycles device of the specified type",  # Blender in Colab (heldout18)
        "ERROR: Could not find/initialize a specified accelerator device (src/GPU/gpu_extra.h:57)",  # LAMMPS (lammps/lammps#4131)
    ])
    def test_sibling_a_program_that_stopped_without_its_device(self, line):
        assert head_id(line + "\n") == "program-found-no-device"

    @pytest.mark.parametrize("line", [
        "ip-172-31-5-233:45319:45319 [0] NCCL INFO NET/IB : No device found.",  # no InfiniBand: NCCL uses sockets
        "WARNING - xla_bridge.py - 2022-04-08 20:52:52,172 - No GPU/TPU found, falling back to CPU.",  # dev7w's healthy run
        "[2019-03-09 09:18:28 @gpus.py:39] Error reading GPU information, set no GPU.",  # a program going on without one
        "Found 2 devices",
    ])
    def test_control_a_notice_or_a_fallback_is_no_stop(self, line):
        assert "program-found-no-device" not in [f.id for f in api.diagnose(line + "\n" + ENDED).findings]

    def test_sibling_a_probe_at_warning_level_stays_the_probe_class(self):
        # binary-husky/gpt_academic#1717 (heldout16): the warning-level notice is program-found-no-gpu's
        assert head("WARNING:root:No GPU found. Conversion on CPU is very slow.\n") is None
        assert finding("WARNING:root:No GPU found. Conversion on CPU is very slow.\n", "program-found-no-gpu") is not None


class TestGpuLostDetectWording:
    verdict = "gpu-lost"

    def test_sibling_nvidia_smi_windows_wording(self):
        # jamesstringer90/Easy-GPU-PV#276 (heldout18): nvidia-smi.exe's "detect" for Linux's "determine"
        assert finding("Unable to detect the device handle for GPU0000:B1:00.0: Unknown Error\n", "gpu-lost") is not None

    def test_sibling_a_gpu_the_driver_never_brought_up_is_the_drivers(self):
        # "Not Found" in either wording: the driver never brought the GPU up (gpu-driver-unusable), it did not stop answering
        assert head_id("Unable to detect the device handle for GPU0000:B1:00.0: Not Found\n") == "gpu-driver-unusable"

    def test_control_a_listing_of_gpus_is_no_lost_gpu(self):
        listing = "GPU 0: NVIDIA A10 (UUID: GPU-5e0f1a2b-0c3d-4e5f-8a9b-0c1d2e3f4a5b)\nFound 2 NVIDIA devices\n"
        assert finding(listing, "gpu-lost") is None


class TestUnrecognisedFailureFatalWords:
    verdict = "unrecognised-failure"

    @pytest.mark.parametrize("line", [
        "REPLICA 1 FATAL ERROR: CUDASOA integration is incompatible with the following options:",  # fhh2626/BFEE3#86 (NAMD 3.0)
        # (BiBiServ/bibigrid#705's "slurmd: fatal: can't stat gres.conf file /dev/nvidia0" is read by gpu-not-handed-over since diagA24)
    ])
    def test_sibling_a_native_programs_fatal_line_is_a_failure(self, line):
        found = head(line + "\n")
        assert found is not None and found.id == "unrecognised-failure" and found.evidence["kind"] == "fatallevel"

    def test_control_gits_fatal_in_a_build_that_goes_on_is_no_error(self):
        # setuptools-scm and versioneer ask git describe, which says "fatal:" where no tag exists, and the build goes on
        assert no_error("fatal: No names found, cannot describe anything.\nrunning build_ext\n" + ENDED)
