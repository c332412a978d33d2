"""A traceback that is an issue template's own example, left in a post: not any run's failure.

A bug-report template shows what to paste with an example of its own, and a reporter who fills in the rest often leaves
it. Ultralytics' template (yolov5, yolov3 and the many forks that copied it) asks for "Input:" and "Output:" and shows a
snippet that divides a tensor by zero and a traceback from its author's notebook: `File "<ipython-input-5-be04c762b799>",
line 5, in <module>` / `c = a / 0` / `RuntimeError: ZeroDivisionError` (ultralytics/yolov5#3998, #4345, #4926, #1160,
ultralytics/yolov3#1566, TomMao23/multiyolov5#16: the same lines in each). Read as the run's failure it names a
RuntimeError "in your code" of a thread about something else (issue 35, diagB30: yolov5#3998, a SyncBatchNorm hang).

Keyed on the example's own frame and message together (its notebook cell's id, its source line, its message), never on
the template's prose: a reporter who pastes a real traceback under the template's headings keeps it. One row per
template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class TemplateExample:
    template: str  # whose template, in the finding's words
    path: str  # the example's innermost frame: its file, its source line, and the exception's message
    code: str
    message: str


EXAMPLES = (
    TemplateExample("Ultralytics' bug-report template (yolov5, yolov3 and their forks)", "<ipython-input-5-be04c762b799>", "c = a / 0",
                    "ZeroDivisionError"),
)


def template_of(frames: list, message: str) -> Optional[TemplateExample]:
    """The template whose example this traceback is (`frames`: knowledge/signs.py Frame, innermost last), or None."""
    if not frames:
        return None
    last = frames[-1]
    return next((e for e in EXAMPLES if last.path == e.path and last.code.strip() == e.code and message.strip() == e.message), None)
