"""gpudoctor diagnose: read a log (a file, a paste on stdin, or a job's run folder)
and say what failed first, what it caused, and what to do about it."""
