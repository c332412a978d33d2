"""Controls and siblings for lintA22 (issue 41): lint errors only where the file decides the crash or hang,
followed through assignments and parameters, and warnings said once per cause. Each program is a few lines
of a lint heldout20 script (source in the comment above it), linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


# PrincessHakuryu/MACE-SOYO run_ddp.py (lint heldout20 u033): the training loop runs the DDP wrapper and backpropagates;
# the validation loop runs the bare module on purpose (unequal shards must not enter DDP's forward)
VALIDATION_ON_THE_MODULE = """
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(config, train_loader, valid_loader, optimizer, criterion, local_rank, epoch_num):
        efs_model = build_model(config).to(local_rank)
        ddp_model = DDP(
            efs_model,
            device_ids=[local_rank],
            output_device=local_rank,
            find_unused_parameters=False,
        )
        raw_model = ddp_model.module
        for epoch in range(epoch_num):
            ddp_model.train()
            for batch_index, data in enumerate(train_loader):
                optimizer.zero_grad(set_to_none=True)
                predictions = TRAINED(data)
                loss_sums, label_counts = efs_loss(predictions, data, criterion)
                loss = loss_sums.sum()
                loss.backward()
                optimizer.step()
            efs_model.eval()
            # Unequal validation shards must not enter DDP forward or per-batch collectives.
            for batch_index, data in enumerate(valid_loader):
                predictions = efs_model(data)
                loss_sums, label_counts = efs_loss(predictions, data, criterion)
"""


class TestDdpForwardBypassedValidationLoop:
    """ddp-forward-bypassed: the bare module's forward counts only where its value reaches a backward through
    the bindings that reach that backward; the training loop binds the same names again from the wrapper."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_control_the_validation_loop_on_the_module_is_not_reported(self):
        assert found(VALIDATION_ON_THE_MODULE.replace("TRAINED", "ddp_model"), self.rule) == []

    def test_sibling_the_training_loop_on_the_module_is_an_error(self):
        assert found(VALIDATION_ON_THE_MODULE.replace("TRAINED", "efs_model"), self.rule) == [(16, "error")]

    def test_sibling_a_loss_kept_in_a_dict_is_still_followed(self):
        # the validation forward's outputs put in a dict, backpropagated after the loop: the bindings do not
        # show what the dict holds, so the value is taken to reach the backward
        head, _, _ = VALIDATION_ON_THE_MODULE.replace("TRAINED", "ddp_model").rpartition("                predictions")
        code = head.replace("            efs_model.eval()\n", "            efs_model.eval()\n            outs = {}\n") + (
            "                outs[batch_index] = efs_model(data)\n"
            "            loss = sum(outs.values())\n"
            "            loss.backward()\n")
        assert found(code, self.rule) == [(25, "error")]


# Shane-Luchi/Strokes train_parallel.py (lint heldout20 u020): a Qwen2-VL model wrapped in DDP at the top of a
# torchrun script, and the test loop's predict() calls generate on what it is handed
HANDED_THE_WRAPPER = """
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = Qwen2VLForConditionalGeneration.from_pretrained("/home/LLMs/Qwen/Qwen2-VL-2B-Instruct/")
    model = model.to(local_rank)
    model = DDP(model, device_ids=[local_rank])

    def predict(messages, model, max_new_tokens=64):
        inputs = processor(text=[messages], padding=True, return_tensors="pt")
        generated_ids = model.generate(**inputs, max_new_tokens=max_new_tokens)
        return generated_ids

    class CustomTrainer(Trainer):
        def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
            for example in eval_dataset:
                pred_output = predict(example["messages"], self.model)

    for item in test_dataset:
        response = predict(item["messages"], HANDED)
"""


class TestWrapperMethodCallHandedAsParameter:
    """wrapper-method-call: a parameter the function takes as it is, handed a certain DDP wrapper by a call of
    the file, raises at the read."""

    verdict = "wrapper-method-call"
    rule = "wrapper-method-call"

    def test_sibling_the_wrapper_handed_is_an_error(self):
        assert found(HANDED_THE_WRAPPER.replace("HANDED", "model"), self.rule) == [(9, "error")]

    def test_control_the_module_handed_is_not_reported(self):
        assert found(HANDED_THE_WRAPPER.replace("HANDED", "model.module"), self.rule) == []

    def test_control_the_function_unwrapping_it_is_not_reported(self):
        code = HANDED_THE_WRAPPER.replace("HANDED", "model").replace(
            "        inputs = processor(", "        model = getattr(model, 'module', model)\n        inputs = processor(")
        assert found(code, self.rule) == []

    def test_sibling_handed_under_a_setting_is_a_warning(self):
        code = HANDED_THE_WRAPPER.replace("HANDED", "model").replace(
            "    for item in test_dataset:\n        response",
            "    for item in test_dataset:\n        if args.predict:\n            response")
        assert found(code, self.rule) == [(9, "warning")]


# XMUDM/GeoNet run_ddp.py (lint heldout20 u042): each launched process picks its own free port, and the
# world size is the GPU count
GPU_COUNT_WORLD = """
    import os
    import torch
    import torch.distributed as dist

    def find_free_port():
        import socket
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(('', 0))
            return s.getsockname()[1]

    def main(world_size, config):
        os.environ['MASTER_PORT'] = str(find_free_port())
        dist.init_process_group(backend='nccl', init_method="tcp://127.0.0.1:" + os.environ['MASTER_PORT'],
                                world_size=world_size, rank=RANK)
        torch.cuda.set_device(config['local_rank'])

    if __name__ == '__main__':
        config = parse_args()
        WORLD_SIZE = torch.cuda.device_count()
        main(WORLD_SIZE, config)
"""


class TestMasterPortPerProcessGpuCount:
    """master-port-per-process: one process per GPU, each with its own rank, each picking a port: an error."""

    verdict = "master-port-per-process"
    rule = "master-port-per-process"

    def test_sibling_the_gpu_count_with_each_process_rank_is_an_error(self):
        assert found(GPU_COUNT_WORLD.replace("RANK", 'config["local_rank"]'), self.rule) == [(12, "error")]

    def test_control_a_literal_rank_stays_a_warning(self):
        # heldout3 m065: rank=0 beside world_size=num_gpus, one process claims the only rank it names
        assert found(GPU_COUNT_WORLD.replace("RANK", "0"), self.rule) == [(12, "warning")]


# NanboLi/MulMON train_parallel.py (lint heldout20 u015): the validation loader reads train_dataset with the sampler over val_dataset
VAL_LOADER = """
    import torch

    def train(rank, CFG):
        train_dataset = distributed_loader(CFG.DATA_ROOT, CFG.train_data_filename, num_slots=CFG.num_slots)
        val_dataset = distributed_loader(CFG.DATA_ROOT, CFG.test_data_filename, num_slots=CFG.num_slots)
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=CFG.world_size, rank=rank)
        val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset, num_replicas=CFG.world_size, rank=rank)
        train_dl = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=CFG.batch_size, sampler=train_sampler)
        val_dl = torch.utils.data.DataLoader(dataset=READ, batch_size=CFG.batch_size, sampler=val_sampler)
        return train_dl, val_dl
"""


class TestSamplerDatasetMismatchLengthsNotShown:
    """sampler-dataset-mismatch: two datasets whose lengths the file does not show are a warning (wrong data
    or IndexError, by which is longer); a Subset of the sampler's dataset is shorter by construction."""

    verdict = "sampler-dataset-mismatch"
    rule = "sampler-dataset-mismatch"

    def test_sibling_another_dataset_is_a_warning(self):
        assert found(VAL_LOADER.replace("READ", "train_dataset"), self.rule) == [(9, "warning")]

    def test_sibling_a_subset_of_the_samplers_dataset_is_an_error(self):
        code = VAL_LOADER.replace("READ", "torch.utils.data.Subset(val_dataset, range(10))")
        assert found(code, self.rule) == [(9, "error")]

    def test_control_the_same_dataset_is_not_reported(self):
        assert found(VAL_LOADER.replace("READ", "val_dataset"), self.rule) == []


# Angknpng/PCNet train_parallel.py (lint heldout20 u003): train() saves every tenth epoch, val() saves the best, on every
# rank; the save folder is made at the top and again in train()'s KeyboardInterrupt handler
TWO_FUNCTIONS = """
    import os
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend='nccl')
    save_path = opt.save_path
    if not os.path.exists(save_path):
        os.makedirs(save_path)

    def train(train_loader, model, optimizer, epoch, save_path):
        try:
            for i, (images, gts) in enumerate(train_loader, start=1):
                loss = model(images, gts)
                loss.backward()
                optimizer.step()
            if (epoch) % 10 == 0 and epoch >= 40:
                TRAIN_SAVE
        except KeyboardInterrupt:
            if not os.path.exists(save_path):
                os.makedirs(save_path)
            raise

    def val(test_loader, model, epoch, save_path):
        global best_mae
        mae = evaluate(test_loader, model)
        if mae < best_mae:
            best_mae = mae
            VAL_SAVE

    if __name__ == '__main__':
        for epoch in range(1, opt.epoch):
            train(train_loader, model, optimizer, epoch, save_path)
            val(test_loader, model, epoch, save_path)
"""
SAVE = "torch.save(model.module.state_dict(), save_path + 'HyperNet_epoch_{}.pth'.format(epoch))"


class TestSaveAllRanksOnePerFile:
    """save-all-ranks: the saves of one file on every rank are one missing guard, said once at the first."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_saves_in_two_functions_are_one_diagnostic(self):
        code = TWO_FUNCTIONS.replace("TRAIN_SAVE", SAVE).replace("VAL_SAVE", SAVE)
        assert found(code, self.rule) == [(17, "warning")]

    def test_control_saves_on_rank_0_are_not_reported(self):
        guarded = f"if dist.get_rank() == 0: {SAVE}"
        code = TWO_FUNCTIONS.replace("TRAIN_SAVE", guarded).replace("VAL_SAVE", guarded)
        assert found(code, self.rule) == []


class TestMkdirRaceAllRanksOnePerFile:
    """mkdir-race-all-ranks: the folders one file makes on every rank are one race, said once at the first."""

    verdict = "mkdir-race-all-ranks"
    rule = "mkdir-race-all-ranks"

    def test_sibling_the_top_and_a_handler_are_one_diagnostic(self):
        code = TWO_FUNCTIONS.replace("TRAIN_SAVE", "pass").replace("VAL_SAVE", "pass")
        assert found(code, self.rule) == [(8, "warning")]

    def test_control_exist_ok_is_not_reported(self):
        code = TWO_FUNCTIONS.replace("TRAIN_SAVE", "pass").replace("VAL_SAVE", "pass")
        assert found(code.replace("os.makedirs(save_path)", "os.makedirs(save_path, exist_ok=True)"), self.rule) == []


# agayonlombardo/pores4thought train_parallel.py (lint heldout20 u026, a DCGAN): both wrappers' state dicts saved at the end
TWO_WRAPPERS = """
    import torch
    import torch.nn as nn

    netG = nn.DataParallel(Generator(ngpu).to(device), list(range(ngpu)))
    netD = nn.DataParallel(Discriminator(ngpu).to(device), list(range(ngpu)))
    train(netG, netD)
    torch.save(SAVED_G, 'netG.pth')
    torch.save(SAVED_D, 'netD.pth')
"""


class TestSaveDdpWrapperOnePerFile:
    """save-ddp-wrapper: the state dicts of the wrappers one file saves are one cause, said once at the first."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_two_wrappers_saved_are_one_diagnostic(self):
        code = TWO_WRAPPERS.replace("SAVED_G", "netG.state_dict()").replace("SAVED_D", "netD.state_dict()")
        assert found(code, self.rule) == [(7, "warning")]

    def test_control_the_modules_saved_are_not_reported(self):
        code = TWO_WRAPPERS.replace("SAVED_G", "netG.module.state_dict()").replace("SAVED_D", "netD.module.state_dict()")
        assert found(code, self.rule) == []


# 500mhzClub/TinyAutoJEPA train_parallel.py (lint heldout20 u001): rank 0 validates the encoder the file
# unwrapped itself, under the test that wrapped it
UNWRAPPED_ON_RANK_0 = """
    import torch
    import torch.nn as nn

    def validate_encoder(encoder: nn.Module, val_loader, device: torch.device, epoch: int):
        encoder.eval()
        for i, (x1, _) in enumerate(val_loader):
            x1 = x1.to(device, non_blocking=True)
            z = encoder(x1)

    def main(rank, world_size, local_rank, device, val_loader, epochs):
        encoder = TinyEncoder().to(device)
        if world_size > 1:
            encoder = torch.nn.parallel.DistributedDataParallel(encoder, device_ids=[local_rank], output_device=local_rank)
        for epoch in range(epochs):
            if rank == 0:
                enc_mod = HANDED
                validate_encoder(enc_mod, val_loader, device, epoch + 1)
"""


class TestDdpForwardOnOneRankUnwrappedByTheFile:
    """ddp-forward-on-one-rank: `encoder.module if world_size > 1 else encoder`, under the test that wrapped it,
    is the bare module on both paths."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_control_the_files_own_unwrap_is_not_reported(self):
        assert found(UNWRAPPED_ON_RANK_0.replace("HANDED", "encoder.module if world_size > 1 else encoder"),
                     self.rule) == []

    def test_sibling_the_wrapper_handed_is_reported(self):
        assert found(UNWRAPPED_ON_RANK_0.replace("HANDED", "encoder"), self.rule) == [(17, "warning")]

    def test_sibling_an_unwrap_under_another_test_is_reported(self):
        code = UNWRAPPED_ON_RANK_0.replace("HANDED", "encoder.module if args.bare else encoder")
        assert found(code, self.rule) == [(17, "warning")]


# Angknpng/PCNet train_parallel.py (lint heldout20 u003): the pretrained weights loaded at the top of a script
# every rank runs, mapped to GPU 0
ONE_GPU_MAP = """
    import os
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend='nccl')
    local_rank = int(os.environ["LOCAL_RANK"])
    pretrained_weights = torch.load(opt.IHNmodel, map_location=MAPPED)
    for name, param in pretrained_weights.items():
        print(f"Pretrained weight {name} - mean: {param.mean()}, std: {param.std()}")
"""


class TestTorchLoadNoMapLocationOneGpu:
    """torch-load-no-map-location: a map_location naming one GPU as a literal crowds every rank onto it."""

    verdict = "torch-load-no-map-location"
    rule = "torch-load-no-map-location"

    def test_sibling_cuda_0_on_every_rank_is_reported(self):
        assert found(ONE_GPU_MAP.replace("MAPPED", "'cuda:0'"), self.rule) == [(7, "warning")]

    def test_control_the_process_own_gpu_is_not_reported(self):
        assert found(ONE_GPU_MAP.replace("MAPPED", 'f"cuda:{local_rank}"'), self.rule) == []

    def test_control_the_cpu_is_not_reported(self):
        assert found(ONE_GPU_MAP.replace("MAPPED", "'cpu'"), self.rule) == []


# Pragyanstha/SummerCamp2021 train_parallel.py (lint heldout20 u019): the wrappers rebound to `.train()` (which
# returns the module itself) and handed to train(), whose epoch checkpoint saves their state dicts
REBOUND_TRAIN = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(generator, discriminator, rank, epoch):
        if rank == 0:
            checkpoint = {'epoch': epoch}
            checkpoint['generator_state_dict'] = SAVED
            torch.save(checkpoint, f'checkpoint/epoch_{epoch}.pth')

    def main(rank, world_size):
        generator = Generator(dim=args.dim).to(f'cuda:{rank}')
        generator = DDP(generator, device_ids=[rank])
        generator = generator.train()
        for epoch in range(args.epoch):
            train(generator, discriminator, rank, epoch)
"""


class TestSaveDdpWrapperReboundToTrain:
    """save-ddp-wrapper: `generator = generator.train()` returns the wrapper itself."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_the_wrapper_rebound_to_train_is_reported(self):
        assert found(REBOUND_TRAIN.replace("SAVED", "generator.state_dict()"), self.rule) == [(7, "warning")]

    def test_control_its_module_saved_is_not_reported(self):
        assert found(REBOUND_TRAIN.replace("SAVED", "generator.module.state_dict()"), self.rule) == []


# alrivero/TATER train_parallel.py (lint heldout20 u027): the trainer module wrapped in DDP, and each batch handed to its own
# step through `.module`
OWN_STEP = """
    import torch

    def train(rank, world_size, config):
        trainer = TATERTrainerParallel(config).to(rank)
        trainer = torch.nn.parallel.DistributedDataParallel(trainer, device_ids=[rank])
        train_loader, val_loader, effective_seg_count = load_dataloaders_parallel(config, rank, world_size)
        for epoch in range(config.train.resume_epoch, config.train.num_epochs):
            for batch_idx, batch in tqdm(enumerate(train_loader), total=len(train_loader)):
                output = trainer.module.CALLED(batch, batch_idx, epoch, phase='train')
"""


class TestDdpForwardBypassedOwnStep:
    """ddp-forward-bypassed: `.module`'s own step handed the loader's batch, the wrapper never called there."""

    verdict = "ddp-forward-bypassed"
    rule = "ddp-forward-bypassed"

    def test_sibling_the_modules_step_on_each_batch_is_a_warning(self):
        assert found(OWN_STEP.replace("CALLED", "step"), self.rule) == [(9, "warning")]

    def test_control_a_visualisation_of_the_batch_is_not_reported(self):
        assert found(OWN_STEP.replace("CALLED", "create_visualizations"), self.rule) == []


# abelxiaoxing/PytorchMulti-GPUTraining ddp_train.py (lint heldout17 u008): the DDP model handed to the project's val_one_epoch on local rank 0 only
VAL_ON_RANK_0 = """
    import torch.nn as nn
    from utils import train_one_epoch, CALLED

    def main(local_rank, use_ddp, epochs, criterion, optimizer, train_loader, val_loader, device):
        model = Net().to(device)
        if use_ddp:
            model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
        for epoch in range(epochs):
            avg_train_loss = train_one_epoch(model, criterion, optimizer, train_loader, device)
            if local_rank == 0:
                avg_val_loss, val_accuracy = CALLED(model, criterion, val_loader, device)
"""


class TestDdpForwardOnOneRankValNamed:
    """ddp-forward-on-one-rank: a project function not in view, named for validation (`val_one_epoch`), handed
    the DDP model on rank 0 only: a warning that says it is not in view."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_sibling_val_one_epoch_on_rank_0_is_a_warning(self):
        assert found(VAL_ON_RANK_0.replace("CALLED", "val_one_epoch"), self.rule) == [(11, "warning")]

    def test_control_a_function_named_for_an_interval_is_not_reported(self):
        assert found(VAL_ON_RANK_0.replace("CALLED", "log_interval"), self.rule) == []


# jianglongye/gifs ddp_train.py (lint heldout17 u029): the checkpoint dict spread over the lines of the torch.save call, the
# wrapper's state dict four lines in
SPREAD_SAVE = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(rank, net, optimizer, path, epoch):
        net = DDP(net, device_ids=[rank])
        if rank == 0:
            torch.save(
                {
                    "epoch": epoch,
                    "model_state_dict": SAVED,
                    "optimizer_state_dict": optimizer.state_dict(),
                },
                path,
            )
"""


def found_also(code: str, rule: str) -> list[tuple[int, tuple[int, ...]]]:
    """(line, also) of each diagnostic of `rule`."""
    return [(d.line, d.also) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


class TestSaveDdpWrapperStateLine:
    """save-ddp-wrapper: said at the save, naming the line that takes the wrapper's state."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_the_state_line_is_named(self):
        assert found_also(SPREAD_SAVE.replace("SAVED", "net.state_dict()"), self.rule) == [(7, (10,))]

    def test_control_the_modules_state_is_not_reported(self):
        assert found_also(SPREAD_SAVE.replace("SAVED", "net.module.state_dict()"), self.rule) == []
