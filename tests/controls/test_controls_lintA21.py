"""Controls and siblings for lintA21 (issue 41): lint errors only where the file decides the crash, the
certain crash said as an error when its value goes through `int(...)`, and warnings kept where the file shows
why they are false. Each program is a few lines of a lint heldout19 script (source in the comment above it),
linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


# jomar0/sr_net main_dist.py (lint heldout19 u057): a torchrun entry whose DDP is given the local rank as an int
INT_DEVICE_IDS = """
    import os
    from torch.nn.parallel import DistributedDataParallel

    init_dist_env()
    fsrcnn = FSRCNN(types=["conv", "dws", "dws", "dws"]).cuda()
    fsrcnn = DistributedDataParallel(fsrcnn, device_ids=DEVICE_IDS)
    best = train(fsrcnn, dataloaders, 10)
"""


class TestDeviceIdsNotListInt:
    """device-ids-not-list: `device_ids=int(...)` is an int, as the file shows it: DDP takes its len()."""

    verdict = "device-ids-not-list"
    rule = "device-ids-not-list"

    def test_sibling_int_of_the_environment_is_an_error(self):
        code = INT_DEVICE_IDS.replace("DEVICE_IDS", "int(os.environ['LOCAL_RANK'])")
        assert found(code, self.rule) == [(6, "error")]

    def test_sibling_int_through_a_name_is_an_error(self):
        code = INT_DEVICE_IDS.replace("init_dist_env()", "local_rank = int(os.environ['LOCAL_RANK'])")
        assert found(code.replace("DEVICE_IDS", "local_rank"), self.rule) == [(6, "error")]

    def test_control_int_in_a_list_is_not_reported(self):
        code = INT_DEVICE_IDS.replace("DEVICE_IDS", "[int(os.environ['LOCAL_RANK'])]")
        assert found(code, self.rule) == []

    def test_control_int_rebound_to_a_list_is_not_reported(self):
        code = INT_DEVICE_IDS.replace("init_dist_env()", "gpu = int(os.environ['LOCAL_RANK'])\ngpus = [gpu]")
        assert found(textwrap.dedent(code).replace("DEVICE_IDS", "gpus"), self.rule) == []


# fredzzhang/upt main.py (lint heldout19 u050): each DistributedSampler is built over the dataset the
# loader's own dataset class wraps
WRAPPED = """
    import os
    from torch.utils.data import DataLoader, DistributedSampler

    def main(rank, args):
        trainset = HICODet(root=os.path.join(args.data_root, "hico_20160224_det/images/train2015"))
        testset = HICODet(root=os.path.join(args.data_root, "hico_20160224_det/images/test2015"))
        engine = CustomisedEngine(
            net,
            DataLoader(
                dataset=CustomisedDataset(trainset,
                    os.path.join(args.data_root, "detections/train2015"),
                    human_idx=49,
                ), collate_fn=custom_collate, batch_size=args.batch_size,
                num_workers=args.num_workers, pin_memory=True,
                sampler=DistributedSampler(
                    OVER,
                    num_replicas=args.world_size,
                    rank=rank)
            ),
        )
"""


class TestSamplerDatasetMismatchWrappedDataset:
    """sampler-dataset-mismatch: a sampler over the dataset the loader's dataset wraps draws indices of the
    inner one; whether the wrapper has its length the file does not show: a warning, at the sampler."""

    verdict = "sampler-dataset-mismatch"
    rule = "sampler-dataset-mismatch"

    def test_sibling_the_wrapped_dataset_is_a_warning_at_the_sampler(self):
        assert found(WRAPPED.replace("OVER", "trainset"), self.rule) == [(15, "warning")]

    def test_sibling_a_subset_of_it_stays_an_error(self):
        code = WRAPPED.replace("dataset=CustomisedDataset(trainset,", "dataset=Subset(trainset,")
        assert found(code.replace("OVER", "trainset"), self.rule) == [(9, "error")]

    def test_sibling_another_dataset_is_a_warning(self):
        # which of the two is longer the file does not show (lintA22, lint heldout20 u015)
        assert found(WRAPPED.replace("OVER", "testset"), self.rule) == [(9, "warning")]

    def test_control_the_sampler_over_the_wrapper_is_not_reported(self):
        code = WRAPPED.replace("dataset=CustomisedDataset(trainset,", "dataset=wrapped,").replace(
            "        engine =", "        wrapped = CustomisedDataset(trainset)\n        engine =")
        code = code.replace('os.path.join(args.data_root, "detections/train2015"),\n', "").replace(
            "human_idx=49,\n                ), collate_fn", "collate_fn")
        assert found(code.replace("OVER", "wrapped"), self.rule) == []


# fredzzhang/pvic-like learner set-up (lint heldout19 u043): the DDP wrapper is discarded at once, and the
# bare model goes to a Learner of another module that runs the training
LEARNER = """
    import torch
    from utils.trn_utils import Learner

    def learner_init(uid, cfg, data, mdl):
        cur_device = torch.cuda.current_device()
        mdl = mdl.to(device=cur_device)
        if cfg.num_gpus > 1:
            mdl = torch.nn.parallel.DistributedDataParallel(
                module=mdl,
                device_ids=[cur_device],
            )MODULE
        learn = Learner(uid=uid, data=data, mdl=mdl, cfg=cfg)
        learn.fit(epochs=cfg.train.epochs, lr=cfg.train.lr)
        STEP
"""


class TestDataparallelUnwrappedAtOnceHandedOn:
    """dataparallel-unwrapped-at-once: with DDP, an error only where the file runs the backward pass
    itself; a model handed to another module's trainer is a warning (that trainer may wrap it again)."""

    verdict = "dataparallel-unwrapped-at-once"
    rule = "dataparallel-unwrapped-at-once"

    def test_sibling_handed_to_another_modules_learner_is_a_warning(self):
        assert found(LEARNER.replace("MODULE", ".module").replace("STEP", ""), self.rule) == [(8, "warning")]

    def test_sibling_the_file_backpropagates_is_an_error(self):
        code = LEARNER.replace("MODULE", ".module").replace("STEP", "loss = mdl(data).sum()\n        loss.backward()")
        assert found(code, self.rule) == [(8, "error")]

    def test_control_the_wrapper_kept_is_not_reported(self):
        assert found(LEARNER.replace("MODULE", "").replace("STEP", ""), self.rule) == []


# KevinWorkSpace MS-G3D-style processor (lint heldout19 u030): main() writes the --local_rank it parsed into
# RANK before anything reads it; the processor then reads RANK as its device
RANK_WRITTEN = """
    import os
    import torch
    import torch.distributed as dist

    class Processor:
        def _init_dist_pytorch(self, backend, **kwargs):
            dist.init_process_group(backend=backend, **kwargs)

        def load_model(self):
            rank = int(os.environ['RANK'])
            self._model_full.to(rank)

    def main():
        arg = parser.parse_args()
        os.environ['RANK'] = WRITTEN
        processor = Processor(arg)
        processor.start()
"""


class TestDeviceFromGlobalRankRankWritten:
    """device-from-global-rank: RANK this file writes from the local rank is the local rank when it is read."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_control_rank_written_from_the_local_rank_is_not_reported(self):
        assert found(RANK_WRITTEN.replace("WRITTEN", "str(arg.local_rank)"), self.rule) == []

    def test_sibling_rank_written_from_a_computed_rank_is_reported(self):
        code = RANK_WRITTEN.replace("WRITTEN", "str(arg.node_rank * arg.gpus + arg.gpu)")
        assert found(code, self.rule) == [(11, "warning")]

    def test_sibling_rank_never_written_is_reported(self):
        code = RANK_WRITTEN.replace("        os.environ['RANK'] = WRITTEN\n", "")
        assert found(code, self.rule) == [(11, "warning")]


# thuml-style spawned fine-tuning worker (lint heldout19 u015): the test loader built at the end and read
# by one call of an imported `test`; (u022) one `evaluate_model(model.module, test_loader, ...)`
READ_ONCE = """
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader
    from procedures import train, test

    def main(rank, cli_args):
        test_dataloader = DataLoader(tokenized_test,
                                     num_workers=4,
                                     batch_size=cli_args.batch_size,
                                     shuffle=True)
        USE

    if __name__ == "__main__":
        mp.spawn(main, args=(cli_args,), nprocs=2)
"""


class TestSpawnNumWorkersEvaluatedOnce:
    """spawn-num-workers: a loader handed once, outside any loop, to an evaluation (test, evaluate, eval_fn)
    is read once: its workers start once either way."""

    verdict = "spawn-num-workers"
    rule = "spawn-num-workers"

    def test_control_one_imported_test_by_keyword_is_not_reported(self):
        code = READ_ONCE.replace("USE", "test(model=model, test_dataloader=test_dataloader, cuda_rank=rank)")
        assert found(code, self.rule) == []

    def test_control_one_evaluate_model_is_not_reported(self):
        code = READ_ONCE.replace("USE", "results = evaluate_model(model.module, test_dataloader, rank)")
        assert found(code, self.rule) == []

    def test_sibling_one_imported_train_is_reported(self):
        code = READ_ONCE.replace("USE", "train(model, test_dataloader, cli_args.epochs)")
        assert found(code, self.rule) == [(7, "warning")]

    def test_sibling_an_evaluation_every_epoch_is_reported(self):
        code = READ_ONCE.replace("USE", "for epoch in range(10):\n            test(model, test_dataloader)")
        assert found(code, self.rule) == [(7, "warning")]


class TestRankFromLocalRankRankWritten:
    """rank-from-local-rank: RANK written from the local rank before an env:// group reads it is the local
    rank given as the global one, said at the write."""

    verdict = "rank-from-local-rank"
    rule = "rank-from-local-rank"

    def test_sibling_rank_written_from_the_local_rank_is_a_warning_at_the_write(self):
        assert found(RANK_WRITTEN.replace("WRITTEN", "str(arg.local_rank)"), self.rule) == [(15, "warning")]

    def test_control_rank_written_from_a_computed_rank_is_not_reported(self):
        code = RANK_WRITTEN.replace("WRITTEN", "str(arg.node_rank * arg.gpus + arg.local_rank)")
        assert found(code, self.rule) == []

    def test_control_a_group_given_its_rank_is_not_reported_at_the_write(self):
        code = RANK_WRITTEN.replace("WRITTEN", "str(arg.local_rank)").replace(
            "backend=backend, **kwargs", "backend=backend, rank=self.rank, world_size=self.world_size")
        assert found(code, self.rule) == []


# KevinWorkSpace/Stronger-yolo-pytorch main_dist.py (lint heldout19 u036): the trainer mp.spawn starts and
# the pruning tester another module starts meet on the same loopback rendezvous, one machine's GPUs each
TWO_WORKERS = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def main(local_rank, ngpus_pernode, args, avail_port):
        dist.init_process_group(backend='nccl', init_method='tcp://127.0.0.1:{}'.format(avail_port), world_size=ngpus_pernode, rank=local_rank)
        torch.cuda.set_device(local_rank)

    def main_worker(local_rank, ngpus_pernode, args, net, child_conn, avail_port, cal_bn=False):
        dist.init_process_group(backend='nccl', init_method='ADDRESS'.format(avail_port), world_size=ngpus_pernode, rank=local_rank)
        torch.cuda.set_device(local_rank)

    if __name__ == '__main__':
        port = pick_avail_port()
        mp.spawn(main, nprocs=cfg.ngpu, args=(cfg.ngpu, cfg, port))
"""


class TestRankFromLocalRankSameRendezvous:
    """rank-from-local-rank: a worker started elsewhere whose group is the very rendezvous of a worker this
    file starts on one machine is the same one-machine design."""

    verdict = "rank-from-local-rank"
    rule = "rank-from-local-rank"

    def test_control_the_twin_of_a_spawned_one_machine_group_is_not_reported(self):
        assert found(TWO_WORKERS.replace("ADDRESS", "tcp://127.0.0.1:{}"), self.rule) == []

    def test_sibling_twins_this_file_does_not_start_are_both_reported(self):
        code = TWO_WORKERS.replace("ADDRESS", "tcp://127.0.0.1:{}").replace(
            "mp.spawn(main, nprocs=cfg.ngpu, args=(cfg.ngpu, cfg, port))", "launch(main, cfg, port)")
        assert found(code, self.rule) == [(6, "warning"), (10, "warning")]


class TestRankFromLocalRankRankWrittenOneNode:
    """rank-from-local-rank: RANK written from the local rank beside WORLD_SIZE written as this machine's GPU
    count (lint heldout19 u009's init_ddp) is one node by construction."""

    verdict = "rank-from-local-rank"
    rule = "rank-from-local-rank"

    def test_control_world_size_written_as_the_gpu_count_is_not_reported(self):
        code = RANK_WRITTEN.replace("WRITTEN", "str(arg.local_rank)\n        os.environ['WORLD_SIZE'] = str(torch.cuda.device_count())")
        assert found(code, self.rule) == []

    def test_sibling_world_size_written_from_the_command_line_is_reported(self):
        code = RANK_WRITTEN.replace("WRITTEN", "str(arg.local_rank)\n        os.environ['WORLD_SIZE'] = str(arg.world_size)")
        assert found(code, self.rule) == [(15, "warning")]


# PEDRA-style gloo trainer (lint heldout19 u065): MASTER_ADDR/PORT written, but the group meets at a file path
FILE_STORE = """
    import os
    import torch.distributed as dist
    from torch.multiprocessing import spawn

    def init_process(rank, size, fn, backend='gloo'):
        os.environ['MASTER_ADDR'] = 'localhost'
        os.environ['MASTER_PORT'] = '2568'
        dist.init_process_group(backend, rank=rank, world_size=size, init_method=METHOD)
        fn(rank, size)

    if __name__ == '__main__':
        spawn(init_process, args=(4, run), nprocs=4, join=True)
"""


class TestHardcodedMasterPortOwnRendezvous:
    """hardcoded-master-port: a port no group reads (every group names its own rendezvous) is nobody's."""

    verdict = "hardcoded-master-port"
    rule = "hardcoded-master-port"

    def test_control_a_file_store_group_is_not_reported(self):
        assert found(FILE_STORE.replace("METHOD", "'file:F:/Projects/PEDRA/sharedfiles'"), self.rule) == []

    def test_sibling_an_env_group_is_reported(self):
        assert found(FILE_STORE.replace("METHOD", "'env://'"), self.rule) == [(7, "warning")]

    def test_sibling_a_file_store_group_beside_a_read_of_the_port_is_reported(self):
        code = FILE_STORE.replace("METHOD", "'file:///tmp/store'").replace(
            "        fn(rank, size)", "        print(os.environ['MASTER_PORT'])\n        fn(rank, size)")
        assert found(code, self.rule) == [(7, "warning")]


# forest-style poisoning trainer (lint heldout19 u061): empty_cache() at the top, CUDA_VISIBLE_DEVICES after it
EMPTY_CACHE = """
    import os
    import torch

    torch.backends.cudnn.benchmark = BENCHMARK
    CALL
    args = forest.options().parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = "3,0,2"
"""


class TestCudaVisibleDevicesLateNoInit:
    """cuda-visible-devices-late: `torch.cuda.empty_cache()` returns at once before CUDA is initialised."""

    verdict = "cuda-visible-devices-late"
    rule = "cuda-visible-devices-late"

    def test_control_after_empty_cache_is_not_reported(self):
        assert found(EMPTY_CACHE.replace("CALL", "torch.cuda.empty_cache()"), self.rule) == []

    def test_sibling_after_device_count_is_reported(self):
        assert found(EMPTY_CACHE.replace("CALL", "n = torch.cuda.device_count()"), self.rule) == [(7, "warning")]


# a CIFAR trainer (lint heldout19 u044): rank 0 makes the folder in the distributed arm, the plain run in the `else`
DIST_SWITCH = """
    import os
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def main_worker(gpu, ngpus_per_node, args):
        if args.dist:
            dist.init_process_group(backend='nccl', init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
            if args.rank == 0:
                if not os.path.isdir(args.output_dir):
                    os.makedirs(args.output_dir)
            dist.barrier()
        else:
            MAKE

    if __name__ == '__main__':
        mp.spawn(main_worker, nprocs=4, args=(4, args))
"""


class TestMkdirRaceAllRanksDistSwitch:
    """mkdir-race-all-ranks: the `else` of `if args.dist:` is the plain run's one process."""

    verdict = "mkdir-race-all-ranks"
    rule = "mkdir-race-all-ranks"

    def test_control_the_else_of_the_dist_switch_is_not_reported(self):
        code = DIST_SWITCH.replace("MAKE", "if not os.path.isdir(args.output_dir):\n                os.makedirs(args.output_dir)")
        assert found(code, self.rule) == []

    def test_sibling_the_same_after_the_switch_is_reported(self):
        code = DIST_SWITCH.replace("MAKE", "pass").replace(
            "    if __name__", "        if not os.path.isdir(args.log_dir):\n            os.makedirs(args.log_dir)\n\n    if __name__")
        assert found(code, self.rule) == [(16, "warning")]


# an RL ensemble trainer (lint heldout19 u048): each rank's save_dir is made its own before the saves
ENSEMBLE = """
    import os
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def init_process(rank, size, fn, args):
        dist.init_process_group('gloo', rank=rank, world_size=size)
        fn(args, rank, size)

    def main(args, rank, size):
        OWN
        for j in range(args.updates):
            save_path = os.path.join(args.save_dir, args.algo)
            torch.save([actor_critic], os.path.join(save_path, args.env_name + ".pt"))

    if __name__ == "__main__":
        mp.set_start_method("spawn")
        for rank in range(4):
            p = mp.Process(target=init_process, args=(rank, 4, main, args))
            p.start()
"""


class TestSaveAllRanksFolderPerRank:
    """save-all-ranks: a path built from a namespace attribute the function set from the rank is per rank."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_control_the_folder_set_from_the_rank_is_not_reported(self):
        code = ENSEMBLE.replace("OWN", "args.save_dir = os.path.join(args.save_dir, f'ensemble_{rank}')")
        assert found(code, self.rule) == []

    def test_sibling_the_folder_set_from_the_seed_is_reported(self):
        code = ENSEMBLE.replace("OWN", "args.save_dir = os.path.join(args.save_dir, f'seed_{args.seed}')")
        assert found(code, self.rule) == [(14, "warning")]


# a DTW trainer (lint heldout19 u047): get_args() returns the parsed flags, the main block binds them; the local
# rank is computed from RANK and never read from --local-rank
GET_ARGS = """
    import argparse
    import torch
    import torch.distributed as dist

    def get_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--local-rank", type=int, help="Local rank. Necessary for torch.distributed.launch.")
        return parser.parse_args()

    def main(args):
        dist.init_process_group("nccl")
        local_rank = dist.get_rank() % torch.cuda.device_count()
        torch.cuda.set_device(local_rank)

    if __name__ == "__main__":
        MAIN
"""


class TestLocalRankArgReturnedToThisFile:
    """local-rank-arg: flags a function of this file returns to a name of this file are in view: never read,
    the flag is harmless."""

    verdict = "local-rank-arg"
    rule = "local-rank-arg"

    def test_control_returned_to_a_name_of_this_file_is_not_reported(self):
        assert found(GET_ARGS.replace("MAIN", "args = get_args()\n        main(args)"), self.rule) == []

    def test_sibling_returned_to_a_caller_not_in_this_file_is_reported(self):
        assert found(GET_ARGS.replace("MAIN", "pass"), self.rule) == [(7, "warning")]


# a glance-and-focus video trainer (lint heldout19 u046, the ImageNet example's layout): the checkpoint reads
# the bare model's parts only under `isinstance(model, GFV)`
OWN_CLASS = """
    import torch

    def main_worker(gpu, args, model):
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
        optimizer = torch.optim.SGD(model.module.glancer.parameters(), lr=0.1)
        if TEST:
            torch.save({'model_state_dict': model.state_dict(), 'glancer': model.glancer.state_dict()}, "ckpt.pth")
"""


class TestWrapperMethodCallOwnClassTested:
    """wrapper-method-call: under `if isinstance(model, GFV):` the model is the bare class, not the wrapper."""

    verdict = "wrapper-method-call"
    rule = "wrapper-method-call"

    def test_control_under_isinstance_of_the_models_class_is_not_reported(self):
        assert found(OWN_CLASS.replace("TEST", "isinstance(model, GFV)"), self.rule) == []

    def test_sibling_under_another_test_is_reported(self):
        assert [line for line, _ in found(OWN_CLASS.replace("TEST", "args.save"), self.rule)] == [7]


class TestSaveDdpWrapperOwnClassTested:
    """save-ddp-wrapper: under `if isinstance(model, GFV):` the state dict saved is the bare model's."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_control_under_isinstance_of_the_models_class_is_not_reported(self):
        assert found(OWN_CLASS.replace("TEST", "isinstance(model, GFV)"), self.rule) == []

    def test_sibling_under_isinstance_of_the_wrapper_class_is_reported(self):
        code = OWN_CLASS.replace("TEST", "isinstance(model, torch.nn.parallel.DistributedDataParallel)")
        assert [line for line, _ in found(code, self.rule)] == [7]


# a Frontier DDP trainer (lint heldout19 u002): the checkpoint method's body pasted at the def's depth,
# the method called under `rank == 0`
LOST_BODY = """
    import os
    import torch
    import torch.distributed as dist

    class Trainer:
        def _save_checkpoint(self, epoch):
        \"\"\"Only the underlying module's state_dict is saved.\"\"\"
        PATH = os.path.join(CHECKPOINT_DIR, f"checkpoint_epoch{epoch}.pt")
        torch.save(self.model.module.state_dict(), PATH)

        def train(self, max_epochs, rank):
            dist.init_process_group("nccl")
            for epoch in range(max_epochs):
                TEST
                    self._save_checkpoint(epoch)

    Trainer().train(10, int(os.environ["RANK"]))
"""


class TestSaveAllRanksBodyPastedAtDefDepth:
    """save-all-ranks: a method whose body lost its indentation is read as that method, guard and all."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_control_the_method_called_on_rank_0_is_not_reported(self):
        assert found(LOST_BODY.replace("TEST", "if rank == 0:"), self.rule) == []

    def test_sibling_a_save_below_the_class_after_a_cut_method_is_reported(self):
        code = textwrap.dedent(LOST_BODY.replace("TEST", "if rank == 0:")).replace(
            '    """Only the underlying', 'dist.init_process_group("nccl")\n"""Only the underlying').replace(
            "    PATH = ", "PATH = ").replace("    torch.save(self.model", "torch.save(model")
        assert found(code, self.rule) == [(10, "warning")]


# a hGRU trainer (lint heldout19 u023): init_process's backend defaults to gloo, the spawned train() asks for NCCL
CHOSEN = """
    import os, torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def init_process(rank, size, backend='gloo'):
        os.environ['MASTER_ADDR'] = '127.0.0.1'
        dist.init_process_group(backend, rank=rank, world_size=size)

    def train(rank, world_size):
        init_process(rank, world_size, BACKEND)
        dist.all_reduce(torch.ones(1).cuda())

    if __name__ == "__main__":
        mp.spawn(train, args=(2,), nprocs=2)
"""


class TestNcclNoSetDeviceChosenAtTheCall:
    """nccl-no-set-device: where the helper's caller picks NCCL, that call is a place of the same cause."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_the_helper_called_for_gloo_is_not_reported(self):
        assert found(CHOSEN.replace("BACKEND", '"gloo"'), self.rule) == []

    def test_sibling_the_helper_called_for_nccl_names_that_call(self):
        diagnostics = [d for d in engine.lint_source(textwrap.dedent(CHOSEN.replace("BACKEND", '"nccl"')).lstrip("\n"),
                                                     "train.py") if d.rule == self.rule]
        assert [(d.line, d.also) for d in diagnostics] == [(7, (10,))]


# an MS-G3D-style processor (lint heldout19 u030): the weights and the resume state loaded without map_location
LOADS = """
    import torch
    import torch.distributed as dist

    def load_model(model, arg):
        weights = torch.load(arg.weights)
        model.load_state_dict(weights)

    def load_optimizer(optimizer, arg):
        optimizer.load_state_dict(torch.load(arg.checkpoint, MAP)['optimizer_states'])

    dist.init_process_group("nccl")
    load_model(model, arg)
    load_optimizer(optimizer, arg)
"""


class TestTorchLoadNoMapLocationOneFile:
    """torch-load-no-map-location: the loads of one file are one diagnostic at the first, naming the others."""

    verdict = "torch-load-no-map-location"
    rule = "torch-load-no-map-location"

    def test_control_the_mapped_load_is_not_named(self):
        diagnostics = [d for d in engine.lint_source(textwrap.dedent(LOADS.replace("MAP", "map_location='cpu'"))
                                                     .lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [(d.line, d.also) for d in diagnostics] == [(5, ())]

    def test_sibling_two_unmapped_loads_are_one_diagnostic(self):
        diagnostics = [d for d in engine.lint_source(textwrap.dedent(LOADS.replace(", MAP", "")).lstrip("\n"),
                                                     "train.py") if d.rule == self.rule]
        assert [(d.line, d.also) for d in diagnostics] == [(5, (9,))]


# a PIP-Net trainer (lint heldout19 u054): the checkpoint saved at four places of one training function
SAVES = """
    import os
    import torch
    import torch.distributed as dist

    def run(net, args):
        dist.init_process_group("nccl")
        for epoch in range(args.epochs):
            torch.save(net.state_dict(), os.path.join(args.log_dir, 'net_trained'))
            if epoch % 30 == 0:
                torch.save(net.state_dict(), os.path.join(args.log_dir, 'net_trained_%s' % epoch))
        SECOND

    run(net, args)
"""


class TestSaveAllRanksOnePerFunction:
    """save-all-ranks: the saves of one function on every rank are one missing guard, said at the first; the
    two arms of an `if` are alternatives, each said."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_control_a_save_on_rank_0_is_not_named(self):
        code = SAVES.replace("SECOND", "if dist.get_rank() == 0:\n            torch.save(net.state_dict(), 'last')")
        diagnostics = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [(d.line, d.also) for d in diagnostics] == [(8, (10,))]

    def test_sibling_the_else_arm_is_its_own(self):
        code = SAVES.replace("SECOND", "else:\n            torch.save(net.state_dict(), 'last')").replace(
            "        for epoch in range(args.epochs):\n", "        if args.epochs > 1:\n")
        diagnostics = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [(d.line, d.also) for d in diagnostics] == [(8, (10,)), (12, ())]
