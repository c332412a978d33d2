"""gpudoctor's exit codes (documented in docs/json.md). A module of constants
only, so that the CLI and the runtime process that runs a user's script share
them without importing each other."""

OK = 0
PROBLEM = 1  # an error finding (with --strict: or a warning)
USAGE = 2  # bad input: one line on stderr
TIMEOUT = 124  # `gpudoctor run --timeout` expired (as timeout(1) does)
INTERRUPTED = 130  # Ctrl-C / SIGTERM; every child was stopped
