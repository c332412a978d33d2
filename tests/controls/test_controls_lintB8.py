"""Controls and siblings for issue 41's lintB8 round on the lint sample (dev … dev6,
heldout3 … heldout5): the misses and false alarms of the rules outside lintA8's list,
and the rule the readers' unclaimed pitfalls asked for (ddp-no-device-ids). For each
verdict, the healthy program that looks most like the failure must not get it
(test_control_*), and the nearest program that needs another verdict gets that one
(test_sibling_*). Real code, linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str, path: str = "train.py") -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), path)
            if d.rule == rule]


def rules(code: str, path: str = "train.py") -> set[str]:
    return {d.rule for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), path)}


class TestNcclNoSetDevice:
    """heldout5 r039 (a "cuda" compared with a device's type places nothing) and dev4 k019
    (a module moved by a bare .cuda() and wrapped without device_ids, beside per-rank devices)."""

    verdict = "nccl-no-set-device"

    def test_control_cuda_only_compared(self):
        code = """
            import sys
            import torch.distributed as dist

            def setup(rank, n_gpus, device):
                dist.init_process_group(
                    backend="gloo" if sys.platform == "win32" or device.type != "cuda" else "nccl",
                    init_method="env://", world_size=n_gpus, rank=rank)
        """
        assert found(code, self.verdict) == []

    def test_control_per_rank_devices_and_a_wrapper_told_its_device(self):
        code = """
            import torch
            import torch.distributed as dist

            dist.init_process_group(backend="nccl", init_method="env://")
            device = torch.device("cuda", args.local_rank)
            net = Net().to(device)
            net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[args.local_rank])
        """
        assert found(code, self.verdict) == []

    def test_sibling_cuda_placed_beside_the_comparison(self):
        code = """
            import torch
            import torch.distributed as dist

            def setup(rank, n_gpus, device):
                backend = "nccl" if device.type == "cuda" else "gloo"
                dist.init_process_group(backend="nccl", world_size=n_gpus, rank=rank)
                return torch.zeros(1, device="cuda")
        """
        assert found(code, self.verdict) == [(6, "warning")]

    def test_sibling_bare_cuda_wrapped_beside_per_rank_devices(self):
        code = """
            import torch
            import torch.distributed as dist

            dist.init_process_group(backend="nccl", init_method=args.init_method, rank=args.rank, world_size=2)
            net = Net()
            net = net.cuda()
            net = torch.nn.parallel.DistributedDataParallel(net)
            head = Head().to(torch.device("cuda", args.rank))
        """
        assert found(code, self.verdict) == [(7, "warning")]
        assert "ddp-no-device-ids" not in rules(code)  # said once, by the rule of the NCCL group


class TestDistWithoutInit:
    """heldout3 m060, heldout4 q073: a bare call the file runs elsewhere only under a
    test for a process group; dev2 e095: a helper that starts the group just before."""

    verdict = "dist-without-init"

    def test_control_group_started_before_in_the_same_function(self):
        code = """
            import torch.distributed as dist

            def setup():
                if not dist.is_initialized():
                    dist.init_process_group(backend="nccl")
                return dist.get_rank()

            def get_rank():
                return dist.get_rank() if dist.is_initialized() else 0
        """
        assert found(code, self.verdict) == []

    def test_control_helper_called_under_a_test(self):
        code = """
            import torch.distributed as dist

            def sync():
                dist.barrier()

            def finish(distributed):
                if distributed:
                    sync()
                if dist.is_initialized():
                    dist.barrier()
        """
        assert found(code, self.verdict) == []

    def test_control_bare_call_under_another_test(self):
        code = """
            import torch.distributed as dist

            def cleanup(args):
                if args.distributed:
                    dist.destroy_process_group()

            def close():
                if dist.is_initialized():
                    dist.destroy_process_group()
        """
        assert found(code, self.verdict) == []

    def test_sibling_bare_twin_of_a_guarded_call(self):
        code = """
            dist.destroy_process_group()
            if dist.is_initialized():
                dist.destroy_process_group()
        """
        assert found(code, self.verdict) == [(1, "warning")]

    def test_control_whole_module_with_a_guarded_twin(self):
        # a module that imports what it uses: its bare calls sit on paths that run with a group
        # (the mature-repository control: 39 such, none a bug)
        code = """
            import torch.distributed as dist
            from lavis.common.dist_utils import is_dist_avail_and_initialized

            class Task:
                def evaluation(self, model, loader):
                    results = [model(x) for x in loader]
                    dist.barrier()
                    return results

                def after(self):
                    if is_dist_avail_and_initialized():
                        dist.barrier()
        """
        assert found(code, self.verdict) == []

    def test_sibling_pasted_method_beside_its_guarded_fix(self):
        code = """
            def evaluation(self, model, data_loader):
                results = []
                for samples in data_loader:
                    results.extend(self.valid_step(model=model, samples=samples))
                dist.barrier()
                return results
            from lavis.common.dist_utils import is_dist_avail_and_initialized
            if is_dist_avail_and_initialized():
                dist.barrier()
        """
        assert found(code, self.verdict) == [(5, "warning")]

    def test_sibling_pasted_helper_beside_its_own_guard(self):
        code = """
            def distributed():
                try:
                    return dist.is_available() and dist.is_initialized()
                except Exception:
                    return False
            def _all_reduce_dict(d, device):
                out = {}
                for key, value in sorted(d.items()):
                    t = torch.tensor([[value]]).to(device)
                    torch.distributed.all_reduce(t)
                    out[key] = t.item()
                return out
        """
        assert found(code, self.verdict) == [(10, "warning")]


class TestDdpNoDeviceIds:
    """heldout4 q015 / q052, heldout5 r014: DDP built without device_ids around a module
    on the current device, which nothing sets per rank; a rank read as a truth value."""

    verdict = "ddp-no-device-ids"

    def test_control_current_device_set_first(self):
        code = """
            import os
            import torch
            from mmcv.parallel import MMDistributedDataParallel

            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            model = MMDistributedDataParallel(model.cuda(), find_unused_parameters=True)
        """
        assert found(code, self.verdict) == []

    def test_control_device_ids_given(self):
        code = """
            from mmcv.parallel import MMDistributedDataParallel

            model = MMDistributedDataParallel(model.cuda(), device_ids=[local_rank], find_unused_parameters=True)
        """
        assert found(code, self.verdict) == []

    def test_control_module_moved_to_a_named_device(self):
        code = """
            import torch

            model = torch.nn.parallel.DistributedDataParallel(model.cuda(local_rank))
        """
        assert found(code, self.verdict) == []

    def test_control_rank_tested_against_none(self):
        code = """
            import torch

            model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[args.gpu] if args.gpu is not None else None)
        """
        assert found(code, self.verdict) == []

    def test_sibling_wrapped_on_the_current_device(self):
        code = """
            from mmcv.parallel import MMDistributedDataParallel

            model = MMDistributedDataParallel(model.cuda())
        """
        assert found(code, self.verdict) == [(3, "warning")]

    def test_sibling_rank_zero_gets_none(self):
        code = """
            import torch

            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=(int(args.gpu_rank),) if args.rank else None)
        """
        assert found(code, self.verdict) == [(3, "warning")]

    def test_sibling_own_nccl_group_is_the_other_rules(self):
        code = """
            import torch
            import torch.distributed as dist

            dist.init_process_group("nccl")
            model = torch.nn.parallel.DistributedDataParallel(Net().cuda())
        """
        assert found(code, self.verdict) == []
        assert found(code, "nccl-no-set-device") == [(4, "warning")]


class TestDistWithoutInitRunAtTheTop:
    """dev d003, dev2 e018: DDP / a DistributedSampler built at the top of a file that
    then runs its work there (an error); dev6 r009: a wrapper torch does not have there."""

    verdict = "dist-without-init"

    def test_control_module_imported_for_its_definitions_stays_a_warning(self):
        code = """
            import torch

            net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2).cuda())

            def predict(x):
                return net(x)
        """
        assert found(code, self.verdict) == [(3, "warning")]

    def test_control_a_class_torch_does_not_have_there_stays_a_warning(self):
        code = """
            import torch
            from torch.distributed.fsdp import DistributedDataParallel

            model = DistributedDataParallel(torch.nn.Linear(4, 2))
            for x in torch.rand(3, 4):
                model(x)
        """
        assert found(code, self.verdict) == [(4, "warning")]

    def test_sibling_wrapped_and_run_at_the_top(self):
        code = """
            import torch

            net = torch.nn.Linear(128, 8).cuda()
            if False:
                net = torch.nn.DataParallel(net)
            else:
                net = torch.nn.parallel.DistributedDataParallel(net)

            y = net.forward(torch.rand(8, 128).cuda())
        """
        assert found(code, self.verdict) == [(7, "error")]

    def test_sibling_sampler_then_an_epoch_loop(self):
        code = """
            import torch
            from torch.utils.data import DataLoader, DistributedSampler

            dataset = torch.utils.data.TensorDataset(torch.rand(250, 32))
            sampler = DistributedSampler(dataset, num_replicas=5)
            loader = DataLoader(dataset, sampler=sampler)
            for epoch in range(3):
                for batch in loader:
                    pass
        """
        assert found(code, self.verdict) == [(5, "error")]


class TestLocalRankAsGlobalRank:
    """heldout3 m054 (all_gather's list indexed by the local rank), dev3 h099 (a
    reduce(dst=0) result read where the local GPU index is 0)."""

    verdict = "local-rank-as-global-rank"

    def test_control_slot_of_the_global_rank(self):
        code = """
            import torch
            import torch.distributed as dist

            def gather(z, cfg):
                out = [torch.zeros_like(z) for _ in range(dist.get_world_size())]
                dist.all_gather(out, z)
                out[dist.get_rank()] = z
                return torch.cat(out)
        """
        assert found(code, self.verdict) == []

    def test_control_local_name_that_holds_the_global_rank(self):
        code = """
            import torch
            import torch.distributed as dist

            def gather(z):
                local_rank = dist.get_rank()
                out = [torch.zeros_like(z) for _ in range(dist.get_world_size())]
                dist.all_gather(out, z)
                out[local_rank] = z
                return torch.cat(out)
        """
        assert found(code, self.verdict) == []

    def test_control_all_reduce_read_by_the_local_index(self):
        code = """
            import torch.distributed as dist

            def validate(loss, args):
                dist.all_reduce(loss)
                if args.gpu == 0:
                    print(loss.item())
        """
        assert found(code, self.verdict) == []

    def test_sibling_gathered_slot_by_local_rank(self):
        code = """
            import torch

            if world_size > 1:
                with torch.no_grad():
                    all_z = [torch.zeros_like(z) for _ in range(world_size)]
                    torch.distributed.all_gather(all_z, z)
                all_z[cfg.local_rank] = z
                z = torch.cat(all_z)
        """
        assert found(code, self.verdict) == [(7, "warning")]

    def test_sibling_reduced_read_where_the_gpu_index_is_zero(self):
        code = """
            import torch.distributed as dist

            def validate(model, loader, args):
                total = 0
                for x in loader:
                    loss = model(x)
                    dist.reduce(loss, 0, dist.ReduceOp.SUM)
                    if args.gpu == 0:
                        total += loss.item()
                return total
        """
        assert found(code, self.verdict) == [(8, "warning")]


class TestSaveAllRanksAfterALightningFit:
    """heldout4 q045: a 4-device Lightning fit, then a torch.save every rank runs."""

    verdict = "save-all-ranks"

    def test_control_saved_on_global_zero(self):
        code = """
            import torch
            import pytorch_lightning as pl

            trainer = pl.Trainer(accelerator="gpu", devices=4)
            trainer.fit(module, datamodule=data)
            if trainer.is_global_zero:
                torch.save(module.net, "model.pt")
        """
        assert found(code, self.verdict) == []

    def test_control_spawn_strategy_returns_to_one_process(self):
        code = """
            import torch
            import pytorch_lightning as pl

            trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="ddp_spawn")
            trainer.fit(module, datamodule=data)
            torch.save(module.net, "model.pt")
        """
        assert found(code, self.verdict) == []

    def test_control_one_device(self):
        code = """
            import torch
            import pytorch_lightning as pl

            trainer = pl.Trainer(accelerator="gpu", devices=1)
            trainer.fit(module, datamodule=data)
            torch.save(module.net, "model.pt")
        """
        assert found(code, self.verdict) == []

    def test_sibling_saved_by_every_rank(self):
        code = """
            import torch
            import pytorch_lightning as pl

            trainer = pl.Trainer(accelerator="gpu", devices=4, max_epochs=10)
            trainer.fit(module, datamodule=data)
            torch.save(module.net, "model.pt")
        """
        assert found(code, self.verdict) == [(6, "warning")]

    def test_sibling_pasted_a_space_deep(self):
        code = """
            trainer = pl.Trainer(
                 accelerator="gpu",
                 devices=4,
             )

             trainer.fit(module, datamodule=data)
             torch.save(module.net, "model.pt")
        """
        assert found(code, self.verdict) == [(7, "warning")]
        assert "syntax-error" in rules(code)
