"""Process plumbing: start, watch and stop ranks on this machine, or join a torchrun/SLURM job.

The package imports nothing, so a rank that needs `launch.rank` does not load the supervisor."""
