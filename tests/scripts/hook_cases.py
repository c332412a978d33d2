"""The runtime hooks, exercised in one fresh process (they patch torch for the
whole process, so the test suite's own process stays clean). Prints one JSON
object: case name -> what the case saw. Read by tests/test_runtime_hooks.py."""

import json
import os
import pickle
import socket
import sys
import tempfile
import traceback
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

results = {}


def case(fn):
    try:
        results[fn.__name__] = fn()
    except Exception:  # noqa: BLE001 - report, let the test fail with the traceback
        results[fn.__name__] = {"crashed": traceback.format_exc()}
    return fn


def train_loss(steps=30):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    for _ in range(steps // 4):
        for x, y in DataLoader(data, batch_size=16, shuffle=True):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    return float(loss.detach())


class Moves(nn.Module):
    """Takes its input to its own (meta) device: it runs, but the caller's tensor was elsewhere."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4, device="meta"))

    def forward(self, x):
        return x.to("meta") * self.w


def meta_failure():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    model[1].to("meta")
    model(torch.randn(2, 4))


def formatted_failure():
    try:
        meta_failure()
    except RuntimeError:
        return traceback.format_exc()


# -- before any hook ------------------------------------------------------------------
PLAIN_LOSS = train_loss()
formatted_failure()  # torch takes another path through its meta kernels the first time
PLAIN_TRACEBACK = formatted_failure()
ORIGINAL_CALL = nn.Module.__call__

import gpudoctor  # noqa: E402
from gpudoctor.hooks import module_calls # noqa: E402
from gpudoctor.hooks.install import install_hooks  # noqa: E402
from gpudoctor.hooks.session import session  # noqa: E402

assert install_hooks()


@case
def results_unchanged():
    return {"plain": PLAIN_LOSS, "watched": train_loss()}


@case
def traceback_unchanged():
    module_calls.watch.arm()
    armed = nn.Module.__call__ is not ORIGINAL_CALL
    return {"armed": armed, "plain": PLAIN_TRACEBACK, "watched": formatted_failure()}


@case
def window():
    module_calls.watch.arm()
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    x = torch.randn(1, 2)
    armed_at_start = nn.Module.__call__ is module_calls.checked_call
    for _ in range(200):
        model(x)
    closed = nn.Module.__call__ is ORIGINAL_CALL
    model.to("cpu")
    rearmed_by_to = nn.Module.__call__ is module_calls.checked_call
    for _ in range(200):
        model(x)
    closed_again = nn.Module.__call__ is ORIGINAL_CALL
    iter(DataLoader(TensorDataset(torch.zeros(2)), batch_size=1))
    untouched_by_epoch = nn.Module.__call__ is ORIGINAL_CALL
    return {
        "armed_at_start": armed_at_start,
        "closed": closed,
        "rearmed_by_to": rearmed_by_to,
        "closed_again": closed_again,
        "untouched_by_epoch": untouched_by_epoch,
    }


@case
def nothing_per_step():
    # After its first steps a healthy loop runs no gpudoctor code at all: not per
    # module call, not per batch (workers or not), not per epoch but iter().
    import gpudoctor.hooks

    own = os.path.dirname(gpudoctor.hooks.__file__)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    model.to("cpu")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    loaders = [DataLoader(data, batch_size=4), DataLoader(data, batch_size=4, num_workers=1, persistent_workers=True)]
    entered = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(own):
            entered.append(frame.f_code.co_name)

    for epoch in range(3):
        for loader in loaders:
            batches = iter(loader)
            next(batches)  # iter() and the first batch may look: once per epoch
            if epoch == 2:
                sys.setprofile(profile)
            for x, y in batches:
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            sys.setprofile(None)
    return {"gpudoctor_calls": entered, "window_closed": nn.Module.__call__ is ORIGINAL_CALL}


@case
def window_budget():
    # A script that moves its model at every step: the windows stop opening once
    # the process's budget of looked-at calls is spent.
    saved = module_calls.watch.budget
    module_calls.watch.budget = 300
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    x = torch.randn(1, 2)
    try:
        for _ in range(200):
            model.to("cpu")
            model(x)
        spent = module_calls.watch.budget <= 0
        model.to("cpu")
        return {"spent": spent, "closed_for_good": nn.Module.__call__ is ORIGINAL_CALL}
    finally:
        module_calls.watch.budget = saved


@case
def explained_after_the_window_closed():
    # Nothing watches the calls any more: the traceback alone explains the error.
    from gpudoctor.hooks.post_mortem import explain_chain

    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    model(torch.randn(2, 4))
    module_calls.watch.disarm()
    # Swapped in without .to(): no window opens.
    model[1].weight = nn.Parameter(torch.empty(2, 4, device="meta"))
    model[1].bias = nn.Parameter(torch.empty(2, device="meta"))
    start = len(session.facts)
    try:
        model(torch.randn(2, 4))
    except RuntimeError as exc:
        window_open = nn.Module.__call__ is not ORIGINAL_CALL
        explain_chain(exc)
    [fact] = session.facts[start:]
    return {
        "window_open": window_open,
        "module": fact.module,
        "module_tensors": fact.module_tensors,
        "inputs": fact.inputs,
        "source": fact.source.text,
    }


@case
def window_with_new_modules_at_every_call():
    # nn.DataParallel makes new replicas at every forward: the window must still close.
    module_calls.watch.arm()
    x = torch.zeros(1)
    for _ in range(module_calls.MAX_WINDOW_CALLS + 10):
        nn.Identity()(x)
    return {"closed": nn.Module.__call__ is ORIGINAL_CALL}


@case
def input_on_other_device():
    model = nn.Sequential(nn.Linear(4, 4), Moves())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gpudoctor.watch(model) as doctor:
            model(torch.randn(3, 4))
    return {
        "ids": [f.id for f in doctor.findings],
        "titles": [f.title for f in doctor.findings],
        "warnings": [str(w.message) for w in caught if w.category.__name__ == "GpudoctorWarning"],
    }


@case
def device_error_note():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    model[1].to("meta")
    try:
        with gpudoctor.watch(model) as doctor:
            model(torch.randn(2, 4))
    except RuntimeError as exc:
        return {
            "notes": getattr(exc, "__notes__", []),
            "ids": [f.id for f in doctor.findings],
            "module": doctor.findings[0].evidence.get("module"),
        }
    return {"raised": False}


def sampler_findings(set_epoch, shuffle=True):
    data = TensorDataset(torch.arange(16.0))
    sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=shuffle)
    with gpudoctor.watch(warn=False) as doctor:
        for epoch in range(2):
            if set_epoch:
                sampler.set_epoch(epoch)
            for _ in DataLoader(data, batch_size=4, sampler=sampler):
                pass
    return [(f.id, f.evidence.get("source")) for f in doctor.findings if f.id == "sampler-without-set-epoch"]


@case
def sampler():
    return {
        "without_set_epoch": sampler_findings(False),
        "with_set_epoch": sampler_findings(True),
        "no_shuffle": sampler_findings(False, shuffle=False),
    }


@case
def sampler_made_anew_every_epoch():
    # Each new sampler may get the id() of the one just collected: it must not inherit its epochs.
    data = TensorDataset(torch.arange(16.0))
    ids, found = set(), []
    with gpudoctor.watch(warn=False) as doctor:
        for _ in range(20):
            sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True)
            ids.add(id(sampler))
            list(iter(sampler))
            del sampler
    found = [f.id for f in doctor.findings]
    return {"ids_reused": len(ids) < 20, "findings": found}


def loader_startups(persistent):
    from gpudoctor.hooks import data

    loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=1, persistent_workers=persistent)
    for _ in range(3):
        for _ in loader:
            pass
    [tally] = [t for ref, t in data._loaders.by_id.values() if ref() is loader]
    return {"startups": len(tally.startup_s), "start_method": tally.start_method, "persistent": tally.persistent}


@case
def loader_workers():
    return {"fresh": loader_startups(False), "persistent": loader_startups(True)}


@case
def checkpoint():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        start = len(session.facts)
        torch.save({"model": {"module.fc.weight": torch.zeros(2)}, "epoch": 3}, path)
        torch.save({"fc.weight": torch.zeros(2)}, path)  # the right thing: nothing to say
        loaded = torch.load(path)
        saves = [f for f in session.facts[start:] if type(f).__name__ == "CheckpointSave"]
    return {
        "facts": [(f.ddp_kind, f.ddp_wrapper, f.example_key, f.path == path) for f in saves],
        "saved_still_loads": list(loaded),
    }


@case
def process_group():
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    ddp = DistributedDataParallel(nn.Linear(2, 2))
    ddp(torch.randn(1, 2)).sum().backward()
    rank, world = session.rank, session.world_size
    nccl_facts = [f for f in session.facts if type(f).__name__ == "NcclDevice"]
    dist.destroy_process_group()
    return {"rank": rank, "world": world, "nccl_facts": len(nccl_facts)}


@case
def spawn_plumbing():
    import multiprocessing.spawn as mp_spawn

    from gpudoctor.hooks import spawn

    untouched_by_watch = mp_spawn.get_command_line is not spawn.command_line  # only `gpudoctor run` follows children
    spawn.install_command_line()
    torch_spawn = sys.modules["torch.multiprocessing.spawn"]  # the attribute of that name is the function

    cmd = mp_spawn.get_command_line(pipe_handle=5)
    return {
        "untouched_by_watch": untouched_by_watch,
        "bootstrap_in_command": any("gpudoctor.hooks.spawned_child" in str(part) for part in cmd),
        "rank_target_pickles_by_name": b"torch.multiprocessing.spawn" in pickle.dumps(torch_spawn._wrap),
    }


print(json.dumps(results))
sys.stdout.flush()
