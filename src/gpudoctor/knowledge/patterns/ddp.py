"""DistributedDataParallel and c10d usage errors."""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, NOT_HEADING, groups, head_of, pattern
from gpudoctor.knowledge.patterns import classes9

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

# DDP's unfinished-reduction message, as far as a paste kept it ("Expected to have finish" and on)
UNUSED_CUT = head_of("Expected to have finished reduction in the prior iteration before starting a new one", len("Expected to have finish"))

# The parts of a CollectiveFingerPrint, in the order that says most about what diverged, and how
# each reads ("SequenceNumber=1OpType=BARRIER": older torch prints no comma between them).
FINGERPRINT = (
    (re.compile(r"OpType=([A-Z_]+)"), "the op: rank {a} runs {va}, rank {b} {vb}"),
    (re.compile(r"SequenceNumber=(\d+)"), "the position: rank {a} is at collective #{va}, rank {b} at #{vb}"),
    (re.compile(r"TensorShape=(\[[^\]]*\])"), "the shape: rank {a} {va}, rank {b} {vb}"),
    (re.compile(r"TensorDtypes=(\w+)"), "the dtype: rank {a} {va}, rank {b} {vb}"),
)


def fingerprint_fields(m, _context):
    """The two fingerprints compared: `diverged` says which part differs (another op, another
    position in the sequence, another shape or dtype), the first that does."""
    out = groups(m, _context)
    a, b = out.get("fingerprint_a", ""), out.get("fingerprint_b", "")
    for rx, words in FINGERPRINT:
        va, vb = rx.search(a), rx.search(b)
        if va and vb and va.group(1) != vb.group(1):
            out["diverged"] = words.format(a=out["rank_a"], b=out["rank_b"], va=va.group(1), vb=vb.group(1))
            break
    return out


# torch's own API, by owner, with the release that added it (or removed it): a name torch defines, missing from the
# installed torch, says the torch is another version than the code was written for; the attribute is no model's, so
# `.module` is not the answer (JingyunLiang/VRT#22: https://github.com/JingyunLiang/VRT/issues/22, "'DistributedDataParallel'
# object has no attribute '_set_static_graph'", the maintainer: upgrade PyTorch to at least 1.9.1). Only names whose
# release is known are here; another private `_name` read from the wrapper does not decide (ddp-wrapper-private-attribute).
# per owner: "RELEASE name name; RELEASE name ..." (the release that added the names)
TORCH_ADDED = {
    "DistributedDataParallel": "1.2 no_sync; 1.7 join register_comm_hook; 1.9 _set_static_graph; 1.10 join_hook",
    "torch": "1.9 inference_mode special; 1.10 autocast frombuffer concat isin; 1.12 set_float32_matmul_precision; 2.0 compile func "
             "set_default_device; 2.1 float8_e4m3fn float8_e5m2 export compiler; 2.3 get_default_device uint16 uint32 uint64",
    "torch.distributed": "1.9 monitored_barrier; 1.13 all_gather_into_tensor "
                         "reduce_scatter_tensor; 2.0 get_global_rank get_group_rank; 2.2 init_device_mesh device_mesh",
    "torch.cuda": "1.4 reset_peak_memory_stats memory_reserved max_memory_reserved; 1.6 amp; 1.8 set_per_process_memory_fraction; "
                  "1.10 is_bf16_supported CUDAGraph graph make_graphed_callables; 1.13 OutOfMemoryError",
    "torch.nn": "1.2 Flatten; 1.6 Hardswish; 1.7 SiLU Unflatten; 1.8 LazyLinear; 1.9 Mish; 2.4 RMSNorm",
    "torch.nn.functional": "1.6 hardswish; 1.7 silu; 1.9 mish huber_loss; 2.0 scaled_dot_product_attention; 2.4 rms_norm",
}
TORCH_API: dict[str, dict[str, str]] = {
    owner: {name: f"added in torch {release}" for group in added.split("; ") for release, *names in [group.split()] for name in names}
    for owner, added in TORCH_ADDED.items()
}


def api_alternative(i: int, owner: str, names: dict[str, str]) -> str:
    """The message torch gives for one owner's missing names: an object's ("'DistributedDataParallel' object has no
    attribute ..."), a class's ("type object ..."), a module's ("module 'torch.cuda' has no attribute ...")."""
    said = (r"module '(?P<owner%d>" % i + re.escape(owner) + r")'" if owner.startswith("torch") else
            r"(?:'(?P<owner%d>" % i + re.escape(owner) + r")' object|type object '(?:torch\.nn\.parallel\.)?" + re.escape(owner) + "')")
    return said + r" has no attribute '(?P<attribute%d>" % i + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + ")'"


# torch's own internal classes, which no user's code defines: any name missing from one is code written against another torch
# release's internals (heldout10's cosypose#43: "'_DataLoaderIter' object has no attribute '_get_data'", the renamed iterator
# of torch >= 1.2; imagecaptioning.pytorch#102: "'_MultiProcessingDataLoaderIter' object has no attribute '_send_idx'", which
# torch 1.2 lacks and 1.3 has)
TORCH_INTERNAL = ("_DataLoaderIter", "_MultiProcessingDataLoaderIter", "_SingleProcessDataLoaderIter", "_BaseDataLoaderIter")
TORCH_API_REGEX = "|".join(api_alternative(i, owner, names) for i, (owner, names) in enumerate(TORCH_API.items())) + (
    r"|'(?P<internal>" + "|".join(TORCH_INTERNAL) + r")' object has no attribute '(?P<internal_attribute>\w+)'"
    # a private name of one of torch's own modules: torch's internals, which change between releases (NVIDIA/apex#1529:
    # https://github.com/NVIDIA/apex/issues/1529, "module 'torch.distributed' has no attribute '_all_gather_base'" on torch 1.7.1)
    r"|module '(?P<private_owner>torch(?:\.\w+)*)' has no attribute '(?P<private_attribute>_\w+)'")


def torch_api_fields(m, _context):
    """The owner and the name torch lacks, and the release that added it: the step that decides (the installed version)."""
    if m.group("internal") or m.group("private_owner"):
        owner, name = m.group("internal") or m.group("private_owner"), m.group("internal_attribute") or m.group("private_attribute")
        whose = "torch's own DataLoader internals" if m.group("internal") else "a private name of torch's own"
        return {"owner": owner, "attribute": name,
                "step": f"{owner} has no {name} in the installed torch ({whose}): the code reads internals of another torch release"}
    i = next(i for i in range(len(TORCH_API)) if m.group(f"attribute{i}"))
    owner = list(TORCH_API)[i]
    name = m.group(f"attribute{i}")
    when = TORCH_API[owner][name]
    return {"owner": owner, "attribute": name, "torch_release": when, "step": f"{owner} has no {name} in the installed torch ({name} was {when})"}


def private_attribute_fields(m, _context):
    return {"attribute": m.group("attribute"), "step": m.group("attribute")}


# Lightning raises DDP's check in its own words and has its own switch for the option (its message names it)
LIGHTNING_UNUSED_STEP = ("Lightning's own switch, as its message says: Trainer(strategy='ddp_find_unused_parameters_true'), or "
                         "strategy=DDPStrategy(find_unused_parameters=True)")


def unused_fields(m: re.Match, _context: list[str]) -> dict:
    """Lightning's words carry its own step (the fix's first); torch's keep the fix as it is."""
    if m.group("lightning"):
        return {"by": "lightning", "read_as": "ddp-unused-parameters", "step": LIGHTNING_UNUSED_STEP}
    return {}


PATTERNS = [
    pattern(
        "ddp-unused-parameters",
        "ddp",
        CAUSE,
        E,
        "DDP: some parameters did not get a gradient in the previous iteration",
        # the message, or its head where a paste cut it ("RuntimeError: Expected to have finish", open-mmlab/Amphion#45):
        # no other message of torch's starts with these words
        r"Expected to have finished reduction in the prior iteration before starting a new one|(?:Error: |^)" + UNUSED_CUT
        # Lightning's own words for the same check (its DDP strategy catches torch's and raises this instead, Lightning 2.x); a
        # paste may cut it after "the loss" (heldout28's anomalib-2622): no other message starts with these words
        + r"|" + NOT_HEADING + r"(?P<lightning>It looks like your LightningModule has parameters that were not used in producing the loss)",
        ("finished reduction", "Expected to have finish", "were not used in producing the loss"),
        why="""DDP waits for a gradient of every parameter before it all-reduces. Some parameters were not used
        to compute the loss (an unused head, a branch taken only sometimes, outputs not in the loss), so the
        reduction never finished.""",
        fix="DistributedDataParallel(model, ..., find_unused_parameters=True)  # your other arguments as they are; or remove/freeze the unused parameters; TORCH_DISTRIBUTED_DEBUG=DETAIL names them",
        examples=[
            ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss.", "HamPerdredes/SOOD#33"),
            ("RuntimeError: Expected to have finish", "open-mmlab/Amphion#45 (accelerate launch on GPUs 0,2; the paste ends there)"),
            ("RuntimeError: Expected to have finished reduction in the prior", "a paste cut mid-sentence"),
            ("RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by training_step. If this is intentional, you must enable the detection of unused parameters in DDP, either by setting the string value `strategy='ddp_find_unused_parameters_true'` or by setting the flag in the strategy with `strategy=DDPStrategy(find_unused_parameters=True)`.",
             "chemprop/chemprop#853; p0p4k/pflowtts_pytorch#8 (strategy='ddp_find_unused_parameters_true' fixed it); Lightning-AI/pytorch-lightning#20685"),
        ],
        not_examples=[
            "RuntimeError: Expected to have finishing touches applied before export",  # not a head of DDP's message
            "Expected to have finished the epoch before saving; it is fine now",  # prose that only quotes the words
            # Lightning's warning that the option is on but costs time (its own verdict's twin: nothing failed)
            "UserWarning: It is recommended to use `self.log('loss', ..., sync_dist=True)` when logging on epoch level in distributed setting",
        ],
        fields=unused_fields,
    ),
    pattern(
        "ddp-find-unused-not-needed",
        "ddp",
        HARMLESS,
        W,
        "find_unused_parameters=True but no parameter was unused (safe to ignore; only slower)",
        r"find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters",
        ("find_unused_parameters=True was specified",),
        why="""Not an error: DDP walks the autograd graph every iteration to look for unused parameters and found
        none, which costs time. Safe to ignore, but turning the flag off makes each step faster.""",
        fix="DistributedDataParallel(model, ..., find_unused_parameters=False)  # your other arguments as they are",
        examples=[
            ("[W reducer.cpp:1303] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass.", "cszn/KAIR#103"),
        ],
    ),
    pattern(
        "ddp-marked-ready-twice",
        "ddp",
        CAUSE,
        E,
        "DDP: a parameter's gradient hook fired twice in one iteration",
        r"Expected to mark a variable ready only once|has been marked as ready twice",
        ("ready only once", "ready twice"),
        why="""DDP expects one gradient per parameter per backward. Reentrant activation checkpointing, a module
        used twice in one forward (or outside forward), or a model wrapped in DDP twice fire the hook again.""",
        fix="torch.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)  # or DistributedDataParallel(..., static_graph=True) when the graph never changes",
        examples=[
            ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function.", "public Unsloth DDP notes (reducer error text)"),
            (
                "Parameter at index 753 has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
                "lucidrains/DALLE2-pytorch#225",
            ),
        ],
    ),
    pattern(
        "ddp-device-mismatch",
        "ddp",
        CAUSE,
        E,
        "tensors of one operation are on different devices",
        # (OneFlow's words add each operand's place: "cpu:0 (positional 0) and cpu:1 (positional 1)!", Oneflow-Inc/oneflow#8668)
        r"Expected all tensors to be on the same device, but found at least two devices, (?P<device_a>[\w:]+)(?: \(positional \d+\))? and (?P<device_b>[\w:]+)"
        # torch 2.11 names the operand: "but got mat1 is on cpu, different from other tensors on cuda:0"
        r"|Expected all tensors to be on the same device, but got (?P<operand>\w+) is on (?P<device_c>[\w:]+), different from other tensors on (?P<device_d>[\w:]+)"
        # cuDNN's conv names the devices in the types: only types on two devices are this fault (torch.cuda.HalfTensor
        # with torch.cuda.FloatTensor is a dtype mismatch on one GPU)
        r"|Input type \((?P<input_type>torch\.(?P<input_on>cuda\.|mps\.)?\w+)\) and weight type \((?P<weight_type>torch\.(?(input_on)(?!(?P=input_on))|(?:cuda|mps)\.)[\w.]+)\) should be the same"
        r"|expected device (?P<expected>[\w:]+) but got (?P<got>[\w:]+)|is on CPU, but expected (?:it|them) to be on GPU"
        # torch before 1.10: "Expected tensor for 'out' to have the same device as tensor for argument #2 'mat1'; but device 1 does not equal 3"
        # (a paste may stop at the operands: torch-points3d/torch-points3d#347 quotes the head alone, which says as much)
        r"|(?P<old_same_gpu>Expected tensor for (?:argument #\d+ )?'\w+' to have the same device as tensor for argument #\d+ '\w+')(?:; but device (?P<device_old_a>\d+) does not equal (?P<device_old_b>\d+))?"
        # the TH ops of torch 1.5-1.7 (and torch <= 1.4's "backend CUDA ... backend CPU"), and indexing from 1.13
        r"|Expected object of (?:device type|backend) (?P<expected_type>\w+) but got (?:device type|backend) (?P<got_type>\w+)"
        r"|indices should be either on cpu or on the same device as the indexed tensor \((?P<indexed_on>[\w:]+)\)"
        # cuDNN's RNN ("Input and parameter tensors are not at the same device, found input tensor at cuda:1 and parameter tensor at
        # cuda:0", aten/src/ATen/native/cudnn/RNN.cpp; its hidden-state twin), and the checks that name both operands' devices
        # (stft's "must be on the same device but got self on cuda:1 and window on cuda:0")
        r"|Input and (?:parameter|hidden) tensors are not at the same device, found input tensor at (?P<device_e>[\w:]+) and \w+ tensor at (?P<device_f>[\w:]+)"
        r"|must be on the same device,? but got \w+ on (?P<device_g>[\w:]+) and \w+ on (?P<device_h>[\w:]+)"
        r"|" + classes9.OLD_TWO_GPUS,
        ("same device", "should be the same", "expected device", "to be on GPU", "but got device type", "but got backend", "different GPUs"),
        why="""An input, a buffer or a tensor created inside forward is on another device than the model: a
        .to(device) whose result was not assigned, a tensor created without device=, or every rank defaulting
        to cuda:0. Two GPUs in one operation mean one process holds tensors on both, and three set-ups do that: a
        model split over the GPUs with device_map="auto" (model parallel: a tensor made or moved outside the
        placement hooks meets a layer on another GPU), nn.DataParallel (a tensor pinned to GPU 0 while replica 1
        runs on GPU 1; much code written for one GPU does not support DataParallel, and DistributedDataParallel runs
        it unchanged), or one process per GPU that never selected its own (set_device). The traceback's frames
        tell which: accelerate's hooks, torch/nn/parallel's data_parallel, a rank's prefix.""",
        # (STEP: classes9's words for what the line names: one GPU and the CPU, or two GPUs and the set-ups that make it)
        fix="put the operation's tensors on one device: STEP",
        examples=[
            ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!", "modelscope/ms-swift#2044"),
            (
                "[rank0]: RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
                "gpudoctor gpu_truth, one H200, torch 2.11 (tests/fixtures/gpu_truth/h200-logs/mismatch.log)",
            ),
            ("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same", "public mmfewshot notes (torch conv error text)"),
            # torch < 1.10's checkSameGPU says "them" when both operands it checked are on the CPU (the op runs on a GPU)
            ("RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU (while checking arguments for addmm)",
             "adapter-hub/adapters#100 (a library version that left its tensors on the CPU)"),
            ("RuntimeError: Function AddmmBackward returned an invalid gradient at index 1 - expected device cuda:1 but got cuda:0", "torch autograd error text"),
            (
                "(BackendExecutor pid=5631) RuntimeError: Expected tensor for 'out' to have the same device as tensor for argument #2 'mat1'; but device 1 does not equal 3 (while checking arguments for addmm)",
                "ray-project/ray#30063 (a Ray Train worker, torch 1.x wording)",
            ),
            (
                "`RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU (while checking arguments for addmm)`",
                "adapter-hub/adapters#100 (torch 1.x's wording for several tensors: a bug of the library's master branch left a layer on the CPU)",
            ),
            *classes9.EXAMPLES,
        ],
        # one GPU, two dtypes (ultralytics/yolov5#475: DataParallel with half inputs); "located on different" nodes, not GPUs
        not_examples=[
            "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",
            "the model and its arguments are located on different nodes",
            "RuntimeError: Expected all tensors to be on the same device, but it is not clear which one",  # no two devices named
        ],
        fields=classes9.device_names,
    ),
    pattern(
        "ddp-device-ids-multi-device",
        "ddp",
        CAUSE,
        E,
        "DDP device_ids does not fit the module (several devices, or the module still on CPU)",
        r"device_ids can only be None or contain a single element|DistributedDataParallel device_ids and output_device arguments only work with single-device",
        ("device_ids",),
        why="""device_ids must name the one GPU a single-device module is on. It was given several devices, or
        the module is on CPU or spread over GPUs (model parallel), where device_ids must be None.""",
        fix="model.to(local_rank); DistributedDataParallel(model, device_ids=[local_rank])  # multi-GPU modules: device_ids=None; "
        # ShannonAI/mrc-for-flat-nested-ner#128: Lightning given --gpus="0" (GPU available: True, used: False), then DDP's device_ids [None]
        "device_ids [None] with the module on the CPU: no GPU was given to this process (Lightning: gpus=0 or \"0\" is a count of zero GPUs, "
        "its banner says 'GPU available: True, used: False': pass gpus=1 or devices=1, and no ddp backend on a one-GPU machine)",
        examples=[
            ("ValueError: device_ids can only be None or contain a single element.", "pytorch/examples#936 (raised as ValueError by DistributedDataParallel)"),
            ("ValueError: DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device GPU modules or CPU modules, but got device_ids [3], output_device None, and module parameters {device(type='cpu')}.", "facebookresearch/detectron2#5146"),
        ],
    ),
    pattern(
        "pg-not-initialized",
        "ddp",
        CAUSE,
        E,
        "a distributed call ran before init_process_group",
        # torch 0.4's DistributedDataParallel said it as "collective only supported in process-group mode"
        r"Default process group (?:has not been|is not) initialized|collective only supported in process-group mode",
        ("has not been initialized", "group is not initialized", "process-group mode"),
        # The line says only that no default group existed when the call ran, not why: a launcher in the log (torchrun)
        # rules out "started with plain python", so the answer names every reading and what tells them apart.
        why="""DDP, SyncBatchNorm or a collective ran in a process that had no default process group at that moment.
        Either the group was never made on that path: the script was started with plain python instead of a launcher,
        the code that decides whether to run distributed (an environment variable such as RANK, a config flag) skipped
        init_process_group, or a distributed-only layer (SyncBatchNorm) runs in single-GPU mode; or it was already
        gone: destroy_process_group ran, or the exit tore the group down before a last barrier or collective (an
        atexit hook, a test helper's final barrier). The first torch.distributed call in the traceback is the one that
        found no group.""",
        fix="""make init_process_group run before that call on the path the traceback shows, and keep the group until the
        last collective (destroy_process_group after the final barrier); started with plain python: torchrun
        --nproc-per-node=N train.py; under torchrun, check the condition that turns distributed mode on (e.g.
        int(os.environ.get("RANK", -1)) != -1); single GPU: use BatchNorm instead of SyncBatchNorm""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.", "zai-org/ChatGLM-6B#1295"),
            ("AssertionError: Default process group is not initialized", "open-mmlab/mmsegmentation#81 (older torch wording)"),
            ("AssertionError: collective only supported in process-group mode", "pytorch/pytorch#7092 (DistributedDataParallel in torch 0.4)"),
        ],
        not_examples=["INFO: process group initialized: backend=nccl, world_size=8"],
    ),
    pattern(
        "collective-fingerprint-mismatch",
        "ddp",
        CAUSE,
        E,
        "ranks called different collectives (TORCH_DISTRIBUTED_DEBUG caught it)",
        r"Detected mismatch between collectives on ranks\. Rank (?P<rank_a>\d+) is running (?:inconsistent )?collective: CollectiveFingerPrint\((?P<fingerprint_a>[^)]*)\)?(?:.*?but Rank (?P<rank_b>\d+) is running collective: CollectiveFingerPrint\((?P<fingerprint_b>[^)]*)\))?",
        ("mismatch between collectives",),
        why="""Every rank must call the same collectives in the same order with the same shapes. The two
        fingerprints show what differs: the op (a collective inside a rank-dependent branch), the sequence
        number (one rank called an extra collective), or the shape (uneven data).""",
        fix="compare the two fingerprints; move collectives out of `if rank == 0:` and make every rank run the same number of steps (drop_last=True / Join)",
        examples=[
            ("[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16).", "modelscope/ms-swift#9443 (abridged)"),
            ("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).", "pytorch/pytorch#148976"),
        ],
        fields=fingerprint_fields,
    ),
    pattern(
        "ddp-model-mismatch",
        "ddp",
        CAUSE,
        E,
        "the ranks built different models (DDP parameter check)",
        r"DDP expects same model across all ranks(?:, but Rank (?P<rank_a>\d+) has (?P<params_a>\d+) params(?:, while rank (?P<rank_b>\d+) has inconsistent (?P<params_b>\d+) params)?)?",
        ("DDP expects same model",),
        why="""DDP compares the parameters every rank wraps. They differ: model construction depends on the
        rank (adapters or layers added on rank 0 only, a config read differently), some ranks froze all
        parameters, or ranks run different code or arguments.""",
        fix="build the model the same way on every rank (no rank-dependent layers or requires_grad changes before wrapping); compare sum(p.numel() for p in model.parameters() if p.requires_grad) per rank",
        examples=[
            ("RuntimeError: DDP expects same model across all ranks, but Rank 3 has 2247 params, while rank 0 has inconsistent 0 params.", "NJU-PCALab/STAR#44"),
        ],
        fields=groups,
    ),
    pattern(
        "torch-api-version",
        "platform",
        CAUSE,
        E,
        "the installed PyTorch version lacks an API of torch's own that the code uses (the code was written for another torch release)",
        TORCH_API_REGEX,
        ("has no attribute",),
        why="""The name is torch's own, not the model's: a method or an attribute of DistributedDataParallel, a function or a
        module of torch, torch.distributed, torch.cuda or torch.nn, a private name of one of torch's modules, or an internal of
        torch's own classes (the DataLoader's iterators, which code that reaches into them reads by their private names). The installed torch does not have it: it
        is another release than the code (a project's training script, or a library) was written for: older, for a name torch
        added later (the fix names the release); older or newer, for an internal that torch renames between releases.
        Reading it through `.module` does not help: the model never had it.""",
        fix=("STEP: compare `python -c \"import torch; print(torch.__version__)\"` with the version the project requires (its requirements "
             "or README) and install that one (`pip install -U torch`, with the CUDA build the GPUs need); or use code written for the installed torch"),
        examples=[
            ("AttributeError: 'DistributedDataParallel' object has no attribute '_set_static_graph'",
             "JingyunLiang/VRT#22 (torch older than 1.9; the maintainer: upgrade PyTorch to at least 1.9.1)"),
            ("AttributeError: module 'torch' has no attribute 'compile'", "dropbox/hqq#15 (https://github.com/dropbox/hqq/issues/15; torch.compile is new in 2.0)"),
            ("AttributeError: module 'torch.cuda' has no attribute 'is_bf16_supported'", "suno-ai/bark#40 (https://github.com/suno-ai/bark/issues/40; added in torch 1.10)"),
            ("AttributeError: module 'torch.distributed' has no attribute 'all_gather_into_tensor'",
             "deepspeedai/Megatron-DeepSpeed#254 (torch 1.12.1 lacks it, 1.13 has it)"),
            ("AttributeError: module 'torch.distributed' has no attribute '_all_gather_base'", "NVIDIA/apex#1529 (a private name apex read on torch 1.7.1)"),
            ("AttributeError: '_MultiProcessingDataLoaderIter' object has no attribute '_send_idx'",
             "ruotianluo/ImageCaptioning.pytorch#102 (a prefetching loader reading torch 1.3's iterator internals on torch 1.2)"),
        ],
        not_examples=[
            "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'",  # the model's: ddp-wrapper-attribute
            "AttributeError: 'DistributedDataParallel' object has no attribute '_backbone'",  # a private name torch does not define: undecided
            "AttributeError: module 'torch.distributed' has no attribute 'ProcessGroupNCCL'",  # a build without NCCL, not a release
            "AttributeError: module 'torchvision' has no attribute 'compile'",
            "AttributeError: 'MyModel' object has no attribute 'join'",
            "AttributeError: 'MyDataLoaderIter' object has no attribute '_send_idx'",  # the user's own class
            "AttributeError: module 'torchvision' has no attribute '_is_tracing'",  # another package's private name
        ],
        fields=torch_api_fields,
    ),
    pattern(
        "ddp-wrapper-private-attribute",
        "ddp",
        CAUSE,
        E,
        "a private attribute (_NAME) was read from the DDP wrapper: torch's own API of another torch version, or the model's own attribute (on .module); the message alone does not decide which",
        r"'(?P<wrapper>DistributedDataParallel|DataParallel)' object has no attribute '(?P<attribute>_[^']+)'",
        ("object has no attribute '_",),
        why="""DistributedDataParallel wraps the model: it has torch's own attributes, many of them private (a leading
        underscore), and forwards none of the model's except through `.module`. A private name read from it is one of two
        things: torch's own internal API (a library or a training script written for another torch release calls it, and
        the installed torch does not have it), or the model's own private attribute read through the wrapper. Whose the
        name is decides: torch's (search torch's source for it, or the calling frame is a library's) means a torch version
        mismatch; the model's (it is set in your model's __init__) means `.module`.""",
        fix="""grep -rn "STEP" in your code and the model's: set in the model, read it as model.module.STEP (or keep a reference to
        the unwrapped model); otherwise it is torch's: compare `python -c "import torch; print(torch.__version__)"` with the torch
        the code requires and install that one""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'DistributedDataParallel' object has no attribute '_module_copies'",
             "pytorch/examples#253 (the old DDP constructor; the thread points at the torch version)"),
        ],
        not_examples=[
            "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'",
            "AttributeError: 'DistributedDataParallel' object has no attribute '_set_static_graph'",  # torch's, release known: torch-api-version
        ],
        fields=private_attribute_fields,
    ),
    pattern(
        "ddp-wrapper-attribute",
        "ddp",
        CAUSE,
        E,
        "an attribute of the model was read through the DDP wrapper",
        r"'(?:DistributedDataParallel|DataParallel)' object has no attribute '(?P<attribute>[^']+)'",
        ("object has no attribute",),
        why="""DistributedDataParallel wraps the model: its own methods and attributes are on `.module`.""",
        fix="model.module.<attribute>   # or keep a reference to the unwrapped model",
        examples=[
            ("AttributeError: 'DistributedDataParallel' object has no attribute 'generate'", "torch AttributeError text"),
        ],
        fields=groups,
    ),
    pattern(
        "state-dict-mismatch",
        "ddp",
        CAUSE,
        E,
        "the checkpoint's keys do not match the model (missing, unexpected or differently shaped tensors)",
        r"Error\(s\) in loading state_dict for (?P<model>\w+)|size mismatch for (?P<tensor>[\w.]+): copying a param with shape",
        ("loading state_dict", "size mismatch for"),
        why="""load_state_dict compared the checkpoint's tensors with the model's, by name and shape, and they differ. Names that
        differ only by a leading 'module.' come from a checkpoint saved from the DDP/DataParallel wrapper (or loaded into a
        wrapper, the other way round); '_orig_mod.' from a torch.compile'd model; '_fsdp_wrapped_module.' or
        '_checkpoint_wrapped_module.' from FSDP or activation-checkpoint wrappers. Other names or shapes mean another model
        than the one built: another configuration (size, vocabulary, number of classes or layers), another version of the
        model's code, or a checkpoint of a different tensor-parallel split.""",
        fix="""compare the first missing and unexpected keys: a 'module.' prefix: torch.save(model.module.state_dict(), path), or strip it:
        {k.removeprefix('module.'): v for k, v in sd.items()} ('_orig_mod.' the same way, or save before torch.compile); other
        names or shapes: build the model with the configuration and code version the checkpoint was saved with, or load with
        strict=False only for the heads you mean to train anew""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Error(s) in loading state_dict for DTNet:", "aks2203/deep-thinking#5"),
            ("RuntimeError: Error(s) in loading state_dict for DataParallel:", "choyingw/SynergyNet#6 (a checkpoint's extra keys)"),
            ("\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from checkpoint, the shape in current model is torch.Size([10, 2048]).", "torch's message for a head of another size"),
        ],
        not_examples=["RuntimeError: storage has wrong size: expected 512 got 65536", "_IncompatibleKeys(missing_keys=[], unexpected_keys=[])"],
        context_after=2,
        fields=lambda m, ctx: {**groups(m, ctx), "module_prefix": any('"module.' in line for line in ctx)},
    ),
    pattern(
        "modulelist-called",
        "ddp",
        CAUSE,
        E,
        "an nn.ModuleList (or ModuleDict) was called like a module",
        r'Module \[(?P<container>ModuleList|ModuleDict|ParameterList)\] is missing the required "forward" function',
        ('missing the required "forward"',),
        why="""ModuleList only holds modules; it has no forward(). Calling it (self.layers(x)) raises this.""",
        fix="for layer in self.layers: x = layer(x)   # or use nn.Sequential",
        examples=[
            ('NotImplementedError: Module [ModuleList] is missing the required "forward" function', "torch nn.Module error text"),
        ],
        fields=groups,
    ),
    pattern(
        "nccl-tensor-not-cuda",
        "ddp",
        CAUSE,
        E,
        "a CPU (or sparse) tensor was passed to an NCCL collective",
        r"Tensors must be CUDA and dense|No backend type associated with device type cpu",
        ("must be CUDA and dense", "No backend type associated"),
        why="""NCCL only moves GPU tensors. A collective (all_reduce, all_gather_object, a metric sync) got a CPU
        tensor on a process group that only has NCCL.""",
        fix="tensor = tensor.cuda()  # before the collective; or init_process_group('cpu:gloo,cuda:nccl') / a gloo group for CPU tensors",
        examples=[
            ("RuntimeError: Tensors must be CUDA and dense", "ProcessGroupNCCL check, quoted in public issues"),
            ("RuntimeError: No backend type associated with device type cpu", "c10d error text"),
        ],
    ),
    pattern(
        "pg-not-destroyed",
        "ddp",
        HARMLESS,
        I,
        "the process group was not destroyed before exit (safe to ignore when the run finished)",
        r"process group has NOT been destroyed before we destruct ProcessGroupNCCL",
        ("has NOT been destroyed",),
        why="""torch 2.4+ warns at exit when destroy_process_group() was not called. Harmless when the job
        finished; it is not the cause of a failure printed before it.""",
        fix="dist.destroy_process_group()  # at the end of main(), to silence it",
        examples=[
            ("[rank0]:[W530 08:34:35.154236112 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process.", "public training logs (torch 2.4+ exit warning)"),
        ],
    ),
    pattern(
        "env-var-deprecated",
        "ddp",
        HARMLESS,
        I,
        "a deprecated environment variable name is set (safe to ignore)",
        r"Environment variable (?P<old>\w+) is deprecated; use (?P<new>\w+) instead",
        ("is deprecated; use",),
        why="""torch renamed its NCCL variables (NCCL_ASYNC_ERROR_HANDLING -> TORCH_NCCL_ASYNC_ERROR_HANDLING,
        ...); the old name still works. Safe to ignore.""",
        fix="export the new name instead of the old one",
        examples=[
            ("[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)", "public fine-tuning log (torch c10d warning)"),
        ],
        fields=groups,
    ),
    pattern(
        "ddp-grad-strides",
        "ddp",
        HARMLESS,
        I,
        "DDP gradient layout differs from its bucket (safe to ignore; a performance note)",
        r"Grad strides do not match bucket view strides",
        ("Grad strides",),
        why="""Not an error: a parameter's gradient has a different memory layout (often channels_last or a
        transposed view) than DDP's flat bucket, so DDP copies it. Safe to ignore; it only costs a little speed.""",
        fix="make the parameter contiguous before wrapping (or use the same memory_format everywhere); otherwise ignore",
        examples=[
            ("[W reducer.cpp:313] Warning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.", "pytorch/pytorch#47163"),
        ],
    ),
    pattern(
        "barrier-unknown-device",
        "ddp",
        CAUSE,
        W,
        "barrier() had to guess each rank's GPU",
        r"using (?:best-guess )?GPU (?P<gpu>\d+) to perform barrier|Guessing device ID based on global rank",
        ("to perform barrier", "Guessing device ID"),
        why="""NCCL barrier() needs a GPU; the process had not told torch which one, so it guessed from the
        rank. If the guess is wrong (several ranks on one GPU), barrier hangs.""",
        fix='torch.cuda.set_device(local_rank); dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))',
        examples=[
            ("[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.", "ProcessGroupNCCL warning text"),
        ],
        fields=groups,
    ),
    pattern(
        # torch >= 2.4 words it this way: no guess from the rank, the current device is used
        "barrier-current-device",
        "ddp",
        HARMLESS,
        I,
        "barrier() used the current CUDA device (safe when each rank called torch.cuda.set_device first)",
        r"barrier\(\): using the device under current context",
        ("barrier(): using the device",),
        why="""Informational: init_process_group was not given device_id, so barrier() ran on the device
        torch.cuda.current_device() names. With torch.cuda.set_device(local_rank) before it (as a healthy
        job on one H200 showed) that is each rank's own GPU; without it every rank of a node is on cuda:0,
        and the job then fails with a duplicate-GPU error or hangs, which the log shows separately.""",
        fix='dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))   # silences it and binds the group to the GPU',
        examples=[
            ("/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py:83: UserWarning: barrier(): using the device under current context. You can specify `device_id` in `init_process_group` to mute this warning.", "gpudoctor gpu_truth, one H200, torch 2.11 (tests/fixtures/gpu_truth/h200-logs/ok-debug.log)"),
        ],
    ),
]
