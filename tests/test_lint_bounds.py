"""lint's bound on what it parses (issue 39 medium 4): the syntax tree, not the bytes,
costs memory, so statements and items are counted before anything is parsed."""

import json

from gpudoctor.core.user_file import PARSE_CAP
from gpudoctor.linter.engine import lint_file


def test_a_file_of_too_many_statements_is_skipped_before_parsing_naming_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(PARSE_CAP[0], "1000")
    many = tmp_path / "many.py"
    many.write_text("x = 1\n" * 1001)
    [d] = lint_file(str(many))
    assert d.rule == "unreadable-file" and "above the 1,000 limit" in d.message and PARSE_CAP[0] in d.message
    one_line = tmp_path / "one_line.py"
    one_line.write_text("x = 1;" * 1001)  # one line: statements are counted, not lines
    assert [d.rule for d in lint_file(str(one_line))] == ["unreadable-file"]


def test_a_notebook_cell_of_too_many_items_is_skipped_naming_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(PARSE_CAP[0], "1000")
    nb = tmp_path / "big.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x = [" + "0," * 1001 + "]"}]}))
    [d] = lint_file(str(nb))
    assert d.rule == "unreadable-file" and "above the 1,000 limit" in d.message


def test_a_file_under_the_limit_is_linted_as_before(tmp_path, monkeypatch):
    monkeypatch.setenv(PARSE_CAP[0], "1000")
    ok = tmp_path / "ok.py"
    ok.write_text("x = 1\n" * 900)
    assert lint_file(str(ok)) == []


def test_a_config_table_of_the_wrong_shape_or_depth_is_the_one_line_config_error(tmp_path):
    import pytest

    from gpudoctor.linter.config import ConfigError, load

    cases = {
        "[tool]\ngpudoctor = 5\n": "[tool.gpudoctor] must be a table",
        "[tool.gpudoctor.lint]\nselect = " + "[" * 5000 + "]" * 5000 + "\n": "nested too deeply",
    }
    for text, said in cases.items():
        (tmp_path / "pyproject.toml").write_text(text)
        with pytest.raises(ConfigError, match=said.replace("[", r"\[").replace("]", r"\]")) as info:
            load(str(tmp_path / "pyproject.toml"))
        assert "\n" not in str(info.value)


def test_a_size_limit_past_2_63_is_a_limit_not_an_overflow(tmp_path, monkeypatch):
    from gpudoctor.core.user_file import SOURCE_CAP, cap, read_capped

    monkeypatch.setenv(SOURCE_CAP[0], str(2**70))
    (tmp_path / "a.py").write_text("x = 1\n")
    assert cap(SOURCE_CAP) == 2**62 and read_capped(str(tmp_path / "a.py"), SOURCE_CAP) == b"x = 1\n"


def test_decompression_stops_at_its_limit_and_says_so(tmp_path, monkeypatch):
    import lzma

    from gpudoctor.commands.diagnose.inputs import Salvaged, open_log

    monkeypatch.setattr(Salvaged, "LIMIT", 1 << 20)
    bomb = tmp_path / "rank0.log.xz"
    bomb.write_bytes(lzma.compress(b"step 1 loss 0.5\n" * (1 << 18)))  # 4 MB of text in a few KB
    with open_log(str(bomb)) as stream:
        got = b""
        while chunk := stream.read(1 << 16):
            got += chunk
    assert len(got) == 1 << 20 and "limit; the rest was not read" in str(stream.error)


def test_notebook_cells_past_the_limit_are_said_not_dropped_without_a_word(tmp_path, monkeypatch):
    from gpudoctor.linter import engine, notebook

    monkeypatch.setattr(notebook, "MAX_CELLS", 3)
    monkeypatch.setattr(engine, "MAX_CELLS", 3)
    nb = tmp_path / "many.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": f"x{i} = {i}"} for i in range(5)]}))
    [d] = lint_file(str(nb))
    assert d.rule == "unreadable-file" and "only its first 3 cells were linted: 2 more not read" in d.message


def test_a_function_that_calls_itself_with_int_of_its_world_size_is_linted_to_the_end(tmp_path):
    # the `int(world_size)` it passes is an origin of its own parameter: following that without
    # a bound raised RecursionError inside a rule, and a user's run got nothing from that rule
    script = tmp_path / "recursive.py"
    script.write_text(
        "import torch.distributed as dist\n"
        "def setup(rank, world_size):\n"
        "    dist.init_process_group('nccl', rank=rank, world_size=world_size)\n"
        "def run(world_size):\n"
        "    world_size = int(world_size)\n"
        "    setup(0, world_size)\n"
        "    run(int(world_size))\n")
    assert [d.rule for d in lint_file(str(script))] == ["rank-hardcoded"]
