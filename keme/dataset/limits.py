"""How much of anything keme takes in: archive members, expanded bytes, file and message sizes, counts.

Every input that would grow memory or disk with its size is checked against one of these limits before
it is read or allocated, so that a 1 MB zip bomb or a 50 MB message ends in an error that names the limit
instead of an exhausted machine. Each limit can be raised for one command through its environment
variable (`KEME_MAX_<NAME>`), for the rare real input that needs more.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keme.errors import KemeError

MiB = 2**20
GiB = 2**30


class LimitExceeded(KemeError, ValueError):
    """An input is larger than a limit allows: names the input, the limit and how to raise it."""


class Limits(BaseModel):
    """The limits, each overridable through `KEME_MAX_<NAME>` (an integer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    archive_members: int = Field(1_000_000, ge=1, description="entries of an image archive")
    image_bytes: int = Field(50 * MiB, ge=1, description="bytes of one image (expanded)")
    images_bytes: int = Field(2 * GiB, ge=1, description="bytes of all images one import copies (expanded)")
    compression_ratio: int = Field(100, ge=1, description="expanded / compressed size of an archive member")
    file_bytes: int = Field(2 * GiB, ge=1, description="bytes of a JSON source file read into memory")
    message_chars: int = Field(64 * MiB, ge=1, description="characters of one message's text")
    bootstrap: int = Field(100_000, ge=1, description="bootstrap replicates")
    bootstrap_cells: int = Field(100_000_000, ge=1, description="bootstrap replicates x questions")
    count: int = Field(1_000_000, ge=1, description="a count option (--k, --depth, --limit, --sample, ...)")
    runs: int = Field(100, ge=1, description="repeated runs (--judge-runs)")
    workers: int = Field(4096, ge=1, description="parallel workers (--workers)")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, with each `KEME_MAX_<NAME>` set in `environ` (default: the process's)."""
        environ = os.environ if environ is None else environ
        values = {name: environ[env_name(name)] for name in cls.model_fields if env_name(name) in environ}
        try:
            return cls.model_validate({k: int(v.replace("_", "")) for k, v in values.items()})
        except (ValueError, ValidationError) as exc:
            bad = ", ".join(f"{env_name(k)}={v!r}" for k, v in values.items())
            raise KemeError(f"{bad}: a limit must be a whole number of at least 1") from exc


def env_name(name: str) -> str:
    """The environment variable that raises limit `name`."""
    return f"KEME_MAX_{name.upper()}"


def exceeded(what: str, value: int, name: str, limits: Limits) -> LimitExceeded:
    """The error for `what` being `value`, over limit `name`; says how to raise it."""
    cap = getattr(limits, name)
    about = Limits.model_fields[name].description
    return LimitExceeded(
        f"{what}: {value:,} is more than the {cap:,} {about} keme accepts; if this input is genuine, "
        f"raise the limit with the environment variable {env_name(name)}=<n>"
    )


def check(what: str, value: int, name: str, limits: Limits | None = None) -> int:
    """`value`, or LimitExceeded when it is above limit `name`."""
    limits = Limits.from_env() if limits is None else limits
    if value > getattr(limits, name):
        raise exceeded(what, value, name, limits)
    return value
