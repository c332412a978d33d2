"""The per-file model the rules share: names through imports and
assignments, values through parameters and returns, calls between
functions and methods, rank guards."""

from __future__ import annotations

import ast
import textwrap

from gpudoctor.linter.model import Element, FileModel, Param


def model(code: str) -> FileModel:
    text = textwrap.dedent(code)
    return FileModel(ast.parse(text), text)


def call_at(m: FileModel, name: str) -> ast.Call:
    """The first call whose source starts with `name(`."""
    for call in m.calls:
        if ast.unparse(call.func) == name:
            return call
    raise AssertionError(f"no call to {name}")


def test_qualname_follows_import_aliases_and_module_level_aliases():
    m = model("""
        import torch.multiprocessing as mp
        from torch.nn import DataParallel as DP
        import torch
        DDP = torch.nn.parallel.DistributedDataParallel
        mp.spawn(f)
        DP(net)
        DDP(net)
        local(net)
    """)
    assert m.call_name(call_at(m, "mp.spawn")) == "torch.multiprocessing.spawn"
    assert m.call_name(call_at(m, "DP")) == "torch.nn.DataParallel"
    assert m.call_name(call_at(m, "DDP")) == "torch.nn.parallel.DistributedDataParallel"
    assert m.call_name(call_at(m, "local")) is None
    assert m.is_spawn(call_at(m, "mp.spawn"))


def test_stdlib_multiprocessing_is_not_torch_spawn():
    m = model("""
        import multiprocessing as mp
        mp.spawn(f)
    """)
    assert not m.is_spawn(call_at(m, "mp.spawn"))


def test_origins_use_the_last_assignment_before_the_use():
    m = model("""
        model = Net()
        model = DDP(model)
        save(model)
        model = model.module
        save(model)
    """)
    first, second = [c for c in m.calls if ast.unparse(c.func) == "save"]
    assert [ast.unparse(o) for o in m.origins(first.args[0])] == ["DDP(model)"]
    assert [ast.unparse(o) for o in m.origins(second.args[0])] == ["model.module"]
    # the argument of DDP(model) is the model from before that line
    ddp = call_at(m, "DDP")
    assert [ast.unparse(o) for o in m.origins(ddp.args[0])] == ["Net()"]


def test_origins_take_every_arm_of_an_if_chain_that_assigns():
    m = model("""
        if cuda_ok:
            backend = "nccl"
        elif has_mpi:
            backend = "mpi"
        else:
            backend = "gloo"
        init(backend)
        if flag:
            backend = "ucc"
            inner(backend)
    """)
    assert [ast.unparse(o) for o in m.origins(call_at(m, "init").args[0])] == ["'nccl'", "'mpi'", "'gloo'"]
    # inside the arm that assigns it, the arm's own value is the one
    assert [ast.unparse(o) for o in m.origins(call_at(m, "inner").args[0])] == ["'ucc'"]


def test_origins_keep_the_parameter_when_only_a_branch_rebinds_it():
    m = model("""
        def wrap(model, ddp):
            if ddp:
                model = DDP(model)
            model.encode(x)
            try:
                out = run(model)
            except RuntimeError:
                out = None
            use(out)
    """)
    encode = call_at(m, "model.encode")
    origins = m.origins(encode.func.value)
    assert Param(origins[0].function, "model") == origins[0] and ast.unparse(origins[1]) == "DDP(model)"
    assert [ast.unparse(o) for o in m.origins(call_at(m, "use").args[0])] == ["run(model)", "None"]


def test_origins_drop_the_parameter_when_every_arm_rebinds_it():
    # diffusers' log_validation (the mature-repository control): the prepared model
    # passed in never reaches the call, both arms replace it
    m = model("""
        def log_validation(vae, final):
            if not final:
                vae = unwrap(vae)
            else:
                vae = load(path)
            vae(targets)
    """)
    assert [ast.unparse(o) for o in m.origins(call_at(m, "vae").func)] == ["unwrap(vae)", "load(path)"]


def test_self_attribute_read_in_another_method_is_what_the_assigning_method_leaves():
    m = model("""
        class Trainer:
            def __init__(self, model, gpu, wrap):
                self.model = model.to(gpu)
                self.model = DDP(self.model)
                self.opt = make(self.model)
                if wrap:
                    self.opt = Wrapped(self.opt)

            def step(self, x):
                use(self.model, self.opt)
                self.model = self.model.module
                keep(self.model)
    """)
    first, second = call_at(m, "use").args
    assert [ast.unparse(o) for o in m.origins(first)] == ["DDP(self.model)"]
    # the wrap under an `if` may not run: what was there before stays possible
    assert [ast.unparse(o) for o in m.origins(second)] == ["make(self.model)", "Wrapped(self.opt)"]
    # in the method that reassigns it, its own assignment before the use is the one
    assert [ast.unparse(o) for o in m.origins(call_at(m, "keep").args[0])] == ["self.model.module"]


def test_origins_follow_parameters_returns_and_self_attributes():
    m = model("""
        def build(ds):
            return DataLoader(ds)

        class Trainer:
            def __init__(self, loader):
                self.loader = loader

            def run(self):
                consume(self.loader)

        Trainer(build(dataset))
    """)
    consume = call_at(m, "consume")
    assert [ast.unparse(o) for o in m.origins(consume.args[0])] == ["DataLoader(ds)"]


def test_parameter_without_call_site_is_unknown():
    m = model("""
        def f(x):
            use(x)
    """)
    (origin,) = m.origins(call_at(m, "use").args[0])
    assert isinstance(origin, Param) and origin.name == "x"


def test_for_loop_targets_are_elements_of_the_iterable():
    m = model("""
        for step, (x, y) in enumerate(loader):
            use(x, y)
    """)
    use = call_at(m, "use")
    (x,) = m.origins(use.args[0])
    assert isinstance(x, Element) and ast.unparse(x.iterable) == "loader" and x.path == (0,)
    (y,) = m.origins(use.args[1])
    assert y.path == (1,)


def test_tuple_unpacking_of_a_returned_tuple():
    m = model("""
        def make():
            return A(), B()
        a, b = make()
        use(b)
    """)
    assert [ast.unparse(o) for o in m.origins(call_at(m, "use").args[0])] == ["B()"]


def test_call_sites_of_functions_methods_and_constructors():
    m = model("""
        class Trainer:
            def __init__(self, x):
                self.x = x
            def step(self):
                pass
            def fit(self):
                self.step()

        def main():
            t = Trainer(1)
            t.fit()
    """)
    cls = m.classes["Trainer"][0]
    init, step, fit = (m.method(cls, n) for n in ("__init__", "step", "fit"))
    assert [ast.unparse(c) for c, _ in m.call_sites[step]] == ["self.step()"]
    assert [ast.unparse(c) for c, _ in m.call_sites[fit]] == ["t.fit()"]
    assert [(ast.unparse(c), offset) for c, offset in m.call_sites[init]] == [("Trainer(1)", 1)]


def test_rank_guard_in_the_function_and_around_every_call():
    m = model("""
        import os, torch
        def save():
            torch.save(1, "a")
        def loop(rank):
            if rank == 0:
                save()
        def early(rank):
            if rank != 0:
                return
            torch.save(2, "b")
        def unguarded():
            torch.save(3, "c")
        def caller():
            unguarded()
        caller()
    """)
    saves = [c for c in m.calls if ast.unparse(c.func) == "torch.save"]
    assert [m.rank_guarded(c) for c in saves] == [True, True, False]


def test_rank_guard_through_a_renamed_rank_variable():
    m = model("""
        import os, torch
        gpu_id = int(os.environ["LOCAL_RANK"])
        if gpu_id == 0:
            torch.save(1, "a")
        if epoch == 0:
            torch.save(2, "b")
    """)
    saves = [c for c in m.calls if ast.unparse(c.func) == "torch.save"]
    assert [m.rank_guarded(c) for c in saves] == [True, False]


def test_first_parameter_of_a_spawned_function_is_a_rank():
    m = model("""
        import torch, torch.multiprocessing as mp
        def worker(gpu, world):
            if gpu == 0:
                torch.save(1, "a")
        if __name__ == "__main__":
            mp.spawn(worker, nprocs=2)
    """)
    assert m.rank_guarded(call_at(m, "torch.save"))


def test_main_guard():
    m = model("""
        if __name__ == "__main__":
            a()
        b()
    """)
    assert m.under_main_guard(call_at(m, "a")) and not m.under_main_guard(call_at(m, "b"))


def _chain(steps: int) -> str:
    """`a = step(a, i)` `steps` times, where `step` returns its parameter on one
    arm: each call site leads back to the one before it (the shape of a diffusers
    pipeline's `prompt_embeds`, which took minutes to lint)."""
    calls = "\n".join(f"    a = step(a, {i % 2})" for i in range(steps))
    return (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "def step(x, flag):\n    if flag:\n        x = x.to('cpu')\n    return x\n\n"
        f"def main(a):\n{calls}\n    m = DDP(a)\n    m.weight.zero_()\n    return a.bias\n"
    )


def test_a_value_through_many_call_sites_is_followed_once_per_depth(monkeypatch):
    from gpudoctor.linter.engine import lint_source

    followed = []
    inner = FileModel._origins
    monkeypatch.setattr(FileModel, "_origins", lambda self, *a: followed.append(1) or inner(self, *a))
    lint_source(_chain(12), "chain.py")
    # once per (expression, depth): under 20 per step here, linear in the steps (a parameter read in its own
    # reassignment, `x = x.to('cpu')`, leads to the call sites); each path anew was thousands per step
    assert 0 < len(followed) < 250, len(followed)


def test_origins_list_each_origin_once():
    m = model(_chain(4))
    bias = next(n for n in ast.walk(m.tree) if type(n) is ast.Attribute and n.attr == "bias")
    origins = m.origins(bias.value)
    assert len(origins) == len({id(o) if isinstance(o, ast.AST) else o for o in origins}) > 1
