"""I/O only: read the machine into frozen fact dataclasses. Probes never
raise; a value that cannot be read is `Unavailable(reason)`."""
