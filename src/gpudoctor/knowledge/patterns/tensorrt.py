"""TensorRT's own tools (trtexec and the samples built on its sample logger): the status line they end on.

Every one of them opens with "&&&& RUNNING <name> # <command>" and closes with "&&&& PASSED", "&&&& FAILED" or
"&&&& WAIVED" and the same name and command (TensorRT's samples/common/logging.h, reportTestEnd). A FAILED status is the
tool's own verdict on the whole run: whatever it printed before (an [E] line, or nothing, as a stdout that was kept
apart from the tool's stderr) is why. PASSED is an end of its own (knowledge/ending.py reads the capitals)."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

PATTERNS = [
    pattern(
        "tensorrt-tool-failed",
        "platform",
        CAUSE,
        E,
        "a TensorRT tool (trtexec, a sample) reports that its run FAILED",
        # the status may stand after timestamps whose messages went to the other stream: "[08/02/2021-15:11:31] &&&& FAILED ..."
        r"&&&& FAILED (?P<tool>[\w.\-]+)(?: \[TensorRT v(?P<version>\d+)\])?(?: # (?P<command>.+))?",
        ("&&&& FAILED",),
        why="""TensorRT's tools close every run with a status line: this one says the run failed (building the engine from
        the ONNX model, parsing it, or running inference). The reason is what the tool logged before it at error level
        ([E] lines: an operator or an opset the parser does not support, a shape it cannot infer, a layer no tactic
        implements, too little workspace), which may have gone to the other output stream than this log; with --verbose,
        the last layer it parsed or built is where it stopped.""",
        fix=('trtexec --onnx=model.onnx --verbose 2>&1 | tee trtexec.log; grep -n "\\[E\\]" trtexec.log   # both streams, and the '
             "tool's own error lines: an unsupported operator is fixed by exporting the ONNX model at another opset "
             "(torch.onnx.export(..., opset_version=...)) or simplifying it (onnxsim), a shape by giving --minShapes/--optShapes/--maxShapes"),
        examples=[
            # dev7w: trtexec on a Faster R-CNN exported at opset 11, the error text on the other stream
            # https://github.com/Alex-Derhacobian/tensorrt_frcnn_bug/blob/d6a9a2e1cdd64245d6a41e654765722d6e5af98a/stdout.txt
            ("[08/02/2021-15:11:31] [08/02/2021-15:11:31] [08/02/2021-15:11:31] &&&& FAILED TensorRT.trtexec [TensorRT v8001] "
             "# ./trtexec --onnx=/future/u/alexder/faster-rcnn/trt_port/faster_rcnn.onnx --verbose", "Alex-Derhacobian/tensorrt_frcnn_bug stdout.txt"),
            ("&&&& FAILED TensorRT.sample_onnx_mnist [TensorRT v8601] # ./sample_onnx_mnist", "TensorRT samples' reportTestEnd"),
        ],
        not_examples=[
            "&&&& PASSED TensorRT.trtexec [TensorRT v8001] # ./trtexec --onnx=model.onnx --saveEngine=model.plan",
            "&&&& RUNNING TensorRT.trtexec [TensorRT v8001] # ./trtexec --onnx=model.onnx --verbose",
        ],
        fields=groups,
    ),
]
