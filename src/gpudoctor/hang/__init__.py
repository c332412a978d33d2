"""The hang & crash doctor, both sides: the tracer inside each rank (tracer.py), the
supervisor's watch (watch.py) and its torchrun/SLURM twin (joined.py), and the one verdict
(verdict.py: rank records, states, root cause) that every report and `diagnose DIR` use.

The package imports nothing, so a rank loading the tracer does not load the watch."""
