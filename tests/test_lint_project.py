"""A folder is one program: the facts each file adds (imports, device
binding, set_epoch, functions that make collectives) and the answers the
project gives the rules. Fixture programs under tests/fixtures/lint_project
mark what the folder must report (`# expect:`) and what each file reports
when linted alone (`# alone:`, today's single-file behaviour)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gpudoctor.linter import engine
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.project import ModuleFacts, Project, Query, module_facts

ROOT = Path(__file__).resolve().parent / "fixtures" / "lint_project"
MARK = re.compile(r"#\s*(expect|alone):\s*([a-z0-9, -]+)$")


@pytest.fixture(autouse=True)
def loud_rules(monkeypatch):
    monkeypatch.setattr(engine, "RAISE_RULE_ERRORS", True)


def marks(folder: Path, kind: str) -> set[tuple[str, int, str]]:
    out = set()
    for path in sorted(folder.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = MARK.search(line)
            if m and m.group(1) == kind:
                out |= {(str(path), n, r.strip()) for r in m.group(2).split(",") if r.strip()}
    return out


@pytest.mark.parametrize("app", ["fsdp_app", "metrics_app"])
def test_folder_reports_exactly_the_expected_lines(app):
    result = engine.lint_paths([str(ROOT / app)], jobs=1)
    assert {(d.path, d.line, d.rule) for d in result.diagnostics} == marks(ROOT / app, "expect")


@pytest.mark.parametrize("app", ["fsdp_app", "metrics_app"])
def test_each_file_alone_keeps_the_single_file_behaviour(app):
    found = set()
    for path in sorted((ROOT / app).rglob("*.py")):
        found |= {(d.path, d.line, d.rule) for d in engine.lint_file(str(path))}
    assert found == marks(ROOT / app, "alone")


def test_parallel_run_gives_the_same_answers():
    paths = [str(ROOT / "fsdp_app"), str(ROOT / "metrics_app")]
    serial = engine.lint_paths(paths, jobs=1).diagnostics
    assert engine.lint_paths(paths, jobs=2).diagnostics == serial


def test_cross_file_message_names_the_collective_and_its_file():
    result = engine.lint_paths([str(ROOT / "metrics_app")], jobs=1)
    messages = sorted(d.message for d in result.diagnostics)
    assert "reduce_dict() reaches dist.all_reduce() at dist_utils.py:10" in messages[0]
    assert "{reached}" not in " ".join(messages)


def facts(path: str, code: str) -> ModuleFacts:
    tree = ast.parse(code)
    return module_facts(path, tree, code, FileModel(tree, code))


def test_facts_of_a_module():
    code = (
        "import torch.distributed as dist\nfrom . import helpers\nfrom ..pkg.mod import thing\n"
        "def main():\n    from utils import setup\n    setup()\n"
        "def sync():\n    dist.barrier()\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    f = facts("/p/app/train.py", code)
    assert {"torch.distributed", ".helpers", "..pkg.mod.thing", "utils.setup"} <= set(f.imports)
    assert f.main_calls == {"main"}
    assert f.collectives == {"sync": ("dist.barrier", 8)}
    assert not f.binds_device and not f.sets_epoch


def test_names_resolve_to_the_nearest_module_and_relative_imports_to_the_package():
    a_utils = facts("/r/a/utils.py", "def f():\n    pass\n")
    b_utils = facts("/r/b/utils.py", "def f():\n    pass\n")
    b_train = facts("/r/b/train.py", "import utils\n")
    pkg_init = facts("/r/b/pkg/__init__.py", "from .core import g\n")
    pkg_core = facts("/r/b/pkg/core.py", "def g():\n    pass\n")
    project = Project([a_utils, b_utils, b_train, pkg_init, pkg_core])
    assert project.resolve(b_train, "utils.f") == (b_utils, "f")
    assert project.resolve(pkg_init, ".core.g") == (pkg_core, "g")
    assert project.resolve(b_train, "numpy.array") is None
    assert project.program(b_train.path) == {b_train.path, b_utils.path}
    # siblings through a shared module are not one program
    assert a_utils.path not in project.program(b_utils.path)


def test_queries_about_the_file_itself_leave_it_to_the_rule():
    alone = facts("/r/x.py", "import torch\n# set_device is mentioned only here\n")
    project = Project([alone])
    assert project.answer(alone.path, Query("no-device-binding")) == ""
    assert project.answer(alone.path, Query("reaches-collective", "x.f")) is None


def write(root: Path, files: dict[str, str]) -> None:
    for name, code in files.items():
        (root / name).write_text(code, encoding="utf-8")


def folder_lines(root: Path) -> set[tuple[str, int, str]]:
    result = engine.lint_paths([str(root)], jobs=1)
    return {(Path(d.path).name, d.line, d.rule) for d in result.diagnostics}


DIST_UTILS = "import torch.distributed as dist\n\ndef reduce_mean(t):\n    dist.all_reduce(t)\n    return t\n"


def test_collective_reached_through_two_modules(tmp_path):
    write(tmp_path, {
        "dist_utils.py": DIST_UTILS,
        "metrics.py": "from dist_utils import reduce_mean\n\ndef summarize(loss):\n    return reduce_mean(loss).item()\n",
        "train.py": "import torch.distributed as dist\nfrom metrics import summarize\n\n"
                    "if dist.get_rank() == 0:\n    print(summarize(loss))\n",
    })
    result = engine.lint_paths([str(tmp_path)], jobs=1)
    (d,) = result.diagnostics
    assert (Path(d.path).name, d.line, d.rule) == ("train.py", 5, "collective-under-rank-condition")
    assert "dist.all_reduce() at dist_utils.py:4" in d.message


def test_call_chain_stops_at_a_cycle_and_past_the_depth(tmp_path):
    write(tmp_path, {
        "a.py": "from b import g\n\ndef f():\n    return g()\n",
        "b.py": "from a import f\n\ndef g():\n    return f()\n",
        # h1 is four calls away from the collective: past the depth followed; h2 is three
        "m1.py": "from m2 import h2\n\ndef h1():\n    h2()\n",
        "m2.py": "from m3 import h3\n\ndef h2():\n    h3()\n",
        "m3.py": "from m4 import h4\n\ndef h3():\n    h4()\n",
        "m4.py": "from m5 import h5\n\ndef h4():\n    h5()\n",
        "m5.py": DIST_UTILS.replace("reduce_mean(t)", "h5(t=None)"),
        "train.py": "import torch.distributed as dist\nfrom a import f\nfrom m1 import h1\nfrom m2 import h2\n\n"
                    "if dist.get_rank() == 0:\n    f()\n    h1()\n    h2()\n",
    })
    assert folder_lines(tmp_path) == {("train.py", 9, "collective-under-rank-condition")}


def test_rank_analysis_waits_for_the_project(tmp_path):
    """A file with a rank test but no collective of its own is read again
    only when it imports a function of the project that communicates."""
    write(tmp_path, {
        "dist_utils.py": DIST_UTILS,
        "train.py": "from dist_utils import reduce_mean\n\nif rank == 0:\n    reduce_mean(loss)\n",
        "plot.py": "from dist_utils import reduce_mean\n\nif rank == 0:\n    print(loss)\n",
    })
    results = [engine.read_file(str(tmp_path / n)) for n in ("dist_utils.py", "train.py", "plot.py")]
    assert [r.deferred for r in results] == [(), ("collective-under-rank-condition",),
                                             ("collective-under-rank-condition",)]
    project = Project(r.facts for r in results if r.facts is not None)
    assert project.calls_collective(str(tmp_path / "train.py"))
    assert folder_lines(tmp_path) == {("train.py", 4, "collective-under-rank-condition")}


SAVE_TRAIN = ("import torch\nimport torch.distributed as dist\nfrom utils import {name}\n\n"
              "dist.init_process_group('gloo')\nif {test}:\n    torch.save(state, 'ckpt.pt')\n")
SAVE_HELPERS = {  # utils.py -> whether train.py's `if` is a rank guard
    "def should_write():\n    return dist.get_rank() == 0\n": True,
    "def is_first():\n    return int(os.environ['RANK']) == 0\n": True,
    "ddp_rank = int(os.environ['RANK'])\nfirst = ddp_rank == 0\n": True,
    "def should_write():\n    return dist.is_initialized()\n": False,
    "def is_first():\n    return True\n": False,
}


@pytest.mark.parametrize("helper", SAVE_HELPERS)
def test_save_guard_helper_from_another_module(tmp_path, helper):
    name = helper.split("(")[0].split()[-1] if helper.startswith("def") else "first"
    test = name + "()" if helper.startswith("def") else name
    write(tmp_path, {"utils.py": "import os\nimport torch.distributed as dist\n\n" + helper,
                     "train.py": SAVE_TRAIN.format(name=name, test=test)})
    assert folder_lines(tmp_path) == (set() if SAVE_HELPERS[helper] else {("train.py", 7, "save-all-ranks")})


def test_save_guard_helper_of_the_same_file_by_what_it_computes():
    code = ("import torch\nimport torch.distributed as dist\n\ndef should_write():\n    return dist.get_rank() == 0\n\n"
            "dist.init_process_group('gloo')\nif should_write():\n    torch.save(state, 'ckpt.pt')\n")
    assert engine.lint_source(code, "train.py") == []


EVAL_TRAIN = ("import torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
              "from engine import evaluate\n\nmodel = DDP(net, device_ids=[rank])\nif rank == 0:\n    evaluate({args})\n")
CALLS_MODEL = "def evaluate(model, loader):\n    return [model(x) for x in loader]\n"
SAVES_MODEL = "def evaluate(model, loader):\n    torch.save(model.state_dict(), 'x')\n"
EVAL_CASES = [  # engine.py, the arguments train.py passes on rank 0, flagged
    (CALLS_MODEL, "model, val", True),
    (CALLS_MODEL, "model.module, val", False),
    (CALLS_MODEL, "loader=val, model=model", True),
    (SAVES_MODEL, "model, val", False),
]


@pytest.mark.parametrize("case", EVAL_CASES)
def test_ddp_forward_through_a_function_of_another_module(tmp_path, case):
    engine_code, args, flagged = case
    write(tmp_path, {"engine.py": "import torch\n\n" + engine_code, "train.py": EVAL_TRAIN.format(args=args)})
    assert folder_lines(tmp_path) == ({("train.py", 7, "ddp-forward-on-one-rank")} if flagged else set())


@pytest.mark.parametrize("call", ["dist.all_gather_object(out, obj)", "dist.broadcast_object_list(objs, src=0)",
                                  "accelerator.gather_for_metrics(preds)", "dist.all_to_all_single(o, i)"])
def test_folder_lint_reads_every_collective_name(tmp_path, call):
    """A file is left for the project only when it writes no collective at all."""
    code = "import torch.distributed as dist\nfrom accelerate import Accelerator\n\naccelerator = Accelerator()\n" \
           f"if dist.get_rank() == 0:\n    {call}\n"
    write(tmp_path, {"train.py": code})
    assert folder_lines(tmp_path) == {("train.py", 6, "collective-under-rank-condition")}


def test_helper_making_all_gather_object_is_followed(tmp_path):
    write(tmp_path, {
        "comm.py": "import torch.distributed as dist\n\ndef collect(obj):\n    out = [None] * 2\n"
                   "    dist.all_gather_object(out, obj)\n    return out\n",
        "train.py": "import torch.distributed as dist\nfrom comm import collect\n\nif dist.get_rank() == 0:\n"
                    "    collect(stats)\n",
    })
    assert folder_lines(tmp_path) == {("train.py", 5, "collective-under-rank-condition")}
