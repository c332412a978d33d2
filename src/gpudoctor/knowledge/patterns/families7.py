"""Family rules found from the retired held-out part heldout5 (tests/fixtures/log_sample/heldout5, issue 35 item 4).

Its threads (OpenMMLab, icefall/k2, GroundingDINO, espnet, mamba, Megatron-DeepSpeed) showed four families that no rule
named, each written by many packages in their own words: a package's compiled extension module that is not there at all
(it was installed without being compiled: `_C`, `_ext`, `*_cuda`), a compiled CUDA extension whose kernels do not fit
the GPU or the CUDA it runs on (the CUDA runtime's 'invalid device function' and 'named symbol not found'), a training
loop's own report that the gradient norm is not finite, and a test stopped by pytest-timeout (a CI test that hung). Examples are real lines from those threads and their
neighbours; counter-examples are the nearest lines that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern
from gpudoctor.knowledge.patterns.families6 import NONFINITE_FIX, NONFINITE_WHY, TRAINING_STOPPED_NONFINITE

E = Severity.ERROR
W = Severity.WARN

EXTENSION_NOT_BUILT = "extension-not-built"
EXTENSION_KERNEL_MISSING = "extension-kernel-missing"
GRAD_NORM_NOT_FINITE = "grad-norm-not-finite"
TEST_TIMED_OUT = "test-timed-out"

# A package's compiled module, as packages name it: `_C` (torchvision, detectron2, GroundingDINO, sam2, pytorch3d),
# `_ext` (mmcv), `*_cuda` / `*_cuda_ext` / `*_C` (apex's amp_C and fused_layer_norm_cuda, mamba's selective_scan_cuda,
# flash-attn's flash_attn_2_cuda). torch's own `torch._C` is not one a user builds: a torch imported from its source
# folder, another story (module-not-found).
_COMPILED = r"(?:_C|_ext|\w+_cuda|\w+_cuda_ext|\w+_C)"

PATTERNS = [
    pattern(
        EXTENSION_NOT_BUILT,
        "platform",
        CAUSE,
        E,
        "a package's compiled C++/CUDA module is not there: the package was installed without building it",
        # the import failing (a dotted module or a bare compiled one), or the NameError a package raises later
        # when it caught that import and went on (GroundingDINO's `_C`); not a package's own warning that it
        # goes on without the module (sam2 skips a post-processing step)
        r"^(?!.*(?:(?i:\bwarn(?:ing)?\b|skipping|falling back|fall back)|[A-Z]\w*Warning\b)).*?(?:"
        rf"NameError: name '(?P<name>{_COMPILED})' is not defined"
        rf"|(?:ModuleNotFoundError|ImportError): No module named '(?!torch\.)(?P<module>(?:[\w]+\.)*{_COMPILED})'"
        rf"|cannot import name '(?P<imported>{_COMPILED})' from '(?!torch\b)(?P<package>[\w.]+)')",
        ("is not defined", "No module named", "cannot import name"),
        why="""Packages with C++/CUDA code (mmcv's ops, GroundingDINO's and detectron2's `_C`, apex, mamba, flash-attn)
        ship that code as a compiled module beside their Python files, and here it is missing: the Python part is
        installed, the compiled part is not. The usual ways: the package was built from source where no CUDA toolkit was
        visible (no nvcc, CUDA_HOME unset, a login node without GPUs), and its setup skipped the extension instead of
        failing (mmcv prints 'Compiling mmcv._ext without CUDA', GroundingDINO 'Failed to load custom C++ ops. Running
        on CPU mode Only!'); the code runs from a source folder in which the extension was never built (no `pip install
        -e .` or `python setup.py build_ext --inplace` there); or the light package without ops was installed (mmcv-lite
        where mmcv-full is needed). A NameError for `_C` is the same failure surfacing later: the package caught the
        failed import at start and calls the module when it is needed.""",
        fix="""reinstall the package so that its extension is compiled: with the CUDA toolkit of torch.version.cuda on PATH and
        CUDA_HOME pointing at it, `pip install -v --no-build-isolation -e .` in its source folder (read the build output
        for 'without CUDA' or the first error), or install its prebuilt wheel for your torch and CUDA (OpenMMLab: `mim
        install mmcv`, not mmcv-lite); then `python -c "import PACKAGE._C"` must import""".replace("\n        ", " "),
        examples=[
            ("NameError: name '_C' is not defined", "IDEA-Research/GroundingDINO#230 (the extension was not built; nvidia-smi healthy)"),
            ("ModuleNotFoundError: No module named 'mmcv._ext'", "open-mmlab/mmcv issues (mmcv-lite or a build without CUDA where ops are used)"),
            ("ModuleNotFoundError: No module named 'selective_scan_cuda'", "state-spaces/mamba issues (mamba_ssm installed without its kernels)"),
            ("ImportError: cannot import name '_C' from 'groundingdino' (/home/user/GroundingDINO/groundingdino/__init__.py)", "IDEA-Research/GroundingDINO issues"),
            ("ModuleNotFoundError: No module named 'fused_layer_norm_cuda'", "NVIDIA/apex issues (apex installed Python-only)"),
        ],
        not_examples=[
            # sam2's own warning: it goes on without the optional module (facebookresearch/sam2#661, healthy)
            "UserWarning: cannot import name '_C' from 'sam2' (/home/ubuntu/sam2/sam2/__init__.py)",
            "Skipping the post-processing step due to the error above. You can still use SAM 2 and it's OK to ignore the error above",
            # torch imported from its own source folder: module-not-found's story
            "ModuleNotFoundError: No module named 'torch._C'",
            # the module is there but built for another torch: extension-undefined-symbol
            "ImportError: /opt/conda/lib/python3.10/site-packages/groundingdino/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
            "ModuleNotFoundError: No module named 'mmcv'",  # no package at all
        ],
        fields=groups,
    ),
    pattern(
        EXTENSION_KERNEL_MISSING,
        "cuda",
        CAUSE,
        E,
        "a compiled CUDA extension has no kernel for this GPU or this CUDA (built for another architecture or CUDA version)",
        # the CUDA runtime's words for a kernel or a symbol the loaded binary lacks (cudaErrorInvalidDeviceFunction,
        # cudaErrorSymbolNotFound), raised as they are or in torch's 'CUDA error: ...'
        r"(?:^|(?:RuntimeError|CUDA error|error|Error|cudaError\w*)\s*[:=]\s*)(?P<error>invalid device function|named symbol not found)\b",
        ("invalid device function", "named symbol not found"),
        why="""A kernel of a compiled CUDA extension (k2, mmcv's ops, detectron2, apex, a custom op) was called, and the binary
        loaded has none for this GPU: it was compiled for other compute capabilities (TORCH_CUDA_ARCH_LIST or the build
        machine's GPU), or against another CUDA version than the one it runs with, so the CUDA runtime finds no function
        (invalid device function) or no symbol (named symbol not found) to launch. torch's own kernels say 'no kernel image
        is available' instead; a prebuilt wheel made for another CUDA or torch (its name says which: +cuda11.7.torch1.13) is
        the same mismatch.""",
        fix="""python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_capability())"   # then
        rebuild the extension for this GPU and torch's CUDA: TORCH_CUDA_ARCH_LIST="8.6" (your capability) pip install -v
        --no-build-isolation --force-reinstall --no-cache-dir PACKAGE with nvcc of torch's CUDA version, or install the
        package's wheel built for exactly your torch and CUDA""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: named symbol not found", "k2-fsa/icefall#695 (k2's linear_fsa; k2 built for cuda11.7/torch1.13)"),
            ("RuntimeError: CUDA error: invalid device function", "open-mmlab/mmdetection issues (mmcv ops built for another GPU architecture)"),
            ("CUDA error: invalid device function", "facebookresearch/detectron2 issues (detectron2 built on a machine with another GPU)"),
        ],
        not_examples=[
            # torch's own kernels: cuda-no-kernel-image
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            # nvcc's notice while building for old architectures: the build goes on
            "nvcc warning : The 'compute_35', 'compute_37', 'sm_35', and 'sm_37' architectures are deprecated, and may be removed in a future release",
            "found symbol cuModuleGetFunction in libcuda.so.1",
        ],
        fields=groups,
    ),
    pattern(
        GRAD_NORM_NOT_FINITE,
        "numerics",
        CAUSE,
        W,
        "the gradient norm is nan or inf: the step was skipped (or its update is not finite) and the model learns nothing from it",
        # a training loop's own report (espnet's trainer), torch's clip_grad_norm_ warning of torch 1.9-1.12; not the
        # gradient-norm column of a metrics line (mmengine logs grad_norm: nan for fp16 steps its scaler skips), and not
        # torch's error when error_if_nonfinite=True stops the run (training-stopped-nonfinite)
        r"\b(?:[Tt]he|[Tt]otal) grad(?:ient)?[ _]norm is (?P<value>nan|inf|-inf|NaN|Inf)\b"
        r"|(?P<clip>Non-finite norm encountered in torch\.nn\.utils\.clip_grad_norm_)",
        ("grad norm is", "gradient norm is", "grad_norm is", "Non-finite norm encountered"),
        why="""The training loop measured the gradients' norm and it is not a finite number, so this step's update is
        skipped (espnet, loops that check it) or, where nothing checks, applied with nan and every later step is nan too.
        Once at the start of fp16 training with a dynamic loss scaler it is the scaler finding its range (normal); at
        every step the model is not learning, which looks like a run that is stuck. The usual reasons: """
        + NONFINITE_WHY
        + """ What decides it: whether it repeats at every step, and whether the run uses fp16. A loop's line that stops
        while the run's progress goes on after it (no skip after the first ones) is told as information, not the state
        the log ends in.""",
        fix=("see whether it repeats at every step; if it does: " + NONFINITE_FIX.replace("\n        ", " ")),
        examples=[
            ("[f3d8bac11bcb] 2022-08-08 08:47:11,459 (trainer:647) WARNING: The grad norm is nan. Skipping updating the model.", "espnet/espnet#4559 (training seemed stuck)"),
            (
                "/espnet/espnet2/train/trainer.py:639: FutureWarning: Non-finite norm encountered in torch.nn.utils.clip_grad_norm_; continuing anyway. "
                "Note that the default behavior will change in a future release to error out if a non-finite total norm is encountered.",
                "espnet/espnet#4559 (torch 1.9-1.12's warning from clip_grad_norm_)",
            ),
        ],
        not_examples=[
            # mmengine's metrics line under fp16: the scaler skipped this step, the loss is finite (JiaquanYe/TableMASTER-mmocr#32)
            "Epoch [1][100/62598]\tlr: 1.000e-03, eta: 6 days, 15:22:46, time: 0.539, data_time: 0.051, memory: 7239, loss: 1.9091, grad_norm: nan",
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",  # fp16-overflow-step-skipped
            "The grad norm is 3.2145. Clipping to 1.0",
        ],
        after=(TRAINING_STOPPED_NONFINITE,),
        fields=groups,
    ),
    pattern(
        TEST_TIMED_OUT,
        "timeout",
        CAUSE,
        E,
        "a test ran past pytest-timeout's limit and was stopped: it hung (or is slower than the limit)",
        # pytest-timeout's failure, in the test's section and in the short summary, and the header of the stacks it dumps
        r"\bFailed: Timeout >(?P<seconds>\d+(?:\.\d+)?)s|^\+{5,} Timeout \+{5,}$",
        ("Failed: Timeout >", "+ Timeout +"),
        why="""pytest-timeout stops a test that runs longer than its --timeout. A distributed or GPU test that does is
        usually hanging: ranks waiting in a collective or a rendezvous that never completes (a rank that did not start,
        more ranks than the machine has GPUs, NCCL's peer-to-peer or InfiniBand transport on the CI machine), or a process
        waiting for a child that died; less often the test is only slower there than the limit. With the thread method,
        pytest-timeout prints every thread's stack under its '+++ Timeout +++' line: that stack says where it waited.""",
        fix="""rerun the test alone with the stacks: pytest -x -q TEST --timeout 300 --timeout_method=thread (every thread's stack
        at the timeout), with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL when it runs collectives; if it passes on fewer GPUs
        (CUDA_VISIBLE_DEVICES=0,1), compare what the ranks do at start-up""".replace("\n        ", " "),
        examples=[
            ("FAILED tests/test_model.py::MyTestCase::test_gpt - Failed: Timeout >300.0s", "bigscience-workshop/Megatron-DeepSpeed#142 (hangs at start-up with 4 GPUs, passes with 2)"),
            ("E   Failed: Timeout >600.0s", "pytest-timeout's line in the failing test's section"),
            ("+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++", "pytest-timeout's header above the stacks it dumps (thread method)"),
        ],
        not_examples=[
            "timeout: 300.0s",  # pytest-timeout's session header: the limit, no test stopped
            "timeout method: signal",
            "FAILED tests/test_distributed.py::test_allreduce[nccl] - RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219",
        ],
        fields=groups,
    ),
]
