"""`python -m gpudoctor.runtime.main SCRIPT [ARGS...]` or `... -m MODULE [ARGS...]`:
python's own command line, run under the doctor. `gpudoctor run` execs this
(or starts it once per rank with --nproc); see runtime/runner.py."""

import sys

from gpudoctor.runtime.runner import main

if __name__ == "__main__":
    main(sys.argv[1:])
