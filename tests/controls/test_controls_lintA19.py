"""Controls and siblings for lintA19 (issue 41): lint errors only where this file makes the crash,
hang or silent divergence certain, and errors where it does. Each program is a few lines of a lint
heldout17 script (source in the class docstring), linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


# frankdarkluo/MaxReward ddp_train.py (lint heldout17 u021): the agent's text embedding feeds the Q network,
# and the step's optimizer is built from the Q network's parameters alone
DQN_STEP = """
    import torch
    from torch import optim
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(rank, loader, Agent, DQN, editor):
        agent = DDP(Agent(editor).to(rank), device_ids=[rank])
        local_net = DQN(agent.module.state_dim).to(rank)
        model_net = DDP(local_net, device_ids=[rank])
        optimizer = optim.Adam(PARAMS, lr=1e-4)
        for states, expected in loader:
            q_values = model_net(agent.module.text2emb(states))
            loss = (q_values - expected).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""

# fyy-debug/Improving-Deep-Watermarking-Robustness... ddp_train.py (lint heldout17 u023): the generator's
# steps read the encoder-decoder's decoder through .module; the encoder-decoder's own optimizer clears
# its gradients before it steps
GAN_STEP = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(net_Encdec, net_Gen, looper, mse_loss, n_iter, n_gen):
        net_Encdec = DDP(net_Encdec.cuda(), device_ids=[0])
        net_Gen = DDP(net_Gen.cuda(), device_ids=[0])
        optim_EncDec = torch.optim.Adam(net_Encdec.parameters())
        optim_Gen = torch.optim.Adam(net_Gen.parameters(), lr=1e-4)
        for i in range(n_iter):
            images, messages = next(looper)
            for step in range(n_gen):
                optim_Gen.zero_grad()
                adv_images = net_Gen(images)
                adv_dec_messages = net_Encdec.module.decoder(adv_images)
                loss_G = mse_loss(adv_images, images) - mse_loss(adv_dec_messages, messages)
                loss_G.backward()
                optim_Gen.step()
            CLEAR
            decoded = net_Encdec(images, messages)
            loss_ED = mse_loss(decoded, messages)
            loss_ED.backward()
            optim_EncDec.step()
"""


class TestDdpForwardBypassedNotTrained:
    """ddp-forward-bypassed: the bypassed wrapper is trained by no optimizer, so no gradient of it
    needs averaging: nothing to say."""

    rule = "ddp-forward-bypassed"

    def test_control_a_wrapper_no_optimizer_steps_is_not_reported(self):
        assert found(DQN_STEP.replace("PARAMS", "model_net.parameters()"), self.rule) == []

    def test_sibling_the_optimizer_also_steps_the_bypassed_wrapper_is_an_error(self):
        code = DQN_STEP.replace("PARAMS", "list(model_net.parameters()) + list(agent.parameters())")
        assert found(code, self.rule) == [(11, "error")]

    def test_sibling_an_optimizer_the_file_does_not_show_stays_an_error(self):
        # built from a list the file fills elsewhere: lint cannot say which modules it trains
        assert found(DQN_STEP.replace("PARAMS", "params"), self.rule) == [(11, "error")]

    def test_control_gradients_cleared_before_the_wrapper_own_step_are_not_reported(self):
        assert found(GAN_STEP.replace("CLEAR", "optim_EncDec.zero_grad()"), self.rule) == []

    def test_sibling_no_zero_grad_before_the_wrapper_own_step_is_an_error(self):
        # the generator's loss leaves net_Encdec's unaveraged gradients for optim_EncDec to step
        assert found(GAN_STEP.replace("CLEAR", "pass"), self.rule) == [(14, "error")]


# dice-group/aswa ddp_train.py (lint heldout17 u017): the wrapper is built and never used; the
# training epoch of another module gets the bare model and its optimizer
UNUSED = """
    import torch
    import utils
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = model.to(device)
    ddpmodel = DDP(model, device_ids=[device])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        train_res = utils.train_epoch(loader=loader, model=TRAINED, optimizer=optimizer)
"""

# sqfoo/stldm_official ddp_train.py (lint heldout17 u049): the step's loss comes from a method of the
# bare module the wrapper holds; the wrapper is called only in rank 0's validation
METHOD = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def ddp_train(rank, model, loader, optimizer):
        model = model.to(rank)
        ddp_model = DDP(model, device_ids=[rank])
        for x, y in loader:
            LOSS
            loss = sum(losses)
            loss.backward()
            optimizer.step()
        if rank == 0:
            with torch.no_grad():
                y_pred = ddp_model(x)
"""


class TestDdpForwardBypassedBareModule:
    """ddp-forward-bypassed: the wrapper never runs its forward where the module it holds is trained
    under its own name (a method of it in the step, or the wrapper never read at all)."""

    rule = "ddp-forward-bypassed"

    def test_control_the_wrapper_handed_to_the_training_epoch_is_not_reported(self):
        assert found(UNUSED.replace("TRAINED", "ddpmodel"), self.rule) == []

    def test_sibling_a_wrapper_never_read_while_the_bare_model_trains_is_an_error(self):
        assert found(UNUSED.replace("TRAINED", "model"), self.rule) == [(9, "error")]

    def test_control_the_step_calls_the_wrapper_is_not_reported(self):
        assert found(METHOD.replace("LOSS", "losses = ddp_model(x, y)"), self.rule) == []

    def test_sibling_a_method_of_the_bare_module_in_the_step_is_an_error(self):
        assert found(METHOD.replace("LOSS", "losses = model.compute_loss(x, y)"), self.rule) == [(8, "error")]

    def test_control_an_nn_module_method_of_the_bare_module_is_not_reported(self):
        code = METHOD.replace("LOSS", "losses = ddp_model(x, y); model.zero_grad()")
        assert found(code, self.rule) == []


# akira-l/ELP-CUB ddp_train.py (lint heldout17 u009): world_size and rank fixed to 1 and 0, so the range
# is every GPU the process sees; pytorch/examples ddp/example.py (dev d033): the processes per node
# come from a flag, and with one process per GPU the range holds one device
DEVICES = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main(model, local_world_size):
        dist.init_process_group(backend="nccl")
        world_size = WORLD
        rank = 0
        n = torch.cuda.device_count() // world_size
        device_ids = list(range(rank * n, (rank + 1) * n))
        model.cuda()
        ddp_model = DDP(model, device_ids=device_ids)
"""


class TestDdpMultiDeviceIdsEveryGpu:
    """ddp-multi-device-ids: a range that the file resolves to every visible GPU is an error, unless the
    file sets CUDA_VISIBLE_DEVICES itself (then it decides how many GPUs the count is)."""

    rule = "ddp-multi-device-ids"

    def test_control_one_device_per_process_is_not_reported(self):
        code = DEVICES.replace("device_ids=device_ids", "device_ids=[rank]").replace("WORLD", "1")
        assert found(code, self.rule) == []

    def test_sibling_every_visible_gpu_is_an_error(self):
        assert found(DEVICES.replace("WORLD", "1"), self.rule) == [(12, "error")]

    def test_sibling_a_count_divided_by_a_flag_stays_a_warning(self):
        assert found(DEVICES.replace("WORLD", "local_world_size"), self.rule) == [(12, "warning")]

    def test_sibling_the_file_sets_the_visible_gpus_stays_a_warning(self):
        code = DEVICES.replace("WORLD", "1").replace(
            'dist.init_process_group(backend="nccl")',
            'os.environ["CUDA_VISIBLE_DEVICES"] = str(local_world_size)\n        dist.init_process_group(backend="nccl")')
        assert found(code, self.rule) == [(13, "warning")]


# frankdarkluo/MaxReward ddp_train.py (lint heldout17 u021): the main block spawns the workers, which
# start the group, and then calls the file's cleanup(), which tears a group down in the parent
PARENT = """
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def setup(rank, world_size):
        dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)

    def cleanup():
        BODY

    def train(rank, world_size):
        setup(rank, world_size)
        cleanup()

    if __name__ == "__main__":
        mp.spawn(train, nprocs=2, args=(2,), join=True)
        cleanup()
"""


class TestDistWithoutInitParentHelper:
    """dist-without-init: the parent's call, after mp.spawn, of the file's own function that tears the
    group down is the same error as the bare call."""

    rule = "dist-without-init"

    def test_control_a_helper_that_asks_for_a_group_first_is_not_reported(self):
        code = PARENT.replace("BODY", "if dist.is_initialized():\n            dist.destroy_process_group()")
        assert found(code, self.rule) == []

    def test_sibling_the_bare_helper_in_the_parent_is_an_error(self):
        assert found(PARENT.replace("BODY", "dist.destroy_process_group()"), self.rule) == [(16, "error")]

    def test_control_a_helper_that_needs_no_group_is_not_reported(self):
        assert found(PARENT.replace("BODY", "print('done')"), self.rule) == []


# leaf-down/Medical_image_classification ddp_train.py (lint heldout17 u037): the flag's help says torchrun
# passes it; torchrun passes LOCAL_RANK in the environment only, so every process keeps 0
TORCHRUN_FLAG = """
    import argparse
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main(net):
        parser = argparse.ArgumentParser()
        parser.add_argument('--local_rank', type=int, default=0, help='Local GPU id passed by torchrun')
        args = parser.parse_args()
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend=BACKEND)
        net = DDP(net.cuda(), device_ids=[args.local_rank])
"""


class TestLocalRankArgOneGpu:
    """local-rank-arg: under the torchrun its words name, every process of a node wraps its model on
    GPU 0 in an NCCL group: an error; where NCCL is not shown, the warning it was."""

    rule = "local-rank-arg"

    def test_control_the_rank_read_from_the_environment_is_not_reported(self):
        code = TORCHRUN_FLAG.replace("BACKEND", "'nccl'").replace(
            "args = parser.parse_args()", "args = parser.parse_args()\n        args.local_rank = int(os.environ['LOCAL_RANK'])")
        assert found(code, self.rule) == []

    def test_sibling_every_rank_on_gpu_0_in_an_nccl_group_is_an_error(self):
        assert found(TORCHRUN_FLAG.replace("BACKEND", "'nccl'"), self.rule) == [(7, "error")]

    def test_sibling_a_backend_the_file_does_not_show_stays_a_warning(self):
        assert found(TORCHRUN_FLAG.replace("BACKEND", "args.backend"), self.rule) == [(7, "warning")]


# mihkeltiks/BCVL_dist ddp_train.py (lint heldout17 u040): a MONAI network, built on the CPU, wrapped
# with device_ids; its move to the GPU comes after the wrap (and after a return)
MONAI = """
    import os
    import torch
    from torch.nn.parallel import DistributedDataParallel
    from monai.networks.nets import resnet18

    def main():
        device = torch.device(f"cuda:{os.environ['SLURM_LOCALID']}")
        torch.cuda.set_device(device)
        model = resnet18(pretrained=False, spatial_dims=3, n_input_channels=1, num_classes=1)
        MOVE
        model = DistributedDataParallel(model, device_ids=[device])
"""


class TestDdpModuleOnCpuMonai:
    """ddp-module-on-cpu: MONAI's networks are built on the CPU, as torchvision's are."""

    rule = "ddp-module-on-cpu"

    def test_control_the_network_moved_before_the_wrap_is_not_reported(self):
        assert found(MONAI.replace("MOVE", "model = model.to(device)"), self.rule) == []

    def test_sibling_the_network_wrapped_on_the_cpu_is_an_error(self):
        assert found(MONAI.replace("MOVE", "pass"), self.rule) == [(11, "error")]

    def test_sibling_a_network_of_the_project_stays_silent(self):
        code = MONAI.replace("from monai.networks.nets import resnet18", "from nets import resnet18")
        assert found(code.replace("MOVE", "pass"), self.rule) == []


# the accelerate shape of lint heldout12 u028: the prepared model evaluated on the main process alone
ACCELERATE = """
    import torch
    import torch.nn as nn
    from accelerate import Accelerator

    accelerator = Accelerator(PLUGIN)
    net = nn.Sequential(nn.Linear(8, 8), LAYER)
    model, optimizer = accelerator.prepare(net, torch.optim.SGD(net.parameters(), lr=0.1))
    if accelerator.is_main_process:
        out = model(batch)
"""


class TestDdpForwardOnOneRankPrepared:
    """ddp-forward-on-one-rank: an accelerate-prepared model is an error only where its forward must
    communicate (its module holds buffers, or the file sets FSDP / ZeRO-3); else the warning says what
    would make it hang."""

    rule = "ddp-forward-on-one-rank"

    def test_control_the_unwrapped_model_on_the_main_process_is_not_reported(self):
        code = ACCELERATE.replace("PLUGIN", "").replace("LAYER", "nn.BatchNorm1d(8)").replace(
            "out = model(batch)", "out = accelerator.unwrap_model(model)(batch)")
        assert found(code, self.rule) == []

    def test_sibling_a_module_with_buffers_is_an_error(self):
        code = ACCELERATE.replace("PLUGIN", "").replace("LAYER", "nn.BatchNorm1d(8)")
        assert found(code, self.rule) == [(9, "error")]

    def test_sibling_a_module_without_buffers_is_a_warning(self):
        code = ACCELERATE.replace("PLUGIN", "").replace("LAYER", "nn.ReLU()")
        assert found(code, self.rule) == [(9, "warning")]

    def test_sibling_an_fsdp_plugin_the_file_sets_is_an_error(self):
        code = ACCELERATE.replace("PLUGIN", "fsdp_plugin=FullyShardedDataParallelPlugin()").replace("LAYER", "nn.ReLU()")
        assert found(code, self.rule) == [(9, "error")]


class TestDdpForwardBypassedBareModuleNotTrained:
    """ddp-forward-bypassed: a method of the wrapped module whose loss only another module's optimizer
    steps leaves the wrapper's weights unchanged: nothing to say."""

    rule = "ddp-forward-bypassed"

    def test_control_the_optimizer_steps_another_module_is_not_reported(self):
        code = METHOD.replace("LOSS", "losses = model.compute_loss(x, y)").replace(
            "optimizer):", "head):\n        head = torch.nn.Linear(8, 2)\n"
            "        optimizer = torch.optim.SGD(head.parameters(), lr=0.1)")
        assert found(code, self.rule) == []

    def test_sibling_a_module_not_built_in_view_may_be_the_wrapped_one_an_error(self):
        code = METHOD.replace("LOSS", "losses = model.compute_loss(x, y)").replace(
            "optimizer):", "head):\n        optimizer = torch.optim.SGD(head.parameters(), lr=0.1)")
        assert found(code, self.rule) == [(9, "error")]

    def test_sibling_the_optimizer_steps_the_wrapped_module_is_an_error(self):
        code = METHOD.replace("LOSS", "losses = model.compute_loss(x, y)").replace(
            "optimizer):", "head):\n        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)")
        assert found(code, self.rule) == [(9, "error")]


# github.com/.../ (lint heldout16 u026): a submodule read on the DDP wrapper under a command-line setting
SETTING = """
    import argparse
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    parser = argparse.ArgumentParser()
    parser.add_argument("--transfer", action="store_true")
    args = parser.parse_args()

    def train(net, rank):
        model = DDP(net.to(rank), device_ids=[rank])
        optimizer = torch.optim.Adam(model.parameters())
        if TEST:
            optimizer = torch.optim.Adam(model.gclstm_encoder.parameters())
"""


class TestWrapperMethodCallOnASetting:
    """wrapper-method-call: a read on the wrapper that runs only where a command-line setting holds is a
    warning naming it; under a rank test (or none) it stays an error."""

    rule = "wrapper-method-call"

    def test_control_the_read_through_module_is_not_reported(self):
        code = SETTING.replace("TEST", "args.transfer").replace("model.gclstm", "model.module.gclstm")
        assert found(code, self.rule) == []

    def test_sibling_under_a_setting_is_a_warning(self):
        assert found(SETTING.replace("TEST", "args.transfer"), self.rule) == [(13, "warning")]

    def test_sibling_under_a_rank_test_stays_an_error(self):
        assert found(SETTING.replace("TEST", "rank == 0"), self.rule) == [(13, "error")]


class TestDdpForwardBypassedParametersGrown:
    """ddp-forward-bypassed: an optimizer's parameter list the file extends elsewhere may hold the
    bypassed wrapper's: the error stays."""

    rule = "ddp-forward-bypassed"

    def test_control_a_list_of_another_module_only_is_not_reported(self):
        code = DQN_STEP.replace("        optimizer = optim.Adam(PARAMS, lr=1e-4)",
                                "        params = list(model_net.parameters())\n"
                                "        optimizer = optim.Adam(params, lr=1e-4)")
        assert found(code, self.rule) == []

    def test_sibling_the_list_extended_with_the_bypassed_wrapper_is_an_error(self):
        code = DQN_STEP.replace("        optimizer = optim.Adam(PARAMS, lr=1e-4)",
                                "        params = list(model_net.parameters())\n"
                                "        params += list(agent.parameters())\n"
                                "        optimizer = optim.Adam(params, lr=1e-4)")
        assert found(code, self.rule) == [(13, "error")]
