"""`python -m gpudoctor.hooks.main SCRIPT [ARGS...]` or `... -m MODULE [ARGS...]`:
python's own command line, run under the doctor. `gpudoctor run` execs this
(or starts it once per rank with --nproc); see hooks/runner.py."""

import os
import sys

# rundir.RUN_SUPERVISED_ENV, spelled here: nothing is imported before the signal handler.
if __name__ == "__main__" and os.environ.get("GPUDOCTOR_RUN_SUPERVISED"):
    # A rank of `run --nproc`: the supervisor's watchdog asks for stacks with SIGUSR1,
    # which kills a process that has no handler yet: set it before anything is imported.
    from gpudoctor.launch.rank import answer_stack_signal

    answer_stack_signal()

from gpudoctor.hooks.runner import main  # noqa: E402

if __name__ == "__main__":
    main(sys.argv[1:])
