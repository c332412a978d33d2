"""Classes of the twentieth round's second part (issue 35, diagB20): Python's own message for an operation given a value of a
type it does not take. A rule keyed on a word read two of them as a program's refusal: `'>=' not supported between
instances of 'NoneType' and 'int'` (huggingface/text-generation-inference#2828) and `'>' not supported between instances of
'int' and 'Flag'` (anshuldutt21/Skeleton-Based-Generation-Model's log_train.txt) were feature-not-supported, "the program
refused an unsupported setup", by the words "not supported". They are Python's operators, comparisons, calls, indexing and
iteration refusing a value's type: the value is the mistake, not the setup. `OPERAND_MESSAGE` (knowledge/operand_types.py) is
that set of messages, written once: this class reads it; feature-not-supported's rule and the environment words of
knowledge/signs.py (a message that says "not supported" is the install's, not your code's) leave it.

A value of the wrong type does not say which line made it: the traceback's last frame names where it arrived, and the types
name what to look for (None: a setting, an argument or a result never set; an object where a number was expected: the
object passed instead of its value, an absl Flag for FLAGS.x, a Tensor for tensor.item()). Named, never claimed: it
refines the exception answer (knowledge/unrecognised.py).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.operand_types import OPERAND_MESSAGE, OPERAND_WORDS
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, HARMLESS, pattern

E = Severity.ERROR
W = Severity.WARN

NONE = "NoneType"


def operand_names(m: re.Match, _context: list[str]) -> dict:
    """What the fix names: the operation Python refused and the types it was given (a NoneType first: the commonest)."""
    g = {k: v for k, v in m.groupdict().items() if v}
    if "operator" in g:
        operation, types = f"the operator {g['operator'].strip()}", [g["left"], g["right"]]
    elif "comparison" in g:
        operation, types = f"the comparison {g['comparison']}", [g["first"], g["second"]]
    elif "unary" in g:
        operation, types = g["unary"], [g["operand"]]
    elif "used" in g:
        operation, types = g["use"].replace("is not ", "").replace("does not support ", ""), [g["used"]]
        operation = {"subscriptable": "an index [ ]", "callable": "a call ( )", "iterable": "iteration (a for loop, list(), unpacking)",
                     "an iterator": "next()", "the context manager protocol": "a with statement",
                     "the asynchronous context manager protocol": "an async with statement"}.get(operation, operation)
    elif "unpacked" in g:
        operation, types = "unpacking into a call's arguments (* or **)", [g["unpacked"]]
    elif "joined" in g:
        operation, types = f"concatenation (+) to a {g['joined']}", [g["added"]]
    elif "factor" in g:
        operation, types = "repeating a sequence (*)", [g["factor"]]
    elif "sized" in g:
        operation, types = "len()", [g["sized"]]
    else:
        operation, types = "an integer's place (range(), an index, a size)", [g.get("index", "")]
    out = {"operation": operation, "types": " and ".join(dict.fromkeys(t for t in types if t))}
    if NONE in types:
        out["none"] = "yes"
    return out


PATTERNS = [
    pattern(
        "operand-type-mismatch",
        "platform",
        CAUSE,
        W,
        "a value of the wrong type reached an operation: Python's own type error names the types (None, or an object where a number or a string was expected)",
        r"^(?!.*(?i:\bwarn(?:ing)?\b)).*?(?:^|[\s\"'(\[`])(?P<exception>TypeError): (?P<message>(?:" + OPERAND_MESSAGE + r").*)",
        OPERAND_WORDS,
        why="""Python refused an operation (an arithmetic operator, a comparison, an index, a call, a loop, len()) because a
        value is of a type that operation does not take, and its message names the types. The program did not refuse a
        setup: a value is not what the code expects at that line. NoneType is the commonest: a setting, an argument or a
        configuration entry that was never given (its default is None), a function that returned nothing, or an optional
        import that failed quietly. Another type is an object passed where its value was meant (an absl or argparse flag
        object instead of FLAGS.x, a Tensor instead of tensor.item(), a dict or a list where one of its items was meant), or
        a string read from a file or the command line where a number was meant. The line names the types, not which
        expression holds them: the traceback's last frame does.""",
        fix="""find which value (TYPES) reached OPERATION on the line the traceback's last frame names (print
        its type just before that line), then where it was made: a NoneType is a setting or an argument not given (pass it on the command
        line or in the config) or a result that was never set (check the function that returned it); another type is the
        object passed instead of its value (FLAGS.x rather than the flag, tensor.item(), int(...) of a string read from a
        file)""".replace("\n        ", " "),
        examples=[
            ("TypeError: '>=' not supported between instances of 'NoneType' and 'int'", "huggingface/text-generation-inference#2828 (the issue's title)"),
            ("TypeError: '>' not supported between instances of 'int' and 'Flag'",
             "anshuldutt21/Skeleton-Based-Generation-Model log_train.txt (an absl Flag object compared, not FLAGS.x's value)"),
            ("TypeError: 'EBM' object is not iterable", "yilundu/irem_code_release#2 (sync_model runs `for model in model`: one model where a list of them was meant)"),
            ("TypeError: 'QuantizationOutput' object is not iterable", "feifeifeiliu/probtalk#9 (under multi-GPU training; pasted without its traceback)"),
        ],
        refines="python-exception",  # the exception answer names it: the line does not say which expression holds the value
        not_examples=[
            "TypeError: 'NoneType' object is not subscriptable",  # none-value-used
            "ValueError: Policy type groot not supported. Supported policies: ['act', 'smolvla']",  # a program's refusal
            "TypeError: 'type' object is not subscriptable",  # list[int] on a Python before 3.9: the interpreter's version
        ],
        fields=operand_names,
    ),
]

# The source line a frame runs while it reports an exception it caught: only an `except` block runs them (the traceback
# of the exception being handled, formatted or printed; a worker's error queue or pipe, which its parent reads).
REPORTING_ERROR = re.compile(r"\btraceback\.(?:format_exc|print_exc|format_exception|print_exception)\(|\bsys\.exc_info\(\)"
                             r"|\berror_queue\.put\(")


def reporting_error(code: str) -> bool:
    """The frame's source line reports an exception the process caught (REPORTING_ERROR)."""
    return REPORTING_ERROR.search(code) is not None


PATTERNS_TOLD = [
    pattern(
        "interrupted-while-reporting-error",
        "launcher",
        CONSEQUENCE,
        E,
        "a process was interrupted while it reported an error of its own: its parent stopped every process after that failure (not a Ctrl-C from outside)",
        # run-interrupted's line; the traceback's innermost frame decides (knowledge/story.py refine): it was in an
        # `except` block, reporting the exception it caught
        r"^(?P<exception>KeyboardInterrupt)$",
        ("KeyboardInterrupt",),
        why="""The KeyboardInterrupt was raised inside the code that handles another exception: the innermost frame was
        formatting or sending the traceback it caught (traceback.format_exc(), an error queue its parent reads). A
        launcher that starts one process per GPU (OpenNMT-py's and fairseq's spawn with an error handler, torch's
        multiprocessing) interrupts every child (SIGINT) as soon as one reports a failure, so the other children stop
        wherever they are, often in the same handler. The stop is a consequence: the failure that child was reporting,
        or another child's, is the cause. When the log holds it, it is told first; when it does not, that child's own
        error was cut from the paste or written elsewhere.""",
        fix="""read the error the processes were reporting: the other tracebacks of the log, above or below this one (the
        first child's exception; the parent's 'Tracebacks above this line can probably be ignored' block prints it); if the
        log shows none, rerun with one process (world_size 1, one GPU) so that the first error is printed alone""".replace("\n        ", " "),
        examples=[
            ("KeyboardInterrupt", "OpenNMT/OpenNMT-py#1781 (a child interrupted in error_queue.put(..., traceback.format_exc()))"),
        ],
        refines="run-interrupted",  # told from run-interrupted's line when the frame decides (knowledge/story.py refine)
        not_examples=["During handling of KeyboardInterrupt, the following happened"],
        after=("*",),
    ),
]

# torch.utils.collect_env and the copies projects ship (vLLM's, Aphrodite's collect_env.py, often saved as env.py): the
# function that prints the report, and the helpers that gather it; `get_env_info` alone is also a name of reinforcement
# learning code (SMAC's and PyMARL's environments), so it decides only beside one of the helpers
REPORT_PRINTER = "get_pretty_env_info"
REPORT_HELPERS = frozenset({"get_pip_packages", "run_with_pip", "run_and_read_all", "run_and_parse_first_match", "get_nvidia_driver_version",
                            "get_gpu_info", "get_running_cuda_version", "get_cudnn_version", "get_nvidia_smi", "get_conda_packages"})


def environment_report(frames) -> bool:
    """The traceback is an environment report's own (collect_env): its frames are the report's, by file or by function."""
    funcs = {f.func for f in frames}
    return (REPORT_PRINTER in funcs or any(f.path.replace("\\", "/").endswith("/collect_env.py") for f in frames)
            or "get_env_info" in funcs and bool(funcs & REPORT_HELPERS))


PATTERNS_TOLD.append(
    pattern(
        "environment-report-failed",
        "platform",
        HARMLESS,
        Severity.INFO,
        "the environment report script (collect_env) failed on its own: its traceback is not the run's failure",
        # the exception's line (python-exception claims it); the traceback's frames decide (knowledge/story.py tell)
        r"^(?P<exception>[A-Z]\w*(?:Error|Exception)): (?P<message>.+)",
        ("Error: ", "Exception: "),
        why="""An issue template asks for the output of an environment report (python -m torch.utils.collect_env, or the
        copy a project ships as collect_env.py or env.py) and the report itself raised: one of the commands it runs (pip,
        nvidia-smi, conda) printed nothing or is not installed, and the script did not expect it. It says nothing about the
        run the issue is about; that run's own failure is elsewhere in the log, or was not pasted.""",
        fix="""read the run's own output for its failure (the traceback or error the issue is about); for the report, run
        torch's own `python -m torch.utils.collect_env` with the job's Python, and check that the tool the failing frame
        calls works there (python -m pip --version, nvidia-smi)""".replace("\n        ", " "),
        examples=[
            ("AttributeError: 'NoneType' object has no attribute 'splitlines'", "dphnAI/sonar#426 (env.py's get_pip_packages: pip printed nothing)"),
        ],
        refines="python-exception",
        not_examples=["collecting environment information..."],
    )
)
