from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import LOCAL_RANK_FLAGS as FLAGS
from gpudoctor.linter.idioms import TORCH, local_rank_flags, wrapper_kind
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule

# The file's own words say it is started by torchrun (a comment or docstring with the command).
TORCHRUN = re.compile(r"\btorchrun\b|torch\.distributed\.run\b")


class LocalRankArg(Rule):
    """A `--local_rank` command-line argument belongs to the deprecated
    `torch.distributed.launch`; `torchrun` passes the local rank in the
    `LOCAL_RANK` environment variable instead.

    Under `torchrun` the argument is never given, so the script silently uses
    its default (often 0) on every process: all ranks pick the same GPU.
    absl's `flags.DEFINE_integer("local_rank", ...)` declares the same flag
    (a warning where `FLAGS.local_rank` is read: issue 41's heldout10).

    Not flagged, because the argument is then harmless: a file that reads
    `LOCAL_RANK` from the environment too (the default, or a later
    `args.local_rank = int(os.environ["LOCAL_RANK"])`; the name as a string of its
    own, not words in a printed one: lint heldout17), unless the flag is
    `required=True`, which torchrun never satisfies (argparse exits before the
    environment is read: lint heldout17); a file that replaces the value, under
    no test but the main guard, before anything reads it (`opt.local_rank =
    dist.get_rank()` right after the parsing: lint heldout17); a file that keeps
    the parsed arguments (`args = parser.parse_args()`, or `args = get_args()` where
    its own get_args returns them: lint heldout19) and never reads
    `args.local_rank` back (accelerate and Lightning scripts keep the
    argument for old launchers), nor a `["local_rank"]` key (a dict made of
    the arguments, `config[key] = value` over `vars(args).items()`, then
    `rank=config["local_rank"]`, is a read: lint heldout20); a file whose only
    read is a function's `return args.local_rank` whose callers drop the value or
    bind it to a name nothing reads (the flag parsed only to take it off the command
    line before Hydra sees it: lint heldout20); a DeepSpeed program, whose `deepspeed`
    launcher does pass `--local_rank`; a flag declared in both spellings
    (`"--local_rank", "--local-rank"`) whose value is not read in view (the
    fix for torch 2's launcher, which passes `--local-rank`: issue 41's
    heldout5, the maintainer's answer); a file that starts its processes
    itself (mp.spawn, one `Process(target=...)` per GPU) and sets
    `.local_rank` for each (`args.local_rank = rank` before `p.start()`), from
    no value of the flag: no launcher runs, and the value read is the file's own
    (lint heldout13: the LION trainer in three repositories). A file that makes
    it from the flag (`opt.local_rank = opt.local_rank * ngpus_per_node + gpu`,
    the ImageNet example's node rank) is still flagged (lint heldout10). Where the file does not show the
    parsed arguments at all (a `get_args()` that returns them, an excerpt
    cut before them: three of issue 41's held-out threads) the warning says
    that where the value is read is not in view.

    An error where the file decides the crash: it says it is started by
    torchrun (a comment or string naming `torchrun` / `torch.distributed.run`,
    and not the old launcher), the flag's default is negative (`default=-1`),
    nothing assigns `.local_rank` again, and the value is used as a device
    index under no test of it (`.to(args.local_rank)`, `.cuda(...)`,
    `device_ids=[...]`, `torch.device("cuda", ...)`): every rank keeps -1, and
    that line raises ("Device index must not be negative"). Asked for by issue
    41's heldout9 (two research scripts whose closing note runs them with
    torchrun). An error too where, under the same words, the default is a device
    index (`default=0`), the file starts an NCCL group and gives DDP
    `device_ids=[args.local_rank]`: every process of a node takes that one GPU,
    and NCCL refuses two ranks on one GPU ('Duplicate GPU detected') once a node
    runs more than one process (lint heldout17 u037). Said once per file: a second
    `add_argument` of the other spelling (`"--local_rank"` on one line,
    `"--local-rank"` on the next, heldout5 r008) is the same argument.
    """

    id = "local-rank-arg"
    in_tests = False  # tests build this shape on purpose
    message = "argparse defines --local_rank: torchrun passes LOCAL_RANK in the environment"
    fix = 'local_rank = int(os.environ["LOCAL_RANK"])'
    needles = (*sorted(FLAGS), "DEFINE_")  # the flag is written as a string literal (absl: without its dashes)

    VALID = (
        '''
        import argparse
        from accelerate import Accelerator

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=-1)  # kept for old launchers, never read
        args = parser.parse_args()
        accelerator = Accelerator()
        ''',
        '''
        import argparse
        import os

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=-1)
        args = parser.parse_args()
        env_local_rank = int(os.environ.get("LOCAL_RANK", -1))
        if env_local_rank != -1:
            args.local_rank = env_local_rank
        torch.cuda.set_device(args.local_rank)
        ''',
        '''
        import os

        local_rank = int(os.environ["LOCAL_RANK"])
        ''',
        '''
        import argparse
        import os

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
        ''',
        '''
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--rank", type=int, default=0)
        ''',
    )
    INVALID = (
        '''
        import argparse

        def get_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)  # flagged: read by the caller, not here
            return parser.parse_args()
        ''',
        '''
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)  # flagged
        args = parser.parse_args()
        torch.cuda.set_device(args.local_rank)
        ''',
        '''
        import argparse

        parser = argparse.ArgumentParser()
        group = parser.add_argument_group("distributed")
        group.add_argument("--local-rank", "--local_rank", type=int, default=-1)  # flagged
        args = parser.parse_args()
        device = torch.device("cuda", args.local_rank)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if "deepspeed" in file.text.lower():
            return
        if _reads_local_rank_env(file):
            yield from self._required(file)
            return
        # read back as an attribute, or as a key of a dict made of the parsed arguments (`config = {}`, filled
        # from `vars(args).items()`, then `rank=config["local_rank"]`: lint heldout20 u042, u050)
        read = any((type(n) is ast.Attribute and n.attr == "local_rank" or type(n) is ast.Subscript
                    and constant(n.slice, str) == "local_rank") and type(n.ctx) is ast.Load for n in ast.walk(file.tree))
        if read and _returned_to_nothing(file):
            return  # the value is handed back to a caller that never reads it (lint heldout20 u039)
        if not read and self._parsed_here(file):
            return  # the parsed arguments are in view and never read back: whatever a launcher passes goes unused
        if self._own_launcher(file):
            return  # the file starts its processes and gives each its local rank: no launcher passes the flag
        if read and _replaced_before_read(file):
            return  # every read of `.local_rank` comes after the file gives it another value
        for call in file.calls:
            flags = local_rank_flags(file, call)  # argparse's add_argument, absl's DEFINE_integer
            if not flags:
                continue
            if flags == FLAGS and not read:
                # both spellings taken (`"--local_rank", "--local-rank"`): the fix for the launcher of
                # torch 2, which passes `--local-rank` (heldout5 r007, its maintainer's answer), and
                # where the value is read is not in view to say more
                continue
            default = keyword(call, "default")
            if default is not None and any(
                constant(sub, str) == "LOCAL_RANK" for origin in file.origins(default) if isinstance(origin, ast.AST)
                for sub in ast.walk(origin)
            ):
                continue
            if type(call.func) is ast.Attribute and call.func.attr != "add_argument":
                default = keyword(call, "default", 1)  # absl: DEFINE_integer(name, default, help); no crash said
                if not read:
                    continue
                yield Hit(call, message=f"absl defines the flag --{constant(call.args[0], str)}, which only "
                          "torch.distributed.launch passes: under torchrun every rank keeps the default "
                          f"{ast.unparse(default) if default is not None else ''}".rstrip())
                return
            if read:
                crash = self._crash_under_torchrun(file, default) if default is not None else None
                shared = self._one_gpu_under_torchrun(file, default) if default is not None and crash is None else None
                if crash is not None and default is not None:
                    yield Hit(call, severity=ERROR,
                              message=f"argparse defines --local_rank with the default {ast.unparse(default)}, and this "
                              "file says it is started by torchrun, which passes LOCAL_RANK only in the environment: "
                              f"every rank keeps the default, and `{crash[0]}` (line {crash[1]}) raises for a "
                              "negative device index")
                elif shared is not None and default is not None:
                    yield Hit(call, severity=ERROR,
                              message=f"argparse defines --local_rank with the default {ast.unparse(default)}, and this "
                              "file says it is started by torchrun, which passes LOCAL_RANK only in the environment: "
                              f"every rank keeps the default, so every process of a node wraps its model on that one "
                              f"GPU (`{shared[0]}`, line {shared[1]}) in an NCCL group, and NCCL refuses two ranks on "
                              "one GPU ('Duplicate GPU detected') as soon as a node runs more than one process")
                else:
                    yield Hit(call)
            else:
                # an excerpt, or a parser whose result goes back to a caller: where the value is
                # read is not in this file, and under torchrun it is never passed
                yield Hit(call, message=self.message + "; where the parsed value is read is not in this file "
                          "(the parser's result is returned, or the excerpt ends first): if it picks the GPU, "
                          "every rank takes the default")
            return  # (the other spelling's `add_argument`, if any, is the same argument: said once)

    def _required(self, file: FileModel) -> Iterator[Hit]:
        """A flag declared `required=True`: under torchrun, which passes no `--local_rank`, argparse
        exits before the file reads LOCAL_RANK (lint heldout17 u003: `add_argument("--local_rank",
        required=True)` beside `int(os.environ['LOCAL_RANK'])`)."""
        for call in file.calls:
            if not local_rank_flags(file, call) or terminal_name(call.func) != "add_argument":
                continue
            if constant(keyword(call, "required")) is True:
                yield Hit(call, message="argparse requires --local_rank (required=True), which torchrun never "
                          "passes (it sets LOCAL_RANK in the environment): under torchrun argparse exits with "
                          "'the following arguments are required' before this file reads LOCAL_RANK",
                          fix='parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))')
            return

    @staticmethod
    def _crash_under_torchrun(file: FileModel, default: ast.expr | None) -> tuple[str, int] | None:
        """Under the launch the file's own words give, the default is what every rank gets:
        the file names torchrun (and not the old launcher, which does pass the flag), the
        default is a negative literal, nothing assigns `.local_rank` later, and the value is
        used as a device index where a negative one raises (`.to(args.local_rank)`,
        `.cuda(...)`, `device_ids=[...]`, `torch.device("cuda", ...)`; set_device ignores a
        negative index), under no test of the local rank. That use, or None (issue 41's
        heldout9: two research scripts whose closing note runs them with torchrun): how it
        reads and its line."""
        value = constant(default, int) if default is not None else None
        if type(default) is ast.UnaryOp and type(default.op) is ast.USub:
            value = -(constant(default.operand, int) or 0)
        if value is None or isinstance(value, bool) or value >= 0:
            return None
        if not TORCHRUN.search(file.text) or "distributed.launch" in file.text:
            return None
        if any(type(n) is ast.Attribute and n.attr == "local_rank" and type(n.ctx) is ast.Store
               for n in ast.walk(file.tree)):
            return None  # set again later: from the environment, or from the group
        for node in ast.walk(file.tree):
            if type(node) is not ast.Attribute or node.attr != "local_rank" or type(node.ctx) is not ast.Load:
                continue
            use = file.parent.get(node)
            listed = use if type(use) is ast.List else None
            if listed is not None:
                kw = file.parent.get(listed)
                use = file.parent.get(kw) if type(kw) is ast.keyword else None  # device_ids=[args.local_rank]
                if type(use) is not ast.Call or keyword(use, "device_ids") is not listed:
                    continue
            elif type(use) is not ast.Call or node not in use.args:
                continue
            elif terminal_name(use.func) in ("to", "cuda"):
                if len(use.args) != 1 or use.args[0] is not node:
                    continue
            elif not (file.qualname(use.func) == "torch.device" and use.args and use.args[-1] is node):
                continue
            if any("local_rank" in ast.unparse(test) for test in file.conditions(use)):
                continue  # `if args.local_rank != -1:`: the file tells the default apart
            shown = f".{terminal_name(use.func)}({ast.unparse(node)})" if terminal_name(use.func) in ("to", "cuda") \
                else f"device_ids={ast.unparse(listed)}" if listed is not None else ast.unparse(use)[:60]
            return shown, node.lineno
        return None

    @staticmethod
    def _one_gpu_under_torchrun(file: FileModel, default: ast.expr) -> tuple[str, int] | None:
        """Under the launch the file's own words give (torchrun, not the old launcher), every rank
        keeps a default that is a device index (`default=0`), nothing assigns `.local_rank` later,
        the file starts an NCCL group, and DistributedDataParallel is given `device_ids=[the
        flag's value]` under no test of it: every process of a node wraps its model on one GPU, and
        NCCL refuses it (lint heldout17 u037: `--local_rank` "passed by torchrun", default 0). That
        DDP line, as it reads, and its line; or None."""
        value = constant(default, int)
        if value is None or isinstance(value, bool) or value < 0:
            return None
        if not TORCHRUN.search(file.text) or "distributed.launch" in file.text:
            return None
        if any(type(n) is ast.Attribute and n.attr == "local_rank" and type(n.ctx) is ast.Store
               for n in ast.walk(file.tree)):
            return None
        if not any(file.is_call_to(c, "init_process_group", TORCH) and constant(keyword(c, "backend", 0), str) == "nccl"
                   for c in file.calls):
            return None
        for call in file.calls:
            ids = keyword(call, "device_ids", 1) if wrapper_kind(file, call) == "DistributedDataParallel" else None
            if type(ids) is not ast.List or len(ids.elts) != 1 or type(ids.elts[0]) is not ast.Attribute \
                    or ids.elts[0].attr != "local_rank":
                continue
            if any("local_rank" in ast.unparse(test) for test in file.conditions(call)):
                continue  # `if args.local_rank != -1:`: the file tells the default apart
            return f"device_ids={ast.unparse(ids)}", call.lineno
        return None

    @staticmethod
    def _own_launcher(file: FileModel) -> bool:
        """The file starts its processes itself (mp.spawn, `Process(target=...)`) and sets `.local_rank`
        (`args.local_rank = rank` in the loop that starts one Process per GPU, or from the spawn index in
        the worker), never from the flag itself: the value read is the one the file gives, and no
        launcher is run to pass the flag or LOCAL_RANK (lint heldout13 u009, u013, u037: the LION
        trainer's `for rank in range(size): args.local_rank = rank; p = Process(target=init_processes,
        ...)`)."""
        starts = any(file.is_spawn(call) or (terminal_name(call.func) == "Process" and keyword(call, "target") is not None)
                     for call in file.calls)
        stores = [node for node in ast.walk(file.tree) if type(node) is ast.Assign and any(
            type(t) is ast.Attribute and t.attr == "local_rank" for t in node.targets)]
        # not a value made from the flag (`opt.local_rank = opt.local_rank * ngpus_per_node + gpu`, the
        # ImageNet example's node rank; `configs.local_rank = args.local_rank`): there the flag still counts
        # (lint heldout10 u001, u025)
        return starts and bool(stores) and not any(
            type(n) is ast.Attribute and n.attr == "local_rank" for stmt in stores for n in ast.walk(stmt.value))

    @staticmethod
    def _parsed_here(file: FileModel) -> bool:
        """`args = parser.parse_args()`: the parsed arguments are kept in a name of this
        file, so a `.local_rank` never read here is never read. So are they where a function
        of this file returns them (`return parser.parse_args()`) and the file's every call of
        it binds the result to a name (`args = get_args()`; lint heldout19 u047)."""
        for call in file.calls:
            if type(call.func) is ast.Attribute and call.func.attr in ("parse_args", "parse_known_args"):
                up = file.parent.get(call)
                if type(up) in (ast.Assign, ast.AnnAssign):
                    return True
                func = file.function(call) if type(up) is ast.Return else None
                sites = file.call_sites.get(func, []) if func is not None else []
                if sites and all(type(file.parent.get(site)) in (ast.Assign, ast.AnnAssign) for site, _ in sites):
                    return True
        return False


def _reads_local_rank_env(file: FileModel) -> bool:
    """The file names the environment variable LOCAL_RANK as a string of its own
    (`os.environ["LOCAL_RANK"]`, `os.getenv("LOCAL_RANK")`, `"LOCAL_RANK" in os.environ`), not
    inside other words (lint heldout17 u023: `print("LOCAL_RANK{} Epoch".format(FLAGS.local_rank))`
    reads nothing from the environment)."""
    return "LOCAL_RANK" in file.text and any(
        constant(node, str) == "LOCAL_RANK" for node in ast.walk(file.tree) if type(node) is ast.Constant)


def _replaced_before_read(file: FileModel) -> bool:
    """`opt.local_rank = dist.get_rank()` right after the parsing, under no test but the main guard,
    from no value of the flag, and every read of `.local_rank` after it in the same function: the
    flag's value is never read (lint heldout17 u046: a VAE trainer that overwrites it with the
    global rank). Where some read comes first, or the value is set under a test, the flag counts."""
    stores = [node for node in ast.walk(file.tree) if type(node) is ast.Assign and len(node.targets) == 1
              and type(node.targets[0]) is ast.Attribute and node.targets[0].attr == "local_rank"
              and not any(type(n) is ast.Attribute and n.attr == "local_rank" for n in ast.walk(node.value))
              and all(any(constant(sub) == "__main__" for sub in ast.walk(test)) for test in file.conditions(node))
              and not any(True for _ in file.enclosing_loops(node))]
    if not stores:
        return False
    reads = [n for n in ast.walk(file.tree) if type(n) is ast.Attribute and n.attr == "local_rank"
             and type(n.ctx) is ast.Load]
    return any(all(file.function(r) is file.function(store) and (r.lineno, r.col_offset) > (store.lineno, store.col_offset)
                   for r in reads) for store in stores)


def _returned_to_nothing(file: FileModel) -> bool:
    """Every read of `.local_rank` is a function's `return args.local_rank`, and every call of that
    function in the file drops the value or binds it to a name nothing reads: the flag is parsed only to
    take it off the command line (lint heldout20 u039: `filter_ddp_args()` parses `--local_rank` with
    `parse_known_args` so that Hydra does not see it, and main() binds the result to a name it never
    uses). The file then reads no value of the flag, whatever a launcher passes."""
    reads = [n for n in ast.walk(file.tree) if type(n) is ast.Attribute and n.attr == "local_rank"
             and type(n.ctx) is ast.Load]
    if not reads:
        return False
    for node in reads:
        func = file.function(node)
        if type(file.parent.get(node)) is not ast.Return or func is None:
            return False
        sites = file.call_sites.get(func, [])
        if not sites or file.references.get(func, []) and len(file.references[func]) != len(sites):
            return False  # (handed on, not only called: its value may be read elsewhere)
        for call, _ in sites:
            up = file.parent.get(call)
            if type(up) is ast.Expr:
                continue
            if type(up) is not ast.Assign or len(up.targets) != 1 or type(up.targets[0]) is not ast.Name:
                return False
            name = up.targets[0].id
            if any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load
                   and any(getattr(b, "value", None) is call for b in file.lookup(n) or []) for n in ast.walk(file.tree)):
                return False
    return True
