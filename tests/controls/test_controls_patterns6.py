"""Controls and siblings for the family rules found from the sixth development sample
(tests/fixtures/log_sample/dev6, src/gpudoctor/knowledge/patterns/families6.py), one class per
verdict id: the look-alike that must not get the verdict (torchvision's harmless image-extension
warning, an extension build cut before its exit status) and the nearest failure that needs another
verdict and gets its own (a missing library, NCCL's own symbol, the build that failed). The lines are
real ones from the sample's threads (the file names below) or the threads named beside them; each runs
through the whole of `diagnose`."""

from __future__ import annotations

from functools import partial

from gpudoctor import api
from test_controls_classes6 import case as sample_case
from test_controls_patterns import head_id, ids

case = partial(sample_case, "dev6")  # a case of the sample as it was pasted


# casperg92/MaSIF_colab#7: torchvision's optional image extension does not load; the notebook goes on
TORCHVISION_WARNING = (
    "/usr/local/lib/python3.9/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
    "'/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol: _ZN3c104impl8GPUTrace13gpuTraceStateE'"
    "If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might be "
    "something wrong with your environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?\n"
    "  warn(\n"
)
# NixOS/nixpkgs#162286: the same warning, unquoted, at `import torchvision`
TORCHVISION_WARNING_UNQUOTED = (
    ">>> import torchvision\n"
    "/home/octopus/workdir/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
    "/home/octopus/workdir/lib/python3.10/site-packages/torchvision/image.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs\n"
    '  warn(f"Failed to load image Python extension: {e}")\n'
)
# facebookresearch/pytorch3d#1872: the Windows wording of the same mismatch
DLL_PROCEDURE = (
    "Traceback (most recent call last):\n"
    '  File "C:\\ComfyUI\\custom_nodes\\ComfyUI-3D-Pack\\nodes.py", line 78, in <module>\n'
    "    from pytorch3d import _C\n"
    "ImportError: DLL load failed while importing _C: The specified procedure could not be found.\n"
)


class TestExtensionUndefinedSymbol:
    def test_control_torchvisions_image_extension_warning(self):
        assert "extension-undefined-symbol" not in ids(TORCHVISION_WARNING)

    def test_control_the_same_warning_unquoted(self):
        assert "extension-undefined-symbol" not in ids(TORCHVISION_WARNING_UNQUOTED)

    def test_sibling_nccls_own_symbol_is_two_nccl_libraries(self):
        # pytorch/pytorch#119072: libtorch_cuda needs an NCCL function its libnccl lacks
        log = "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister\n"
        assert head_id(log) == "nccl-two-libraries"

    def test_sibling_a_library_that_is_missing_not_mismatched(self):
        # CannyLab/tsne-cuda#126
        assert head_id("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n") == "cuda-library-missing"

    def test_pytorch3d_built_for_another_torch(self):
        found = api.diagnose(case("pytorch3d-1608-undefined-symbol-compute-contiguous")).findings
        assert found[0].id == "extension-undefined-symbol"
        assert "torch" in found[0].evidence.get("built_against", "")

    def test_a_std_symbol_points_at_the_cpp_runtime(self):
        found = api.diagnose(case("pytorch3d-1921-undefined-symbol-exception-ptr")).findings
        assert found[0].id == "extension-undefined-symbol"
        assert "libstdc++" in found[0].evidence.get("built_against", "")

    def test_every_pasted_variant_of_the_sample(self):
        for name in ("pytorch3d-1967-undefined-symbol-warning-warn", "pytorch3d-562-colab-undefined-symbol", "pytorch3d-33-local-build-undefined-symbol"):
            assert head_id(case(name)) == "extension-undefined-symbol", name

    def test_the_windows_wording(self):
        assert head_id(DLL_PROCEDURE) == "extension-undefined-symbol"

    def test_a_terminals_cut_inside_the_path_is_read_joined(self):
        # the rest of the cut line alone ("3d/_C.cpython-310-...so: undefined symbol: ...") is not claimed:
        # the paste is read again with its cut lines joined, and the whole line decides
        text = case("pytorch3d-1608-undefined-symbol-compute-contiguous")
        wrapped = "\n".join(line[i : i + 80] for line in text.split("\n") for i in range(0, max(len(line), 1), 80))
        assert "ImportError: /home/fwj/anaconda3/envs/pyfwj/lib/python3.10/site-packages/pytorch\n" in wrapped
        assert head_id(wrapped) == "extension-undefined-symbol"


class TestLauncherChildExitCut:
    """launcher-child-exit for accelerate's report as pasted in the sample: cut before its exit
    status, or only the raise line of a rich traceback box (bmaltais/kohya_ss)."""

    verdict = "launcher-child-exit"

    def test_control_an_extension_build_cut_before_its_status(self):
        log = "subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '8']\n"
        assert "launcher-child-exit" not in ids(log)

    def test_control_subprocess_runs_own_raise_line_in_a_box(self):
        # subprocess.run raises for any command: the line alone says nothing about a training process
        log = "│ ❱  528 │   │   │   raise CalledProcessError(retcode, process.args,                        │\n"
        assert "launcher-child-exit" not in ids(log)

    def test_sibling_the_extension_build_that_failed(self):
        log = "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        assert head_id(log) == "extension-build-failed"

    def test_accelerate_report_cut_before_its_exit_status(self):
        assert head_id(case("kohya-2284-sdxl-calledprocesserror-after-update")) == "launcher-child-exit"

    def test_the_rich_boxs_raise_line(self):
        assert head_id(case("kohya-1324-windows-calledprocesserror-only")) == "launcher-child-exit"
