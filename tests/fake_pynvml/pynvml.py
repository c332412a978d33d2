"""`import pynvml` for a subprocess under test: the recorded device named by
GPUDOCTOR_TEST_NVML (a file stem in tests/fixtures/gpu_health/nvml/) answers
as the real library would (tests/recorded_nvml.py). Put this folder first on
PYTHONPATH; never on a machine's real path."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded_nvml import recorded  # noqa: E402

_module = recorded(os.environ["GPUDOCTOR_TEST_NVML"])
sys.modules[__name__] = _module
