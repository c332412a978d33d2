"""Says whether torch was already imported when the script began: under the
doctor it must not be, so that env vars set before `import torch` still count."""

import os
import sys

print("torch before the script:", "torch" in sys.modules)
os.environ["OMP_NUM_THREADS"] = "1"
import torch  # noqa: E402

print("threads:", torch.get_num_threads())
