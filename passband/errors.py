"""Errors a user can cause at the edge (bad path, column, config): shown without a traceback."""


class UsageError(Exception):
    """Raised by commands for mistakes the user can fix; the CLI prints the message and exits 2."""
