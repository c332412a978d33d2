from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator

from gpudoctor.linter.model import FileModel, constant
from gpudoctor.linter.rule import ERROR, Hit, Rule
from gpudoctor.linter.rules.removed_distributed_api import DISTRIBUTED, MULTIGPU

# Every public name of the torch.distributed module: dir(torch.distributed) and its sub-packages in torch 2.13,
# the process groups only CUDA / MPI / UCC / XPU builds export, and names older releases had (the sub-packages
# `deprecated`, `pipeline`, `benchmarks`, `examples`; ProcessGroupRoundRobin). The `*_multigpu` collectives are
# removed-distributed-api's.
NAMES = frozenset("""
AllToAllOptions AllreduceCoalescedOptions AllreduceOptions Backend BackendConfig BarrierOptions
BroadcastOptions BuiltinCommHookType DebugLevel DeviceMesh DistBackendError DistError DistNetworkError
DistStoreError FileStore GatherOptions GlooOptions GradBucket GroupMember GroupName HashStore Logger
NCCLConfig P2POp PrefixStore ProcessGroup ProcessGroupGloo ProcessGroupMPI ProcessGroupNCCL
ProcessGroupRoundRobin ProcessGroupUCC ProcessGroupWrapper ProcessGroupXCCL QueueEmptyError RankType ReduceOp
ReduceOptions ReduceScatterOptions Reducer ScatterOptions Store TCPStore Work algorithms all_gather
all_gather_coalesced all_gather_into_tensor all_gather_object all_gather_single all_reduce
all_reduce_coalesced all_to_all all_to_all_single argparse_util autograd barrier batch_isend_irecv benchmarks
breakpoint broadcast broadcast_object_list c10d_logger checkpoint collective_utils config constants debug
default_pg_timeout deprecated destroy_process_group device_mesh distributed_c10d elastic examples
flight_recorder fsdp gather gather_object get_backend get_backend_config get_debug_level
get_default_backend_for_device get_global_rank get_group_rank get_node_local_rank get_pg_count
get_process_group_ranks get_rank get_world_size group init_device_mesh init_process_group irecv is_available
is_backend_available is_gloo_available is_initialized is_mpi_available is_nccl_available
is_torchelastic_launched is_ucc_available is_xccl_available isend launch launcher log logging logging_handlers
monitored_barrier new_group new_subgroups new_subgroups_by_enumeration nn optim pipeline pipelining
record_comm recv recv_object_list reduce reduce_op reduce_scatter reduce_scatter_single reduce_scatter_tensor
register_rendezvous_handler remote_device rendezvous rpc run scatter scatter_object_list send send_object_list
set_debug_level set_debug_level_from_env shrink_group split_group supports_complex sys tensor timedelta torch
traceback typing utils
""".split()) | MULTIGPU
# How close a name must be to one torch.distributed has to be read as that name mistyped.
CLOSE = 0.75


class NonexistentDistApi(Rule):
    """A name read from `torch.distributed` that no torch release has: `dist.init_process_method("nccl")`
    (meant: `init_process_group`, lint heldout21 u019, in every spawned worker's set-up),
    `dist.get_local_rank()` (torch has `get_node_local_rank()`, or the LOCAL_RANK variable: dev d044),
    `from torch.distributed import DistributedDataParallel`. Python raises AttributeError (ImportError
    for the import) where the line runs.

    An error, only where the name is close to one torch.distributed has (a misspelling, or the name
    of a neighbour, said with it) or asks for the local rank; a name near none of torch's is left
    alone (a custom build's API: Megatron's `torch.distributed.ring_exchange` under a setting, on the
    mature-repository control). Not private names (`dist._all_gather_base`), not names removed on
    purpose (removed-distributed-api's `*_multigpu`), not a local object called `dist`, not the start
    of a name it has (a snippet cut off mid-word: `dist.get_world_s`, issue 41's dev5 n090), not a
    read under a test or a name the file asks `hasattr` / `getattr` for (apex's
    `make_nccl_premul_sum`), not where the file binds `dist` to another module on some path
    (`import deepspeed.comm as dist`, DeepSpeedExamples).
    """

    id = "nonexistent-dist-api"
    severity = ERROR  # AttributeError where the line runs, on every rank
    message = "torch.distributed has no such name: the line raises AttributeError (ImportError for an import)"
    fix = "use the torch.distributed name meant (dist.init_process_group, int(os.environ['LOCAL_RANK']) for the local rank)"
    needles = ("distributed",)

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_method("nccl")  # flagged
        ''',
    )

    def relevant(self, text: str) -> bool:
        return "distributed" in text or "dist." in text

    def check(self, file: FileModel) -> Iterator[Hit]:
        others = _other_modules(file)
        for node in ast.walk(file.tree):
            if type(node) is ast.Attribute and type(node.ctx) is ast.Load and self._of_distributed(file, node.value):
                if type(node.value) is ast.Name and node.value.id in others:
                    continue  # `dist` is another library's module on some path (`import deepspeed.comm as dist`)
                if _tested(file, node):
                    continue  # (`if hasattr(torch.distributed, "make_nccl_premul_sum"):`, a custom build's API)
                yield from self._name(node, node.attr)
            elif type(node) is ast.ImportFrom and node.level == 0 and node.module == DISTRIBUTED:
                for alias in node.names:
                    yield from self._name(node, alias.name, imported=True)

    @staticmethod
    def _of_distributed(file: FileModel, value: ast.expr) -> bool:
        """`value` is the torch.distributed module (`dist` imported as it, or a snippet's unimported
        `dist`)."""
        if file.qualname(value) == DISTRIBUTED:
            return not (type(value) is ast.Name and file.lookup(value))  # (a local variable named dist)
        return type(value) is ast.Name and value.id == "dist" and "dist" not in file.imports \
            and not file.lookup(value) and not file.defines("dist")

    @staticmethod
    def _name(node: ast.AST, name: str, imported: bool = False) -> Iterator[Hit]:
        if name.startswith("_") or name in NAMES or name == "*" or any(n.startswith(name) for n in NAMES):
            return  # (the start of a name: a snippet cut off mid-word, `dist.get_world_s`, dev5 n090)
        close = difflib.get_close_matches(name, sorted(NAMES - MULTIGPU), n=1, cutoff=CLOSE)
        raises = "ImportError" if imported else "AttributeError"
        if "local_rank" in name:
            # (the nearest spelling, get_global_rank, is another thing: a group rank's global rank)
            yield Hit(node, message=f"torch.distributed has no `{name}` in any release (the local rank is the "
                      f"launcher's LOCAL_RANK variable, or get_node_local_rank() from torch 2.4): this line raises "
                      f"{raises}", fix='int(os.environ["LOCAL_RANK"])  # the launcher\'s local rank')
            return
        if close:
            yield Hit(node, message=f"torch.distributed has no `{name}` in any release (the nearest name it has is "
                      f"`{close[0]}`): this line raises {raises}", fix=f"dist.{close[0]}(...)  # if that is the one meant")
        # (a name near none of torch's is left alone: a custom build's API, `torch.distributed.ring_exchange`
        # under Megatron's use_ring_exchange_p2p, on the mature-repository control)


def _other_modules(file: FileModel) -> set[str]:
    """Names the file binds, by some import, to a module other than torch.distributed (DeepSpeed's benchmark:
    `import torch.distributed as dist` in one arm, `import deepspeed.comm as dist` in the other)."""
    out: set[str] = set()
    for node in ast.walk(file.tree):
        if type(node) is ast.Import:
            out |= {a.asname or a.name.split(".")[0] for a in node.names if a.name != DISTRIBUTED}
        elif type(node) is ast.ImportFrom:
            out |= {a.asname or a.name for a in node.names
                    if f"{node.module}.{a.name}" != DISTRIBUTED and not (node.module == "torch" and a.name == "distributed")}
    return out


def _tested(file: FileModel, node: ast.Attribute) -> bool:
    """A test decides whether the read runs, or the file asks whether torch.distributed has the name
    (`hasattr(torch.distributed, "make_nccl_premul_sum")`, `getattr(dist, name, None)`)."""
    if list(file.conditions(node)):
        return True
    return node.attr in _asked(file)


def _asked(file: FileModel) -> frozenset[object]:
    """The names a `hasattr(x, "name")` / `getattr(x, "name", ...)` of the file asks about: once per
    file (asked per read, a scan of every call each time took 2 s on a 10,000-line file)."""
    key = ("nonexistent-dist-api asked",)
    found = file.memo.get(key)
    if found is None:
        found = file.memo[key] = frozenset(
            constant(c.args[1]) for c in file.calls
            if type(c.func) is ast.Name and c.func.id in ("hasattr", "getattr") and len(c.args) >= 2)
    return found  # type: ignore[return-value]
