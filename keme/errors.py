"""User-facing errors: what went wrong, where, and how to fix it."""


class KemeError(Exception):
    """An error the CLI reports as a message (no traceback) with a non-zero exit."""
