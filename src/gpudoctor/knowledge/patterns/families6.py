"""Family rules found from the sixth development sample (tests/fixtures/log_sample/dev6, issue 35 item 4).

The sample's largest decided family that no rule named was a compiled extension (pytorch3d's _C, flash-attn,
a custom op) that does not fit the torch it is loaded into: the dynamic loader's 'undefined symbol' on Linux,
'The specified procedure could not be found' on Windows, whatever the package or the symbol. Its examples are
real lines from those threads; its counter-examples are the nearest lines that mean something else (a library
that is missing rather than mismatched, NCCL's own symbol, torchvision's harmless image-extension warning).
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, groups, pattern

E = Severity.ERROR
W = Severity.WARN

EXTENSION_UNDEFINED_SYMBOL = "extension-undefined-symbol"
TRAINING_STOPPED_NONFINITE = "training-stopped-nonfinite"
LOSS_NOT_FINITE = "loss-not-finite"
FP16_OVERFLOW_STEP_SKIPPED = "fp16-overflow-step-skipped"
FP16_LOSS_SCALE_AT_MINIMUM = "fp16-loss-scale-at-minimum"
# fp16's dynamic loss scale after an overflow, as DeepSpeed, apex and fairseq print it: above 1 the scaler is
# still searching its range (SEARCHING), at 1 or below every step overflows (AT_MINIMUM)
_SCALE_LINES = (
    r"OVERFLOW! Rank \d+ Skipping step\. Attempted loss scale: \d+(?:\.\d+)?, reducing to {scale}"
    r"|Gradient overflow\.\s+Skipping step, loss scaler \d+ reducing loss scale to {scale}"
    r"|NOTE: (?:gradient )?overflow detected, (?:ignoring gradient, )?setting loss scale to: {scale}"
)
_AT_MOST_ONE = r"(?:0(?:\.\d+)?(?:e-\d+)?|1(?:\.0+)?)\b(?![.\d])"
SEARCHING = _SCALE_LINES.format(scale=r"(?!" + _AT_MOST_ONE + r")\d") + r"|OVERFLOW! Rank \d+ Skipping step\. Attempted loss scale: \d+(?:\.\d+)?, but hysteresis is"
AT_MINIMUM = _SCALE_LINES.format(scale=_AT_MOST_ONE)

# The usual reasons a loss or its gradients leave the finite numbers, told once for the numerics rules.
NONFINITE_WHY = """fp16 training of a model pretrained in bf16 (its activations exceed fp16's range of 65504), a
        learning rate too high or no warm-up, no gradient clipping, an input or a label that breaks the loss (an
        empty target, every label masked: a mean over no tokens is 0/0, a log of 0), or weights that are already
        broken (a checkpoint saved after a nan step)."""
NONFINITE_FIX = """train in bf16 instead of fp16 where the GPU has it (Ampere or newer: bf16=True, DeepSpeed "bf16":
        {"enabled": true}), lower the learning rate or add warm-up, clip gradients (max_grad_norm=1.0), and check the
        batch of the first non-finite step (no sample whose labels are all masked, no inf or nan in the inputs);
        torch.autograd.set_detect_anomaly(True) names the operation whose backward first returns nan; a configuration
        written for more GPUs run on fewer (detectron2-style configs whose batch size is per GPU: the total batch shrinks
        with the GPU count while the learning rate stays) needs its learning rate scaled with the total batch, or the GPU
        count it was written for; restart from a checkpoint saved before the first non-finite step"""

# What a mangled C++ name says the extension was compiled against (Itanium mangling: c10 and at are torch's
# namespaces, St is std::, __cxx11 is libstdc++'s C++11 ABI).
_TORCH_SYMBOL = re.compile(r"3c10|^_ZN?K?2at|5torch|6caffe2")
_STD_SYMBOL = re.compile(r"^_ZN?K?St|^_ZSt|GLIBCXX")


def symbol_fields(m: re.Match, context: list[str]) -> dict:
    """The library and symbol, and what the symbol shows the library was built against."""
    out = groups(m, context)
    symbol = out.get("symbol", "")
    if _TORCH_SYMBOL.search(symbol):
        out["built_against"] = "another torch version (the symbol is torch's C++ API: c10/ATen)"
    elif _STD_SYMBOL.search(symbol):
        out["built_against"] = "a newer C++ standard library than the one loaded (libstdc++)"
    if "__cxx11" in symbol:
        out["cxx11_abi"] = "the symbol uses the C++11 string ABI (std::__cxx11): the extension and torch may differ in _GLIBCXX_USE_CXX11_ABI"
    return out


PATTERNS = [
    pattern(
        EXTENSION_UNDEFINED_SYMBOL,
        "platform",
        CAUSE,
        E,
        "a compiled extension does not fit the torch it is loaded into (undefined symbol: built for another version)",
        # Linux: ImportError/OSError, or the bare loader message a wrapper re-raised on its own line, an absolute
        # path (transformers' 'Failed to import ... because of the following error'); not the rest of a line a
        # terminal cut inside the path: that paste is read again joined. NCCL's symbols have their own rule
        r"(?:(?:ImportError|OSError): |^\s*(?=/))(?P<library>\S*?\.(?:so|pyd)(?:\.[\d.]+)?): undefined symbol: (?P<symbol>(?!nccl)\S+)"
        # Windows: the same mismatch, as the DLL loader words it (a missing DLL is 'module could not be found')
        r"|ImportError: DLL load failed(?: while importing (?P<module>\w+))?: The specified procedure could not be found"
        r"|OSError: \[WinError 127\] The specified procedure could not be found",
        ("undefined symbol: ", "The specified procedure could not be found"),
        why="""The dynamic loader refused a compiled library because it calls a function the already loaded libraries
        do not export. torch has no stable C++ ABI, so every compiled extension (pytorch3d, flash-attn, xformers,
        mmcv, apex, a project's custom CUDA ops) works only with the torch version, CUDA version and C++ ABI setting
        (_GLIBCXX_USE_CXX11_ABI) it was built against. Here the extension was built for another one: torch was
        upgraded or downgraded after the extension was installed, a pre-built wheel for another torch was chosen, or
        pip built it in an isolated environment with a different torch. A symbol of std:: or GLIBCXX instead points at
        the C++ standard library: the extension was built with a newer compiler than the libstdc++ loaded at run time.
        Nothing of the training ran: the import failed.""",
        fix="""python -c "import torch; print(torch.__version__, torch.version.cuda, torch._C._GLIBCXX_USE_CXX11_ABI)"   # then
        install the extension's build made for exactly that torch, CUDA and ABI (a wheel's name carries them:
        torch2.4, cu121, cxx11abiFALSE), or rebuild it from source against the installed torch: pip uninstall the
        extension, then pip install --no-build-isolation --no-cache-dir it (or `python setup.py install` in its clone);
        or install the torch version it was built for; for a std::/GLIBCXX symbol, use the environment's newer
        libstdc++ (conda install -c conda-forge libstdcxx-ng)""".replace("\n        ", " "),
        examples=[
            ("ImportError: /home/fwj/anaconda3/envs/pyfwj/lib/python3.10/site-packages/pytorch3d/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZNK3c1010TensorImpl18compute_contiguousEv", "facebookresearch/pytorch3d#1608 (pytorch3d built with another torch; a fresh environment fixed it)"),
            ("ImportError: /.../envs/pytorch3d/lib/python3.8/site-packages/pytorch3d-0.7.8-py3.8-linux-x86_64.egg/pytorch3d/_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZNSt15__exception_ptr13exception_ptr9_M_addrefEv", "facebookresearch/pytorch3d#1921 (a std:: symbol; fixed by matching versions and the pre-built package)"),
            ("ImportError: /usr/local/lib/python3.8/dist-packages/flash_attn_2_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi", "Dao-AILab/flash-attention#723 (torch 2.1.0 + CUDA 12.1)"),
            ("/home/ligy/anaconda3/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE", "Dao-AILab/flash-attention#1612 (the loader message on its own line, under transformers' 'Failed to import')"),
            ("ImportError: DLL load failed while importing _C: The specified procedure could not be found.", "facebookresearch/pytorch3d#1872 (a pytorch3d wheel built for torch 2.0.0 with torch 1.13.1 installed)"),
            ("OSError: [WinError 127] The specified procedure could not be found", "pytorch/pytorch#37733 (torch's own DLLs mismatched)"),
        ],
        not_examples=[
            # NCCL's symbol missing from libtorch_cuda: two NCCL libraries, its own rule (nccl-two-libraries)
            "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
            # a library that is not there at all (cuda-library-missing), not one that is there and mismatched
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            "ImportError: DLL load failed: The specified module could not be found.",
            # torchvision's warning that its optional image extension did not load: training goes on
            # (casperg92/MaSIF_colab#7, NixOS/nixpkgs#162286)
            "/usr/local/lib/python3.9/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: '/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol: _ZN3c104impl8GPUTrace13gpuTraceStateE'If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might be something wrong with your environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?",
            "/home/octopus/workdir/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: /home/octopus/workdir/lib/python3.10/site-packages/torchvision/image.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs",
        ],
        fields=symbol_fields,
    ),
    pattern(
        TRAINING_STOPPED_NONFINITE,
        "numerics",
        CAUSE,
        E,
        "training stopped because the loss or its gradients became nan or inf",
        # detectron2's and fairseq's checks, the scripts that stop on a non-finite loss (DeiT, MAE and their
        # descendants), DeepSpeed's loss scaler at its minimum, anomaly detection naming the backward that
        # returned nan, Megatron-LM's check of the gradients before their all-reduce
        r"FloatingPointError: (?P<check>Loss became infinite or NaN at iteration=(?P<iteration>\d+)|Minimum loss scale reached)"
        r"|^(?!.*(?i:warn)).*?\bLoss is (?P<value>nan|inf|-inf|NaN|NAN), stopping training"
        r"|Current loss scale already at minimum - cannot decrease scale anymore"
        r"|Function '(?P<function>\w+)' returned (?P<bad>nan|inf) values in its \d+(?:st|nd|rd|th) output"
        r"|found (?:NaN|Inf) in local (?:grad norm|forward loss)"
        # icefall's fp16 check of its grad scale (k2-fsa/icefall#1751); torch's clip_grad_norm_ with error_if_nonfinite=True
        r"|(?P<grad_scale>grad_scale is too small, exiting)|is non-finite, so it cannot be clipped"
        # detectron2's RPN check of its proposals (find_top_rpn_proposals): the model's outputs went non-finite (diagB15)
        r"|FloatingPointError: Predicted boxes or scores contain Inf/NaN\. Training has diverged",
        ("Loss became infinite", "Minimum loss scale reached", "stopping training", "already at minimum", "values in its", "found NaN in local", "found Inf in local",
         "grad_scale is too small", "so it cannot be clipped", "Training has diverged"),
        why="""The run stopped on a check for non-finite numbers: the loss (or the gradients of one operation, with
        anomaly detection on) became nan or inf, and the framework ended the run rather than go on with weights that
        nan would spoil; a DeepSpeed or fairseq fp16 run whose dynamic loss scale kept falling until its minimum is the
        same failure, the gradients overflowing at every scale. The numbers went out of range; the usual reasons: """
        + NONFINITE_WHY,
        fix=NONFINITE_FIX.replace("\n        ", " "),
        examples=[
            ("FloatingPointError: Loss became infinite or NaN at iteration=0!", "gist-ailab/uoais#16 (detectron2: the first iteration's loss was 157)"),
            ("FloatingPointError: Loss became infinite or NaN at iteration=1029!", "prannaykaul/lvc#20 (detectron2 on the user's own dataset)"),
            ("FloatingPointError: Predicted boxes or scores contain Inf/NaN. Training has diverged.",
             "facebookresearch/Detic#22 (an 8-GPU config on one GPU: its batch size is per GPU); ucbdrive/few-shot-object-detection#206 "
             "(lr 0.02 diverged, 0.001 trained); facebookresearch/detectron2#1545"),
            ("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.", "yangjianxin1/Firefly#68 (fp16 full fine-tune of a 13B model; bf16 fixed it)"),
            ("RuntimeError: Function 'Log1PBackward0' returned nan values in its 0th output.", "huggingface/trl#2564 (anomaly detection under DeepSpeed)"),
            ("Loss is nan, stopping training", "the DeiT/MAE training loop's check (facebookresearch/deit, main_pretrain.py of MAE)"),
            ("        grad_scale is too small, exiting: 1.4901161193847656e-08", "k2-fsa/icefall#1751 (fp16 zipformer training diverged)"),
            ("RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`",
             "torch.nn.utils.clip_grad_norm_(error_if_nonfinite=True)'s error text"),
        ],
        not_examples=[
            "logging_nan_inf_filter=True,",  # a TrainingArguments dump
            "[WARNING] Loss is nan, stopping training is disabled: skipping this batch",
            "NaN or Inf found in input tensor.",  # a check's print; the run goes on
        ],
    ),
    pattern(
        LOSS_NOT_FINITE,
        "numerics",
        CAUSE,
        W,
        "the logged loss is nan or inf (or, in Hugging Face Trainer's logs, exactly 0.0): training is diverging or learns nothing",
        # a metrics record or a progress line whose loss is nan/inf: Trainer's dict ({'loss': nan}), Megatron's
        # and mmengine's columns (lm loss: nan, loss: nan); Trainer's loss of exactly 0.0, which is what its
        # nan filter (logging_nan_inf_filter, on by default) logs when every step's loss was nan
        # (not on a line with a best/min loss a run starts from, `best_loss = float("inf")` printed in a header,
        # nor in a dump of the run's settings: argparse's Namespace(...), a dataclass's XArguments(...)/Config(...))
        r"^(?!.*\b(?i:best|min|minimum|lowest|previous|initial)[ _](?:\w+[ _])?loss\b)(?!.*\b(?:Namespace|\w*Arguments|\w*Config)\()"
        r"(?:.*?[\s{,|(])??['\"]?"
        r"(?P<key>(?:[\w/]+[ _])?loss)['\"]?(?::|=| =|(?= )) ?(?:-?\d[\d.]*(?:e-?\d+)? \()?(?P<value>nan|NaN|-?inf)\b"
        # (not in a record that logs the KL term, TRL's GRPO/RLOO/PPO: their loss is about beta times the KL to the
        # reference model, which starts at 0 and stays small, so it rounds to 0.0 in a run that learns; unless the
        # record holds a nan)
        r"|^(?!(?=.*['\"]kl['\"]: )(?!.*\bnan\b)).*?['\"](?P<hf>(?:train_)?loss)['\"]: (?P<zero>0\.0),"
        r"|^\s*(?P<summary>train_loss)\s+=\s+(?P<zero_summary>0\.0)\s*$",
        (": nan", ":nan", "=nan", "= nan", ": NaN", ": inf", ": -inf", "=inf", "= inf", "loss nan", "loss inf", "loss NaN", "': 0.0,", '": 0.0,', "train_loss",
         " (nan)", " (inf)"),
        why="""The loss the run logs is not a finite number, yet the run goes on: each such step either updates the weights
        with nan (every later step is nan too) or is skipped, and the model stops learning. Hugging Face's Trainer hides
        it: with logging_nan_inf_filter (on by default) a nan or inf step adds nothing to the logged loss, so a run whose
        every step is nan logs a loss of exactly 0.0 (and grad_norm nan). The line alone does not say which step went
        first or why; the usual reasons: """
        + NONFINITE_WHY
        + """ What decides it: the first logged step that is not finite, and whether the run uses fp16. Not this
        warning: a loss logged finite again after its last non-finite reading (an earlier run's, in a log several runs
        were appended to, or steps the run got over: told as information), nor a loss of 0.0 in a record that logs the
        KL term (TRL's GRPO, RLOO, PPO: their loss is about beta times the KL to the reference model, near 0 in a run
        that learns).""",
        fix=("find the first step whose loss is not finite (Trainer: logging_nan_inf_filter=False logs it as nan), then: "
             + NONFINITE_FIX.replace("\n        ", " ")),
        examples=[
            ("{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.9e-05, 'epoch': 0.01}", "Hugging Face Trainer's metrics record of a nan step"),
            ("2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%", "karpathy/nanoGPT#215 (float16 on a V100)"),
            ("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.00012142857142857143, 'epoch': 0.0}", "SY-Xuan/Pink#6 (every step nan, logged as 0.0)"),
            ("{'loss': 0.0, 'learning_rate': 3.0000000000000004e-08, 'epoch': 0.0}", "huggingface/accelerate#1763 (FSDP: 0.0 from the first step)"),
            ("  train_loss               =        0.0", "hiyouga/LlamaFactory#4278 (Qwen2 LoRA in fp16)"),
            # MetricLogger's "value (average)" columns (DINOv2, DeiT, MAE, detectron2): an average of inf means a step was inf
            ("I20250104 12:12:42 90 dinov2 helpers.py:102] Training  [   1250/2500000]  eta: 40 days, 13:22:08  lr: 0.0006 (0.0003)  total_loss: 6.7223 (inf)  koleo_loss: 0.0315 (inf)",
             "facebookresearch/dinov2#492"),
        ],
        not_examples=[
            "{'loss': 1.6747, 'learning_rate': 0.0001956204379562044, 'epoch': 0.1}",
            "logging_nan_inf_filter=True,",
            # mmengine under fp16: a skipped step's gradient norm is nan while the loss is finite, which is normal (JiaquanYe/TableMASTER-mmocr#32)
            "Epoch [1][100/62598]\tlr: 1.000e-03, eta: 6 days, 15:22:46, time: 0.539, data_time: 0.051, memory: 7239, loss: 1.9091, grad_norm: nan",
            " number of skipped iterations:   0 | number of nan iterations:   0 |",
            "{'eval_loss': 0.0012, 'eval_runtime': 3.2}",
            # TRL's GRPO: a loss of 0.0 beside its reward and KL columns, a run that learns (dev7w,
            # https://github.com/LIU-Hao-2002/GRPO_project/blob/0983847ee400603cbf7402314a94e1caa816bb02/logs/nohup.out)
            "{'loss': 0.0, 'grad_norm': 0.20586903393268585, 'learning_rate': 4.5225424859373684e-07, 'completion_length': 382.2, 'rewards/format_reward_func': 0.5, 'rewards/equation_reward_func': 0.0, 'reward': 0.5, 'reward_std': 0.42426406145095824, 'kl': 0.0005637383350403979, 'epoch': 5.0}",
            # the value a run starts its best-so-far from, printed with its settings
            "best_loss: inf",
            "Best val loss: inf, patience: 10",
            "  min_val_loss = inf",
            "Namespace(batch_size=32, epochs=100, lr=0.001, stop_loss=inf, seed=42)",
            "Epoch: [0]  [ 100/1251]  eta: 0:10:02  lr: 0.000010  loss: 6.8411 (6.9012)  time: 0.4811  data: 0.0004  max mem: 9855",
        ],
        after=(TRAINING_STOPPED_NONFINITE,),
    ),
    pattern(
        FP16_OVERFLOW_STEP_SKIPPED,
        "numerics",
        HARMLESS,
        Severity.INFO,
        "fp16 dynamic loss scaling skipped a step whose gradients overflowed and lowered the scale (normal, above all at the start)",
        # DeepSpeed's, apex's and fairseq's words; a scale brought down to 1 or below is no longer the scaler
        # searching its range: every step overflows (fp16-loss-scale-at-minimum)
        SEARCHING,
        ("OVERFLOW!", "Gradient overflow", "overflow detected"),
        why="""With fp16 and a dynamic loss scaler the loss is multiplied by a large scale (65536 or 2^32) so that small
        gradients survive fp16; when the scaled gradients overflow, the scaler skips that step and halves the scale until it
        fits. A run of these lines at the start, and one now and then later, is the scaler finding its range: training goes
        on and is not harmed. It is a failure only when it never stops: the scale falls to its minimum (DeepSpeed then stops
        with 'Current loss scale already at minimum') or the loss turns nan.""",
        fix="nothing to do for a handful; if it repeats at every step or the scale keeps falling, train in bf16 or lower the learning rate",
        examples=[
            ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768", "DeepSpeed's fp16 loss scaler at the start of a run"),
            ("[2023-07-20 10:01:02,345] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648", "DeepSpeed's loss scaler, newer releases"),
            ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0", "apex amp's dynamic loss scaler"),
            ("| WARNING | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 64.0", "fairseq's fp16 trainer"),
        ],
        not_examples=[
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1",  # at the minimum: every step skipped
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.0",
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
        ],
    ),
    pattern(
        FP16_LOSS_SCALE_AT_MINIMUM,
        "numerics",
        CAUSE,
        W,
        "fp16's dynamic loss scale has fallen to 1 or below: the gradients overflow at every scale and steps are skipped",
        AT_MINIMUM,
        ("OVERFLOW!", "Gradient overflow", "overflow detected"),
        why="""The loss scaler halves its scale after every step whose gradients overflow fp16, and here it has come down to 1
        (or below): the gradients overflow even unscaled, so each such step is skipped and the model does not learn.
        DeepSpeed stops the run at its minimum scale ('Current loss scale already at minimum') unless told not to; apex and
        fairseq go on lower. The numbers left fp16's range; the usual reasons: """
        + NONFINITE_WHY,
        fix=NONFINITE_FIX.replace("\n        ", " "),
        examples=[
            ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1", "DeepSpeed's loss scaler at its minimum (min_loss_scale 1)"),
            ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 0.5", "apex amp's dynamic loss scaler, below 1"),
            ("| WARNING | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 0.0001220703125", "fairseq's fp16 trainer before its 'Minimum loss scale reached'"),
        ],
        not_examples=[
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",  # the scaler finding its range
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0",
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 16",
        ],
        after=(TRAINING_STOPPED_NONFINITE,),
    ),
]
