"""Controls and siblings for lintA23 (issue 41): the errors lint heldout21's readers named that the script decides
(a training forward through the wrapper's bare module, a value made on rank 0 only and used on every rank, a
DistributedSampler over an IterableDataset, FSDP built where nothing starts a group), and warnings that held for
code the script never runs. Each program is a few lines of a development script (source in the comment above it),
linted by the real engine."""

from __future__ import annotations

from test_controls_lintA22 import found

# JpChii/gpt2-reproduced train_ddp.py (lint heldout21 u054): nanoGPT's `raw_model = model.module if ddp else model`,
# the wrap under the same `if ddp:`, and the micro-step forward through TRAINED
NANOGPT_RAW_MODEL = """
    import os
    import torch
    from torch import distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        dist.init_process_group(backend="nccl")
        ddp_local_rank = int(os.environ["LOCAL_RANK"])
    model = GPT2(GPTConfig).to(device)
    if ddp:
        model = DDP(model, device_ids=[ddp_local_rank])
    raw_model = model.module if UNWRAP else model
    optim = raw_model.configure_optimizers(weight_decay=0.1, learning_rate=6e-4, device=device)
    for step in range(max_steps):
        optim.zero_grad(set_to_none=True)
        for micro_step in range(grad_accum_steps):
            x, y = data_loader.next_batch(micro_step=micro_step, step=step)
            logits, loss = TRAINED(x, y)
            loss = loss / grad_accum_steps
            loss.backward()
        optim.step()
"""


class TestDdpForwardBypassedRawModel:
    """ddp-forward-bypassed: `raw = W.module if T else W`, T the test the wrap runs under, is the bare module
    exactly where the wrapper exists: a training forward through it bypasses DDP on every distributed run."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_control_the_forward_through_the_wrapper_is_not_reported(self):
        assert found(NANOGPT_RAW_MODEL.replace("UNWRAP", "ddp").replace("TRAINED", "model"), self.rule) == []

    def test_sibling_the_forward_through_raw_model_is_an_error(self):
        code = NANOGPT_RAW_MODEL.replace("UNWRAP", "ddp").replace("TRAINED", "raw_model")
        assert found(code, self.rule) == [(19, "error")]

    def test_control_another_test_unwraps_on_a_setting(self):
        # `model.module if args.unwrap else model`: with the setting off, DDP's forward runs
        code = NANOGPT_RAW_MODEL.replace("UNWRAP", "args.unwrap").replace("TRAINED", "raw_model")
        assert [sev for _, sev in found(code, self.rule)] in ([], ["warning"])


# fonsecabc/PM2.5 multigpu script (lint heldout21 u045): the validation counter counted on rank 0 only, divided on
# every rank after the epoch
RANK0_COUNTER = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(rank, world_size, model, val_dataloader, criterion, epochs):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        model = DDP(model.to(rank), device_ids=[rank])
        for e in range(epochs):
            mse_temp = 0
            cont = 0
            model.eval()
            if rank == 0:
                with torch.no_grad():
                    for c, (x, met, y) in enumerate(val_dataloader):
                        y_pred = model.module(x, met)
                        mse_temp += criterion(y_pred, y).cpu().item()
                        cont += 1
            avg_loss_t = mse_temp/cont
"""


class TestRank0ObjectUsedOnAllRanks:
    """rank0-object-used-on-all-ranks: a value every rank starts empty (0, [], None) and only some ranks fill
    (under a rank test), then used on every rank in a way that raises on the empty one."""

    verdict = "rank0-object-used-on-all-ranks"
    rule = "rank0-object-used-on-all-ranks"

    def test_sibling_a_counter_counted_on_rank_0_divides_on_every_rank(self):
        assert found(RANK0_COUNTER, self.rule) == [(18, "error")]

    def test_control_the_division_on_rank_0_only_is_not_reported(self):
        code = RANK0_COUNTER.replace("            avg_loss_t = mse_temp/cont",
                                     "                avg_loss_t = mse_temp/cont")
        assert found(code, self.rule) == []

    def test_control_a_counter_counted_on_every_rank_is_not_reported(self):
        code = RANK0_COUNTER.replace("            if rank == 0:\n", "            if True:\n")
        assert found(code, self.rule) == []

    def test_control_a_tested_divisor_is_not_reported(self):
        code = RANK0_COUNTER.replace("avg_loss_t = mse_temp/cont", "avg_loss_t = mse_temp/cont if cont else 0.0")
        assert found(code, self.rule) == []

    def test_control_a_broadcast_counter_is_not_reported(self):
        code = RANK0_COUNTER.replace("            avg_loss_t = mse_temp/cont",
                                     "            cont = broadcast_value(cont)\n            avg_loss_t = mse_temp/cont")
        assert found(code, self.rule) == []

    # yl4579/StyleTTS2-style aligner training (lint heldout21 u007): losses appended only on the main process,
    # averaged on every process
    LIST_FILLED_ON_MAIN = """
        from accelerate import Accelerator

        accelerator = Accelerator()
        aligner, optimizer, train_loader = accelerator.prepare(aligner, optimizer, train_loader)
        for epoch in range(epochs):
            train_losses = []
            for i, batch in enumerate(train_loader):
                loss = forward_sum_loss(aligner(batch))
                optimizer.zero_grad()
                accelerator.backward(loss)
                optimizer.step()
                if (i+1)%log_interval == 0 and accelerator.is_main_process:
                    train_losses.append(loss.item())
            avg_train_loss = sum(train_losses) / len(train_losses)
    """

    def test_sibling_a_list_filled_on_the_main_process_is_averaged_on_every_one(self):
        assert found(self.LIST_FILLED_ON_MAIN, self.rule) == [(14, "error")]

    def test_control_a_list_filled_on_every_process_is_not_reported(self):
        code = self.LIST_FILLED_ON_MAIN.replace(" and accelerator.is_main_process", "")
        assert found(code, self.rule) == []

    # ahaliassos-style fold training (lint h15 u003): the SummaryWriter made on the main GPU only, None elsewhere,
    # flushed on every rank
    WRITER_ON_MAIN_GPU = """
        import torch
        import torch.distributed as dist
        from torch.utils.tensorboard import SummaryWriter

        def worker(gpu_rank, main_gpu, fold_rank, n_epoch):
            dist.init_process_group("nccl", rank=gpu_rank, world_size=4)
            if gpu_rank == main_gpu:
                summary = SummaryWriter(log_dir='./log/' + str(fold_rank) + '_fold/')
            else:
                summary = None
                dist.barrier()
            for epoch in range(1, n_epoch + 1):
                train_one_epoch(epoch, summary=summary)
            summary.flush()
    """

    def test_sibling_none_on_the_other_ranks_is_read_on_every_rank(self):
        assert found(self.WRITER_ON_MAIN_GPU, self.rule) == [(14, "error")]

    def test_control_a_tested_writer_is_not_reported(self):
        code = self.WRITER_ON_MAIN_GPU.replace("            summary.flush()",
                                               "            if summary is not None:\n                summary.flush()")
        assert found(code, self.rule) == []

    def test_sibling_read_under_a_setting_is_a_warning(self):
        code = self.WRITER_ON_MAIN_GPU.replace("            summary.flush()",
                                               "            if args.flush:\n                summary.flush()")
        assert found(code, self.rule) == [(15, "warning")]


# Ilyas-Oubenkhir/IMDB streaming classifier (lint heldout21 u038): a streamed Hugging Face dataset, split by node,
# given to a DistributedSampler
STREAMED_DATASET = """
    import datasets
    from datasets.distributed import split_dataset_by_node
    from torch.utils.data import DataLoader, DistributedSampler

    dataset = datasets.load_dataset(dataset_config.path, streaming=STREAM)
    local_dataset = split_dataset_by_node(dataset, num_nodes=world_size, node_rank=global_rank)
    train_dataset = local_dataset[dataset_config.train_split].with_format("torch")
    train_sampler = DistributedSampler(train_dataset, shuffle=True, seed=dataset_config.seed)
    train_loader = DataLoader(train_dataset, batch_size=8, sampler=train_sampler)
"""


class TestSamplerWithIterableDataset:
    """sampler-with-iterable-dataset: DistributedSampler reads len(dataset) when it is built; an IterableDataset
    the file shows (a streamed dataset, a class of the file with no __len__) has none."""

    verdict = "sampler-with-iterable-dataset"
    rule = "sampler-with-iterable-dataset"

    def test_sibling_a_streamed_dataset_is_an_error(self):
        assert found(STREAMED_DATASET.replace("STREAM", "True"), self.rule) == [(8, "error")]

    def test_control_a_dataset_loaded_whole_is_not_reported(self):
        assert found(STREAMED_DATASET.replace("STREAM", "False"), self.rule) == []

    def test_control_a_streaming_setting_is_not_decided(self):
        assert found(STREAMED_DATASET.replace("STREAM", "args.streaming"), self.rule) == []

    OWN_ITERABLE = """
        import torch
        from torch.utils.data import DataLoader, DistributedSampler, IterableDataset

        class Shards(IterableDataset):
            def __iter__(self):
                yield from read_shards(self.files)
            LENGTH

        dataset = Shards()
        sampler = DistributedSampler(dataset)
    """

    def test_sibling_the_files_own_iterable_dataset_is_an_error(self):
        assert found(self.OWN_ITERABLE.replace("LENGTH", "pass"), self.rule) == [(10, "error")]

    def test_control_one_that_has_a_length_is_not_reported(self):
        code = self.OWN_ITERABLE.replace("LENGTH", "def __len__(self):\n                return 100")
        assert found(code, self.rule) == []


# Pritiks23/FSDP-vs-PyTorch-Baseline-Training-Benchmark train_fsdp.py (lint heldout21 u086): FSDP built in the
# function the main block runs, and nothing in the file starts a process group
FSDP_NO_GROUP = """
    import torch
    from torch.utils.data import DataLoader
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    from model import get_model
    from dataset import ToyDataset


    def run():
        START
        model = get_model().cuda()
        model = FSDP(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        loader = DataLoader(ToyDataset(), batch_size=2)
        for step, batch in enumerate(loader):
            loss = model(**batch).loss
            loss.backward()
            opt.step()


    if __name__ == "__main__":
        run()
"""


class TestDistWithoutInitFsdp:
    """dist-without-init: FSDP (like DDP) needs the default process group; built in the function the main block
    runs, where nothing in the file starts one, it raises on every run."""

    verdict = "dist-without-init"
    rule = "dist-without-init"

    def test_sibling_fsdp_with_no_group_anywhere_is_an_error(self):
        assert found(FSDP_NO_GROUP.replace("START", "pass"), self.rule) == [(12, "error")]

    def test_control_a_group_started_first_is_not_reported(self):
        code = FSDP_NO_GROUP.replace("START", 'torch.distributed.init_process_group("nccl")')
        assert found(code, self.rule) == []

    def test_control_a_set_up_helper_of_the_project_is_believed(self):
        code = FSDP_NO_GROUP.replace("START", "setup_distributed()").replace(
            "from dataset import ToyDataset", "from dataset import ToyDataset\n    from dist_utils import setup_distributed")
        assert found(code, self.rule) == []


# Vanint/EGD-style GAN script (lint heldout21 u057): the main block runs the DDP tutorial's demo through mp.spawn;
# main(), which trains a generator and a discriminator with plain loaders, is never called
NEVER_RUN_MAIN = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch import optim
    from torch.utils.data import DataLoader
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torchvision.datasets import ImageFolder

    import models


    def demo_basic(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        model = ToyModel().to(rank)
        ddp_model = DDP(model, device_ids=[rank])
        optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
        ddp_model(torch.randn(20, 10)).sum().backward()
        optimizer.step()
        CALL


    def main():
        G = models.Generator()
        D = models.Discriminator()
        optimizer_g = optim.Adam(G.parameters(), lr=1e-4)
        optimizer_d = optim.Adam(D.parameters(), lr=1e-4)
        dataset = ImageFolder(path_imgnet_train)
        dataloader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=8, drop_last=True)
        for x, c in dataloader:
            loss_g = G(x).mean()
            loss_g.backward()
            optimizer_g.step()


    if __name__ == '__main__':
        # main()
        mp.spawn(demo_basic, args=(2,), nprocs=2, join=True)
"""


class TestWarningsInAFunctionNeverRun:
    """no-gradient-sync, no-distributed-sampler: code in a function the script never runs (no call, no reference,
    not the spawn target) runs in no process group."""

    verdict = "no-gradient-sync"
    rules = ("no-gradient-sync", "no-distributed-sampler")

    def test_control_a_function_the_script_never_runs_is_not_reported(self):
        code = NEVER_RUN_MAIN.replace("CALL", "pass")
        assert [found(code, rule) for rule in self.rules] == [[], []]

    def test_sibling_the_same_function_run_by_the_spawned_worker_is_reported(self):
        code = NEVER_RUN_MAIN.replace("CALL", "main()")
        assert [found(code, rule) for rule in self.rules] == [[(23, "warning"), (24, "warning")], [(28, "warning")]]


# the lint heldout21 u035 trainer: the network comes from the project's loader built with is_ddp=True, and the
# step reads `net.module`
LOADED_WRAPPER = """
    import os
    import torch
    import torch.distributed as dist

    def main():
        local_rank = int(os.environ['LOCAL_RANK'])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend='nccl')
        loader = Loader(args, is_ddp=True, local_rank=local_rank)
        (train_set, val_set), net, loss_fn, optimizer = loader.load()
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_set)
        for data in dl_train:
            data_in = PRE(data)
            out = net(data_in)
            loss_fn(out, data)['loss'].backward()
            optimizer.step()
"""


class TestNoGradientSyncModelNotInView:
    """no-gradient-sync: a model the file reads `.module` of is a wrapper the project built (DDP's, DataParallel's);
    its gradient sync is not in view, so no warning says it has none."""

    verdict = "no-gradient-sync"
    rule = "no-gradient-sync"

    def test_control_the_model_read_as_a_wrapper_is_not_reported(self):
        assert found(LOADED_WRAPPER.replace("PRE", "net.module.pre_process"), self.rule) == []

    def test_sibling_a_model_the_file_builds_and_never_wraps_is_reported(self):
        code = LOADED_WRAPPER.replace("PRE", "preprocess").replace(
            "        (train_set, val_set), net, loss_fn, optimizer = loader.load()\n",
            "        (train_set, val_set), loss_fn = loader.load()\n        net = Net().cuda()\n"
            "        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n")
        assert [sev for _, sev in found(code, self.rule)] == ["warning"]


# dickcongwe/amd-distributed-training distributed_train.py (lint heldout21 u019): the set-up each spawned worker runs
MISSPELLED_INIT = """
    import torch, torch.nn as nn, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def setup(rank, world_size):
        dist.NAME("nccl")
        torch.cuda.set_device(rank)
"""


class TestNonexistentDistApi:
    """nonexistent-dist-api: a name torch.distributed has in no release raises AttributeError where it is read."""

    verdict = "nonexistent-dist-api"
    rule = "nonexistent-dist-api"

    def test_sibling_a_misspelled_init_is_an_error(self):
        assert found(MISSPELLED_INIT.replace("NAME", "init_process_method"), self.rule) == [(5, "error")]

    def test_control_the_real_init_is_not_reported(self):
        assert found(MISSPELLED_INIT.replace("NAME", "init_process_group"), self.rule) == []

    def test_control_a_submodule_is_not_reported(self):
        code = MISSPELLED_INIT.replace('dist.NAME("nccl")', 'dist.checkpoint.save(state, checkpoint_id="ckpt")')
        assert found(code, self.rule) == []

    def test_control_a_removed_name_is_left_to_its_own_rule(self):
        code = MISSPELLED_INIT.replace('dist.NAME("nccl")', "dist.all_reduce_multigpu([t])")
        assert found(code, self.rule) == []


# KimRass/DDPM train_ddp.py (lint heldout21 u058): the DDP wrapper handed to the trainer, compiled there, and the
# step run through the compiled wrapper's `.module`
COMPILED_WRAPPER = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Trainer(object):
        def train_for_one_epoch(self, model, optim, loader):
            for ori_image in loader:
                loss = STEP(ori_image)
                optim.zero_grad()
                loss.backward()
                optim.step()

        def train(self, model, optim, loader):
            model = torch.compile(model)
            self.train_for_one_epoch(model, optim, loader)

    def main_worker(rank, net, loader):
        trainer = Trainer()
        model = DDP(net.to(rank), device_ids=[rank])
        optim = torch.optim.AdamW(model.parameters(), lr=1e-4)
        trainer.train(model=model, optim=optim, loader=loader)
"""


class TestDdpForwardBypassedCompiledWrapper:
    """ddp-forward-bypassed: torch.compile of the DDP wrapper hands `.module` to the wrapper, so a step through
    `model.module` of the compiled wrapper bypasses DDP's forward as it does uncompiled."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_sibling_the_step_through_the_compiled_wrappers_module_is_an_error(self):
        assert found(COMPILED_WRAPPER.replace("STEP", "model.module.get_loss"), self.rule) == [(7, "error")]

    def test_control_the_step_through_the_compiled_wrapper_is_not_reported(self):
        assert found(COMPILED_WRAPPER.replace("STEP", "model"), self.rule) == []


# the lint heldout21 u048 search script: DDP under --local_rank, DataParallel on the other path, and the training
# loss from the model's own private method through `.module`
PRIVATE_LOSS_METHOD = """
    import torch

    model.to(args.device)
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    elif args.n_gpu > 1:
        model = torch.nn.DataParallel(model)
    for batch_idx, (input, _) in enumerate(train_queue):
        optimizer.zero_grad()
        loss = STEP(input)
        loss.backward()
        optimizer.step()
"""


class TestDdpForwardBypassedPrivateMethod:
    """ddp-forward-bypassed: a method of the user's model whose name starts with `_` is a forward (not one of
    nn.Module's own), and DataParallel on another path leaves the DDP one to be said, as a warning."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_sibling_the_models_private_loss_through_module_is_a_warning(self):
        assert found(PRIVATE_LOSS_METHOD.replace("STEP", "model.module._loss"), self.rule) == [(10, "warning")]

    def test_control_the_wrapper_called_is_not_reported(self):
        assert found(PRIVATE_LOSS_METHOD.replace("STEP", "model"), self.rule) == []

    def test_control_nn_modules_own_private_method_is_not_reported(self):
        assert found(PRIVATE_LOSS_METHOD.replace("STEP", "model.module._apply"), self.rule) == []
