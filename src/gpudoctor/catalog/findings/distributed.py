"""Findings in the area "distributed"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="nccl-rank-device",
        severity="error",
        area="distributed",
        emitted_by="[`gpudoctor run`](../commands/run.md)",
        summary="""After `init_process_group("nccl")` (and again when `DistributedDataParallel` is built, the
later look counting), this rank's current CUDA device is not its `LOCAL_RANK`:
`torch.cuda.set_device(local_rank)` is missing, so the rank works on `cuda:0`. Also
reported when `LOCAL_RANK` is beyond the GPUs this process can see while
`CUDA_VISIBLE_DEVICES` is unset: more ranks than GPUs on the node.""",
        evidence="""`rank`, `backend`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `CUDA_VISIBLE_DEVICES`, `visible
GPUs`, `current device` (or the `device_id` given to `init_process_group`), `checked at`.

Without CUDA (a CPU-only machine, a CPU build) nothing is read and nothing is reported.
One GPU per rank through `CUDA_VISIBLE_DEVICES` (each rank sees its own GPU as `cuda:0`) is
fine.""",
        why="""NCCL needs one GPU per rank. Ranks that all default to `cuda:0` share one GPU: NCCL fails
with *Duplicate GPU detected*, or every rank's CUDA context and memory piles onto GPU 0
while the others stay idle.""",
        fix="""```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)          # before init_process_group
dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
```

or start no more ranks per node than GPUs: `torchrun --nproc_per_node <GPUs> train.py`.
Related: lint rule [nccl-no-set-device](../rules/nccl-no-set-device.md).""",
        says="NCCL needs one GPU per rank. Without torch.cuda.set_device(local_rank) every rank works on cuda:0: they share one GPU ('Duplicate GPU detected') or leave the others idle.",
        fix_cases={
            "wrong-device": 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))   # before init_process_group("nccl")',
            "ranks-share-gpu": "torchrun --nproc_per_node {nproc} ...   # one rank per GPU",
        },
    ),
)
