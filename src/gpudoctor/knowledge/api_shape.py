"""An error about an API's shape whose traceback the log does not hold (issue 35 item 4: a class of messages whose
message alone decides the cause).

`AttributeError: 'Fabric' object has no attribute 'init_module'`, `AttributeError: module 'torch.distributed' has no
attribute 'ProcessGroupNCCL'`, `TypeError: chemprop_predict() got an unexpected keyword argument 'use_gpu'`,
`TypeError: Linear4bit.forward() takes 2 positional arguments but 3 were given`: pasted alone, or printed without the
traceback, whose frame raised it is not shown. Of the development parts' failed logs that held such a line and no
traceback of it, 12 of 14 were two installed packages whose versions do not go together or a bug a later release fixed
(lit-llama#302, FastChat#1458, LlamaFactory#5647, accelerate#770, ray#23302, ColabFold#332, learnMSA#6, dinov2#391,
SyntheMol#5, gluon-face#32, songcomposer#18, MiniCPM-V#361); one a feature a trainer did not support yet, one not
resolved. With a traceback, the frame that raised decides instead (knowledge/story.py `refine`): a library's is this class,
your code's is the user's exception.

The words of library-api-mismatch for that case, built from the names the message gives (never a guess beyond them).

Two shapes of it the message alone does not decide (issue 35, diagB30: judged misreads), told as a warning that says what
was seen and what decides it, never the versions asserted:
- a container of Python's own (a list, a tuple, a dict) where a tensor was expected: the attribute read is a tensor's
  (`'list' object has no attribute 'view'`, `'tuple' object has no attribute 'device'`), or a graph batch's
  (`'tuple' object has no attribute 'num_nodes'`: DataParallel's scatter of PyG batches, lightaime/deep_gcns_torch#9). A builtin's attributes are the
  same in every version of every package, so the message says a container reached code that treats it as a tensor, not
  which code made it: the user's script given another model's output (WongKinYiu/yolov9#22: a YOLOv9 model trained with
  train.py, whose loss expects one head's tensor, where train_dual.py takes the list of its two heads), a model that
  returns several outputs, a loader's batch, or a package whose other version returns a container there. A builtin's
  other attribute keeps the versions reading: `'dict' object has no attribute 'num_gpus_per_worker'` is a config passed as
  a dict where an API of another version takes its own object (ray-project/ray#23302, fixed by an upgrade);
- the message stands only in the thread's title, no line of the log shows it (facebookresearch/synsin#2: "AttributeError:
  'VectorEnv' object has no attribute 'sample_navigable_point'" as the title, the post about the setup): the reporter's
  words name it, and no output shows which code called what.
"""

from __future__ import annotations

import re

NOT_SHOWN = "not shown (the log holds no traceback of it)"
# A warning's line that quotes such an error: a fallback the program went on from, not the failure
WARNED = re.compile(r"(?i)warn(?:ing)?\b")  # ([WARNING], UserWarning, warn:)

WHY = """The message says that an API does not take what its caller gives it: NAME. The log holds no traceback of it, so
whose frame made the call is not shown. When the API is an installed package's, the installed version is not the one the
calling code was written for (a package upgraded alone, the caller's requirements not installed, or a build without that
part: a torch without NCCL has no ProcessGroupNCCL), or one of them has a bug that a later release fixed; when it is your own
code's, the call is wrong there."""

FIX = """find the package that defines WHAT (WHICH) and compare its installed version with the one the calling code
requires (that project's requirements): install that version (`pip install -U PACKAGE` for a name added later, or
`pip install "PACKAGE==VERSION"` for one removed since) and search its issues for the message, since such errors are often
fixed in a later release; the traceback in the full output names the frame that made the call: a package's (the versions
above) or your code's (change the call there)"""


# Python's own containers: their attributes are no package's version
BUILTIN_TYPES = frozenset(("list", "tuple", "dict", "set", "generator"))
# A tensor's (torch's, and numpy's and TensorFlow's alike) attributes and methods: read of a container, it was taken for a tensor
TENSOR_ATTRIBUTES = frozenset((
    "view", "device", "shape", "size", "dim", "ndim", "dtype", "cuda", "cpu", "to", "float", "half", "double", "long", "int", "bool",
    "numpy", "detach", "item", "unsqueeze", "squeeze", "permute", "reshape", "contiguous", "clone", "requires_grad", "backward",
    "grad", "data", "transpose", "expand", "repeat", "flatten", "numel", "is_cuda", "get_device", "type_as", "new_zeros",
    "new_ones", "new_full", "new_tensor", "masked_fill", "index_select", "narrow", "argmax", "softmax", "sigmoid", "astype",
    "split", "chunk", "sum", "mean", "max", "min", "T",
    # a graph batch's (PyTorch Geometric's Data and Batch), the tensor's kin: a container read for one is a batch that
    # nn.DataParallel's scatter split into tuples (pyg-team/pytorch_geometric#1429, lightaime/deep_gcns_torch#9)
    "num_nodes", "num_edges", "num_graphs", "edge_index", "edge_attr",
))

WHY_BUILTIN = """The message says that a value of Python's own type TYPE reached code that uses it as a tensor (it reads
.ATTR of it): a TYPE has no ATTR in any version of any package. Which code made that value is not shown: a script or
a model that returns a TYPE where the caller expects one object (a model with several heads, trained or run with the
script of a model with one; a loader that yields TYPEs), or a package whose other version returns a TYPE there."""

FIX_BUILTIN = """the traceback's frames decide it (the full output holds them): at the last frame, print(type(VALUE)) of the value
whose .ATTR is read and follow it back to what made it; your own script or model (the script meant for that model or
weights: the project's README names which) or a package's function (then the versions its caller requires: `pip show
PACKAGE`)"""

WHAT_DECIDES = {
    "builtin": "the traceback of it: the frame that reads .ATTR of the TYPE, and the code that made that value (your script and model, or a package's function)",
    "title": "the output that shows it (the title alone names it): the run's traceback, whose frames say which code called what",
}


def taken_for_tensor(fields: dict) -> bool:
    """The message reads a tensor's attribute of one of Python's own containers."""
    return fields.get("type") in BUILTIN_TYPES and fields.get("attribute") in TENSOR_ATTRIBUTES


def undecided(fields: dict, title_only: bool) -> str:
    """Which of the shapes the message alone does not decide this is ("builtin", "title"), or ''."""
    if taken_for_tensor(fields):
        return "builtin"
    return "title" if title_only else ""


def what_decides(case: str, fields: dict) -> str:
    return WHAT_DECIDES[case].replace("ATTR", str(fields.get("attribute", ""))).replace("TYPE", str(fields.get("type", "")))


def unshown(fields: dict) -> tuple[str, str]:
    """(why, fix) of library-api-mismatch for a message without a traceback, with the names it gives."""
    module, owner, callee = fields.get("module"), fields.get("type"), str(fields.get("callee") or "")
    package = "PACKAGE"
    if module:
        name, what = f"the module {module} has no attribute {fields.get('module_attribute')}", module
        package = module.split(".", 1)[0]
        which = (f'`python -c "import {module}; print({module}.__file__)"` shows which {module} is imported: a file or folder of '
                 f"that name in your working folder shadows the package; `pip show {package}` its version")
    elif owner:
        name, what = f"an object of type {owner} has no attribute {fields.get('attribute')}", owner
        which = f"the import of {owner} in the calling code names it; `pip show PACKAGE` its version"
    else:
        keyword = fields.get("keyword")
        name = f"{callee}() takes no keyword argument {keyword}" if keyword else f"{callee}() does not take the arguments it was given"
        what = f"{callee}()"
        owner_name = callee.split(".", 1)[0]
        which = (f"the import of {owner_name} in the calling code names it; `pip show PACKAGE` its version" if not owner_name.startswith("__")
                 else "the message does not name its class: the traceback's last frame in the full output names its file; `pip show PACKAGE` its version")
    if taken_for_tensor(fields):
        attribute = str(fields.get("attribute"))
        why = " ".join(WHY_BUILTIN.replace("TYPE", str(owner or "")).replace("ATTR", attribute).split())
        fix = " ".join(FIX_BUILTIN.replace("VALUE", "x").replace("ATTR", attribute).split())
        return why, fix
    why = " ".join(WHY.replace("NAME", name).split())
    fix = " ".join(FIX.replace("WHAT", what).replace("WHICH", which).replace("PACKAGE", package).split())
    return why, fix
