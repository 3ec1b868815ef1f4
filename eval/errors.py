"""The harness's own error: a run that cannot go on (its logs, its systems, its run directory)."""

from keme.errors import KemeError


class RunError(KemeError):
    pass
