"""Rules for classes of messages of the thirteenth round (issue 35, diagA13): the answers on the retired held-out
part heldout12 that were confidently wrong, sorted by the class of their failing message.

- a call refused for its arguments (TypeError: "X() missing N required positional arguments", "got an unexpected keyword
  argument", "takes N positional arguments but M were given"), raised at the caller's own line: Python raises it before
  the callee runs, so the traceback ends in the caller whoever's the callee is. The line does not decide between a call
  that is wrong for the caller's own function and an installed package (a pip package, a repository's submodule, a
  compiled extension) of another version than the code was written for: named, not claimed (the unrecognised answer
  names the class with both; raised inside a library's frame it is library-api-mismatch's).

Its examples are real lines from the sampled threads (thread in the source); its counter-examples the nearest lines that
mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern
from gpudoctor.knowledge.patterns.classes7 import EXCEPTION_START

W = Severity.WARN


def callee_names(m, _context: list[str]) -> dict:
    """What the fix names: the function whose call was refused, as the message gives it (a class's constructor's
    `__new__`/`__init__` as the constructor), and the argument the message names."""
    callee = m.group("callee")
    if callee.rsplit(".", 1)[-1] in ("__new__", "__init__"):
        callee = f"the constructor {callee}()"
    else:
        callee = f"{callee}()"
    argument = m.group("keyword") or m.group("twice") or (m.group("missing") or "").strip(" .")
    return {"callee": callee, "argument": argument} if argument else {"callee": callee}


PATTERNS = [
    pattern(
        "call-arguments-refused",
        "platform",
        CAUSE,
        W,
        "a call was refused for its arguments: the code passes what the called function does not take (the call is wrong, or the installed package it calls is another version)",
        EXCEPTION_START + r"TypeError: (?P<callee>[\w.<>]+)\(\) (?:got an unexpected keyword argument '(?P<keyword>\w+)'"
        r"|missing \d+ required (?:positional|keyword-only) arguments?:? ?(?P<missing>.*)"
        r"|takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:were|was) given"
        r"|got multiple values for (?:keyword )?argument '(?P<twice>\w+)')",
        ("unexpected keyword argument", "required positional argument", "required keyword-only argument", "positional argument", "multiple values for"),
        why="""Python checks a call's arguments against the called function's signature before the function runs, so the
        traceback ends at the line that makes the call, whoever wrote the function it calls. Two things give this error, and
        the line does not tell them apart: the call is wrong for the function (your own function called with arguments it
        does not take), or the function is an installed package's (a pip package, a repository's submodule or CUDA extension
        built with pip install, a compiled module) whose installed version has another signature than the one the calling
        code was written for: a submodule of the repository that was not (re)built after the code changed, a package
        installed from PyPI instead of the repository's own fork of it, one upgraded alone. A constructor's `__new__` or
        `__init__` refused (a settings tuple, a layer class) is most often this second case: the class's arguments changed
        between versions. What decides it: where the called function comes from (the import at the top of the file that
        makes the call) and its installed version against the one the code requires.""",
        fix="""see what the call at the traceback's last frame calls (CALLEE, with ARGUMENT): if it is your own code, make the call
        and the signature agree; if it comes from an installed package or compiled extension, the installed version is not the
        one this code was written for: `pip show PACKAGE` and install the version the repository pins (its requirements file; a
        repository that ships the package as a submodule: `git submodule update --init --recursive` and `pip install
        ./submodules/NAME` again, so its own modified version replaces one installed from elsewhere)""".replace("\n        ", " "),
        examples=[
            ("TypeError: __new__() missing 2 required positional arguments: 'depth_threshold' and 'iteration'",
             "benhenryL/Deblurring-3D-Gaussian-Splatting#14 (the installed diff-gaussian-rasterization is not the repo's modified submodule)"),
            ("TypeError: __new__() missing 1 required positional argument: 'antialiasing'",
             "j-alex-hanson/speedy-splat#1 (GaussianRasterizationSettings of another diff-gaussian-rasterization version)"),
            ("TypeError: chemprop_predict() got an unexpected keyword argument 'use_gpu'",
             "swansonk14/SyntheMol#5 (the repository's own function lost the argument: its call was the bug)"),
            ("TypeError: Linear4bit.forward() takes 2 positional arguments but 3 were given.",
             "pjlab-songcomposer/songcomposer#18 (the model's code and the installed bitsandbytes out of step)"),
        ],
        not_examples=[
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            "TypeError: 'NoneType' object is not subscriptable",
            "AttributeError: 'Fabric' object has no attribute 'init_module'",  # an attribute: attribute-missing
        ],
        fields=callee_names,
        refines="library-api-mismatch",  # raised in a library's frame it is that class; elsewhere the unrecognised answer names this one
    ),
]
