"""`gpudoctor allreduce`: an nccl-tests-style sweep of one collective over the
ranks, checked for correctness at every size and timed for bus bandwidth.

    options.py    the command's options -> a Sweep (sizes, backend/device), bad input as PlanError
    bandwidth.py  sizes, element counts, algbw/busbw, the results rows and their summary
    measure.py    what one rank does (torch; runs inside the ranks)
    job.py        launch the ranks (or join torchrun's), narrow NCCL failures, build the Report
    verify.py     pure: rows and link facts -> findings; the NCCL narrowing plan and its verdict
    table.py      the results table for the console and Markdown reports
    view.py       the live progress bar and table on stderr while the sweep runs
"""
