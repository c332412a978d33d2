"""runtime/checks.py: the facts the hooks record -> findings. Pure; the facts
are written out as the hooks record them (the NCCL ones as a GPU machine
would record them: this machine has no CUDA)."""

import json

from gpudoctor.core.findings import Severity
from gpudoctor.hooks.checks import (
    checkpoint_findings,
    device_mismatch_findings,
    loader_findings,
    module_input_findings,
    nccl_device_findings,
    runtime_findings,
    sampler_findings,
)
from gpudoctor.hooks.facts import (
    CheckpointSave,
    DeviceMismatch,
    LoaderRestarts,
    ModuleInputDevice,
    NcclDevice,
    SamplerEpochRepeat,
    Source,
    fact_from_dict,
    fact_to_dict,
)

SRC = Source("train.py", 17, "return self.proj(x)")


def mismatch(**kw):
    base = dict(
        rank=None,
        error="RuntimeError: Tensor on device meta is not on the expected device cpu!",
        devices_in_message=("meta", "cpu"),
        module="encoder.layers.2.proj",
        module_type="Linear",
        root_type="Net",
        module_tensors={"weight": "meta", "bias": "meta"},
        inputs={"input": "cpu"},
        locals={"x": "cpu"},
        model_devices={"cpu": 8, "meta": 2},
        source=SRC,
    )
    base.update(kw)
    return DeviceMismatch(**base)


# -- device mismatch ----------------------------------------------------------------


def test_meta_submodule_names_the_module_both_devices_and_materialising_fix():
    [f] = device_mismatch_findings([mismatch()])
    assert f.id == "device-mismatch" and f.severity is Severity.ERROR
    assert "`encoder.layers.2.proj` (Linear)" in f.title
    assert "meta" in f.title and "cpu" in f.title
    assert f.evidence["module parameters/buffers"] == "weight=meta, bias=meta"
    assert f.evidence["inputs"] == "input=cpu"
    assert f.evidence["source"] == "train.py:17"
    assert f.fix.startswith('model.encoder.layers[2].proj.to_empty(device="cpu")')


def test_module_left_behind_by_its_model_is_moved_not_the_data():
    f = mismatch(
        error="RuntimeError: Expected all tensors to be on the same device, "
        "but found at least two devices, cpu and cuda:0!",
        module="head",
        module_tensors={"weight": "cpu", "bias": "cpu"},
        inputs={"input": "cuda:0"},
        model_devices={"cuda:0": 10, "cpu": 2},
    )
    [finding] = device_mismatch_findings([f])
    assert finding.fix.startswith('model.head.to("cuda:0")')


def test_input_on_the_wrong_device_is_moved_and_assigned():
    f = mismatch(
        module="",
        module_type="Net",
        module_tensors={"weight": "cuda:0"},
        inputs={"x": "cpu"},
        model_devices={"cuda:0": 4},
    )
    [finding] = device_mismatch_findings([f])
    assert "the root model (Net)" in finding.title
    assert finding.fix.startswith('x = x.to("cuda:0")')
    assert "assign" in finding.fix


def test_module_with_its_own_tensors_split():
    f = mismatch(module_tensors={"weight": "cuda:0", "bias": "cpu"}, model_devices={"cuda:0": 9, "cpu": 1})
    [finding] = device_mismatch_findings([f])
    assert "several devices" in finding.title and "bias=cpu" in finding.title
    assert finding.fix.startswith('model.encoder.layers[2].proj.to("cuda:0")')


def test_tensor_made_inside_forward_is_named():
    f = mismatch(
        module="attn",
        module_tensors={"weight": "cuda:0"},
        inputs={"x": "cuda:0"},
        locals={"x": "cuda:0", "mask": "cpu"},
        model_devices={"cuda:0": 4},
    )
    [finding] = device_mismatch_findings([f])
    assert "mask=cpu" in finding.title
    assert finding.fix.startswith('mask = mask.to("cuda:0")')


def test_error_outside_any_module_points_at_the_line():
    f = mismatch(module=None, module_type=None, module_tensors={}, inputs={}, locals={"a": "cpu", "b": "meta"})
    [finding] = device_mismatch_findings([f])
    assert "train.py:17" in finding.title
    assert "module" not in finding.evidence


def test_the_same_error_on_two_ranks_is_one_finding_listing_both():
    [f] = device_mismatch_findings([mismatch(rank=0), mismatch(rank=1)])
    assert f.evidence["ranks"] == [0, 1]
    [g] = device_mismatch_findings([mismatch(rank=1)])
    assert g.evidence["rank"] == 1


def input_fact(**kw):
    base = dict(
        rank=0,
        module="encoder.proj",
        module_type="Linear",
        module_device="cuda:0",
        input_name="input",
        input_device="cpu",
        source=SRC,
    )
    base.update(kw)
    return ModuleInputDevice(**base)


def test_module_called_with_input_elsewhere_is_a_warning():
    [f] = module_input_findings([input_fact()], failed_modules=set())
    assert f.id == "module-input-device" and f.severity is Severity.WARN
    assert "input on cpu" in f.title and "cuda:0" in f.title
    assert f.fix.startswith('input = input.to("cuda:0")')


def test_warning_is_dropped_when_the_same_module_then_failed():
    facts = [input_fact(module="encoder.proj"), mismatch(module="encoder.proj")]
    ids = [f.id for f in runtime_findings(facts)]
    assert ids == ["device-mismatch"]


# -- sampler -------------------------------------------------------------------------


def test_sampler_repeat_is_a_warning_with_set_epoch_fix():
    fact = SamplerEpochRepeat(0, "DistributedSampler", 0, 2, 2, 32, SRC)
    [f] = sampler_findings([fact, SamplerEpochRepeat(1, "DistributedSampler", 0, 2, 2, 32, SRC)])
    assert f.id == "sampler-without-set-epoch" and f.severity is Severity.WARN
    assert f.evidence["ranks"] == [0, 1]
    assert "set_epoch(epoch)" in f.fix


# -- DataLoader workers ------------------------------------------------------------------


def loader(**kw):
    base = dict(
        rank=0,
        spawned_rank=True,
        start_method="spawn",
        num_workers=2,
        persistent_workers=False,
        startup_s=(2.1, 1.9),
        lightning=False,
        source=SRC,
    )
    base.update(kw)
    return LoaderRestarts(**base)


def test_workers_restarted_every_epoch_in_a_spawned_rank():
    [f] = loader_findings([loader()])
    assert f.id == "spawned-rank-loader-workers" and f.severity is Severity.WARN
    assert "2.00 s" in f.title
    assert f.evidence["first batch after iter(loader), s"] == [2.1, 1.9]
    assert "persistent_workers=True" in f.fix and "torchrun" in f.fix


def test_lightning_fix_names_its_strategy():
    [f] = loader_findings([loader(lightning=True)])
    assert 'strategy="ddp"' in f.fix


def test_no_loader_finding_when_it_does_not_apply():
    assert loader_findings([loader(persistent_workers=True)]) == []
    assert loader_findings([loader(startup_s=(2.0,))]) == []  # one epoch: nothing re-created
    assert loader_findings([loader(spawned_rank=False, start_method="fork")]) == []
    assert loader_findings([loader(startup_s=(0.01, 0.01))]) == []  # too cheap to matter


def test_spawn_started_workers_outside_a_spawned_rank_count_too():
    [f] = loader_findings([loader(spawned_rank=False, start_method="spawn")])
    assert "workers started with 'spawn'" in f.title


# -- NCCL device ---------------------------------------------------------------------------


def nccl(**kw):
    base = dict(
        rank=1,
        backend="nccl",
        local_rank=1,
        local_world_size=2,
        visible_devices=None,
        device_count=2,
        current_device=1,
        when="init_process_group",
    )
    base.update(kw)
    return NcclDevice(**base)


def test_rank_left_on_cuda0_is_an_error_with_set_device_fix():
    [f] = nccl_device_findings([nccl(current_device=0)])
    assert f.id == "nccl-rank-device" and f.severity is Severity.ERROR
    assert "cuda:0" in f.title and "LOCAL_RANK cuda:1" in f.title
    assert "torch.cuda.set_device" in f.fix


def test_rank_on_its_own_gpu_is_fine():
    assert nccl_device_findings([nccl()]) == []


def test_later_look_wins_set_device_after_init_is_fine():
    facts = [nccl(current_device=0), nccl(current_device=1, when="DistributedDataParallel")]
    assert nccl_device_findings(facts) == []


def test_more_ranks_than_visible_gpus_share_one():
    [f] = nccl_device_findings([nccl(device_count=1, current_device=0)])
    assert "share a GPU" in f.title
    assert "--nproc_per_node 1" in f.fix


def test_one_gpu_per_rank_through_cuda_visible_devices_is_fine():
    assert nccl_device_findings([nccl(device_count=1, current_device=0, visible_devices="1")]) == []


def test_nothing_to_say_without_nccl_or_without_a_device():
    assert nccl_device_findings([nccl(backend="gloo", current_device=0)]) == []
    # What a CPU-only machine records: the device could not be read.
    cpu = nccl(device_count=None, current_device=None, note="CUDA is not available in this process")
    assert nccl_device_findings([cpu]) == []
    assert nccl_device_findings([nccl(local_rank=None, current_device=0)]) == []


def test_mixed_backend_string_counts_as_nccl():
    [f] = nccl_device_findings([nccl(backend="cpu:gloo,cuda:nccl", current_device=0)])
    assert f.id == "nccl-rank-device"


# -- checkpoints --------------------------------------------------------------------------------


def save(**kw):
    base = dict(
        rank=0,
        world_size=2,
        path="/ckpt/model.pt",
        ddp_wrapper=None,
        ddp_kind=None,
        example_key=None,
        writers=None,
        source=SRC,
    )
    base.update(kw)
    return CheckpointSave(**base)


def test_ddp_state_dict_saved():
    [f] = checkpoint_findings([save(ddp_wrapper="obj['model']", ddp_kind="state_dict", example_key="module.fc.weight")])
    assert f.id == "checkpoint-ddp-wrapper" and f.severity is Severity.WARN
    assert f.evidence["found in"] == "obj['model']" and f.evidence["key"] == "module.fc.weight"
    assert "model.module.state_dict()" in f.fix


def test_ddp_wrapper_saved():
    [f] = checkpoint_findings([save(ddp_wrapper="obj", ddp_kind="wrapper", world_size=1)])
    assert "DistributedDataParallel wrapper" in f.title


def test_same_path_from_two_ranks_merged():
    [f] = checkpoint_findings([save(rank=0), save(rank=1)])
    assert f.id == "checkpoint-every-rank"
    assert f.evidence["ranks seen saving it"] == [0, 1] and f.evidence["not rank 0"] == [1]
    assert "dist.get_rank() == 0" in f.fix


def test_same_path_known_from_the_store_on_one_rank():
    [f] = checkpoint_findings([save(rank=1, writers=2)])
    assert f.evidence["writers"] == 2


def test_rank0_alone_or_different_paths_are_fine():
    assert checkpoint_findings([save(rank=0, writers=1)]) == []
    assert checkpoint_findings([save(rank=0, path="/c/r0.pt"), save(rank=1, path="/c/r1.pt")]) == []
    assert checkpoint_findings([save(rank=0, world_size=1)]) == []


# -- all together ---------------------------------------------------------------------------------


def test_errors_come_first_and_facts_survive_json():
    facts = [
        SamplerEpochRepeat(0, "DistributedSampler", 0, 2, 2, 32, SRC),
        mismatch(),
        loader(),
        nccl(current_device=0),
        save(rank=1, writers=2),
    ]
    round_trip = [fact_from_dict(json.loads(json.dumps(fact_to_dict(f)))) for f in facts]
    assert round_trip == facts
    found = runtime_findings(round_trip)
    assert [f.severity for f in found][:2] == [Severity.ERROR, Severity.ERROR]
    assert {f.id for f in found} == {
        "sampler-without-set-epoch",
        "device-mismatch",
        "spawned-rank-loader-workers",
        "nccl-rank-device",
        "checkpoint-every-rank",
    }
