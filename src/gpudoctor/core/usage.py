"""A usage error: bad input to a command, said in one line with the CLI's flag names.

Raised by a command's option check (commands/<name>/), the one check both doors run:
the CLI turns it into exit code 2, the Python API lets it through (it is a ValueError).
"""

from __future__ import annotations


class UsageError(ValueError):
    """One line naming the flag and what it accepts, e.g. "--nproc 0: must be at least 1"."""


class MissingPathError(UsageError, FileNotFoundError):
    """A path named by the user that is not there. Still a UsageError (exit 2, the CLI's
    one line); a FileNotFoundError too, which is what a Python caller expects of it."""
