"""Classes of the twenty-second round (issue 35, diagD22): a framework's own words that it cannot do what the job asked of
it, read as classes rather than quoted. Three rules, one verdict each:

- `single-gpu-program`: the program runs on one GPU and refused a run that gave it several. Unsloth's RuntimeError in
  its two wordings ("Unsloth currently does not support multi GPU setups", "... does not work on multi GPU setups",
  raised when the process sees more than one GPU), mmcv's "MMDataParallel only supports single GPU training, if you need
  to train with multiple GPUs, please use MMDistributedDataParallel instead", and any program's exception that says it
  does not support (work on) several GPUs, DataParallel or distributed training, or supports a single GPU only. Only a
  message the program raised is read (an exception's class before it, or one of the two verbatim messages): a person's
  sentence that a tool "only works on 1 GPU" in a thread that ran fine is not a failure. Before feature-not-supported
  (patterns/classes7.py), whose generic step does not say how to start one process on one GPU.
- `windows-launcher-failed`: Windows could not start a console script's launcher (torchrun.exe, accelerate.exe,
  llamafactory-cli.exe: the .exe shims pip writes point at the Python they were installed with). The shim's own words:
  "failed to create process." (at a line's end: a program that starts torchrun logs its own line first, LLaMA-Factory's
  "Initializing distributed tasks at: 127.0.0.1:29437" with the shim's words after it), "Fatal error in launcher: Unable
  to create process using '"PYTHON" "SCRIPT"'". No Python of the job ran. cmd.exe's "'torchrun' is not recognized as an
  internal or external command" (the command is not on PATH) stays evidence.py's "winlaunch" sign.

- `ddp-nothing-to-train`: torch's DistributedDataParallel refused a module none of whose parameters requires a
  gradient ("DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient", a
  title keeps its start): a frozen or evaluation-only model, or a tool that started DDP by itself for a step that trains
  nothing (Ultralytics YOLOv8.0.3 with no device given).

An answer the log leaves undecided (no failure line, or a traceback cut before its exception) whose log shows torch elastic's
note that it runs on Windows or macOS ("Redirects are currently not supported in Windows or MacOs", patterns/launcher.py,
harmless by itself) adds that torch there has no NCCL (`no_nccl_here`): seven failed development logs show the note and no
readable error (dev4 chatglm2-337, dev6 llama-430, heldout5 mmpretrain-1942, heldout6 flagembedding-836, heldout7
textgen-6526, heldout13 grendel-gs-10, heldout19 kohya-ss-3215).

Lines that only look alike are left: a person's sentence about a tool's GPUs, a warning that a feature is off on several
GPUs (vLLM's custom all-reduce), a note that quotes the shim's words in advice.

Written from heldout19 (unsloth-859, ultralytics-225 read), heldout20 (llamafactory-3953, mmdetection3d-603), dev3
(unsloth-724), dev6 (llama-611), heldout19 (ultralytics-225) and heldout10 (trackr-cnn-29, ayolov2-56: maintainers' sentences, left); heldout21 and
heldout17 not read while writing (the transfer measurement).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
SINGLE_GPU, WIN_LAUNCHER, NOTHING_TO_TRAIN = "single-gpu-program", "windows-launcher-failed", "ddp-nothing-to-train"
# The findings whose title gives what the line names and whose fix starts with the step it decides (knowledge/story.py)
DETAIL_SAID = (SINGLE_GPU, WIN_LAUNCHER)

# not a warning the run went past, nor the source line of a traceback's frame that raises it
NOT_WARNED = r"^(?!\s*raise\b)(?!.*(?i:warn(?:ing)?\b|falling back|fall back|\bdisabled\b)).*?"
# several GPUs, as a program's message names them
SEVERAL = (r"(?:multi(?:ple)?[- ]?(?:GPUs?|gpus?|devices?|cards?)(?: setups?| training| mode)?|more than one (?:GPU|gpu|device)"
           r"|several GPUs|(?:Distributed)?DataParallel|DDP|distributed(?: training| mode)?)")
# an exception's class before its message, as `Class: msg` or `Class('msg')`
RAISED = r"(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*(?P<exception>[A-Z]\w*(?:Error|Exception))(?::\s*|\(\s*['\"])"


def single_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("unsloth") or "Unsloth currently does not" in m.group(0):  # (its message read as an exception's)
        out["detail"] = "Unsloth trains on one GPU"
        out["step"] = ("Unsloth (its open-source release) refuses to start when the process sees more than one GPU: start one "
                       "process and show it one GPU, `CUDA_VISIBLE_DEVICES=0 python train.py` (not torchrun, accelerate launch "
                       "or the deepspeed launcher); set it before Python starts (in a notebook, before `import unsloth` / "
                       "`import torch`: os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"); several GPUs need a release or a "
                       "framework that supports them")
    elif out.get("mm"):
        out["detail"] = "MMDataParallel runs on one GPU"
        out["step"] = ("mmcv's MMDataParallel (what tools/train.py wraps the model in when not launched as a distributed job) "
                       "takes one GPU: for several start the distributed launch, `bash tools/dist_train.sh CONFIG N` (or "
                       "`python -m torch.distributed.run --nproc_per_node N tools/train.py CONFIG --launcher pytorch`), which "
                       "wraps it in MMDistributedDataParallel; for one GPU `CUDA_VISIBLE_DEVICES=0 python tools/train.py CONFIG`")
    else:
        said = (out.get("message") or "").strip(" '\"`)")
        out["detail"] = f"'{said[:120]}'" if said else "the program runs on one GPU"
        out["step"] = ("the program says it does not run on several GPUs (or in a distributed launch): start one process on one "
                       "GPU, `CUDA_VISIBLE_DEVICES=0 python SCRIPT ...` (not torchrun, accelerate launch, mpirun or a "
                       "multi-GPU option such as --gpus 2 / device=0,1); several GPUs need the program's own distributed mode "
                       "where it has one (its docs or issues: search the message)")
    return out


def launcher_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    python, script = out.get("python") or "", out.get("script") or ""
    name = re.split(r"[\\/]", script)[-1] if script else ""
    if python:
        out["detail"] = f"{name or 'a launcher'} points at {python}"
        out["step"] = (f"the launcher {name or '(a console script .exe)'} was written for the Python at {python}, which is not "
                       f"there (the environment was moved, renamed or removed): reinstall the package that owns it in the "
                       f"environment you run (`python -m pip install --force-reinstall --no-deps PACKAGE`, torch for "
                       f"torchrun.exe), or run its module with the Python you mean (`python -m torch.distributed.run ...` for "
                       f"torchrun)")
    else:
        before = (out.get("before") or "").strip()
        if m.group(0).rstrip().endswith("failed to create process."):  # setuptools' shim, after a program's own line or alone
            out["detail"] = "'failed to create process.'" + (f" after '{before[:80]}'" if before else "")
        else:  # distlib's, with paths it did not quote one by one
            out["detail"] = "'Fatal error in launcher'"
        out["step"] = ("a console script's launcher (.exe: torchrun, accelerate, llamafactory-cli) could not start the Python it "
                       "was written for: an environment moved or renamed after install, or a path with spaces or non-ASCII "
                       "characters in it; `where torchrun` shows which launcher runs: reinstall the package that owns it in "
                       "this environment (`python -m pip install --force-reinstall --no-deps torch` rewrites torchrun.exe), or "
                       "run its module instead (`python -m torch.distributed.run --nproc_per_node N train.py` for torchrun), "
                       "with the environment in a plain path (C:\\envs\\name); several GPUs on Windows also need the gloo "
                       "backend (Windows torch has no NCCL)")
    return out


# torch elastic's note that it runs on Windows or macOS (patterns/launcher.py: safe to ignore by itself); what an answer the
# log leaves undecided (a log with no failure line, a traceback cut before its exception) adds where the log shows it
PLATFORM_NOTE = "launcher-redirects-unsupported"


def no_nccl_here(line: object) -> str:
    """The clause for an undecided answer whose log shows the note at `line`: torch there has no NCCL, the backend multi-GPU
    code asks for by default, and backend-not-built's step (its fix, said once in patterns/platform.py)."""
    from gpudoctor.knowledge.patterns.platform import PATTERNS as PLATFORM

    gloo = next(p.fix for p in PLATFORM if p.id == "backend-not-built")
    return (f"; line {line} shows torch elastic's note that the job runs on Windows or macOS, where torch has no NCCL (the "
            f"backend most multi-GPU code asks for; backend-not-built where the log shows it): {gloo}")


PATTERNS = [
    pattern(
        SINGLE_GPU,
        "platform",
        CAUSE,
        E,
        "the program runs on one GPU and refused a run that gave it several",
        NOT_WARNED + r"(?:(?P<unsloth>Unsloth currently does not (?:support|work on) multi[- ]?GPU setups)"
        r"|(?P<mm>MMDataParallel) only supports single GPU training"
        r"|" + RAISED + r"(?P<message>[^\n]{0,160}?\b(?:(?:does|do|did) not|doesn't|cannot|can ?not|can't) "
        r"(?:yet |currently )?(?:support|work (?:on|with)|run (?:on|with)|be (?:used|run) (?:on|with)) " + SEVERAL + r"\b.*"
        r"|[^\n]{0,160}?\bonly supports? (?:a )?(?:single[- ]|one )(?:GPU|gpu)\b.*"
        r"|[^\n]{0,160}?\b(?i:only (?:a )?(?:single|one) GPU) (?:is|can be) (?:supported|used)\b.*"
        r"|[^\n]{0,160}?\b" + SEVERAL + r" (?:is|are) (?:currently |yet )?not (?:yet )?supported\b.*))",
        ("Unsloth currently does not", "MMDataParallel only supports", "not support", "not work on", "not work with",
         "only supports single", "only support single", "only supports a single",
         "single GPU is", "single GPU can", "one GPU is", "one GPU can", "not supported", "not run on", "not be used"),
        why="""Some programs train or serve on one GPU only and check it at the start: Unsloth's open-source release counts the
        GPUs the process sees and stops when there are more than one; mmcv's MMDataParallel (the wrapper tools/train.py uses
        when the job is not launched as a distributed one) takes one GPU and points at MMDistributedDataParallel for
        several; other programs say in their own exception that they have no multi-GPU, DataParallel or distributed path.
        The GPUs and the driver are fine: the run gave the program several GPUs (every GPU of the machine visible, a
        torchrun / accelerate / deepspeed launch, a multi-GPU option) where it takes one.""",
        fix="""STEP; `python -c "import torch; print(torch.cuda.device_count())"` in the same environment shows how many GPUs
        the process sees (1 after CUDA_VISIBLE_DEVICES=0)""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Unsloth currently does not work on multi GPU setups - sadly we are a 2 brother team so enabling it will require much more work, so we have to prioritize. Please understand!",
             "unslothai/unsloth#724 (a notebook on a machine with several GPUs)"),
            ("Hi, I remember that unsloth-2024.1 supports multi-GPUs training llama with deepspeed without raising this RuntimeError('Unsloth currently does not support multi GPU setups - but we are working on it!'). Is it my illusion?",
             "unslothai/unsloth#859 (unsloth-2024.8 under a DeepSpeed launch)"),
            ("# MMDataParallel only supports single GPU training, if you need to train with multiple GPUs, please use MMDistributedDataParallelinstead.",
             "open-mmlab/mmdetection3d#603 (the thread's title: mmcv's own message)"),
            ("AssertionError: KD currently does not support multi-gpu.", "a program's own assert of the same, in its exception"),
            ("AssertionError: Only single GPU is supported for inference", "a program's assert of its one GPU, in another order"),
        ],
        not_examples=[
            "@fst813 Oh Unsloth currently only works on 1 GPU (multi GPU in a future release). So it'll just use 1 GPU for now",
            "Multi-gpu training with TrackR-CNN is not supported. We produced all results using a single gpu.",
            "(VllmWorker rank=0 pid=4149980) WARNING 03-29 08:10:03 [custom_all_reduce.py:137] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.",
            "ValueError: FSDP only supports single device modules but got params on {device(type='cuda', index=0), device(type='cpu')}",
            "    raise RuntimeError('Unsloth currently does not support multi GPU setups')",
        ],
        fields=single_fields,
    ),
    pattern(
        WIN_LAUNCHER,
        "launcher",
        CAUSE,
        E,
        "Windows could not start a console script's launcher (.exe): no Python of the job ran",
        r"^(?!.*(?i:\bif\b|\bwhen\b|\breinstall\b)).*?(?:"
        r"(?:(?P<before>\S.*?)\s+)?(?<![\w'\"`])failed to create process\.\s*$"
        r"|Fatal error in launcher: Unable to create process using ['\"]*(?P<python>[^'\"]+?\.exe)['\"]*\s+['\"]*(?P<script>[^'\"]+?\.exe)\b"
        r"|Fatal error in launcher: Unable to create process using)",
        ("failed to create process", "Fatal error in launcher"),
        why="""pip writes a small .exe for each console script of a package (torchrun, accelerate, llamafactory-cli) that starts
        the Python it was installed with, by that Python's full path. When that Python is gone (the environment was moved,
        renamed, or the package was installed from another environment), or its path holds spaces or characters the shim
        cannot pass, Windows cannot start it and the shim prints 'failed to create process.' (setuptools' shim) or 'Fatal
        error in launcher: Unable to create process using ...' (distlib's) and exits: the job's Python never ran, and a
        program that starts torchrun for a multi-GPU run (LLaMA-Factory's llamafactory-cli) stops right after its own line.""",
        fix="""STEP""",
        examples=[
            ("failed to create process.", "meta-llama/llama#611 (torchrun.exe on Windows)"),
            ("llamafactory.cli - Initializing distributed tasks at: 127.0.0.1:29437 failed to create process.",
             "hiyouga/LLaMA-Factory#3953 (CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli train on Windows: it starts torchrun)"),
            ("Fatal error in launcher: Unable to create process using '\"C:\\Users\\u\\miniconda3\\envs\\old\\python.exe\"  \"C:\\Users\\u\\miniconda3\\envs\\new\\Scripts\\torchrun.exe\" ': The system cannot find the file specified.",
             "distlib's launcher for an environment that was renamed"),
            ("Fatal error in launcher: Unable to create process using 'C:\\Python310\\python.exe C:\\Python310\\Scripts\\accelerate.exe launch train.py'",
             "the same launcher whose paths are not quoted one by one"),
        ],
        not_examples=[
            "If torchrun says 'failed to create process.', reinstall it",
            "'torchrun' is not recognized as an internal or external command,",
            "Creating process group with backend gloo",
            "RuntimeError: failed to create process group",
        ],
        fields=launcher_fields,
    ),
    pattern(
        NOTHING_TO_TRAIN,
        "ddp",
        CAUSE,
        E,
        "DistributedDataParallel was given a module with no parameter to train",
        NOT_WARNED + r"DistributedDataParallel is not needed(?: when a module doesn't have any parameter that requires a gradient)?",
        ("DistributedDataParallel is not needed",),
        why="""DistributedDataParallel averages gradients over the ranks, and refuses at construction a module none of whose
        parameters requires a gradient: there is nothing for it to synchronise. The module was frozen (every parameter's
        requires_grad set to False: a backbone frozen whole, adapters not yet attached, a model loaded for inference), is
        used only for evaluation, or a tool wrapped it in DDP by itself for a step that trains nothing (Ultralytics YOLOv8.0.3
        started DDP when no device was given). The GPUs and the process group are fine.""",
        fix="""`print(sum(p.numel() for p in model.parameters() if p.requires_grad))` before the wrap shows 0: wrap only a model that
        trains (unfreeze what should train, p.requires_grad_(True), attach adapters before DDP(model, ...)); evaluate or infer
        without DDP (each rank runs the plain model); a tool that starts DDP on its own when no device is given: give it one
        device (Ultralytics: device=0) or upgrade it""".replace("\n        ", " "),
        examples=[
            ("# RuntimeError: DistributedDataParallel is not needed", "ultralytics/ultralytics#225 (the title: YOLOv8.0.3 with no device given)"),
            ("RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.",
             "torch's own words (torch/nn/parallel/distributed.py)"),
        ],
        not_examples=[
            "    raise RuntimeError(\"DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.\")",
            "UserWarning: DistributedDataParallel is not needed for a single device; running without it",
        ],
    ),
]
