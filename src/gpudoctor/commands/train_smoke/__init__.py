"""`gpudoctor train-smoke`: a reference DDP training job and the checks of the
guarantees it must keep.

    config.py     the job's settings and the thresholds each verification states
    devices.py    --backend/--device auto: which pair this machine can run
    job.py        what one rank does (torch; runs inside the ranks)
    workers.py    DataLoader worker start-up, persistent_workers off vs on (torch)
    dp.py         the same job under nn.DataParallel, for --compare-dp (torch)
    verify.py     pure: the ranks' gathered results -> verifications and findings
    runner.py     launch the ranks (or join torchrun's), verify, build the Report
    view.py       the throughput table for the console and Markdown reports
"""
