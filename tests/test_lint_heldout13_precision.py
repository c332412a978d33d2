"""lint v4, issue 41: the false diagnostics of lint heldout13 (61 scripts from the
`train_dist.py` / `ddp.py` listings, retired to development), read one by one. Where the
rule was wrong or said more than the file decides, its class is fixed (the launcher the
file is itself, the run's own scratch checkpoint, a test the `if` above made false); each
control is a small program written from the real lines (repository and commit in the
comment above it) beside the sibling that must still get the diagnostic. Each case: the
rule, exactly the (line, severity) pairs it must give (empty: silent), the code."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/NicolasPCS/LION_necs train_dist.py@993a45a (lint heldout13 u009; u013, u037 the same
# launcher): the file starts one Process per GPU and gives each its local rank.
LION = """
        import argparse
        import torch
        from torch.multiprocessing import Process

        def main(args):
            torch.cuda.set_device(args.local_rank)

        if __name__ == '__main__':
            parser = argparse.ArgumentParser()
            parser.add_argument('--local_rank', type=int, default=0, help='rank of process in the node')
            args = parser.parse_args()
            START
        """

# github.com/LuckyGirl-XU/STGN train_dist.py (lint heldout13 u004; u005, u011, u036 the TGL
# trainer in other repositories): the path is stamped with the run's start, the GPU workers save and
# load it on the scheduler's word.
TGL = """
        import time
        import torch

        if args.local_rank == 0:
            path_saver = [PATH]
        else:
            path_saver = [None]
        torch.distributed.broadcast_object_list(path_saver, src=0)
        path_saver = path_saver[0]
        model = torch.nn.parallel.DistributedDataParallel(Net().cuda(), device_ids=[args.local_rank])
        while True:
            state = [None]
            torch.distributed.scatter_object_list(state, [None] * 3, src=2)
            if state[0] == 2:
                torch.save(model.state_dict(), path_saver)
            elif state[0] == 3:
                model.load_state_dict(torch.load(path_saver, map_location='cuda:0'))
        """

# github.com/Einsturing/rightnn ddp.py@715706a (lint heldout13 u057): the best loss updated, then the
# same test written again around the save: false on both paths, the save never runs.
BEST = """
        import torch
        import torch.distributed as dist

        def val(model, epoch, test_loss):
            global min_loss
            if test_loss < min_loss:
                min_loss = test_loss
            AGAIN
                torch.save(model, "best.pkl")

        if __name__ == '__main__':
            dist.init_process_group("nccl", init_method='env://')
            model = torch.nn.parallel.DistributedDataParallel(Net().cuda(), device_ids=[0])
            min_loss = 1000
            for epoch in range(10):
                val(model, epoch, evaluate(model))
        """

# github.com/CodeMonk123/torch_dist_demo ddp.py@e5b8a44 (lint heldout13 u053): two Processes started
# by hand, the group's size and rendezvous handed in through **kwargs.
BY_HAND = """
        import torch.distributed as dist

        def main(**kwargs):
            local_rank = kwargs['local_rank']
            world_size = kwargs['world_size']
            init_method = kwargs['init_method']
            dist.init_process_group(backend='nccl', world_size=world_size, rank=local_rank, init_method=init_method)

        if __name__ == '__main__':
            from multiprocessing import Process
            p_0 = Process(target=main, kwargs={'local_rank': 0, 'world_size': SIZE, 'init_method': METHOD})
            p_1 = Process(target=main, kwargs={'local_rank': 1, 'world_size': SIZE, 'init_method': METHOD})
            p_0.start()
            p_1.start()
        """

# github.com/<BasicSR-style IR-SDE trainer> train_dist.py (lint heldout13 u021): tb_logger made on
# rank <= 0 only, read under the tensorboard option, then closed on every rank.
TB_LOGGER = """
        import torch
        from torch.utils.tensorboard import SummaryWriter

        def main(opt, rank):
            if rank <= 0:
                tb_logger = SummaryWriter(log_dir="log")
            for step in range(10):
                if opt["use_tb_logger"]:
                    tb_logger.add_scalar("psnr", 1.0, step)
            CLOSE

        if __name__ == "__main__":
            main({}, 0)
        """

# lint dev7 u026 (a torchrun CIFAR trainer, read in this pass over the rule's other parts): the best
# model saved under `if args.rank == 0:` in the epoch loop, loaded back under the same test after it.
BEST_RELOADED = """
        import torch
        import torch.distributed as dist

        def main(args, model):
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
            best = 0.0
            for epoch in range(args.epochs):
                acc = evaluate(model)
                if args.rank == 0:
                    if acc > best:
                        best = acc
                        torch.save(model.state_dict(), "best.pt")
            if TEST:
                model.load_state_dict(torch.load("best.pt"))
            dist.destroy_process_group()
        """

CASES = {
    "control: the best model loaded back under the save's rank test, written again": (
        "save-ddp-wrapper", set(), BEST_RELOADED.replace("TEST", "args.rank == 0")),
    "sibling: loaded under a resume option: earlier runs' checkpoints": (
        "save-ddp-wrapper", {(12, "warning")}, BEST_RELOADED.replace("TEST", "args.resume")),
    "control: the file starts its Processes and sets each one's local rank": (
        "local-rank-arg", set(), LION.replace("START", "for rank in range(2):\n"
                                              "                args.local_rank = rank\n"
                                              "                Process(target=main, args=(args,)).start()")),
    "sibling: the file spawns, but makes the local rank from the flag (the ImageNet node rank)": (
        "local-rank-arg", {(10, "warning")}, LION.replace("START", "for rank in range(2):\n"
                                                          "                args.local_rank = args.local_rank * 2 + rank\n"
                                                          "                Process(target=main, args=(args,)).start()")),
    "sibling: the same flag, no launcher of the file's own": (
        "local-rank-arg", {(10, "warning")}, LION.replace("START", "main(args)")),
    "control: a scratch checkpoint stamped with the run's time, loaded back into the wrapper": (
        "save-ddp-wrapper", set(), TGL.replace("PATH", "'models/{}_{}.pkl'.format(args.data, time.time())")),
    "sibling: the same save and load at a fixed path: earlier runs' checkpoints are read": (
        "save-ddp-wrapper", {(15, "warning")}, TGL.replace("PATH", "'models/best.pkl'")),
    "control (save-all-ranks): the save under the test the `if` above made false": (
        "save-all-ranks", set(), BEST.replace("AGAIN", "if test_loss < min_loss:")),
    "control (save-ddp-wrapper): the same save, never run": (
        "save-ddp-wrapper", set(), BEST.replace("AGAIN", "if test_loss < min_loss:")),
    "sibling (save-all-ranks): `<=`, true again where the loss just improved": (
        "save-all-ranks", {(9, "warning")}, BEST.replace("AGAIN", "if test_loss <= min_loss:")),
    "sibling (save-ddp-wrapper): the fix's test": (
        "save-ddp-wrapper", {(9, "warning")}, BEST.replace("AGAIN", "if test_loss == min_loss:")),
    "control: Processes started by hand, two ranks on the loopback": (
        "rank-from-local-rank", set(), BY_HAND.replace("SIZE", "2").replace("METHOD", "'tcp://localhost:9999'")),
    "control: the same on a file store, any size": (
        "rank-from-local-rank", set(), BY_HAND.replace("SIZE", "16").replace("METHOD", "'file:///tmp/init'")),
    "sibling: the size and address from the command line": (
        "rank-from-local-rank", {(7, "warning")}, BY_HAND.replace("SIZE", "args.n").replace("METHOD", "args.url")),
    "sibling: a read the file decides (every rank closes it): the error there": (
        "undefined-name", {(10, "error")}, TB_LOGGER.replace("CLOSE", "tb_logger.close()")),
    "sibling: only the read under the option: a warning naming it": (
        "undefined-name", {(9, "warning")}, TB_LOGGER.replace("CLOSE", "pass")),
    "control: made on every rank": (
        "undefined-name", set(), TB_LOGGER.replace("if rank <= 0:", "tb_logger = None\n    if rank <= 0:").replace(
            "CLOSE", "tb_logger.close()")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_heldout13_precision_verdicts(name):
    rule, expected, code = CASES[name]
    text = textwrap.dedent(code).lstrip("\n")
    found = [d for d in engine.lint_source(text, "train.py") if d.rule == rule]
    assert {(d.line, d.severity) for d in found} == expected, [(d.line, d.severity, d.message) for d in found]
