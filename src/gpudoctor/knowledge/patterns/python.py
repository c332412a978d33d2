"""The last resort: a Python exception no other pattern knows is still the rank's own failure."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, groups, pattern

JVM = r"(?:java|javax|jdk|scala|kotlin|org\.apache|com\.google|io\.grpc)"  # the package roots of JVM exceptions users paste

PATTERNS = [
    pattern(
        "exception-ignored-at-exit",
        "launcher",
        HARMLESS,
        Severity.INFO,
        "an exception was ignored while Python shut down (safe to ignore)",
        r"Exception ignored in: <|^AssertionError: can only (?:test|join) a child process",
        ("Exception ignored in", "a child process"),
        why="""Python reports, without failing, an exception raised in a destructor (`__del__`) during
        interpreter exit; the DataLoader's worker iterator commonly raises 'can only test a child process'
        there when the program ends or forks. It is not the cause of a failure printed before it.""",
        fix="nothing to do; to silence it, end DataLoader iteration (or `del` the iterator) before the program exits",
        examples=[
            ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x152b2ae06520>", "pytorch/pytorch#149837"),
            ("AssertionError: can only test a child process", "pytorch/pytorch#149837"),
            ("2.16it/s]Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f62eb6ed630>", "ShuaiLYU/REB#9 (after a progress bar)"),
            ("AssertionError: can only join a child process", "zhunzhong07/HHL#10 (older torch)"),
        ],
        not_examples=["AssertionError: Torch not compiled with CUDA enabled"],
    ),
    pattern(
        "python-exception",
        "launcher",
        CAUSE,
        Severity.ERROR,
        "a rank raised an exception",
        # the last line of a traceback: "ValueError: ...", "torch.OutOfMemoryError: ..."; not the
        # torch.distributed wrappers (DistBackendError & co report another rank's failure)
        # a JVM exception keeps its package (java.lang.IllegalStateException): it says the failure is not Python's
        # (or after a full-width colon or comma: a paste written in Chinese or Japanese, "报错：AttributeError: ...")
        r"(?:^|[\s\"'(\[\uff1a\uff0c])(?:(?!" + JVM + r"\.)[A-Za-z_][\w]*\.)*(?P<exception>(?:" + JVM + r"\.(?:[a-z_]\w*\.)*)?"
        r"(?!Dist\w*Error|ConnectionResetError|BrokenPipeError)[A-Z]\w*(?:Error|Exception)): (?P<message>.+)",
        ("Error: ", "Exception: "),
        why="""An exception that is not one of the known distributed failures, raised in the user's own code
        (the traceback's last frame is theirs) with nothing pointing at the environment: a bug or bad input
        in the training code itself (a KeyError in the dataset, a missing file). When it comes first, the
        other ranks' timeouts and lost connections are its consequences. Without such a frame, or when the
        exception points at the install, the GPU or the launcher, it is reported as `unrecognised-failure`.""",
        fix="read the traceback just above this line: the frame that raised, in your own code, is the line to fix",
        examples=[
            ("ZeroDivisionError: division by zero", "Python exception text"),
            ("[rank3]: KeyError: 'input_ids'", "Python exception text"),
            ("trainer-pod-0 | IndexError: list index out of range", "Python exception text behind an unknown log prefix"),
            ('    "message": "ValueError: the dataset has 0 samples",', "a torchrun error file (error.json) pasted as text"),
            ("报错：AttributeError: 'list' object has no attribute 'to'", "OpenBMB/MiniCPM-V#361 (the error quoted after a Chinese full-width colon)"),
            ('Exception in thread "main" java.lang.IllegalStateException: Cannot call methods on a stopped SparkContext.', "a JVM's uncaught exception (Spark)"),
        ],
        not_examples=[
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid argument",
            "UserWarning: this is only a warning: nothing failed",
        ],
        fields=groups,
    ),
]
