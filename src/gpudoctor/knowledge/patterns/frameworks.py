"""Errors of the parallel wrappers themselves (DataParallel, DDP options, FSDP, SyncBatchNorm,
Lightning) and of a torch too old for the API called: the message names a setting or a
version to change, not a line of the user's model to debug."""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# (diagI33) "But your machine only has: []": the process sees no GPU at all, and no index or count fits (dev10
# kanadem/TwitterRumorDetection: gpus=[0] on a Mac): its own step, before the index one
NO_GPU_SEEN = re.compile(r"only has: \[\s*\]")
NO_GPU_STEP = ("this process sees no GPU at all ([]): a machine without an NVIDIA GPU (a Mac: accelerator='mps' or 'cpu'), torch's "
               "CPU-only build, or CUDA_VISIBLE_DEVICES set empty: run without GPUs there (leave out --gpus/devices, "
               "accelerator='cpu'), or on a GPU host with torch's CUDA build (python -c 'import torch; print(torch.cuda.is_available())' "
               "prints True)")


def lightning_gpus_fields(m, context: list[str]) -> dict:
    """The GPUs asked for and seen; none seen at all ([]) has its own step."""
    out = groups(m, context)
    if NO_GPU_SEEN.search(m.string) or any(NO_GPU_SEEN.search(text) for text in context[:1]):
        out.update(read_as="lightning-gpus-unavailable", step=NO_GPU_STEP)
    return out


PATTERNS = [
    pattern(
        "dataparallel-replica-stopiteration",
        "ddp",
        CAUSE,
        E,
        "DataParallel: a replica's forward called next(self.parameters()), which is empty in replicas",
        r"Caught StopIteration in replica (?P<replica>\d+) on device (?P<device>\d+)",
        ("Caught StopIteration in replica",),
        why="""Since torch 1.5 the replicas nn.DataParallel makes for the other GPUs hold no parameters of their
        own, so code in forward() that asks `next(self.parameters())` for a device or dtype (common in older
        model code, e.g. transformers' get_parameter_dtype) raises StopIteration inside the replica.""",
        fix="take the device/dtype from an input tensor (x.device) or a registered buffer instead of next(self.parameters()); or train with DistributedDataParallel (torchrun) instead of DataParallel",
        examples=[
            ("StopIteration: Caught StopIteration in replica 0 on device 0.", "huggingface/transformers#8145"),
            ("Exception in main training loop: Caught StopIteration in replica 0 on device 0.", "espnet/espnet#2169"),
        ],
        not_examples=["RuntimeError: Caught RuntimeError in replica 0 on device 0."],
        fields=groups,
    ),
    pattern(
        "dataparallel-module-not-on-first-device",
        "ddp",
        CAUSE,
        E,
        "DataParallel: the model is not on device_ids[0] (the first GPU it was given)",
        # (the check's own words up to "(device_ids[0])" decide it where a paste cut the rest)
        r"module must have its parameters and buffers on device (?P<expected>\S+) \(device_ids\[0\]\)(?: but found one of(?: them on device: (?P<found>\S+))?)?"
        # torch up to 1.0 checked nothing and failed in the broadcast that copies the model to the GPUs (nn/parallel/_functions.py)
        r"|Broadcast function not implemented for (?P<cpu>CPU) tensors",
        ("(device_ids[0])", "Broadcast function not implemented"),
        why="""nn.DataParallel replicates the model from device_ids[0] (by default cuda:0, the first visible GPU) to
        the others at every forward. A model moved to another GPU (model.to('cuda:1')) or left on the CPU breaks
        that; setting the current device does not change device_ids. Older torch says it as its broadcast of the
        parameters refusing CPU tensors: the model was never moved to the GPU before DataParallel wrapped it.""",
        fix="model.to('cuda:0') before nn.DataParallel(model) (or DataParallel(model, device_ids=[1, 2]) with model.to('cuda:1'); or CUDA_VISIBLE_DEVICES=1,2 so the GPUs are renumbered from 0)",
        examples=[
            ("RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cuda:1", "replicate/cog#971"),
            ("RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu", "kennethwdk/MLCReID#5"),
            ("TypeError: Broadcast function not implemented for CPU tensors",
             "junyanz/pytorch-CycleGAN-and-pix2pix#252 (the .cuda(gpu_ids[0]) before DataParallel removed; torch 0.3)"),
            ("TypeError: Broadcast function not implemented for CPU tensors", "pytorch/pytorch#17065 (nn.DataParallel(model) of a model on the CPU)"),
            ("AssertionError: Broadcast function not implemented for CPU tensors", "torch/nn/parallel/_functions.py Broadcast.forward's assert (torch 1.x+)"),
        ],
        not_examples=["RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                      "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'"],  # a CPU kernel without a dtype: not DataParallel
        fields=groups,
    ),
    pattern(
        "fsdp-uniform-requires-grad",
        "ddp",
        CAUSE,
        E,
        "FSDP: frozen and trainable parameters share one flat parameter (use_orig_params=False)",
        r"FlatParameter` requires uniform `requires_grad`|Must flatten tensors with uniform `requires_grad`",
        ("uniform `requires_grad`",),
        why="""With use_orig_params=False, FSDP flattens each wrapped module's parameters into one FlatParameter,
        which has a single requires_grad. A module mixing frozen and trainable weights (LoRA/PEFT, a frozen
        backbone) cannot be flattened that way.""",
        fix="FSDP(model, use_orig_params=True, ...)   # accelerate: fsdp_use_orig_params: true; or wrap frozen and trainable parts in separate FSDP units",
        examples=[
            ("ValueError: `FlatParameter` requires uniform `requires_grad`", "huggingface/transformers#27542"),
        ],
        not_examples=["ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32"],
    ),
    pattern(
        "ddp-static-graph-changed",
        "ddp",
        CAUSE,
        E,
        "DDP static_graph=True, but the set of used parameters changes between iterations",
        r"this is not compatible with static_graph set to True|Your training graph has changed in this iteration",
        ("static_graph set to True", "training graph has changed"),
        why="""static_graph=True promises DDP that every iteration uses the same parameters in the same order. A
        parameter that is used in one iteration and unused in another (a branch, an auxiliary head, a frozen
        part) breaks that promise; find_unused_parameters does not help while static_graph is on.""",
        fix="drop static_graph=True: DDP(model, device_ids=[local_rank], find_unused_parameters=True)   # or make every iteration use the same parameters",
        examples=[
            ("RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in first iteration, but then got used in the second iteration. this is not compatible with static_graph set to True.", "deepinsight/insightface#2288"),
            ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your training graph has changed in this iteration, e.g., one parameter is used in first iteration, but then got unused in the second iteration. this is not compatible with static_graph set to True.", "pytorch/pytorch#97030"),
        ],
        not_examples=["RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss."],
    ),
    pattern(
        "barrier-device-ids-old-torch",
        "ddp",
        CAUSE,
        E,
        "dist.barrier(device_ids=...) needs torch >= 1.8",
        r"barrier\(\) got an unexpected keyword argument 'device_ids'",
        ("unexpected keyword argument 'device_ids'",),
        why="""The device_ids argument of torch.distributed.barrier was added in torch 1.8; code written for newer
        torch (YOLOv5's torch_distributed_zero_first, for one) calls it on an older install.""",
        fix="pip install 'torch>=1.8'   # or call dist.barrier() without device_ids on the old torch",
        examples=[
            ("TypeError: barrier() got an unexpected keyword argument 'device_ids'", "hukaixuan19970627/yolov5_obb#266"),
        ],
        not_examples=["TypeError: __init__() got an unexpected keyword argument 'device_id'"],
    ),
    pattern(
        "syncbn-double-backward",
        "ddp",
        CAUSE,
        E,
        "SyncBatchNorm has no double backward (a gradient penalty / create_graph=True through it)",
        r"derivative for batch_norm_backward_elemt is not implemented|derivative for batch_norm_gather_stats\w* is not implemented",
        ("derivative for batch_norm_",),
        why="""A loss that differentiates through gradients (WGAN-GP's gradient penalty, physics-informed or force
        losses, torch.autograd.grad(..., create_graph=True)) needs the second derivative of every layer;
        SyncBatchNorm's cross-GPU kernels do not implement it.""",
        fix="keep plain BatchNorm (do not convert_sync_batchnorm) or use GroupNorm/LayerNorm in the part the gradient penalty runs through",
        examples=[
            ("RuntimeError: derivative for batch_norm_backward_elemt is not implemented", "pytorch/pytorch#61222"),
        ],
        not_examples=["RuntimeError: derivative for aten::grid_sampler_2d_backward is not implemented"],
    ),
    pattern(
        "lightning-gpus-unavailable",
        "launcher",
        CAUSE,
        E,
        "Lightning was asked for GPUs this process cannot see (devices / gpus indexes)",
        r"You requested (?:GPUs|gpus?): (?P<requested>\[[^\]]*\])|But your machine only has: (?P<visible>\[[^\]]*\])",
        ("You requested GPU", "You requested gpu", "But your machine only has"),
        why="""Trainer(devices=[1]) (or gpus=[1]) names GPU indexes, counted among the GPUs this process sees:
        with one GPU, or inside a Ray/SLURM worker or a container given only some GPUs (CUDA_VISIBLE_DEVICES
        renumbers them from 0), index 1 does not exist; `[]` means no GPU is visible at all.""",
        fix="Trainer(accelerator='gpu', devices=1)   # a count, not an index; or devices=[0] when one GPU is visible (python -c 'import torch; print(torch.cuda.device_count())')",
        examples=[
            ("lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [1]", "bene-ges/nemo_compatible#16"),
            ("(pid=1521999)  But your machine only has: [0]", "ray-project/ray_lightning#32"),
        ],
        not_examples=["GPU available: True (cuda), used: True"],
        context_after=1,
        fields=lightning_gpus_fields,
    ),
    pattern(
        "device-map-auto-distributed",
        "ddp",
        CAUSE,
        E,
        "a model loaded with device_map='auto' (split over the GPUs) was launched with several processes",
        r"You can't train a model that has been loaded with `device_map='auto'` in any distributed mode",
        ("loaded with `device_map='auto'`",),
        why="""device_map='auto' spreads one model over all visible GPUs of one process (model parallel, for
        inference or a single-process run); DDP/FSDP/DeepSpeed give each process its own GPU and a whole model.
        accelerate refuses the mix before training starts.""",
        fix="with torchrun/accelerate launch: load without device_map (or device_map={'': local_rank}) and let DDP/FSDP place the model; or run one process (python train.py / --num_processes=1) to keep device_map='auto'",
        examples=[
            ("ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed mode. Please rerun your script specifying `--num_processes=1` or by launching with `python {{myscript.py}}`.", "FreedomIntelligence/HuatuoGPT-II#32"),
        ],
        not_examples=["model = AutoModelForCausalLM.from_pretrained(name, device_map='auto')"],
    ),
    pattern(
        "fsdp-device-mismatch",
        "ddp",
        CAUSE,
        E,
        "FSDP: this rank's current CUDA device is not the one its device_id names (set_device missing)",
        # (as a person retypes it too: lower case, other quotes, spaces: h2oai/h2ogpt#671)
        r"[Ii]nconsistent compute device and ?[`']?device_id ?[`']? on rank (?P<rank>\d+): (?P<compute>\S+) vs (?P<device_id>[\w:]+)",
        ("nconsistent compute device",),
        why="""FSDP computes on torch.cuda.current_device(); with device_id=cuda:N it expects the process to be on
        cuda:N as well. A rank that never called torch.cuda.set_device(local_rank) is still on cuda:0 (or a
        multi-node launch computed device_id from the global rank instead of the local one).""",
        fix="torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before building FSDP, and device_id=torch.cuda.current_device()",
        examples=[
            ("[rank4]: ValueError: Inconsistent compute device and `device_id` on rank 0: cuda:1 vs cuda:0", "huggingface/accelerate#2963"),
            ("ValueError: Inconsistent compute device and `device_id` on rank 0: hpu:0 vs hpu", "mila-iqia/milabench#298"),
            ("i run the finetune.py without lora and use the fsdp ,but there is a error, fsdp/_init_utils.py,line889 inconsistent compute device "
             "and'device_id ' on rank 3: cuda:0 vs cuda:3; i run the programmer in Single machine multi card", "h2oai/h2ogpt#671 (retyped in prose)"),
        ],
        not_examples=["ValueError: FSDP only supports single device modules but got params on {device(type='cuda', index=0), device(type='cpu')}"],
        fields=groups,
    ),
    pattern(
        "lightning-misconfiguration",
        "launcher",
        CAUSE,
        E,
        "Lightning refused its configuration (MisconfigurationException): the message names the setting",
        r"MisconfigurationException: (?P<message>.+)",
        ("MisconfigurationException: ",),
        why="""Lightning checks the Trainer's strategy/accelerator/devices/precision and the LightningModule's hooks
        before training and raises MisconfigurationException with what is wrong: a strategy this platform lacks,
        more devices than visible, a missing *_dataloader() method for the stage run.""",
        fix="change the Trainer argument or add the hook the message names (e.g. Trainer(accelerator='gpu', devices=N, strategy='ddp'), a test_dataloader() for trainer.test)",
        examples=[
            ("pytorch_lightning.utilities.exceptions.MisconfigurationException: No 'test_dataloader()' method defined to run 'Trainer.test'.", "rinongal/textual_inversion#36"),
        ],
        not_examples=["lightning_fabric.utilities.exceptions: nothing raised"],
        fields=groups,
    ),
    pattern(
        "deepspeed-config-mismatch",
        "launcher",
        CAUSE,
        E,
        "the DeepSpeed config and the Trainer's arguments disagree",
        r"Please correct the following DeepSpeed config values that mismatch TrainingArguments values",
        ("DeepSpeed config values that mismatch",),
        why="""transformers' Trainer checks the DeepSpeed config against its TrainingArguments before training: a
        value set in both places differs (bf16/fp16 enabled, batch size per GPU, gradient accumulation, the
        optimizer's learning rate). The lines after the message list each one as `ds KEY=... vs hf ARG=...`.""",
        fix="""set the listed keys to "auto" in the DeepSpeed JSON (e.g. "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto") so the Trainer fills them from its arguments, or make the TrainingArguments match
        (--bf16 for ds bf16.enabled=True)""".replace("\n        ", " "),
        examples=[
            ("ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:", "hiyouga/LlamaFactory#3224 (ds bf16 on, hf bf16 off)"),
        ],
        not_examples=["ValueError: Please check your DeepSpeed config"],
    ),
    pattern(
        "ddp-model-on-cpu",
        "ddp",
        CAUSE,
        E,
        "DDP was given a model still on the CPU: its constructor broadcasts CPU parameters over NCCL",
        r"Tensors must be CUDA and dense",
        ("must be CUDA and dense",),
        why="""DistributedDataParallel's constructor broadcasts rank 0's parameters to the other ranks; with the
        NCCL backend they must already be on this rank's GPU. The traceback runs through DDP's __init__, so
        the CPU tensor is a model parameter, not a tensor of a collective call.""",
        fix="model.to(local_rank) before wrapping: model = DDP(model.to(local_rank), device_ids=[local_rank])",
        examples=[
            ("RuntimeError: Tensors must be CUDA and dense", "raised from DDP's _sync_module_states in a traceback through distributed.py __init__"),
        ],
        # a tensor of the user's own all_reduce is the other answer (nccl-tensor-not-cuda)
        not_examples=['  File "/home/me/train.py", line 40, in sync_metrics'],
        refines="nccl-tensor-not-cuda",  # when the traceback runs through DistributedDataParallel.__init__
    ),
    pattern(
        "zero3-ranks-diverged",
        "ddp",
        CAUSE,
        E,
        "ZeRO-3 fetched parameters out of step: the modules run differ between ranks or from the recorded order",
        # deepspeed/runtime/zero/utils.py assert_ints_same_as_other_ranks, and the coordinator's reset_step
        r"disagreement between rank0 and rank(?P<other_rank>\d+)|still have inflight params",
        ("disagreement between rank0", "still have inflight params"),
        why="""Under ZeRO stage 3 every rank gathers each parameter just before its module runs, and DeepSpeed
        records the order of the modules in the first step, checks it is the same on every rank and prefetches by
        it afterwards. Here a rank ran other modules, or in another order: 'disagreement between rank0 and rankN'
        is that check failing, 'still have inflight params' a forward that did not use parameters the recorded
        order made it prefetch. The usual reasons: a forward that depends on the data (MoE routing, a branch or a
        loop over the input, a skipped layer), generation or evaluation run on some ranks only or with another
        length per rank, a model switched between train and eval paths that take other modules, and, in some
        DeepSpeed releases, a coordinator bug that a maintainer answers with another DeepSpeed version.""",
        fix="""run the same modules in the same order on every rank in each step: evaluate and generate on all ranks (not
        `if rank == 0`), pad batches to one length; for a mixture-of-experts block, mark it a ZeRO-3 leaf so all its
        experts are gathered together (`deepspeed.utils.set_z3_leaf_modules(model, [MoEBlockClass])`); a forward that depends
        on the data otherwise: ZeRO-2, which gathers no parameters in the forward; if the forward is
        the same on every rank, try another DeepSpeed version (`pip install -U deepspeed`), as the DeepSpeed issues on this
        message do""".replace("\n        ", " "),
        examples=[
            (
                "RuntimeError: disagreement between rank0 and rank2: rank0: [-4866073977605047075, -4957833660337767236, 4361942804416314505, ... 4356172371969948135], ",
                "Lightning-AI/pytorch-lightning#19096 (deepspeed_stage_3 on 8 GPUs)",
            ),
            (
                "RuntimeError: still have inflight params [{'id': 723, 'status': 'AVAILABLE', 'numel': 4194304, 'ds_numel': 4194304, 'shape': (512, 8192), 'ds_shape': (512, 8192)",
                "OpenRLHF/OpenRLHF#312 (llama3 70b on 3 nodes; the maintainer: try other deepspeed versions)",
            ),
            (
                "RuntimeError: still have inflight params [{'id': 1060, 'status': 'AVAILABLE', 'numel': 65536, 'ds_numel': 65536, 'shape': (1024, 64, 1, 1)",
                "Haochen-Wang409/ross3d#8 (raised from stage3.py backward)",
            ),
        ],
        not_examples=[
            # the check passing prints nothing; a user's own assertion names other words
            "AssertionError: rank0 and rank2 disagree on the number of batches",
            "[INFO] [partition_parameters.py:345:__exit__] finished initializing model - num_params = 291, num_elems = 6.74B",
        ],
        fields=groups,
    ),
]
