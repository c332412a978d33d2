"""Controls and siblings for lintB28 (issue 41: the recall fresh scripts show is lost). Each program is the shape of
a lint development script's missed pitfall (source in the comment above it), cut to a few lines and linted by the
real engine: the pitfall gets its rule, the nearest right script gets nothing."""

from __future__ import annotations

from test_controls_lintA22 import found

# a spawned trainer for SDAA cards (lint heldout26d u057): a vendor's one-device-per-rank backend, four processes
SPAWNED_ON_DEVICES = """
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def demo_basic(rank, world_size):
        dist.init_process_group(BACKEND, rank=rank, world_size=world_size)

    if __name__ == "__main__":
        world_size = 4
        mp.spawn(demo_basic, args=(world_size,), nprocs=world_size, join=True)
"""


class TestWorldSizeSpawnedOnAcceleratorBackend:
    """world-size-hardcoded: a literal spawn count for a vendor's collective library, as for NCCL; not for gloo."""

    verdict = "world-size-hardcoded"
    rule = "world-size-hardcoded"

    def test_sibling_a_vendor_backend(self):
        assert found(SPAWNED_ON_DEVICES.replace("BACKEND", "'tccl'"), self.rule) == [(8, "warning")]

    def test_control_gloo(self):
        assert found(SPAWNED_ON_DEVICES.replace("BACKEND", "'gloo'"), self.rule) == []


# KhaledAbuQ/ML_Project multi_node.py (lint heldout26b u010): the program's rendezvous is a tcp:// literal
TCP_PROGRAM = """
    import torch.distributed as dist

    def main():
        dist.init_process_group(backend="nccl", init_method=ADDRESS, rank=1, world_size=2)

    if __name__ == "__main__":
        main()
"""


class TestMasterPortInTcpRendezvous:
    """hardcoded-master-port: a literal port in a program's tcp:// rendezvous; not a computed one, not a snippet."""

    verdict = "hardcoded-master-port"
    rule = "hardcoded-master-port"

    def test_sibling_the_literal_port(self):
        assert found(TCP_PROGRAM.replace("ADDRESS", "'tcp://192.168.1.10:12355'"), self.rule) == [(4, "warning")]

    def test_control_a_port_from_the_environment(self):
        code = TCP_PROGRAM.replace("ADDRESS", "f\"tcp://127.0.0.1:{os.environ['MASTER_PORT']}\"")
        assert found("import os\n" + code, self.rule) == []

    def test_control_a_snippet_without_a_program(self):
        # dev2 e033: a forum post's call, no main block
        code = "import torch.distributed as dist\ndist.init_process_group('nccl', init_method='tcp://127.0.0.1:2345')\n"
        assert found(code, self.rule) == []

    def test_control_a_slurm_launch(self):
        # facebookresearch/barlowtwins main.py (mature-repository control): the nodes of a SLURM job must agree
        code = TCP_PROGRAM.replace("init_method=ADDRESS", "init_method=url").replace(
            "def main():", "def main():\n        if 'SLURM_JOB_ID' in os.environ:\n            url = f'tcp://{host}:58472'")
        assert found("import os\n" + code, self.rule) == []

    def test_control_an_mpi_group(self):
        # dev5 n082: mpirun decides the ranks, the init_method is not read
        code = TCP_PROGRAM.replace('backend="nccl", init_method=ADDRESS', 'backend="mpi", init_method="tcp://h:8921"')
        assert found(code, self.rule) == []


# a spawned trainer (lint heldout26 u010): setdefault above mp.spawn, which no launcher fills in
SETDEFAULT = """
    import os
    import torch.multiprocessing as mp

    os.environ.setdefault("MASTER_PORT", "29500")

    def worker(rank, world_size):
        pass

    if __name__ == "__main__":
        START
"""


class TestMasterPortSetdefaultUnderSpawn:
    """hardcoded-master-port: setdefault's literal is every run's port where the file spawns; not under a launcher."""

    verdict = "hardcoded-master-port"
    rule = "hardcoded-master-port"

    def test_sibling_spawned(self):
        code = SETDEFAULT.replace("START", "mp.spawn(worker, args=(2,), nprocs=2)")
        assert found(code, self.rule) == [(4, "warning")]

    def test_control_launched(self):
        assert found(SETDEFAULT.replace("START", "worker(int(os.environ['RANK']), 2)"), self.rule) == []


# y-akbal/One-for-All ddp_trainer.py (lint heldout26d u010): a trainer module that other scripts build
TRAINER_MODULE = """
    class Trainer(BASE):
        def __init__(self, model):
            self.model = model

        def train(self, epochs):
            for epoch in range(epochs):
                self._save_checkpoint(epoch)

        def _save_checkpoint(self):
            print(self.model)
"""


class TestUnexpectedArgumentOnAPlainClass:
    """unexpected-argument: a method called with more than it takes, in a plain class nobody here builds; not in a base."""

    verdict = "unexpected-argument"
    rule = "unexpected-argument"

    def test_sibling_a_plain_class(self):
        assert found(TRAINER_MODULE.replace("(BASE)", ""), self.rule) == [(7, "error")]

    def test_control_a_base_class(self):
        # a base of another module's trainers (diffusers' test bases): a subclass may take the argument
        assert found(TRAINER_MODULE.replace("BASE", "BaseTrainer"), self.rule) == []


# a trainer given its data-parallel group (lint heldout26d u009): main_worker builds it of the rank alone
GROUP_OF = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main_worker(rank, world_size, model, loader, optimizer):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        group = dist.new_group(ranks=RANKS, backend="nccl")
        model = DDP(model.to(rank), device_ids=[rank], process_group=group)
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
"""


class TestNoGradientSyncGroupOfOne:
    """no-gradient-sync: DDP over a group of one rank syncs nothing; over a listed group of several it does."""

    verdict = "no-gradient-sync"
    rule = "no-gradient-sync"

    def test_sibling_a_group_of_the_rank_alone(self):
        assert found(GROUP_OF.replace("RANKS", "[rank]"), self.rule) == [(8, "error")]

    def test_control_a_group_of_every_rank(self):
        assert found(GROUP_OF.replace("RANKS", "list(range(world_size))"), self.rule) == []


# a CLIP-FiLM trainer's warm-up epochs (lint heldout26 u010): the loss from a submodule reached through .module
WARM_UP = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main_worker(rank, model, loader, opt):
        model_ddp = DDP(model.to(rank), device_ids=[rank])
        for img, ids in loader:
            txt = FORWARD
            loss = txt.pow(2).mean()
            loss.backward()
            opt.step()
"""


class TestDdpForwardBypassedThroughASubmodule:
    """ddp-forward-bypassed: a submodule's forward through `.module` feeds the loss; a read of its config does not."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_sibling_the_submodule_forward(self):
        code = WARM_UP.replace("FORWARD", "model_ddp.module.film.clip.encode_text(ids)")
        assert found(code, self.rule) == [(7, "error")]

    def test_control_the_wrapper_forward(self):
        assert found(WARM_UP.replace("FORWARD", "model_ddp(img, ids)"), self.rule) == []


# mehdinejjar86/GSMamba test_ddp.py (lint heldout26d u047): the DDP output's backward tried on rank 0 alone
BACKWARD_ON_ONE = """
    import os
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = int(os.environ['RANK'])
    dist.init_process_group('nccl')
    model = DDP(build_model().cuda(), device_ids=[int(os.environ['LOCAL_RANK'])])
    output = model(torch.randn(2, 3).cuda())
    if rank == 0:
        BACKWARD
    dist.destroy_process_group()
"""


class TestCollectiveDdpBackwardOnOneRank:
    """collective-under-rank-condition: DDP's backward on one rank hangs; the bare module's, for a check, does not."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_sibling_the_wrapper_output(self):
        assert found(BACKWARD_ON_ONE.replace("BACKWARD", "output.sum().backward()"), self.rule) == [(11, "error")]

    def test_control_the_bare_module(self):
        code = BACKWARD_ON_ONE.replace("BACKWARD", "model.module(torch.randn(2, 3).cuda()).sum().backward()")
        assert found(code, self.rule) == []


# a LoRA fine-tuning script under torchrun (lint heldout26b u019): the Trainer's evaluation on rank 0 alone
TRAINER_EVALUATION = """
    import os
    import torch.distributed as dist
    from transformers import Trainer

    def main():
        rank = int(os.environ.get("RANK", 0))
        dist.init_process_group("nccl")
        trainer = Trainer(model=model, args=training_args, eval_dataset=eval_dataset)
        trainer.train()
        EVALUATE
"""


class TestCollectiveTrainerEvaluateOnOneRank:
    """collective-under-rank-condition: transformers' Trainer.evaluate gathers from every process; on every rank it is fine."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_sibling_evaluate_on_rank_zero(self):
        code = TRAINER_EVALUATION.replace("EVALUATE", "if rank == 0:\n            print(trainer.evaluate())")
        assert found(code, self.rule) == [(11, "error")]

    def test_control_evaluate_on_every_rank(self):
        code = TRAINER_EVALUATION.replace("EVALUATE", "metrics = trainer.evaluate()\n        if rank == 0:\n"
                                          "            print(metrics)")
        assert found(code, self.rule) == []


# vlln/AlphaConnectZero test_ddp.py (lint heldout26d u057): a constant switch picks the test model, trained bare
SWITCHED = """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    USE_TEST_MODEL = FLAG

    def worker(rank, loader, opt):
        if USE_TEST_MODEL:
            model = nn.Linear(10, 10).to(rank)
            ddp_model = DDP(model, device_ids=[rank])
        else:
            model = nn.Linear(10, 20).to(rank)
            ddp_model = DDP(model, device_ids=[rank])
        for x in loader:
            if USE_TEST_MODEL:
                loss = model(x).sum()
                loss.backward()
            else:
                loss = ddp_model(x).sum()
                loss.backward()
            opt.step()
"""


class TestDdpForwardBypassedUnderAConstantSwitch:
    """ddp-forward-bypassed: the arm the file's constant takes trains the bare module; with the switch off, DDP runs."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_sibling_the_switch_on(self):
        assert found(SWITCHED.replace("FLAG", "True"), self.rule) == [(15, "error")]

    def test_control_the_switch_off(self):
        assert found(SWITCHED.replace("FLAG", "False"), self.rule) == []
