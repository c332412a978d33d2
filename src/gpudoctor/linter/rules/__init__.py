"""The rule registry: one module per rule, one line here per rule."""

from __future__ import annotations

from gpudoctor.linter.rule import Rule
from gpudoctor.linter.rules.allreduce_result_discarded import AllreduceResultDiscarded
from gpudoctor.linter.rules.collective_under_rank_condition import CollectiveUnderRankCondition
from gpudoctor.linter.rules.cuda_visible_devices_late import CudaVisibleDevicesLate
from gpudoctor.linter.rules.dataparallel import DataParallel
from gpudoctor.linter.rules.dataparallel_unwrapped_at_once import DataparallelUnwrappedAtOnce
from gpudoctor.linter.rules.dataset_download_all_ranks import DatasetDownloadAllRanks
from gpudoctor.linter.rules.ddp_forward_bypassed import DdpForwardBypassed
from gpudoctor.linter.rules.ddp_forward_on_one_rank import DdpForwardOnOneRank
from gpudoctor.linter.rules.ddp_module_on_cpu import DdpModuleOnCpu
from gpudoctor.linter.rules.ddp_multi_device_ids import DdpMultiDeviceIds
from gpudoctor.linter.rules.ddp_no_device_ids import DdpNoDeviceIds
from gpudoctor.linter.rules.deprecated_launch import DeprecatedLaunch
from gpudoctor.linter.rules.deprecated_reduce_op import DeprecatedReduceOp
from gpudoctor.linter.rules.device_from_global_rank import DeviceFromGlobalRank
from gpudoctor.linter.rules.device_ids_not_list import DeviceIdsNotList
from gpudoctor.linter.rules.dist_without_init import DistWithoutInit
from gpudoctor.linter.rules.env_init_method_with_address import EnvInitMethodWithAddress
from gpudoctor.linter.rules.hardcoded_init_method_address import HardcodedInitMethodAddress
from gpudoctor.linter.rules.hardcoded_master_port import HardcodedMasterPort
from gpudoctor.linter.rules.init_without_rank_under_spawn import InitWithoutRankUnderSpawn
from gpudoctor.linter.rules.lightning_deprecated_args import LightningDeprecatedArgs
from gpudoctor.linter.rules.master_addr_not_set import MasterAddrNotSet
from gpudoctor.linter.rules.master_port_out_of_range import MasterPortOutOfRange
from gpudoctor.linter.rules.master_port_per_process import MasterPortPerProcess
from gpudoctor.linter.rules.mkdir_race_all_ranks import MkdirRaceAllRanks
from gpudoctor.linter.rules.module_of_prepared_model import ModuleOfPreparedModel
from gpudoctor.linter.rules.local_rank_arg import LocalRankArg
from gpudoctor.linter.rules.local_rank_as_global_rank import LocalRankAsGlobalRank
from gpudoctor.linter.rules.modulelist_called import ModulelistCalled
from gpudoctor.linter.rules.mpi_backend_under_spawn import MpiBackendUnderSpawn
from gpudoctor.linter.rules.name_not_imported import NameNotImported
from gpudoctor.linter.rules.nccl_cpu_tensor import NcclCpuTensor
from gpudoctor.linter.rules.nccl_no_set_device import NcclNoSetDevice
from gpudoctor.linter.rules.no_distributed_sampler import NoDistributedSampler
from gpudoctor.linter.rules.no_gradient_sync import NoGradientSync
from gpudoctor.linter.rules.nonexistent_dist_api import NonexistentDistApi
from gpudoctor.linter.rules.output_device_list import OutputDeviceList
from gpudoctor.linter.rules.rank_from_local_rank import RankFromLocalRank
from gpudoctor.linter.rules.rank0_object_used_on_all_ranks import Rank0ObjectUsedOnAllRanks
from gpudoctor.linter.rules.rank_hardcoded import RankHardcoded
from gpudoctor.linter.rules.removed_distributed_api import RemovedDistributedApi
from gpudoctor.linter.rules.sampler_dataset_mismatch import SamplerDatasetMismatch
from gpudoctor.linter.rules.sampler_no_set_epoch import SamplerNoSetEpoch
from gpudoctor.linter.rules.sampler_passed_as_shuffle import SamplerPassedAsShuffle
from gpudoctor.linter.rules.sampler_with_iterable_dataset import SamplerWithIterableDataset
from gpudoctor.linter.rules.save_all_ranks import SaveAllRanks
from gpudoctor.linter.rules.save_ddp_wrapper import SaveDdpWrapper
from gpudoctor.linter.rules.scheduler_step_on_one_rank import SchedulerStepOnOneRank
from gpudoctor.linter.rules.set_device_literal import SetDeviceLiteral
from gpudoctor.linter.rules.shuffle_with_sampler import ShuffleWithSampler
from gpudoctor.linter.rules.spawn_args_not_picklable import SpawnArgsNotPicklable
from gpudoctor.linter.rules.spawn_args_not_tuple import SpawnArgsNotTuple
from gpudoctor.linter.rules.spawn_no_main_guard import SpawnNoMainGuard
from gpudoctor.linter.rules.spawn_num_workers import SpawnNumWorkers
from gpudoctor.linter.rules.syntax_error import SyntaxErrorRule
from gpudoctor.linter.rules.tensor_to_unassigned import TensorToUnassigned
from gpudoctor.linter.rules.torch_load_no_map_location import TorchLoadNoMapLocation
from gpudoctor.linter.rules.undefined_name import UndefinedName
from gpudoctor.linter.rules.unexpected_argument import UnexpectedArgument
from gpudoctor.linter.rules.unreadable_file import UnreadableFile
from gpudoctor.linter.rules.world_size_hardcoded import WorldSizeHardcoded
from gpudoctor.linter.rules.wrapper_method_call import WrapperMethodCall

# Checks that look at a parsed file, in the order the issue lists them.
CHECKS: tuple[Rule, ...] = (
    DeprecatedLaunch(),
    LocalRankArg(),
    SamplerNoSetEpoch(),
    ShuffleWithSampler(),
    SamplerDatasetMismatch(),
    OutputDeviceList(),
    SaveDdpWrapper(),
    SaveAllRanks(),
    NcclNoSetDevice(),
    SpawnNoMainGuard(),
    SpawnNumWorkers(),
    HardcodedMasterPort(),
    DataParallel(),
    TensorToUnassigned(),
    LightningDeprecatedArgs(),
    ModulelistCalled(),
    CudaVisibleDevicesLate(),
    CollectiveUnderRankCondition(),
    AllreduceResultDiscarded(),
    DdpForwardOnOneRank(),
    TorchLoadNoMapLocation(),
    RankFromLocalRank(),
    DeviceFromGlobalRank(),
    WrapperMethodCall(),
    DeprecatedReduceOp(),
    MasterPortOutOfRange(),
    DistWithoutInit(),
    RemovedDistributedApi(),
    RankHardcoded(),
    NameNotImported(),
    UndefinedName(),
    MasterAddrNotSet(),
    NcclCpuTensor(),
    DeviceIdsNotList(),
    DdpMultiDeviceIds(),
    SetDeviceLiteral(),
    UnexpectedArgument(),
    SpawnArgsNotTuple(),
    SpawnArgsNotPicklable(),
    DataparallelUnwrappedAtOnce(),
    MasterPortPerProcess(),
    InitWithoutRankUnderSpawn(),
    MpiBackendUnderSpawn(),
    SamplerPassedAsShuffle(),
    EnvInitMethodWithAddress(),
    DdpNoDeviceIds(),
    DdpModuleOnCpu(),
    LocalRankAsGlobalRank(),
    MkdirRaceAllRanks(),
    DatasetDownloadAllRanks(),
    SchedulerStepOnOneRank(),
    DdpForwardBypassed(),
    NoDistributedSampler(),
    NoGradientSync(),
    WorldSizeHardcoded(),
    HardcodedInitMethodAddress(),
    Rank0ObjectUsedOnAllRanks(),
    SamplerWithIterableDataset(),
    NonexistentDistApi(),
    ModuleOfPreparedModel(),
)
# Problems the engine reports about a file it could not read or parse.
FILE_PROBLEMS: tuple[Rule, ...] = (SyntaxErrorRule(), UnreadableFile())

ALL: tuple[Rule, ...] = CHECKS + FILE_PROBLEMS
BY_ID: dict[str, Rule] = {rule.id: rule for rule in ALL}
