"""Controls and siblings for lintC31 (issue 41: errors are certain; a fragment is not a whole script). A file that
reads as an excerpt by its own evidence (`FileModel.excerpt`: an elision line, or an import only a definition reads
left unused beside a call of such a definition the file lacks) gets no error that rests on what the file does not
hold; the whole script that looks like a fragment keeps its errors. Each program is the shape of a retired lint
script (source in the comment above it), cut to a few lines and linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine
from gpudoctor.linter.fragment import excerpt_evidence
from gpudoctor.linter.model import FileModel
from test_controls_lintA22 import found


def lint(code: str) -> list:
    return list(engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py"))


def excerpt(code: str) -> str | None:
    import ast

    text = textwrap.dedent(code).lstrip("\n")
    return excerpt_evidence(FileModel(ast.parse(text), text))


# lint heldout28 u005 (an extract of train_gpt.py, lines 1-72 and 668-994): the config dataclass and the model
# class were in the lines left out; `dataclass` and `nn` stay imported, unused
EXTRACT_CLASSES = """
    import os
    import torch
    import torch.distributed as dist
    from dataclasses import dataclass
    IMPORT_LINE

    def main():
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = GPT(GPTConfig(n_layer=12)).cuda()
        model.train()

    if __name__ == "__main__":
        main()
"""

# lint heldout28 u013 (lines 1-36, 210-228, 306-671): `parse_args` was defined at line 37, left out
EXTRACT_PARSE_ARGS = """
    import argparse
    import os
    import torch
    import torch.distributed as dist

    def main():
        args = parse_args()
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        print(args.lr)

    if __name__ == "__main__":
        main()
"""

# a short whole script with imports and a main guard, one helper forgotten (lint heldout9 u033's `save_model(epoch)`,
# dev7 u048's `train_with_deepspeed()`): nothing says a part is missing
WHOLE_FORGOTTEN_HELPER = """
    import os
    import torch
    import torch.distributed as dist

    def main():
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        for epoch in range(10):
            save_model(epoch)

    if __name__ == "__main__":
        main()
"""

# a paste with an elision line (lint dev4 k019, heldout3 m018: `# ...` where the user cut lines)
ELIDED = """
    import os
    import torch
    import torch.distributed as dist

    def main():
        dist.init_process_group("nccl")
        # ...
        reader = Reader(db, config)
        trian()

    def train():
        pass

    if __name__ == "__main__":
        main()
"""


class TestUndefinedNameInAnExcerpt:
    """undefined-name: a function or class an excerpt calls and never defines is one its cut-out lines define."""

    rule = "undefined-name"

    def test_sibling_classes_left_out_with_their_dataclass_import(self):
        assert found(EXTRACT_CLASSES.replace("IMPORT_LINE", "import torch.nn as nn"), self.rule) == []

    def test_sibling_parse_args_left_out_with_the_argparse_import(self):
        assert found(EXTRACT_PARSE_ARGS, self.rule) == []

    def test_sibling_classes_left_out_read_as_values(self):
        # lint heldout28 u021: `HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))`, the argument
        # dataclasses in the lines the extract left out, `dataclass` imported and unused
        code = EXTRACT_CLASSES.replace("IMPORT_LINE", "import transformers").replace(
            "model.train()", "parser = transformers.HfArgumentParser((ModelArguments, DataArguments))")
        assert found(code, self.rule) == []

    def test_control_the_dataclass_import_used_keeps_the_error(self):
        # the import is read: nothing was left out with it; GPT and GPTConfig are read from nowhere
        code = EXTRACT_CLASSES.replace("IMPORT_LINE", "@dataclass\n    class Config:\n        n: int = 1\n")
        assert found(code, self.rule) == [(14, "error")]

    def test_control_argparse_used_keeps_the_error(self):
        code = EXTRACT_PARSE_ARGS.replace("args = parse_args()", "args = parse_argz(argparse.ArgumentParser())")
        assert [s for _, s in found(code, self.rule)] == ["error"]

    def test_control_whole_script_with_a_forgotten_helper_keeps_the_error(self):
        assert excerpt(WHOLE_FORGOTTEN_HELPER) is None
        assert found(WHOLE_FORGOTTEN_HELPER, self.rule) == [(9, "error")]

    def test_control_star_import_binds_the_name(self):
        code = WHOLE_FORGOTTEN_HELPER.replace("import os\n", "import os\nfrom helpers import *\n")
        assert found(code, self.rule) == []

    def test_sibling_elision_value_is_a_warning_and_a_misspelling_an_error(self):
        said = {d.line: d for d in lint(ELIDED) if d.rule == self.rule}
        # `db`/`config`: values the cut lines may bind: a warning that says the file reads as an excerpt
        assert said[8].severity == "warning" and "excerpt" in said[8].message
        # `trian()` beside `def train`: a misspelling the lines shown decide, an error even in an excerpt
        assert said[9].severity == "error" and "`train`" in said[9].message


class TestExcerptFact:
    """FileModel.excerpt: the one fact; what it reads and what it does not."""

    def test_sibling_ellipsis_comment(self):
        assert "left out" in (excerpt(ELIDED) or "")

    def test_sibling_ellipsis_statement_among_others(self):
        assert excerpt("import torch\n\ndef f(x):\n    y = x + 1\n    ...\n    return y\n") is not None

    def test_control_stub_body(self):
        assert excerpt('import torch\n\ndef f(x):\n    """Doc."""\n    ...\n\nclass P:\n    ...\n') is None

    def test_control_shortened_path_is_not_code(self):
        # lint dev3 h057: `(the path in the file URL shortened)` is said of a path, not of code
        assert excerpt("# restated: an experiment (the path in the file URL shortened)\nimport torch\n") is None

    def test_sibling_code_said_shortened(self):
        assert excerpt("# restated (not verbatim), networks and options shortened\nimport torch\n") is not None

    def test_control_unused_argparse_without_a_missing_definition(self):
        assert excerpt("import argparse\nimport torch\n\ndef main():\n    return torch.zeros(1)\n\nmain()\n") is None


# a whole script whose only evidence of a missing part would be an unused import: dist-without-init stays an error
DDP_NO_INIT = """
    import argparse
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main():
        model = torch.nn.Linear(2, 2).cuda()
        model = DDP(model, device_ids=[0])

    if __name__ == "__main__":
        main()
"""


class TestOtherErrorsInAnExcerpt:
    """An error that rests on what the file lacks (dist-without-init's "nothing in this file starts one") is a
    warning in an excerpt; one the lines shown decide (unexpected-argument) stays an error."""

    def test_control_whole_file_keeps_dist_without_init(self):
        assert [s for _, s in found(DDP_NO_INIT, "dist-without-init")] == ["error"]

    def test_sibling_excerpt_makes_it_a_warning(self):
        code = DDP_NO_INIT.replace("        model = torch.nn", "        # ... set-up left out ...\n        model = torch.nn")
        said = [d for d in lint(code) if d.rule == "dist-without-init"]
        assert [d.severity for d in said] == ["warning"] and "excerpt" in said[0].message

    def test_control_local_evidence_stays_an_error(self):
        code = DDP_NO_INIT.replace("device_ids=[0])", "devices_ids=[0])").replace(
            "        model = torch.nn", "        # ...\n        model = torch.nn")
        assert [s for _, s in found(code, "unexpected-argument")] == ["error"]
