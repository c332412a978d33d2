"""Controls and siblings for lintE32 (issue 41, item 1: recall where the retired parts' readers found pitfalls lint
missed). Each program is the shape of a retired lint script's missed pitfall (source in the comment above it), cut to
a few lines and linted by the real engine: the pitfall gets its rule, the nearest right script gets nothing."""

from __future__ import annotations

from test_controls_lintA22 import found, found_also
from test_controls_lintF33 import messages

# hzwer/ECCV2022-RIFE train.py (lint heldout30b u002): torch.distributed.launch starts the processes, the group's size
# is an option whose default is a literal
LAUNCHED_WORLD = """
    import argparse
    import torch
    import torch.distributed as dist

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", default=0, type=int)
        parser.add_argument("--world_size", default=DEFAULT, type=int)
        args = parser.parse_args()
        dist.init_process_group(backend="nccl", world_size=args.world_size)
        torch.cuda.set_device(args.local_rank)
        train(args)
"""


class TestWorldSizeOptionDefault:
    """world-size-hardcoded: the group's size is an option whose default is a literal above 1, in a file a launcher
    starts: run with any other process count and the option not given, the rendezvous waits for ranks that never
    come."""

    verdict = "world-size-hardcoded"
    rule = "world-size-hardcoded"

    def test_sibling_default_four(self):
        assert found_also(LAUNCHED_WORLD.replace("DEFAULT", "4"), self.rule) == [(10, (8,))]

    def test_control_default_one(self):
        # a world of one unless told otherwise: the launcher's count must be given, but the default hangs nothing
        assert found(LAUNCHED_WORLD.replace("DEFAULT", "1"), self.rule) == []

    def test_control_option_without_default(self):
        code = LAUNCHED_WORLD.replace('parser.add_argument("--world_size", default=DEFAULT, type=int)',
                                      'parser.add_argument("--world_size", type=int, required=True)')
        assert found(code, self.rule) == []

    def test_control_option_rewritten(self):
        # the ImageNet example's `args.world_size = ngpus_per_node * args.world_size`: the file sizes it itself
        code = LAUNCHED_WORLD.replace("        dist.init_process_group",
                                      "        args.world_size = torch.cuda.device_count() * args.world_size\n"
                                      "        dist.init_process_group")
        assert found(code, self.rule) == []

    def test_control_world_from_the_environment(self):
        code = LAUNCHED_WORLD.replace("world_size=args.world_size",
                                      "world_size=int(os.environ['WORLD_SIZE'])").replace("import argparse",
                                                                                         "import argparse\nimport os")
        assert found(code, self.rule) == []

    def test_control_own_tcp_rendezvous(self):
        code = LAUNCHED_WORLD.replace('backend="nccl",', 'backend="nccl", init_method="tcp://10.0.0.1:23456", '
                                      'rank=args.local_rank,')
        assert found(code, self.rule) == []


# lint heldout30 u021 (a diffusion trainer): the EMA model is a deep copy of the DDP wrapper, and its state is saved
EMA_COPY = """
    import copy
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main(local_rank):
        dist.init_process_group("nccl")
        model = build_unet().cuda()
        model = DDP(model, device_ids=[local_rank])
        ema_model = copy.deepcopy(COPIED)
        for epoch in range(100):
            train_one_epoch(model, ema_model)
            if dist.get_rank() == 0:
                torch.save({"epoch": epoch, "state_dict": ema_model.state_dict()}, f"ema_{epoch}.pt")
"""


class TestSaveDdpWrapperDeepCopy:
    """save-ddp-wrapper: `copy.deepcopy` of a DDP wrapper is a DDP wrapper (DDP's __getstate__/__setstate__ rebuild
    it), so its state_dict keys carry 'module.' like the original's."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_copy_of_the_wrapper(self):
        assert found(EMA_COPY.replace("COPIED", "model"), self.rule) == [(14, "warning")]

    def test_control_copy_of_the_module(self):
        assert found(EMA_COPY.replace("COPIED", "model.module"), self.rule) == []


# p3i0t/SimCLR-CIFAR10 train_moco.py (lint heldout30b u028): a dataset class of the file built on torchvision's
# CIFAR10, given download=True in every spawned worker
SUBCLASS_DOWNLOAD = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torchvision import datasets

    class CustomCIFAR10(BASE):
        INIT

        def __getitem__(self, idx):
            img, _ = super().__getitem__(idx)
            return img, img

    def main_worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        train_dataset = CustomCIFAR10(root="./data", train=True, download=True)
        train(train_dataset, rank)

    if __name__ == "__main__":
        mp.spawn(main_worker, nprocs=torch.cuda.device_count(), args=(torch.cuda.device_count(),))
"""


def subclass_download(base: str = "datasets.CIFAR10",
                      init: str = "def __init__(self, **kwds):\n            super().__init__(**kwds)") -> str:
    return SUBCLASS_DOWNLOAD.replace("BASE", base).replace("INIT", init)


class TestDatasetDownloadSubclass:
    """dataset-download-all-ranks: a dataset class of the file built on a downloading torchvision dataset downloads as
    its base does, where it hands the keywords on."""

    verdict = "dataset-download-all-ranks"
    rule = "dataset-download-all-ranks"

    def test_sibling_keywords_handed_on(self):
        assert found(subclass_download(), self.rule) == [(16, "warning")]

    def test_sibling_no_init_of_its_own(self):
        assert found(subclass_download(init="pass"), self.rule) == [(15, "warning")]

    def test_control_a_plain_dataset_base(self):
        assert found(subclass_download(base="torch.utils.data.Dataset"), self.rule) == []

    def test_control_init_drops_download(self):
        init = "def __init__(self, root, train, download):\n            super().__init__(root, train=train)"
        assert found(subclass_download(init=init), self.rule) == []

    def test_control_download_method_of_its_own(self):
        init = "def download(self):\n            pass"
        assert found(subclass_download(init=init), self.rule) == []


# p3i0t/SimCLR-CIFAR10 main_moco.py (lint heldout30b u033), MCG-NJU/PDPP main_distributed.py (lint heldout22 u041):
# the ImageNet example's `args.rank * ngpus_per_node + gpu`, the global rank, used as the GPU
NODE_OFFSET = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main_worker(gpu, ngpus_per_node, args):
        rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend="nccl", init_method=args.dist_url, rank=rank, world_size=args.world_size)
        args.rank = rank
        model = build_model()
        model = model.cuda(DEVICE)
        torch.cuda.set_device(DEVICE)
        model = DDP(model, device_ids=[DEVICE])

    def main(args):
        ngpus_per_node = torch.cuda.device_count()
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
"""


class TestDeviceFromNodeOffsetRank:
    """device-from-global-rank: `node_rank * ngpus_per_node + gpu` is the global rank by construction; used as a GPU
    index it is past the GPUs of every node but the first."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_sibling_global_rank_as_the_device(self):
        assert found(NODE_OFFSET.replace("DEVICE", "args.rank"), self.rule) == [(12, "warning")]

    def test_control_the_spawn_index_as_the_device(self):
        assert found(NODE_OFFSET.replace("DEVICE", "gpu"), self.rule) == []

    def test_control_the_rank_modulo_the_node_gpus(self):
        assert found(NODE_OFFSET.replace("DEVICE", "args.rank % ngpus_per_node"), self.rule) == []


# lint heldout30 u004 (a VAE fine-tuned with accelerate): the training forward goes through the prepared model's
# `.module`, which under a multi-process launch is the DDP wrapper's module
PREPARED_MODULE = """
    import torch
    from accelerate import Accelerator

    def main():
        accelerator = Accelerator()
        vae = build_vae()
        optimizer = torch.optim.AdamW(vae.parameters(), lr=1e-4)
        vae, optimizer, loader = accelerator.prepare(vae, optimizer, loader)
        for images in loader:
            posterior = FORWARD(images).latent_dist
            reconstruction = vae.module.decode(posterior.sample()).sample
            loss = torch.nn.functional.mse_loss(reconstruction, images)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
"""


class TestDdpForwardBypassedPrepared:
    """ddp-forward-bypassed: the model accelerate's prepare returned is a DDP wrapper under a multi-process launch
    (and has no `.module` under one process): a training forward through its `.module` skips DDP's forward."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_sibling_forward_through_module(self):
        assert found(PREPARED_MODULE.replace("FORWARD", "vae.module.encode"), self.rule) == [(10, "warning")]

    def test_control_forward_through_the_wrapper(self):
        code = PREPARED_MODULE.replace("FORWARD", "vae").replace("vae.module.decode(posterior.sample())",
                                                                 "vae(posterior.sample(), decode=True)")
        assert found(code, self.rule) == []

    def test_control_evaluation_under_no_grad(self):
        code = PREPARED_MODULE.replace("        for images in loader:", "        with torch.no_grad():\n"
                                       "          for images in loader:").replace(
            "            accelerator.backward(loss)\n            optimizer.step()\n            optimizer.zero_grad()\n",
            "            print(loss.item())\n")
        assert found(code, self.rule) == []


# choco9966/deepspeed-example run_deepspeed.py (lint heldout27 u024): the deepspeed launcher runs the file once per GPU,
# and every process builds CIFAR10 with download=True before deepspeed.initialize
DEEPSPEED_DOWNLOAD = """
    import torch
    import torchvision
    import torchvision.transforms as transforms
    FRAMEWORK_IMPORT

    def main(args):
        trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True,
                                                transform=transforms.ToTensor())
        net = Net()
        FRAMEWORK_CALL
        train(engine, loader)

    if __name__ == "__main__":
        main(parse_args())
"""


def framework_download(framework_import: str, framework_call: str) -> str:
    return DEEPSPEED_DOWNLOAD.replace("FRAMEWORK_IMPORT", framework_import).replace("FRAMEWORK_CALL", framework_call)


class TestDatasetDownloadUnderLibraryLaunch:
    """dataset-download-all-ranks: a file a library runs data-parallel (`deepspeed.initialize`; accelerate where the
    file shows several processes) runs every line once per process, the download too."""

    verdict = "dataset-download-all-ranks"
    rule = "dataset-download-all-ranks"

    def test_sibling_deepspeed_engine(self):
        code = framework_download("import deepspeed", "engine, optimizer, loader, _ = deepspeed.initialize("
                                  "args=args, model=net, model_parameters=net.parameters(), training_data=trainset)")
        assert found(code, self.rule) == [(7, "warning")]

    def test_sibling_accelerate_with_a_barrier(self):
        code = framework_download("from accelerate import Accelerator",
                                  "accelerator = Accelerator(); engine, loader = accelerator.prepare(net, "
                                  "torch.utils.data.DataLoader(trainset)); accelerator.wait_for_everyone()")
        assert found(code, self.rule) == [(7, "warning")]

    def test_control_one_process_script(self):
        code = framework_download("", "engine, loader = net.cuda(), torch.utils.data.DataLoader(trainset)")
        assert found(code, self.rule) == []

    def test_control_bare_accelerator(self):
        # no several processes shown: since lintF33 said with the launch as its condition
        code = framework_download("from accelerate import Accelerator",
                                  "accelerator = Accelerator(); engine, loader = accelerator.prepare(net, "
                                  "torch.utils.data.DataLoader(trainset))")
        assert found(code, self.rule) == [(7, "warning")]
        assert all("shows no launch" in m for m in messages(code, self.rule))

    def test_control_bare_accelerator_one_gpu(self):
        code = framework_download("import os\n    from accelerate import Accelerator",
                                  "os.environ['CUDA_VISIBLE_DEVICES'] = '1'; accelerator = Accelerator(); "
                                  "engine, loader = accelerator.prepare(net, torch.utils.data.DataLoader(trainset))")
        assert found(code, self.rule) == []

    def test_control_main_process_first(self):
        code = framework_download("from accelerate import Accelerator",
                                  "accelerator = Accelerator(); engine, loader = accelerator.prepare(net, "
                                  "torch.utils.data.DataLoader(trainset)); accelerator.wait_for_everyone()")
        code = code.replace("        trainset = torchvision", "        accelerator = Accelerator()\n"
                            "        with accelerator.main_process_first():\n            trainset = torchvision").replace(
            "                                                transform=", "                                                    transform=")
        assert found(code, self.rule) == []
