"""Controls and siblings for diagJ33 (issue 35, item 4: build and install failures as one family). What decides the cause
of a failed build or install is the tool's own first error line, never the wrapper a build ends with (ninja's "build
stopped", pip's "subprocess-exited-with-error" and "Failed building wheel"): knowledge/patterns/launchers.py reads the
class of that line (`build-cuda-version-mismatch`, `build-compiler-crashed`, `build-cuda-intrinsic-undefined`,
`nvcc-command-line-refused`, `ninja-missing`, `build-cxx-standard-too-old`, `build-isolation-torch-missing`,
`pip-no-matching-distribution`, `pip-dependency-conflict`, beside diagE31's classes), and `extension-build-failed` quotes
the compiler's first error line, or says that only its wrapper shows and what would decide it.

`test_control_*` is the look-alike input that must not get the verdict (a build that goes on past a warning in the same
words, a retry that succeeded, "error" in a file's name), `test_sibling_*` the nearest one that needs another verdict and
gets its own. Lines are real ones (threads named beside them); the retired parts' cases are the logs as pasted."""

from __future__ import annotations

import pytest
from test_controls_classes6 import case
from test_controls_detect8 import head, head_id
from test_controls_diagC20 import found

from gpudoctor import api
from gpudoctor.core.findings import Severity

WRAPPER = "extension-build-failed"
NINJA_END = ("ninja: build stopped: subcommand failed.\n"
             "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n")
PIP_END = ("      error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n      [end of output]\n"
           "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
           "  ERROR: Failed building wheel for flash-attn\nFailed to build flash-attn\n")
BUILD = ("running build_ext\nbuilding 'flash_attn_2_cuda' extension\ncreating build/temp.linux-x86_64-cpython-310/csrc\n"
         "/usr/local/cuda/bin/nvcc -I/tmp/pip-install/csrc/flash_attn -I/usr/include/python3.10 -c csrc/flash_attn/src/flash_fwd_hdim64_fp16_sm80.cu "
         "-o build/temp.linux-x86_64-cpython-310/csrc/flash_attn/src/flash_fwd_hdim64_fp16_sm80.o -O3 -std=c++17\n")
BUILT = ("  Building wheel for flash-attn (setup.py) ... done\n  Created wheel for flash-attn: filename=flash_attn-2.5.8-cp310-cp310-linux_x86_64.whl\n"
         "Successfully built flash-attn\nInstalling collected packages: flash-attn\nSuccessfully installed flash-attn-2.5.8\n")


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


def errors(text: str) -> list:
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestExtensionBuildFailedNamesWhatDecides:
    verdict = WRAPPER

    def test_sibling_the_compilers_first_error_is_quoted_in_the_headline(self):
        # mmcv's shape (a CUDA op written for the THC API a newer torch removed): the compiler's line names the reason
        text = (BUILD + "mmcv/ops/csrc/pytorch/nms_cuda.cu(12): error: identifier \"THCudaCheck\" is undefined\n\n"
                "1 error detected in the compilation of \"mmcv/ops/csrc/pytorch/nms_cuda.cu\".\n" + NINJA_END)
        f = head(text)
        assert f is not None and f.id == self.verdict
        assert 'identifier "THCudaCheck" is undefined' in f.title

    def test_sibling_the_first_error_under_pips_wrapper_that_came_first(self):
        # pip's "Building wheel ... error" is printed before the build's own output (pip -v): the compiler's line is told
        text = ("  Building wheel for mmcv-full (setup.py) ... error\n  error: subprocess-exited-with-error\n"
                "      ./mmcv/ops/csrc/common/pytorch_cpp_helper.hpp:11:30: error: 'AT_CHECK' was not declared in this scope\n"
                + PIP_END)
        f = head(text)
        assert f is not None and f.id == self.verdict and "'AT_CHECK' was not declared in this scope" in f.title

    def test_control_wrapper_lines_alone_say_so_and_what_would_decide(self):
        f = head(BUILD + PIP_END)
        assert f is not None and f.id == self.verdict
        assert "only" in f.title and "wrapper" in f.title  # no cause guessed: the wrapper is all the paste shows
        assert "first `error:` line" in f.fix

    def test_control_ninjas_failed_object_after_a_ptxas_warning_is_not_its_error(self):
        # pytorch/pytorch#156613 (heldout32): a ptxas warning, then ninja's FAILED line; ptxas's error itself is not pasted
        f = head(case("heldout32", "pytorch-156613-sm120-rowwise-scaled-mm"))
        assert f is not None and f.id == self.verdict and "wrapper" in f.title

    def test_control_a_successful_build_with_warnings_in_the_same_words(self):
        text = (BUILD + "csrc/ms_deform_attn_cuda.cu:21:5: warning: 'at::DeprecatedTypeProperties& at::Tensor::type() const' is deprecated [-Wdeprecated-declarations]\n"
                "/usr/local/cuda/include/cuda_fp16.hpp(1082): warning #177-D: variable \"x\" was declared but never referenced\n"
                "[12/40] c++ -c csrc/error_handling.cpp -o build/temp.linux-x86_64-cpython-310/csrc/error_handling.o -O3\n" + BUILT)
        assert head_id(text) == "-"


class TestBuildCudaVersionMismatch:
    verdict = "build-cuda-version-mismatch"

    @pytest.mark.parametrize("lines,nvcc,torch", [
        # torch.utils.cpp_extension's check, its message over two lines (open-mmlab/OpenPCDet#1275)
        ("RuntimeError:\nThe detected CUDA version (11.8) mismatches the version that was used to compile\n"
         "PyTorch (11.7). Please make sure to use the same CUDA versions.\n", "11.8", "11.7"),
        # pip's indented build output (icip-cas/AutoAlign#25)
        ("      RuntimeError:\n      The detected CUDA version (11.8) mismatches the version that was used to compile\n"
         "      PyTorch (12.4). Please make sure to use the same CUDA versions.\n", "11.8", "12.4"),
        # apex's own check (NVIDIA/apex#1748): only torch's version is in the line
        ("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile "
         "Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.\n", "", "12.1"),
    ])
    def test_sibling_the_toolkits_cuda_against_torchs_leads_over_the_wrapper(self, lines, nvcc, torch):
        f = head("running build_ext\n" + lines + PIP_END)
        assert f is not None and f.id == self.verdict
        assert torch in f.title and (not nvcc or nvcc in f.title)
        assert "CUDA_HOME" in f.fix and "--no-build-isolation" in f.fix
        assert finding("running build_ext\n" + lines + PIP_END, WRAPPER).severity is Severity.WARN  # the wrapper is its consequence

    def test_sibling_the_packages_minimum_cuda(self):
        # Dao-AILab/flash-attention#597: the package's own check of nvcc against the CUDA it needs
        text = "      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by running nvcc -V.\n" + PIP_END
        f = head(text)
        assert f is not None and f.id == self.verdict and "11.6" in f.title
        wrapper = finding(text, WRAPPER)  # its consequence: not "no line here is it"
        assert wrapper.severity is Severity.WARN and "only its wrapper" not in wrapper.title and "consequence" in wrapper.title

    def test_sibling_the_retired_parts_isolated_build(self):
        # facebookresearch/sam2#18 (heldout5): `pip install -e .` built against the torch pip put in its isolated build env
        f = head(case("heldout5", "sam2-18-cuda-version-mismatch-build"))
        assert f is not None and f.id == self.verdict

    def test_control_a_minor_version_mismatch_is_torchs_warning_and_the_build_goes_on(self):
        # open-mmlab/mmcv#2949: torch >= 2 only warns for a minor mismatch
        text = ("      running build_ext\n"
                "      /miniconda3/envs/test-env/lib/python3.10/site-packages/torch/utils/cpp_extension.py:388: UserWarning: The detected CUDA version (11.5) "
                "has a minor version mismatch with the version that was used to compile PyTorch (11.7). Most likely this shouldn't be a problem.\n"
                "        warnings.warn(CUDA_MISMATCH_WARN.format(cuda_str_version, torch.version.cuda))\n" + BUILT)
        assert head_id(text) == "-"


class TestBuildCompilerCrashed:
    verdict = "build-compiler-crashed"

    @pytest.mark.parametrize("line", [
        "c++: internal compiler error: Segmentation fault (program cc1plus)",  # traveller59/spconv#328 (a Jetson's gcc 7)
        "/tmp/tmpxft_001a896c_00000000-4_devlink.fatbin.c:47911901: internal compiler error: Segmentation fault",  # pytorch/pytorch#47412
        "nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)",  # nvcc's own front end crashing
        "csrc/attn.cu(88): fatal error C1001: Internal compiler error.",  # MSVC's wording
    ])
    def test_sibling_the_compiler_itself_crashed(self, line):
        text = BUILD + line + "\nPlease submit a full bug report,\nwith preprocessed source if appropriate.\n" + NINJA_END
        f = head(text)
        assert f is not None and f.id == self.verdict and "MAX_JOBS=1" in f.fix

    def test_sibling_the_retired_parts_devlink_crash(self):
        # heldout32's pytorch/pytorch#47412: gcc crashing on nvcc's device-link stub (was an unrecognised segfault, Python's fix)
        f = head(case("heldout32", "pytorch-47412-cuda111-devlink-ice"))
        assert f is not None and f.id == self.verdict

    def test_sibling_a_compiler_killed_for_memory_is_the_memory_verdict(self):
        f = head(BUILD + "g++: internal compiler error: Killed (program cc1plus)\n" + NINJA_END)
        assert f is not None and f.id == "build-out-of-host-memory"

    def test_control_error_in_a_files_name_while_the_build_succeeds(self):
        text = (BUILD + "[12/40] /usr/bin/c++ -c tests/internal_compiler_error_regress.cpp -o internal_compiler_error_regress.o -O2\n" + BUILT)
        assert head_id(text) == "-"


class TestBuildCudaIntrinsicUndefined:
    verdict = "build-cuda-intrinsic-undefined"

    @pytest.mark.parametrize("line", [
        'src/reduce_kernel.h(199): error: identifier "__half22float2" is undefined',  # NVIDIA/nccl#9 (compiled for sm_52)
        '/workspace/ByteTransformer/bytetransformer/include/reduce.h(58): error: identifier "__hadd2" is undefined',  # bytedance/ByteTransformer#7
        '      /tmp/pip-install-lps8mve2/llama-cpp-python/vendor/llama.cpp/ggml-cuda.cu(626): error: identifier "__hmax2" is undefined',  # abetlen/llama-cpp-python#1081
        'error: identifier "__funnelshift_r" is undefined',  # NVIDIA/nccl#637 (nvcc 10.1)
    ])
    def test_sibling_a_cuda_intrinsic_this_compile_does_not_have(self, line):
        text = BUILD + line + "\n\n1 error detected in the compilation of \"csrc/kernel.cu\".\n" + NINJA_END
        f = head(text)
        assert f is not None and f.id == self.verdict
        assert "TORCH_CUDA_ARCH_LIST" in f.fix and "nvcc --version" in f.fix
        assert finding(text, WRAPPER).severity is Severity.WARN

    def test_sibling_the_retired_parts_nccl_build(self):
        # heldout32's NVIDIA/nccl#637 (was an unrecognised tool error with a generic fix)
        f = head(case("heldout32", "nccl-637-nvcc101-funnelshift"))
        assert f is not None and f.id == self.verdict

    def test_sibling_the_packages_own_identifier_is_the_compilers_error_quoted(self):
        text = BUILD + 'csrc/ops.cu(40): error: identifier "scatter_helper" is undefined\n' + NINJA_END
        f = head(text)
        assert f is not None and f.id == WRAPPER and "scatter_helper" in f.title

    def test_control_half_intrinsics_in_the_compile_flags_while_the_build_succeeds(self):
        text = (BUILD + "/usr/local/cuda/bin/nvcc -c csrc/half_intrinsics.cu -o build/half_intrinsics.o -D__CUDA_NO_HALF_OPERATORS__ "
                "-D__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ -gencode=arch=compute_80,code=sm_80\n" + BUILT)
        assert head_id(text) == "-"


class TestNvccCommandLineRefused:
    verdict = "nvcc-command-line-refused"

    @pytest.mark.parametrize("line", [
        "nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified",  # CharlesShang/TFFRCNN#131
        "nvcc fatal   : Unknown option 'fopenmp'",  # flashlight/flashlight#488, AlexeyAB/darknet#3314
        "nvcc fatal   : Unknown option '-generate-dependencies-with-compile'",  # levihsu/OOTDiffusion#65 (nvcc 10)
    ])
    def test_sibling_nvcc_refused_its_own_command_line(self, line):
        text = ("nvcc -std=c++11 -c -o obj/xnor_gemm_kernel.cu.o src/xnor_gemm_kernel.cu.cc -I  -D GOOGLE_CUDA=1 -x cu -Xcompiler -fPIC\n"
                + line + "\nMakefile:2: recipe for target 'all' failed\nmake: *** [all] Error 1\n")
        f = head(text)
        assert f is not None and f.id == self.verdict and "-Xcompiler" in f.fix

    def test_sibling_the_retired_parts_windows_build(self):
        # heldout29b's NickDarvey/whisper#19: MSBuild's nvcc line under a person's words (was read as a hang)
        f = head(case("heldout29b", "nickdarvey-whisper-19-cublas-windows-build"))
        assert f is not None and f.id == self.verdict

    def test_sibling_an_architecture_nvcc_does_not_know_keeps_its_own_verdict(self):
        assert head_id(BUILD + "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n" + NINJA_END) == "build-gpu-arch-unsupported"

    def test_control_nvccs_warning_about_an_option_while_the_build_goes_on(self):
        text = (BUILD + "nvcc warning : incompatible redefinition for option 'compiler-bindir', the last value of this option was used\n" + BUILT)
        assert head_id(text) == "-"


class TestBuildGpuArchUnsupportedShapes:
    verdict = "build-gpu-arch-unsupported"

    def test_sibling_cmakes_findcuda_not_knowing_an_arch_name(self):
        # heldout32's pytorch/pytorch#113948 (was an unrecognised CMake error with a generic fix)
        f = head(case("heldout32", "pytorch-113948-arch-9-0a-cmake"))
        assert f is not None and f.id == self.verdict and "TORCH_CUDA_ARCH_LIST" in f.fix

    def test_sibling_nvccs_gpu_name_option(self):
        f = head(BUILD + "nvcc fatal   : Value 'sm_30' is not defined for option 'gpu-name'\n" + NINJA_END)
        assert f is not None and f.id == self.verdict


class TestNinjaMissing:
    verdict = "ninja-missing"

    def test_sibling_torchs_jit_build_without_ninja(self):
        # CSAILVision/unifiedparsing#12
        text = ("Traceback (most recent call last):\n  File \"unifiedparsing/lib/nn/prroi_pool/functional.py\", line 22, in <module>\n    verbose=True\n"
                "  File \".../python3.6/site-packages/torch/utils/cpp_extension.py\", line 837, in _write_ninja_file_and_build\n    verify_ninja_availability()\n"
                "  File \".../python3.6/site-packages/torch/utils/cpp_extension.py\", line 875, in verify_ninja_availability\n"
                "    raise RuntimeError(\"Ninja is required to load C++ extensions\")\nRuntimeError: Ninja is required to load C++ extensions\n")
        f = head(text)
        assert f is not None and f.id == self.verdict and "pip install ninja" in f.fix

    def test_control_setuptools_falling_back_without_ninja_and_the_build_goes_on(self):
        # open-mmlab/mmcv#1483's warning: the slow backend builds the extension anyway
        text = ("running build_ext\n/usr/lib/python3/site-packages/torch/utils/cpp_extension.py:304: UserWarning: Attempted to use ninja as the "
                "BuildExtension backend but we could not find ninja.. Falling back to using the slow distutils backend.\n" + BUILT)
        assert head_id(text) == "-"


class TestBuildCxxStandardTooOld:
    verdict = "build-cxx-standard-too-old"

    @pytest.mark.parametrize("line", [
        # Karbo123/segmentator#13: a CMake build whose CMakeLists asks for C++14
        "/public/home/miniconda3/envs/oneformer3d/lib/python3.8/site-packages/torch/include/torch/csrc/api/include/torch/all.h:4:2: "
        "error: #error C++17 or later compatible compiler is required to use PyTorch.",
        "libtorch/include/ATen/ATen.h:4:2: error: #error C++17 or later compatible compiler is required to use ATen.",  # Cambridge-ICCS/FTorch#34
        "C:\\libtorch\\include\\c10/macros/Macros.h(4): fatal error C1189: #error:  You need C++17 to compile PyTorch",  # MSVC's wording
    ])
    def test_sibling_torchs_headers_refuse_an_older_cxx_standard(self, line):
        f = head(BUILD + line + "\n" + NINJA_END)
        assert f is not None and f.id == self.verdict and "c++17" in f.fix

    def test_sibling_nvccs_check_of_a_too_new_gcc_keeps_its_own_verdict(self):
        line = "/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported!"
        assert head_id(BUILD + line + "\n" + NINJA_END) == "build-host-compiler-unsupported"

    def test_control_the_standard_flag_on_a_compile_line_while_the_build_succeeds(self):
        text = BUILD + "[3/8] c++ -MMD -MF x.o.d -std=c++17 -c csrc/cxx17_compat.cpp -o x.o\n" + BUILT
        assert head_id(text) == "-"


# flash-attn's setup.py imports torch: under pip's build isolation (a fresh environment with only setuptools) it is not there
ISOLATED = """Collecting flash_attn
  Using cached flash_attn-2.8.3.tar.gz (8.4 MB)
  Installing build dependencies ... done
  Getting requirements to build wheel ... error
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [20 lines of output]
      Traceback (most recent call last):
        File "/home/user/ComfyUI/myvenv/lib/python3.12/site-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", line 353, in <module>
          main()
        File "/home/user/ComfyUI/myvenv/lib/python3.12/site-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", line 118, in get_requires_for_build_wheel
          return hook(config_settings)
        File "/tmp/pip-build-env-gwmgwy1l/overlay/lib/python3.12/site-packages/setuptools/build_meta.py", line 331, in get_requires_for_build_wheel
          return self._get_build_requires(config_settings, requirements=[])
        File "<string>", line 22, in <module>
      ModuleNotFoundError: No module named 'torch'
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error

× Getting requirements to build wheel did not run successfully.
│ exit code: 1
╰─> See above for output.

note: This error originates from a subprocess, and is likely not a problem with pip.
"""  # Dao-AILab/flash-attention#1920


class TestBuildIsolationTorchMissing:
    verdict = "build-isolation-torch-missing"

    def test_sibling_pips_isolated_build_env_has_no_torch(self):
        f = head("$ pip install flash_attn\n" + ISOLATED)
        assert f is not None and f.id == self.verdict and "--no-build-isolation" in f.fix

    def test_sibling_uvs_own_hint(self):
        # whyNLP/LCKV#17
        text = ("      ModuleNotFoundError: No module named 'torch'\n\n"
                "hint: This error likely indicates that `flash-attn@2.8.1` depends on `torch`, but doesn't declare it as a build dependency. "
                "If `flash-attn` is a first-party package, consider adding `torch` to its `build-system.requires`. Otherwise, `uv pip install torch` "
                "into the environment and re-run with `--no-build-isolation`.\n")
        f = head(text)
        assert f is not None and f.id == self.verdict

    def test_control_an_install_without_isolation_that_went_through(self):
        # the words of the fix, then the build finishing: nothing failed
        text = ("$ pip install flash-attn --no-build-isolation\n"
                "Collecting flash-attn\n  Downloading flash_attn-2.8.1.tar.gz (8.2 MB)\n"
                "  Preparing metadata (setup.py) ... done\n"
                "Building wheels for collected packages: flash-attn\n"
                "  Building wheel for flash-attn (setup.py) ... done\n"
                "Successfully built flash-attn\nInstalling collected packages: flash-attn\n"
                "Successfully installed flash-attn-2.8.1\n")
        assert self.verdict not in found(text)

    def test_sibling_a_runs_own_import_of_torch_is_the_interpreters(self):
        text = ('Traceback (most recent call last):\n  File "/home/u/train.py", line 3, in <module>\n    import torch\n'
                "ModuleNotFoundError: No module named 'torch'\n")
        assert head_id(text) == "module-not-found"


class TestPipNoMatchingDistribution:
    verdict = "pip-no-matching-distribution"

    def test_sibling_a_local_version_tag_only_pytorchs_index_has(self):
        # wusongbai139/controlnet_train_webUI#1
        text = ("ERROR: Could not find a version that satisfies the requirement torch==2.3.1+cu121 (from versions: 1.11.0, 1.12.0, 1.12.1, 1.13.0, "
                "1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1, 2.4.0)\nERROR: No matching distribution found for torch==2.3.1+cu121\n")
        f = head(text)
        assert f is not None and f.id == self.verdict and "torch==2.3.1+cu121" in f.title
        assert "download.pytorch.org/whl/cu121" in f.fix

    def test_sibling_releases_for_another_python(self):
        # Pastlecry/FireLemon#3
        text = ("ERROR: Ignored the following versions that require a different python version: 2.0.0 Requires-Python >=3.10; 2.0.1 Requires-Python >=3.10; "
                "2.1.0 Requires-Python >=3.10; 2.1.1 Requires-Python >=3.10\n"
                "ERROR: Could not find a version that satisfies the requirement accuweather==2.1.1 (from versions: 0.0.6, 0.0.7, 1.0.0)\n"
                "ERROR: No matching distribution found for accuweather==2.1.1\n")
        f = head(text)
        assert f is not None and f.id == self.verdict and "Requires-Python" in f.title

    def test_sibling_no_index_reached(self):
        # haotian-liu/LLaVA#1165: "(from versions: none)" after pip's connection retries: the index was never read
        text = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
                "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f2c>: Failed to establish a new connection: "
                "[Errno -3] Temporary failure in name resolution')': /simple/flash-attn/\n"
                "ERROR: Could not find a version that satisfies the requirement flash-attn (from versions: none)\n"
                "ERROR: No matching distribution found for flash-attn\n")
        f = head(text)
        assert f is not None and f.id == self.verdict and "connection" in f.title

    def test_sibling_releases_there_but_none_that_fits(self):
        # heldout31b's facebookresearch/xformers#842 as pasted (markdown's underscore before pip's line; "(unavailable)")
        f = head(case("heldout31b", "xformers-842-cuda12-no-matching-version"))
        assert f is not None and f.id == self.verdict and "xformers" in f.title and "pip install -v" in f.fix

    def test_sibling_pip_20_3_names_no_versions(self):
        # pypa/pip#9228: pip 20.3 stopped listing what it found
        f = head("ERROR: Could not find a version that satisfies the requirement six==v\nERROR: No matching distribution found for six==v\n")
        assert f is not None and f.id == self.verdict and "six==v" in f.title

    def test_control_a_retry_with_the_right_index_that_succeeded(self):
        text = ("$ pip install torch==2.3.1+cu121\n"
                "ERROR: Could not find a version that satisfies the requirement torch==2.3.1+cu121 (from versions: 2.2.2, 2.3.0, 2.3.1)\n"
                "ERROR: No matching distribution found for torch==2.3.1+cu121\n"
                "$ pip install torch==2.3.1+cu121 --index-url https://download.pytorch.org/whl/cu121\n"
                "Looking in indexes: https://download.pytorch.org/whl/cu121\nCollecting torch==2.3.1+cu121\n"
                "Installing collected packages: torch\nSuccessfully installed torch-2.3.1+cu121\n")
        assert not [f for f in errors(text) if f.id == self.verdict]


class TestPipDependencyConflict:
    verdict = "pip-dependency-conflict"

    def test_sibling_the_resolver_found_no_set_that_fits(self):
        # NineAbyss/S2R#2
        text = ("ERROR: Cannot install -r requirements.txt (line 1), -r requirements.txt (line 2), -r requirements.txt (line 21), -r requirements.txt (line 4) "
                "and torch==2.1.1 because these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n"
                "    The user requested torch==2.1.1\n    accelerate 0.34.2 depends on torch>=1.10.0\n    vllm 0.5.4 depends on torch==2.4.0\n\n"
                "To fix this you could try to:\n1. loosen the range of package versions you've specified\n"
                "2. remove package versions to allow pip to attempt to solve the dependency conflict\n\n"
                "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts\n")
        f = head(text)
        assert f is not None and f.id == self.verdict and "The conflict is caused by" in f.fix

    def test_control_pips_note_on_installed_packages_after_an_install_that_went_through(self):
        # PRIME-RL/SimpleVLA-RL#53: the install finished; the note says what else in the environment now disagrees
        text = ("Successfully installed torch-2.2.0 torchvision-0.17.0\n"
                "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
                "This behaviour is the source of the following dependency conflicts.\n"
                "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.2.0 which is incompatible.\n")
        assert not [f for f in errors(text) if f.id == self.verdict]


class TestPipInstalledWithConflicts:
    verdict = "pip-installed-with-conflicts"
    NOTE = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
            "This behaviour is the source of the following dependency conflicts.\n")

    def test_sibling_the_install_went_through_and_broke_a_requirement_a_warning(self):
        # PRIME-RL/SimpleVLA-RL#53
        text = self.NOTE + "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.2.0 which is incompatible.\nSuccessfully installed torch-2.2.0\n"
        f = finding(text, self.verdict)
        assert f is not None and f.severity is Severity.WARN and "torch==2.4.0" in f.title and "pip check" in f.fix
        assert not errors(text)  # not asserted as a failure: the install went through

    def test_sibling_the_runs_own_failure_after_it_leads(self):
        text = (self.NOTE + "xformers 0.0.22 requires torch==2.0.1, but you have torch 2.3.0 which is incompatible.\n"
                "ImportError: /usr/local/lib/python3.10/dist-packages/xformers/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
        f = head(text)
        assert f is not None and f.id != self.verdict

    def test_control_pip_check_finds_nothing(self):
        assert finding("Successfully installed torch-2.4.0\n$ pip check\nNo broken requirements found.\n", self.verdict) is None


class TestCutInsideABuildsFrames:
    """A traceback cut inside a build's own frames (torch's extension build, DeepSpeed's op builder, pip's build hook): the
    unrecognised answer says so and what decides it (knowledge/unrecognised.py LAUNCHER_FRAMES), never a guessed cause."""

    def test_sibling_deepspeeds_op_build_cut(self):
        # heldout32's deepspeed/DeepSpeed#1897 as pasted: FusedAdamBuilder().load() -> jit_load, cut
        f = head(case("heldout32", "deepspeed-1897-cifar10-fusedadam-load"))
        assert f is not None and f.id == "unrecognised-failure" and f.evidence.get("wraps") and "op" in f.title

    def test_sibling_torchs_extension_build_cut(self):
        # dev9's pytorch/vision#3695 as pasted: setup.py's build_ext into torch.utils.cpp_extension, cut
        f = head(case("dev9", "vision-3695-torch181-cuda113-build-ext"))
        assert f is not None and f.id == "unrecognised-failure" and f.evidence.get("wraps") and "compiler" in f.title

    def test_control_the_builds_own_exception_line_is_read(self):
        text = ('  File "/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 2112, in _run_ninja_build\n'
                "    raise RuntimeError(message) from e\nRuntimeError: Error building extension 'fused_adam'\n")
        assert head_id(text) == WRAPPER
