"""The rule registry: one module per rule, one line here per rule."""

from __future__ import annotations

from gpudoctor.lint.rule import Rule
from gpudoctor.lint.rules.collective_under_rank_condition import CollectiveUnderRankCondition
from gpudoctor.lint.rules.cuda_visible_devices_late import CudaVisibleDevicesLate
from gpudoctor.lint.rules.dataparallel import DataParallel
from gpudoctor.lint.rules.ddp_forward_on_one_rank import DdpForwardOnOneRank
from gpudoctor.lint.rules.deprecated_launch import DeprecatedLaunch
from gpudoctor.lint.rules.hardcoded_master_port import HardcodedMasterPort
from gpudoctor.lint.rules.lightning_deprecated_args import LightningDeprecatedArgs
from gpudoctor.lint.rules.local_rank_arg import LocalRankArg
from gpudoctor.lint.rules.modulelist_called import ModulelistCalled
from gpudoctor.lint.rules.nccl_no_set_device import NcclNoSetDevice
from gpudoctor.lint.rules.output_device_list import OutputDeviceList
from gpudoctor.lint.rules.sampler_dataset_mismatch import SamplerDatasetMismatch
from gpudoctor.lint.rules.sampler_no_set_epoch import SamplerNoSetEpoch
from gpudoctor.lint.rules.save_all_ranks import SaveAllRanks
from gpudoctor.lint.rules.save_ddp_wrapper import SaveDdpWrapper
from gpudoctor.lint.rules.shuffle_with_sampler import ShuffleWithSampler
from gpudoctor.lint.rules.spawn_no_main_guard import SpawnNoMainGuard
from gpudoctor.lint.rules.spawn_num_workers import SpawnNumWorkers
from gpudoctor.lint.rules.syntax_error import SyntaxErrorRule
from gpudoctor.lint.rules.tensor_to_unassigned import TensorToUnassigned
from gpudoctor.lint.rules.unreadable_file import UnreadableFile

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
    DdpForwardOnOneRank(),
)
# Problems the engine reports about a file it could not read or parse.
FILE_PROBLEMS: tuple[Rule, ...] = (SyntaxErrorRule(), UnreadableFile())

ALL: tuple[Rule, ...] = CHECKS + FILE_PROBLEMS
BY_ID: dict[str, Rule] = {rule.id: rule for rule in ALL}
