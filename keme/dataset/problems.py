"""What is wrong with a dataset: one `Violation` per problem, and the error that lists them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from keme.errors import KemeError

SHOWN = 20  # problems listed in an error message; `keme validate` lists them all


@dataclass(frozen=True)
class Violation:
    """One problem: which check found it, where (a file:line, a record id) and what is wrong."""

    check: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.where}: {self.message}"


class DatasetError(KemeError):
    """A dataset that does not load or does not hold its invariants; the message names each problem and the
    fix."""

    def __init__(self, root: Path, violations: list[Violation], hint: str = ""):
        self.violations = violations
        if len(violations) == 1:
            head = f"{violations[0]}"
        else:
            shown = "".join(f"\n  {v}" for v in violations[:SHOWN])
            more = f"\n  ... and {len(violations) - SHOWN} more" if len(violations) > SHOWN else ""
            head = f"{root}: {len(violations)} problems:{shown}{more}"
        fix = f"restore or re-create the dataset (`keme validate {root}` lists every problem)"
        super().__init__(f"{head}\n{fix}{hint}")
