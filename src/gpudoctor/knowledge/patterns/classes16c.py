"""Classes of the sixteenth round's third part (issue 35, diagC16): what the retired heldout16's partly-right answers
lacked where the log decides it.

- a module of the project's own package that imports its sibling by a bare name (`import network` in src/crowd_count.py,
  itself imported as `from src.crowd_count import ...`): Python 2's implicit relative import, which Python 3 removed, so
  "No module named 'network'" names no missing install but the import line (svishwa/crowdcount-cascaded-mtl#4:
  https://github.com/svishwa/crowdcount-cascaded-mtl/issues/4, fixed there by `from src import network`). `bare_sibling_import`
  reads it from the traceback's frames: the innermost is the project's own file whose quoted line imports the missing name
  bare, and the frame that called it imports that file as a submodule of a package (`PKG.STEM`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from gpudoctor.knowledge.signs import Frame

# `import network`, `import network as net`, `from network import X`: the name imported bare (no dot, no leading dot)
BARE_IMPORT = re.compile(r"^\s*(?:import\s+(?P<a>\w+)(?:\s+as\s+\w+)?\s*(?:,|$)|from\s+(?P<b>\w+)\s+import\b)")


def bare_sibling_import(frames: Sequence[Frame], module: str) -> Optional[tuple[str, str]]:
    """(package, file) when the innermost frame, the project's own file, imports `module` by a bare name and the frame
    that called it imported that file as a submodule of `package` (`from package.stem import ...`); None otherwise."""
    if "." in module or len(frames) < 2:
        return None
    inner, caller = frames[-1], frames[-2]
    m = BARE_IMPORT.match(inner.code)
    if not inner.user() or m is None or (m.group("a") or m.group("b")) != module:
        return None
    parts = inner.path.replace("\\", "/").rsplit("/", 2)
    if len(parts) < 3 or not parts[2].endswith(".py"):
        return None
    package, stem = parts[1], parts[2][:-3]
    if stem == "__init__" or not re.search(rf"(?:^|[\s.]){re.escape(package)}\.{re.escape(stem)}\b", caller.code):
        return None
    return package, inner.path
