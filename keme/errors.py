"""User-facing errors: what went wrong, where, and how to fix it.

Every error a command can meet derives from `KemeError`, so `keme.cli.main` prints it as a message
(tests/test_errors.py walks the classes). An error that also means a bad value or a missing key keeps
that builtin as a second base, for the callers that handle it as one.
"""


class KemeError(Exception):
    """An error the CLI reports as a message (no traceback) with a non-zero exit."""


class SynthesisError(KemeError):
    """Synthesis cannot build what was asked: a brain gave up, or a stage broke a fixed input."""


class NoFit(SynthesisError, RuntimeError):
    """The calendar has no room for what the config asks (an anchor, an episode's moments, an event's
    children).

    The planner catches it where it can plan something else; when it reaches the user, the config asks
    for more than a persona's year holds.
    """
