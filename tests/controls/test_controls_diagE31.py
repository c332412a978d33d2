"""Controls and siblings for diagE31 (issue 35, item 4: a build of GPU code failed): the build's own error line decides the
cause (knowledge/patterns/launchers.py: `build-gpu-arch-unsupported`, `build-out-of-host-memory`, `build-dependency-missing`,
`build-host-compiler-unsupported`, before `extension-build-failed`, whose wrapper lines are then their consequence), and a
build pasted cut before that line says so (`log-inconclusive` case `build-cut`, knowledge/build_cut.py). `test_control_*` is
the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones
(threads named beside them); the retired parts' cases are the logs as pasted."""

from __future__ import annotations

import pytest
from test_controls_classes6 import case
from test_controls_detect8 import ENDED, head, head_id

from gpudoctor import api
from gpudoctor.core.findings import Severity

WRAPPER = "extension-build-failed"
# the lines a failed build ends with: they say that it failed, not why
NINJA_END = ("ninja: build stopped: subcommand failed.\n"
             "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n")
PIP_END = ("      error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n      [end of output]\n"
           "  ERROR: Failed building wheel for flash-attn\nFailed to build flash-attn\n")
# a build's own progress (setuptools, then a compile command), as pasted
BUILD = ("running build_ext\nbuilding 'flash_attn_2_cuda' extension\ncreating build/temp.linux-x86_64-cpython-310/csrc\n"
         "/usr/local/cuda/bin/nvcc -I/tmp/pip-install/csrc/flash_attn -I/usr/include/python3.10 -c csrc/flash_attn/src/flash_fwd_hdim64_fp16_sm80.cu "
         "-o build/temp.linux-x86_64-cpython-310/csrc/flash_attn/src/flash_fwd_hdim64_fp16_sm80.o -O3 -std=c++17\n")
COPIES = "".join(f"  copying mmcv/ops/{n}.py -> build/lib.linux-x86_64-3.7/mmcv/ops\n" for n in ("nms", "roi_align", "carafe", "deform_conv"))


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


class TestBuildGpuArchUnsupported:
    @pytest.mark.parametrize("line", [
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'",  # facebookresearch/3detr#59 (CUDA 11.5's nvcc, an RTX 4090)
        "nvcc fatal   : Unsupported gpu architecture 'compute_61",  # ucbdrive/few-shot-object-detection#11 (the quote cut)
        "ValueError: Unknown CUDA arch (8.9+PTX) or GPU not supported",  # torch's check of TORCH_CUDA_ARCH_LIST
    ])
    def test_sibling_the_architecture_line_leads_and_the_wrapper_is_its_consequence(self, line):
        text = BUILD + line + "\n" + NINJA_END
        f = head(text)
        assert f is not None and f.id == "build-gpu-arch-unsupported"
        assert "TORCH_CUDA_ARCH_LIST" in f.fix and "11.8" in f.fix
        wrapper = finding(text, WRAPPER)
        assert wrapper is not None and wrapper.severity is Severity.WARN  # told as the consequence

    def test_control_nvccs_deprecation_notice_while_the_build_goes_on(self):
        text = ("nvcc warning : The 'compute_35', 'compute_37', 'sm_35', and 'sm_37' architectures are deprecated, and may be removed in a future release\n"
                "  Building wheel for apex (setup.py) ... done\nSuccessfully built apex\nInstalling collected packages: apex\nSuccessfully installed apex-0.1\n")
        assert head_id(text) == "-"

    def test_sibling_the_runtime_error_of_a_binary_built_without_the_architecture(self):
        # the run's own error, no build: the runtime sibling keeps its verdict
        assert head_id("RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == "cuda-no-kernel-image"


class TestBuildOutOfHostMemory:
    @pytest.mark.parametrize("line", [
        "c++: fatal error: Killed signal terminated program cc1plus",
        "nvcc error   : 'cicc' died due to signal 9 (Kill signal)",  # NVIDIA/cudf#8018; microsoft/onnxruntime#18579
        "g++: internal compiler error: Killed (program cc1plus)",
    ])
    def test_sibling_a_compiler_killed_for_memory_leads_with_fewer_jobs(self, line):
        f = head(BUILD + line + "\ncompilation terminated.\n" + NINJA_END)
        assert f is not None and f.id == "build-out-of-host-memory" and "MAX_JOBS=2" in f.fix

    def test_control_ninjas_own_stop_line_alone_is_no_memory_verdict(self):
        # the wrapper alone: the build failed, and nothing says why (its error line is not in the paste)
        f = head(BUILD + NINJA_END)
        assert f is not None and f.id == WRAPPER

    def test_sibling_nvcc_crashing_on_another_signal_is_not_memory(self):
        f = head(BUILD + "nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n" + NINJA_END)
        assert f is not None and f.id != "build-out-of-host-memory"


class TestBuildDependencyMissing:
    @pytest.mark.parametrize("lines,named", [
        ("/usr/local/lib/python3.6/dist-packages/torch/include/ATen/cuda/CUDAContext.h:12:10: fatal error: cusparse.h: No such file or directory\n"
         " #include <cusparse.h>\ncompilation terminated.\nerror: command '/usr/local/cuda/bin/nvcc' failed with exit status 1\n",
         {"header": "cusparse.h"}),  # MVIG-SJTU/AlphaPose#522
        ("src/module.c:1:10: fatal error: Python.h: No such file or directory\ncompilation terminated.\n", {"header": "Python.h"}),
        ("/usr/bin/ld: cannot find -lcudart\ncollect2: error: ld returned 1 exit status\nerror: command '/usr/bin/g++' failed with exit code 1\n",
         {"library": "cudart"}),
    ])
    def test_sibling_the_missing_file_is_named(self, lines, named):
        f = head(BUILD + lines)
        assert f is not None and f.id == "build-dependency-missing"
        assert all(f.evidence.get(k) == v for k, v in named.items())

    def test_control_cmakes_probes_that_find_nothing_and_the_build_goes_on(self):
        text = ("-- Looking for pthread_create in pthreads - not found\n-- Looking for pthread_create in pthread - found\n"
                "-- Could NOT find CUDNN (missing: CUDNN_INCLUDE_DIR)\n-- Build files have been written to: /tmp/build\n"
                "[100%] Built target llama\n" + ENDED)
        assert head_id(text) == "-"

    def test_sibling_a_programs_missing_file_is_not_the_builds(self):
        assert head_id("FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'\n") not in ("build-dependency-missing", "-")


class TestBuildHostCompilerUnsupported:
    def test_sibling_nvccs_check_of_gcc_leads_over_the_wrapper(self):
        text = BUILD + ("/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported!\n"
                        + NINJA_END)
        f = head(text)
        assert f is not None and f.id == "build-host-compiler-unsupported" and f.evidence.get("gcc_max") == "11"
        assert "g++-N" in f.fix or "gcc-N" in f.fix

    def test_sibling_msvc_too_new_for_the_toolkit(self):
        line = ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.3\\include\\crt/host_config.h(160): fatal error C1189: #error:  "
                "-- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2019 (inclusive) are supported!\n")
        assert head_id(line) == "build-host-compiler-unsupported"

    def test_control_cmake_naming_a_new_compiler_while_the_build_succeeds(self):
        text = "-- The CXX compiler identification is GNU 13.2.0\n-- The CUDA compiler identification is NVIDIA 12.4.131\n" + ENDED
        assert head_id(text) == "-"


class TestExtensionBuildFailed:
    verdict = "extension-build-failed"

    def test_sibling_the_toolkit_not_found_leads_over_pips_wrapper_lines(self):
        # OpenBMB/CPM-Live#244's shape: pip's "Building wheel ... error" stands above the build's own OSError
        text = ("Building wheels for collected packages: bmtrain\n  Building wheel for bmtrain (setup.py) ... error\n"
                "  error: subprocess-exited-with-error\n"
                "      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
                "  ERROR: Failed building wheel for bmtrain\nFailed to build bmtrain\n")
        f = head(text)
        assert f is not None and f.id == "cuda-toolkit-missing"
        assert finding(text, WRAPPER).severity is Severity.WARN

    def test_control_wrapper_lines_alone_keep_the_wrapper_and_its_first_error_advice(self):
        f = head(BUILD + PIP_END)
        assert f is not None and f.id == WRAPPER and "first `error:` line" in f.fix


class TestLogInconclusive:
    verdict = "log-inconclusive"

    @pytest.mark.parametrize("part,name", [
        ("heldout30", "mmcv-934-mmcv-full-install-linux"),  # setuptools copying mmcv's files, cut
        ("heldout30", "minkowskiengine-94-cluster-gcc-build"),  # the compile and link commands, cut
        ("heldout30", "mmcv-1483-windows-cuda102-install"),  # Windows, after torch's "could not find ninja" warning
    ])
    def test_sibling_a_build_pasted_cut_before_its_error_says_so(self, part, name):
        report = api.diagnose(case(part, name))
        f = report.findings[0]
        assert f.id == "log-inconclusive" and "last build line" in f.evidence
        assert "pasted cut before its end" in f.title and "pip install -v" in f.fix
        assert not [x for x in report.findings if x.severity is Severity.ERROR]  # no cause guessed

    def test_sibling_pips_collecting_lines_cut(self):
        f = api.diagnose(case("heldout30", "alltalk-tts-151-deepspeed-install-requirements")).findings[0]
        assert f.id == "log-inconclusive" and "pip's progress" in f.title and "an install" in f.title

    def test_control_a_build_that_succeeds_is_not_cut(self):
        text = COPIES + "  Building wheel for mmcv-full (setup.py) ... done\nSuccessfully built mmcv-full\nInstalling collected packages: mmcv-full\nSuccessfully installed mmcv-full-1.7.1\n"
        assert "last build line" not in api.diagnose(text).findings[0].evidence

    def test_control_a_run_after_its_install_is_the_runs_log(self):
        # a notebook that installs, then trains, and is cut in training: the run's own lines end it, not the build's
        text = ("Collecting flash-attn\n  Using cached flash_attn-2.5.8.tar.gz (2.5 MB)\nRequirement already satisfied: torch in /usr/lib/python3/dist-packages (2.3.0)\n"
                + "".join(f"epoch 1 step {i} loss 0.{90 - i}\n" for i in range(5)))
        f = api.diagnose(text).findings[0]
        assert f.id == "log-inconclusive" and "last build line" not in f.evidence

    def test_sibling_the_builds_own_error_after_its_progress_decides(self):
        f = head(COPIES + BUILD + "c++: fatal error: Killed signal terminated program cc1plus\n")
        assert f is not None and f.id == "build-out-of-host-memory"
