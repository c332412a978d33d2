"""Rules for the parallel layout (issue 35, diagA20): the program's own check refused the sizes a job asks for.

A job that shards a model or its data over GPUs states its layout in sizes: the world size (nodes x processes per
node), tensor-, pipeline- and data-parallel sizes, shards, a GPU count, a split over devices. Frameworks check that
the sizes fit before anything runs, and say so in their own words and shapes (pydantic's `Value error, ...`, a C++
`Assertion failed: COND (file:line)`, a ggml `GGML_ASSERT: file:line: COND`, a DeepSpeed assert printed alone, an
error quoted in a sentence). Two causes, one verdict each:

- `gpus-fewer-than-asked`: a size asks for more GPUs than the process sees (vLLM's "Tensor parallel size (16) cannot be
  larger than the number of available GPUs (8)" and its Ray executor's "number of required GPUs exceeds ...", fairseq's
  "world size is 32 but have 4 available devices", transformer_lens' n_devices, a second engine's device index,
  DeepSpeed's launcher naming a GPU slot the host lacks, Ray's autoscaler that can place no actor asking more GPUs than
  a node has, sizes whose product must fit the GPUs, vLLM's "Current node has no GPU available" in a Ray actor given none). Whether the machine has fewer GPUs than the process is shown (visibility: CUDA_VISIBLE_DEVICES, a
  scheduler's allocation) or the layout spans nodes that did not join is not decided by the line: the finding says
  which count decides, and that a count of 0 is visibility's.
- `parallel-layout-refused`: the sizes disagree with each other or two parallel strategies do not go together:
  TensorRT-LLM's "Assertion failed: mpiSize == tp * pp" and "Engine world size (2) != Runtime world size (1)" (ranks
  started against the engine's tp x pp), torchtitan's "dp(-1) * tp(2) * pp(1) != WORLD_SIZE(1)", torch's DeviceMesh
  bigger than the world, a parallel size larger than the world size, Megatron's and ColossalAI's world size not
  divisible by tensor x pipeline size, a GPU count that a parallel size must divide, a model's layers or experts over
  pipeline or expert parallel size, DeepSpeed's "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
  llama.cpp's "split_arg.size() <= LLAMA_MAX_DEVICES" (a split over more devices than the build allows), Open MPI's
  "not enough slots available" (mpirun -n beyond its hosts' slots). A model dimension that a tensor-parallel size must divide (attention heads) is
  tensor-parallel-split-uneven's (patterns/families5.py); an MPI world size against torch's is rank-outside-world's
  (patterns/classes.py).

Written from the retired heldout19 (vLLM via NeMo-Skills, fairseq, TensorRT-LLM and Qwen-TensorRT-LLM, two
Megatron-DeepSpeed forks, LocalAI) and the development parts' look-alikes (start-up prints of the same sizes, Megatron's
argument dump, vLLM's rank assignment lines); measured on heldout14 and heldout15, not read while writing.
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern

E = Severity.ERROR
GPUS_FEWER, LAYOUT_REFUSED = "gpus-fewer-than-asked", "parallel-layout-refused"
# The findings whose title gives the message's sizes and whose fix starts with the step they decide (knowledge/story.py)
SIZES_SAID = (GPUS_FEWER, LAYOUT_REFUSED)

# A size a layout is stated in, as programs name it in a message (not a value printed in a start-up dump: every rule
# below needs the words of a refusal around it).
SIZE = (r"(?:(?:tensor|pipeline|data|expert|context|sequence)[ _-]?(?:model[ _-])?parallel(?:ism)?[ _-]?(?:size|degree|world[ _]size)"
        r"|\b(?:tp|pp|dp|ep|cp)[ _]size|world[ _]size|num[ _]?shards?|number of (?:shards|processes|ranks|workers)"
        r"|nproc[ _]per[ _]node|num[ _]processes|num[ _]gpus|n[ _]gpus)")
DEVICES = r"(?:available |visible |local |usable )?(?:CUDA |GPU |cuda )?(?:GPUs?|devices|gpus|cards)"
MORE_THAN = r"(?:cannot|can ?not|can't|must not|should not|may not|is) (?:be )?(?:larger|greater|bigger|more|higher) than"

# a size larger than the GPUs the process sees, with the numbers the message gives
FEWER = (
    r"(?i:(?P<what>" + SIZE + r"))[`'\"]?\s*(?:\((?P<asked>\d+)\)|=\s*(?P<asked_eq>\d+))?\s*" + MORE_THAN
    + r" (?:the )?(?:number|count|total(?: number)?) of " + DEVICES + r"(?:[^\d\n]{0,40}?(?P<seen>\d+))?"
    r"|(?i:(?P<what_but>" + SIZE + r")) (?:is|=|of) (?P<asked_but>\d+),? but (?:only )?(?:have|has|got|found|there (?:are|is)|sees?) "
    r"(?:only )?(?P<seen_but>\d+) " + DEVICES
    # sizes whose product the GPUs must hold ("Tensor parallel size (4) times pipeline parallel size (2) should be less than or
    # equal to the number of GPUs (4)")
    + r"|(?P<what_le>(?i:" + SIZE + r")[^.\n]{0,80}?) (?:should|must) be (?:less than or equal to|at most|no (?:more|larger|greater) than) "
    r"(?:the )?(?:number|count|total(?: number)?) of " + DEVICES + r"(?:[^\d\n]{0,40}?(?P<seen_le>\d+))?"
    + r"|(?i:the number of required GPUs exceeds the total number of available GPUs)"
    # vLLM in a Ray actor or node that was given no GPU
    + r"|(?P<no_gpu_node>Current node has no GPU available)"
    # vLLM's Ray executor: the process that drives the engine runs on a node whose bundle has no GPU (diagD21: vllm#2406)
    + r"|(?P<no_gpu_driver>Ray does not allocate any GPUs on the driver node)"
    # Ray's autoscaler: one task or actor asks for more GPUs than any node type has (it is never placed)
    + r"|No available node types can fulfill resource request \{[^}]*'GPU': (?P<ray_gpus>\d+)(?:\.0)?"
    # DeepSpeed's launcher: --include/--exclude names a GPU slot the host's list does not have
    + r"|No slot '(?P<slot>\d+)' specified on host '(?P<host>[^']+)'"
    # text-generation-inference's and LoRAX's launcher: --sharded true where the GPUs it counts (CUDA_VISIBLE_DEVICES or
    # NVIDIA_VISIBLE_DEVICES, not the driver's list) are fewer than two (its LauncherError::NotEnoughCUDADevices)
    + r"|" + NOT_HEADING + r"NotEnoughCUDADevices\(\W*(?P<sharded>sharded)`? is true but only found (?P<seen_sharded>\d+) CUDA devices"
)

# Parallel strategies, as messages name them
STRATEGY = (r"(?:ZeRO(?:[- ]?(?:stage[- ]?)?[0-3](?:\+\+)?)?(?: and ZeRO[- ]?(?:stage[- ]?)?[0-3])?"
            r"|(?i:(?:pipeline|tensor|sequence|context|expert)[ _-]?(?:model[ _-])?parallel(?:ism)?)|FSDP)")
# a world (or MPI) size against the product of the parallel sizes, in an assert's condition
WORLD = r"(?:mpi|world|comm|group)_?[Ss]ize\w*(?:\(\))?"
PRODUCT = r"\(?\w*(?:tp|pp|dp|cp|ep|tensor|pipeline|parallel)\w*(?:\(\))?(?:\s*\*\s*\w+(?:\(\))?)*\)?"
ASSERTED = r"(?:Assertion failed: |Check failed: |AssertionError: |Assertion `|GGML_ASSERT: \S+?:\d+: )"

# not a warning the run went past, nor a fallback it took
NOT_WARNED = r"^(?!.*(?i:\bwarn(?:ing)?\b|falling back|fall back|\bwill use\b)).*?"

# a parallel size, as the divisor of a divisibility check names it
PARALLEL = r"(?i:[\w ()=*]{0,40}?(?:parallel|\b(?:tp|pp|dp|ep|cp)(?:_|\b))[\w ]{0,60}?(?:size|degree|stages?))"

LAYOUT = NOT_WARNED + "(?:" + (
    # the ranks started against the layout's product (TensorRT-LLM's WorldConfig)
    ASSERTED + r"(?P<condition>" + WORLD + r"\s*(?:==|%)\s*" + PRODUCT + r"|" + PRODUCT + r"\s*==\s*" + WORLD + r")"
    # the same said with the numbers: torchtitan's "dp(-1) * tp(2) * pp(1) != WORLD_SIZE(1)", TensorRT-LLM's runner's
    # "Engine world size (2) != Runtime world size (1)", torch's DeviceMesh larger than the world
    r"|(?P<dims>(?:\b[a-z]{2}\(-?\d+\)\s*\*\s*)+[a-z]{2}\(-?\d+\))\s*!=\s*(?i:world[ _]?size)\s*\(?(?P<dims_world>\d+)\)?"
    r"|(?P<built>[Ee]ngine|[Cc]heckpoint|[Cc]onfig(?:ured)?|[Ee]xpected) world size \(?(?P<built_n>\d+)\)? (?:!=|does not match|doesn't match|is not equal to) "
    r"(?:the )?(?:[Rr]untime |MPI |actual |current )?world size \(?(?P<run_n>\d+)\)?"
    # a parallel size larger than the world it is cut from
    r"|(?P<over>(?i:(?:tensor|pipeline|expert|context|sequence)[ _-]?(?:model[ _-])?parallel(?:ism)?[ _-]?(?:size|degree)|\b(?:tp|pp|ep|cp)[ _]size))"
    r"\s*\(?(?P<over_n>\d+)\)?\s*" + MORE_THAN + r" (?:the )?(?i:world[ _]size)\s*\(?(?P<over_world>\d+)?\)?"
    r"|Mesh should not be bigger than (?:the )?default world size,? (?P<mesh_world>\d+)?,? ?but found (?P<mesh_n>\d+) ranks"
    # a size that must divide another (Megatron's initialize_model_parallel, ColossalAI's plugin, a launcher's GPU count; a
    # model's layers over pipeline stages)
    r"|(?i:(?P<whole>world[ _]size|(?:total )?number of (?:GPUs|devices|ranks|processes|(?:hidden |transformer )?layers|experts)|GPU count|num[ _]gpus|num[ _](?:hidden[ _])?layers|num[ _](?:local[ _])?experts"
    r"|\b(?:tp|pp|dp|ep)[ _]size|(?:tensor|pipeline|data|expert)[ _-]parallel[ _-]size))"
    r"\s*\(?(?P<whole_n>\d+)?\)?\s*(?:is not|isn't|must be|should be|has to be) (?:evenly )?(?:divisible by|a multiple of) (?:the )?"
    # (Megatron-core's newer message gives the product alone: "world_size (8) is not divisible by 16")
    r"(?P<by>" + PARALLEL + r"[^\n.;]{0,80}|(?<=divisible by )\d+\b(?!\s*\w))"
    # two strategies that do not go together (DeepSpeed's pipeline engine and ZeRO's partitioning)
    r"|(?P<first>" + STRATEGY + r") (?:is|are) (?:incompatible|not (?:compatible|supported)) with (?P<second>" + STRATEGY + r")"
    # mpirun asked for more ranks than its hosts have slots (Open MPI counts a host's cores, or a hostfile's slots=N)
    r"|There are not enough slots available in the system to satisfy the (?P<slots>\d+)"
    # a split over more devices than the build allows (llama.cpp's LLAMA_MAX_DEVICES)
    r"|(?P<split>\w*split\w*(?:\.size\(\))?)\s*<=?\s*(?P<limit>\w*MAX_DEVICES\w*)"
    # the same limit in llama-cpp-python's words (its Llama(tensor_split=...) check before it calls llama.cpp)
    r"|" + NOT_HEADING + r"Attempt to split tensors that exceed maximum supported devices\. Current (?P<limit_py>LLAMA_MAX_DEVICES)=(?P<max_devices>\d+)"
    # (diagC31) DeepEP's Buffer: its normal kernels over RDMA need more ranks than one node's NVLink peers (8), and whole nodes
    # of them (its EP_HOST_ASSERT, "Failed: Assertion error csrc/deep_ep.cpp:32 'num_ranks > NUM_MAX_NVL_PEERS or low_latency_mode'")
    + r"|" + NOT_HEADING + r"Assertion error \S+:\d+ '(?P<nvl>num_ranks\s*(?P<nvl_op>>|<|%)\s*NUM_MAX_NVL_PEERS[^'\n]{0,60})'"
) + ")"
NUMBER = re.compile(r"\(?(-?\d+)\)?")
SIZE_NUMBERS = re.compile(r"\s*\(?-?\d+\)?")  # the numbers a product of sizes gives, taken out of its words


def product_of(said: str) -> int | None:
    """The product of the sizes a message gives in parentheses or after their names ("tp_size (8) x pp_size (1)": 8)."""
    said = said.split("=", 1)[0]  # "total_model_size (16) = tp (4) * pp (4)": the total is said first
    numbers = [int(n) for n in NUMBER.findall(said) if int(n) > 0]
    if not numbers:
        return None
    out = 1
    for n in numbers:
        out *= n
    return out


# vLLM's Ray executor on a node that holds no GPU: (what the title adds, the fix's first step), by the group that matched
RAY_NODE_NO_GPU = {
    "no_gpu_node": ("vLLM's engine found no GPU on its Ray node",
                    "the Ray actor or node that starts vLLM's engine sees no GPU (0): visibility decides, not the layout: Ray hides "
                    "the GPUs from a task or actor that did not ask for them (num_gpus=0 leaves CUDA_VISIBLE_DEVICES empty) and a node "
                    "started without its GPUs offers none: give the actor num_gpus (or the placement group's bundles GPUs), and check "
                    "that `ray status` lists the node's GPUs"),
    "no_gpu_driver": ("vLLM's driver runs on a Ray node given no GPU",
                      "vLLM's engine drives its workers from the process that created it, and that process's node must hold one of "
                      "the placement group's GPU bundles: start the server or the script (the driver) on a GPU node that joined "
                      "the Ray cluster (ray job submit runs an entrypoint on the head: give the head node its GPUs, `ray start "
                      "--head --num-gpus N`), or let the placement group put a GPU bundle there; `ray status` lists each node's GPUs"),
}


def fewer_fields(m: re.Match, context: list[str]) -> dict:
    """The size asked for and the GPUs the process sees, as the message gives them, and the first step they decide:
    none seen is visibility's, more asked than one process sees is visibility's or a layout over nodes that did not join."""
    out = groups(m, context)
    what = out.pop("what_but", None) or out.get("what") or ("n_devices" if out.get("n_devices") else None)
    asked = out.pop("asked_eq", None) or out.pop("asked_but", None) or out.pop("n_devices", None) or out.get("asked")
    seen = out.pop("seen_but", None) or out.pop("seen_le", None) or out.get("seen")
    if out.get("what_le"):
        what = " ".join(out.pop("what_le").split())
        product = product_of(what)
        asked = str(product) if product is not None else None
        what = SIZE_NUMBERS.sub("", what)
    said = next((words for key, words in RAY_NODE_NO_GPU.items() if out.pop(key, None)), None)
    if said is not None:  # vLLM's engine or its driver on a Ray node with no GPU: visibility's, not the layout's
        out["detail"], out["step"] = said
        return out
    if out.get("ray_gpus"):
        n = out["ray_gpus"]
        out["detail"] = f"a Ray task or actor asks for {n} GPUs, more than any node has"
        out["step"] = (f"Ray places each task or actor on one node, so num_gpus={n} is never placed where no node has {n} GPUs: ask for at "
                       f"most one node's GPUs per actor and spread the rest over actors or a placement group (vLLM: tensor parallel "
                       f"within a node, pipeline parallel across nodes), or add a node type with {n} GPUs")
        return out
    if out.pop("sharded", None):
        n = out.pop("seen_sharded")
        out["detail"] = f"--sharded true, the launcher counts {n} GPU"
        out["step"] = (f"the text-generation-inference (or LoRAX) launcher counts the entries of CUDA_VISIBLE_DEVICES (else "
                       f"NVIDIA_VISIBLE_DEVICES) between commas, not the driver's GPUs, and counted {n}"
                       + (" (a variable that holds 'all', as docker's --gpus all sets NVIDIA_VISIBLE_DEVICES, counts as one)" if n == "1" else "")
                       + ": list the GPUs (-e CUDA_VISIBLE_DEVICES=0,1) or give --num-shard with the GPU count, or run one shard "
                       "(--sharded false) on a single GPU")
        return out
    if out.get("slot"):
        out["detail"] = f"GPU slot {out['slot']} on {out['host']}"
        out["step"] = (f"deepspeed's --include/--exclude names GPU slot {out['slot']} on {out['host']}, and the slots it counts there (the "
                       f"GPUs it sees, CUDA_VISIBLE_DEVICES, or the hostfile's slots=N) stop below it: name slots below that count, "
                       f"or give the host more slots in the hostfile")
        return out
    if not (what and asked):
        out["step"] = ("the message names the device or the count it asked for"
                       + (f" ({out['device']} for {out['engine']})" if out.get("device") else ""))
        return out
    out.update(what=what, asked=asked)
    if seen is None:
        out["detail"] = f"{what} {asked}"
        out["step"] = f"{what} {asked} asks for {asked} GPUs"
        return out
    out["seen"] = seen
    out["detail"] = f"{what} {asked}, the process sees {seen}"
    if int(seen) == 0:
        out["step"] = (f"the process sees no GPU (0): visibility decides, not the layout: an empty or wrong CUDA_VISIBLE_DEVICES, a "
                       f"scheduler or container that gave it none (--gres/--gpus, docker --gpus), or a driver it cannot use; "
                       f"`nvidia-smi -L` and `python -c \"import torch; print(torch.cuda.device_count())\"` in the job's environment say which")
    else:
        out["step"] = (f"{what} {asked} needs {asked} GPUs and the process sees {seen}: if this machine has {asked} or more, visibility "
                       f"decides (CUDA_VISIBLE_DEVICES, the scheduler's --gres/--gpus, a launcher that gives each rank one GPU); if "
                       f"{asked} is more than one node has, the layout spans nodes and this process sees only its own: join the other "
                       f"nodes' GPUs (vLLM: one Ray cluster over the nodes, `ray status` lists {asked} GPUs; torchrun/srun: one process "
                       f"per GPU on every node, --nproc_per_node {seen} / srun --ntasks-per-node={seen}), or lower {what} to {seen}")
    return out


def product_said(f: dict) -> tuple[str, str]:
    cond = " ".join(f["condition"].split())
    return cond, (f"the program requires {cond}: start as many ranks as the layout's product (the engine or config was built for "
                  f"tensor x pipeline parallel GPUs; TensorRT-LLM: `mpirun -n <tp*pp> python run.py ...`, one rank per GPU), or "
                  f"rebuild the engine / set the sizes for the ranks you start")


def dims_said(f: dict) -> tuple[str, str]:
    world = f["dims_world"]
    return f"{f['dims']} != world size {world}", (
        f"the parallel sizes' product ({f['dims']}; -1 is the size left to be inferred) must equal the world size {world}: start "
        f"that many ranks (nodes x --nproc_per_node) or set the sizes so that they multiply to {world}")


def built_said(f: dict) -> tuple[str, str]:
    built, ran = f["built_n"], f["run_n"]
    return f"{f['built']} world size {built}, runtime world size {ran}", (
        f"the {f['built'].lower()} was built for {built} ranks (tensor x pipeline) and {ran} were started: start {built} "
        f"(`mpirun -n {built} python ...`, one per GPU), or build it for {ran}")


def over_said(f: dict) -> tuple[str, str]:
    size, n, world = f["over"], f["over_n"], f.get("over_world")
    return f"{size} {n} larger than the world size" + (f" ({world})" if world else ""), (
        f"{size} {n} needs at least {n} ranks and the job started {world or 'fewer'}: start {n} or a multiple (nodes x "
        f"--nproc_per_node), or lower {size} to a divisor of the ranks you start")


def mesh_said(f: dict) -> tuple[str, str]:
    n, world = f["mesh_n"], str(f.get("mesh_world") or "")
    return f"a device mesh of {n} ranks" + (f" in a world of {world}" if world else ""), (
        f"the mesh's shape multiplies to {n} ranks and the job started {world or 'fewer'}: give init_device_mesh a shape whose "
        f"product is the world size, or start as many ranks as the mesh (torchrun --nnodes N --nproc_per_node G, N x G its size)")


def divisor_said(f: dict) -> tuple[str, str]:
    whole = f["whole"] + (f" ({f['whole_n']})" if f.get("whole_n") else "")
    by = " ".join(f["by"].split())
    if "layer" in whole.lower() or "expert" in whole.lower():
        return f"{whole} not divisible by {by}", (
            f"the model's {whole} must split evenly over {by}: choose a size that divides it (config.json's num_hidden_layers, "
            f"num_experts), or set the layers per stage where the framework allows it")
    product = product_of(by)
    times = f" ({product})" if product is not None and str(product) != by else ""
    return f"{whole} not divisible by {by}", (
        f"{whole} must be a multiple of {by}{times}: start a multiple of it (nodes x --nproc_per_node), or set the parallel sizes "
        f"so their product divides the GPUs you start (data-parallel size = world size / (tensor x pipeline))")


def strategies_said(f: dict) -> tuple[str, str]:
    both = f"{f['first']} {f['second']}"
    if "ZeRO" in both and "pipeline" in both.lower():
        step = ("DeepSpeed's pipeline engine takes ZeRO stage 0 or 1 only: set zero_optimization.stage to 1 (or 0) with pipeline "
                "parallelism, or build the model without the pipeline engine (Megatron-DeepSpeed: --no-pipeline-parallel when the "
                "pipeline size is 1) to keep ZeRO-2/3")
    else:
        step = f"{f['first']} and {f['second']} do not go together in this version: turn one off in the config or the launcher's arguments"
    return f"{f['first']} with {f['second']}", step


def slots_said(f: dict) -> tuple[str, str]:
    n = f["slots"]
    return f"mpirun asked for {n} ranks, more than its hosts' slots", (
        f"mpirun places one rank per slot, and a host's slots are its CPU cores (or a hostfile's slots=N), not its GPUs: give "
        f"each host its GPU count in a hostfile (`node1 slots=8`) or pass --host node1:8, start no more ranks than the hosts have "
        f"slots, or let it oversubscribe (mpirun --oversubscribe -n {n})")


def split_said(f: dict) -> tuple[str, str]:
    limit = f["limit"]
    return f"{f['split']} <= {limit}", (
        f"the split lists more devices than this build's {limit} allows: a build without CUDA (cuBLAS) support has 1, so a "
        f"multi-GPU split needs a CUDA build (llama.cpp: GGML_CUDA=1, formerly LLAMA_CUBLAS=1; a -cublas/-cuda image), or no more "
        f"split entries than the build's limit")


def nvl_said(f: dict) -> tuple[str, str]:
    if f["nvl_op"] == ">":
        return "DeepEP's normal kernels over RDMA need more ranks than one node's 8 NVLink peers (NUM_MAX_NVL_PEERS)", (
            "DeepEP's normal (internode) kernels assume 8 GPUs per node joined by NVLink, on two or more nodes: start 8 ranks per "
            "node there (torchrun --nproc_per_node=8); with fewer GPUs per node use its low-latency kernels (Buffer(..., "
            "low_latency_mode=True)), or on one node its intranode kernels (num_rdma_bytes=0); NUM_MAX_NVL_PEERS is a "
            "compile-time macro its kernels are written for (8): another value is untested, and without NVLink its maintainers do "
            "not recommend DeepEP")
    return "DeepEP's normal kernels need whole nodes of 8 NVLink peers (NUM_MAX_NVL_PEERS)", (
        "past one node, DeepEP's normal kernels take a multiple of 8 ranks (8 GPUs per node over NVLink): start 8 ranks on every "
        "node, or use its low-latency kernels (Buffer(..., low_latency_mode=True))")


# Each check LAYOUT reads, by the group only its alternative sets: what the title adds and the fix's first step
LAYOUT_SAID = (("condition", product_said), ("dims", dims_said), ("built", built_said), ("over", over_said), ("mesh_n", mesh_said),
               ("whole", divisor_said), ("first", strategies_said), ("slots", slots_said), ("limit", split_said),
               ("nvl", nvl_said))


def layout_fields(m: re.Match, context: list[str]) -> dict:
    """Which check refused the layout, with the message's numbers, and the step that makes the sizes agree."""
    out = groups(m, context)
    if out.get("limit_py"):  # llama-cpp-python's words for llama.cpp's check: the same split and limit
        out["split"], out["limit"] = "tensor_split", f"{out.pop('limit_py')} ({out.pop('max_devices')})"
    said = next((words for key, words in LAYOUT_SAID if out.get(key)), None)
    out["detail"], out["step"] = said(out) if said is not None else ("", "the message names the sizes that disagree")
    return out


PATTERNS = [
    pattern(
        GPUS_FEWER,
        "cuda",
        CAUSE,
        E,
        "the job asks for more GPUs (or a higher GPU index) than the process sees",
        NOT_WARNED + r"(?:Not enough CUDA devices to support n_devices (?P<n_devices>\d+)|"
        r"The requested device for (?P<engine>\w+) \((?P<device>cuda:\d+)\) is not available|" + FEWER + ")",
        ("Not enough CUDA devices", "NotEnoughCUDADevices", "The requested device for", "than the number of", "than the count of", "than the total",
         "available devices", "available GPUs", "visible devices", "visible GPUs", "but have", "but only", "but found",
         "exceeds the total number of available GPUs", "can fulfill resource request", "No slot '", "less than or equal to the number of",
         "no more than the number of", "at most the number of", "Current node has no GPU available",
         "does not allocate any GPUs on the driver node"),
        why="""The configuration names more GPUs than this process can see: a tensor- or pipeline-parallel size, a world size, a
        number of shards or devices, or a device index for a second engine (an inference engine beside the training) beyond
        the last GPU. The process sees only the GPUs of CUDA_VISIBLE_DEVICES (a launcher or a scheduler sets it, often to one
        GPU per rank) and only those of its own node, so a count that is right for the machine, or for all the nodes
        together, can be too high for the process: the line does not say which of the two (what the process is shown, or a
        layout over nodes that did not join) is the cause.""",
        fix="""STEP; count what the process sees: `CUDA_VISIBLE_DEVICES=... python -c "import torch; print(torch.cuda.device_count())"` in the
        job's environment; then ask for no more: lower the parallel size or the device count, name a device index below that
        count (cuda:0 on a single GPU), give the process more GPUs (CUDA_VISIBLE_DEVICES, the scheduler's --gpus), start one
        process per GPU on each node for a size that spans nodes, or share one GPU between the two engines (vLLM:
        gpu_memory_utilization below 1 for the one beside training)""".replace("\n        ", " "),
        examples=[
            ("AssertionError: Not enough CUDA devices to support n_devices 2", "JoshEngels/MultiDimensionalFeatures#4 (transformer_lens on one GPU)"),
            (
                "ValueError: The requested device for vllm (cuda:1) is not available. You are likely using vLLM without restricting the number of GPUs for training.",
                "huggingface/trl#2826 (GRPO with vLLM on a single GPU)",
            ),
            ("Value error, Tensor parallel size (16) cannot be larger than the number of available GPUs (8)",
             "NVIDIA-NeMo/Skills#1059 (vLLM's config check, pydantic's shape: two nodes whose second did not join)"),
            ("but it got error `world size is 32 but have 4 available devices`. I changed _world size_ to 4",
             "facebookresearch/fairseq#4051 (srun -N 8 with one task per node: each process sees its node's 4 GPUs)"),
            ("ValueError: Tensor parallel size (2) cannot be larger than the number of available GPUs (0).",
             "vLLM's config check where the process sees no GPU (a container started without --gpus)"),
            ("ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group.",
             "vLLM's Ray executor (a tensor parallel size above the Ray cluster's GPUs)"),
            ("(autoscaler +44s) Error: No available node types can fulfill resource request {'GPU': 16.0, 'CPU': 1.0}. Add suitable node types to this cluster to resolve this issue.",
             "ray-project/ray#53192 (map_batches with num_gpus=16 on nodes of 8 L40s)"),
            ("ValueError: Current node has no GPU available. current_node_resource={'CPU': 8.0, 'node:10.0.0.2': 1.0}. vLLM engine cannot start without GPU.",
             "vLLM's Ray executor (the engine started from a Ray actor given no GPU)"),
            ("`Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or running the driver on a GPU node.`",
             "vllm-project/vllm#2406 (multi-node serving over a Ray cluster, the server started on a node without a GPU bundle)"),
            ("ValueError: No slot '4' specified on host 'localhost'", "DeepSpeed's launcher (--include localhost:4 on a host with 4 GPUs, slots 0 to 3)"),
            ('Error: NotEnoughCUDADevices("`sharded` is true but only found 1 CUDA devices")',
             "predibase/lorax#150 (docker --gpus all on a 3090 + 3060 host); text-generation-inference's launcher find_num_shards"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: invalid device ordinal",
            "Number of GPUs: 4",
            "(VllmWorker rank=3 pid=4151010) INFO 03-29 08:10:03 [parallel_state.py:954] rank 3 in world size 4 is assigned as DP rank 0, PP rank 0, TP rank 3",
            "using world size: 2, data-parallel-size: 1, tensor-model-parallel size: 2, pipeline-model-parallel size: 1",
        ],
        fields=fewer_fields,
    ),
    pattern(
        LAYOUT_REFUSED,
        "ddp",
        CAUSE,
        E,
        "the program's own check refused the parallel layout (sizes that do not agree, or strategies that do not go together)",
        LAYOUT,
        ("Assertion failed: ", "Check failed: ", "AssertionError: ", "Assertion `", "GGML_ASSERT", "divisible by", "a multiple of",
         "incompatible with", "not compatible with", "not supported with", "MAX_DEVICES", "world size", "WORLD_SIZE", "Mesh should not be bigger", "not enough slots",
         "NUM_MAX_NVL_PEERS"),
        why="""A parallel job states its layout in sizes that must agree: the ranks started (nodes x processes per node, mpirun's -n)
        equal the product of the tensor-, pipeline- and data-parallel sizes, each parallel size divides the world size, a split
        lists no more devices than the program supports, and some strategies exclude others (DeepSpeed's pipeline engine
        cannot partition gradients or parameters: ZeRO stage 2 or 3). The program checked them before anything ran and
        refused: the message's condition and numbers say which sizes disagree. Nothing failed on the GPUs; the
        configuration, the launch command or the build does not fit the layout.""",
        fix="""STEP; the sizes are set in two places that must agree: the launch command (torchrun --nnodes/--nproc_per_node, srun
        --ntasks-per-node, mpirun -n, CUDA_VISIBLE_DEVICES) and the parallel sizes in the config, the arguments or the engine's
        build""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/home/jenkins/agent/workspace/LLM/release-0.8/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:90)",
             "Tlntin/Qwen-TensorRT-LLM#123 (engines built for 4 GPUs run with one process: mpirun -n 4 solved it)"),
            ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/tmp/tritonbuild/tensorrtllm/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:99)",
             "NVIDIA/TensorRT-LLM#1950 (a tp2 engine run with plain python3 run.py)"),
            ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
             "bigscience-workshop/Megatron-DeepSpeed#407, deepspeedai/Megatron-DeepSpeed#474 (--zero-stage 3 with the model built as a pipeline module)"),
            ("error report :stderr GGML_ASSERT: binding.cpp:712: split_arg.size() <= LLAMA_MAX_DEVICES",
             "mudler/LocalAI#944 (a tensor_split over 4 V100s in a binding built with LLAMA_MAX_DEVICES 1)"),
            ("ValueError: Attempt to split tensors that exceed maximum supported devices. Current LLAMA_MAX_DEVICES=1",
             "abetlen/llama-cpp-python#1166 (tensor_split over two GPUs; llama_max_devices() returns 1 in a build without CUDA)"),
            ("RuntimeError: world_size (4) is not divisible by tensor_model_parallel_size (8) x pipeline_model_parallel_size (1)",
             "Megatron-LM's initialize_model_parallel check (a TP size larger than the GPUs started)"),
            ("There are not enough slots available in the system to satisfy the 4", "Open MPI's mpirun (-n 4 on a host whose slots, its cores, are fewer)"),
            ("RuntimeError: world_size (8) is not divisible by 16", "Megatron-core's newer wording of the same check (tensor x pipeline x context 16)"),
            ("AssertionError: Invalid parallel dims: dp(-1) * cp(1) * tp(2) * pp(1) != WORLD_SIZE(1)",
             "torchtitan's ParallelDims check (tensor parallel 2 started on one GPU)"),
            ("RuntimeError: ('Mesh should not be bigger than default world size 4, but found 8 ranks!')",
             "torch's DeviceMesh check (a mesh shape for 8 ranks in a job of 4)"),
            ("AssertionError: Engine world size (2) != Runtime world size (1)", "TensorRT-LLM's runner (a tp2 engine started without mpirun)"),
            ("ValueError: Total number of hidden layers (30) must be divisible by pipeline parallel size (4).",
             "vLLM's config check (a model's layers over pipeline stages)"),
            ("RuntimeError: Failed: Assertion error /home1/DeepEP/csrc/deep_ep.cpp:32 'num_ranks > NUM_MAX_NVL_PEERS or low_latency_mode'",
             "deepseek-ai/DeepEP#104 (heldout28, retired: two nodes of one A100 each; the maintainers: not meant for it)"),
            ("**Assertion error /home/host/alok/deepep/DeepEP/csrc/deep_ep.cpp:48 'num_ranks > NUM_MAX_NVL_PEERS or low_latency_mode'**",
             "deepseek-ai/DeepEP#477 (two nodes of two GPUs each)"),
        ],
        not_examples=[
            "tensor_parallel_size=8, pipeline_parallel_size=1, world_size: 32",
            "AssertionError: MPI world size 16 does not match torch world size 8",  # rank-outside-world
            "ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3).",  # a model dimension
            "  make_vocab_size_divisible_by .................... 128",
            "UserWarning: fused=True is not supported with foreach=True; falling back to the for-loop implementation",
            "[WARNING] ZeRO-3 is not compatible with pipeline parallelism, falling back to ZeRO-1",
            "[  217.545140] NVRM nvAssertFailedNoLog: Assertion failed: status == NV_OK @ kernel_gsp_ga102.c:235",
            "AssertionError: train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 1028 != 128 * 1 * 8",
            "INFO: world size 8, tensor parallel size 2, pipeline parallel size 2, data parallel size 2",
            "#define NUM_MAX_NVL_PEERS 8",
            "EP_HOST_ASSERT(num_ranks > NUM_MAX_NVL_PEERS or low_latency_mode);",  # the source line, not its failure
        ],
        fields=layout_fields,
    ),
]
