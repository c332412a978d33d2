"""launch/torch_missing.py: after a failed job the launcher asks whether torch imports
only when no rank showed that it does. Run in a Python where `import torch` fails
(sys.modules["torch"] = None, as for a torch that is not installed), so that asking is
seen in the answer: the import's error, or None when it was not asked."""

import json
import subprocess
import sys

CODE = """
import json, sys
sys.modules["torch"] = None  # `import torch` raises ModuleNotFoundError in this process
from gpudoctor.launch.torch_missing import import_error_behind
from gpudoctor.probe.cuda import CudaFacts

quick = CudaFacts(False, 0, False, None, "2.13.0", imported=False)  # a CPU build read from its files
answers = {}
for name, per_rank in json.loads(sys.argv[1]).items():
    answers[name] = import_error_behind(quick, True, {"threads": {"per_rank": per_rank}})
answers["job ok"] = import_error_behind(quick, False, {"threads": {"per_rank": [None, None]}})
answers["no threads"] = import_error_behind(quick, True, {})
print(json.dumps(answers))
"""


def test_the_import_is_asked_only_when_no_rank_imported_torch():
    cases = {"rank 1 reported threads": [None, 1], "every rank did": [1, 1], "none did": [None, None]}
    r = subprocess.run([sys.executable, "-c", CODE, json.dumps(cases)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    answers = json.loads(r.stdout)
    # a rank wrote its torch threads (launch/rundir.write_threads, after `import torch` worked):
    # torch is not why the job failed, and this process does not import it to learn so
    assert answers["rank 1 reported threads"] is None and answers["every rank did"] is None
    # no rank got that far: the import is asked, and its error is the finding's
    assert "ModuleNotFoundError" in answers["none did"] and "ModuleNotFoundError" in answers["no threads"]
    assert answers["job ok"] is None  # a job that did not fail is not explained
