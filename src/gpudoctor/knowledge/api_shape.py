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
    why = " ".join(WHY.replace("NAME", name).split())
    fix = " ".join(FIX.replace("WHAT", what).replace("WHICH", which).replace("PACKAGE", package).split())
    return why, fix
